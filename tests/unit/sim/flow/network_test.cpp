#include "sim/flow/network.hpp"

#include <gtest/gtest.h>

#include <random>

namespace trainsim::sim::flow {
namespace {

using namespace trainsim::sim::literals;

TEST(FlowNetwork, OneFlowTakesLatencyPlusBytesOverCapacity) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), 2_us), b = net.add_link(Bandwidth::gbyte_per_s(2), 3_us);
  Time done = Time::infinite();
  const LinkId route[] = {a, b};
  net.start(Bytes(1'000'000), route, [&] { done = engine.now(); });
  engine.run();
  // 5 us of latency, then 1 MB at the 1 GB/s bottleneck: 1 ms.
  EXPECT_EQ(done, Time::us(1005));
}

TEST(FlowNetwork, TwoFlowsShareALinkAndALateFlowSlowsTheFirst) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  Time first = Time::infinite(), second = Time::infinite();
  const LinkId route[] = {l};
  net.start(Bytes(1'000'000), route, [&] { first = engine.now(); });
  engine.schedule_at(Time::us(500), [&] { net.start(Bytes(1'000'000), route, [&] { second = engine.now(); }); });
  engine.run();
  // First: 0.5 MB alone in 500 us, then 0.5 MB at half rate (1 ms): done at 1500 us.
  EXPECT_EQ(first, Time::us(1500));
  // Second: 0.5 MB at half rate until 1500 us, then 0.5 MB alone (500 us): done at 2000 us.
  EXPECT_EQ(second, Time::us(2000));
  EXPECT_NEAR(net.bytes_carried(l), 2e6, 1.0);
}

TEST(FlowNetwork, PrivateBottleneckLeavesCapacityToOthers) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId shared = net.add_link(Bandwidth::gbyte_per_s(10), Time::zero());
  const LinkId thin = net.add_link(Bandwidth::gbyte_per_s(2), Time::zero());
  const LinkId ra[] = {shared}, rb[] = {shared, thin};
  Time ta, tb;
  net.start(Bytes(8'000'000), ra, [&] { ta = engine.now(); });
  net.start(Bytes(2'000'000), rb, [&] { tb = engine.now(); });
  engine.run();
  EXPECT_EQ(ta, Time::us(1000));  // 8 MB at 8 GB/s
  EXPECT_EQ(tb, Time::us(1000));  // 2 MB at 2 GB/s
}

TEST(FlowNetwork, DegradedAndFailedLinks) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId route[] = {l};
  Time done;
  net.start(Bytes(1'000'000), route, [&] { done = engine.now(); });
  engine.schedule_at(Time::us(250), [&] { net.set_capacity(l, Bandwidth::gbyte_per_s(0)); });    // fails
  engine.schedule_at(Time::us(750), [&] { net.set_capacity(l, Bandwidth::gbyte_per_s(0.5)); });  // back at half
  engine.run();
  // 250 KB before the failure, 500 us stalled, then 750 KB at 0.5 GB/s = 1500 us.
  EXPECT_EQ(done, Time::us(2250));
}

TEST(FlowNetwork, SelectiveUpdateLeavesOtherComponentsAlone) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId b = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId ra[] = {a}, rb[] = {b};
  for (int i = 0; i < 10; ++i) net.start(Bytes(1'000'000), ra, [] {});
  engine.run_until(Time::ns(1));
  const uint64_t before = net.variables_solved();
  net.start(Bytes(1'000), rb, [] {});
  engine.run_until(Time::ns(2));
  // The new flow on link b forms its own component: one variable solved, not eleven.
  EXPECT_EQ(net.variables_solved() - before, 1u);
  engine.run();
  EXPECT_EQ(net.flows_completed(), 11u);
}

TEST(FlowNetwork, RandomTrafficConservesBytesAndIsDeterministic) {
  auto run = [](std::vector<Time>& ends) {
    Engine engine;
    FlowNetwork net(engine);
    for (int l = 0; l < 6; ++l) net.add_link(Bandwidth::gbyte_per_s(1 + l), Time::ns(100 * l));
    std::mt19937_64 rng(3);
    double total = 0;
    std::vector<std::vector<LinkId>> routes;
    for (int f = 0; f < 60; ++f) {
      std::vector<LinkId> r;
      for (LinkId l = 0; l < 6; ++l)
        if (rng() % 2) r.push_back(l);
      if (r.empty()) r.push_back(0);
      const Bytes b(static_cast<int64_t>(1000 + rng() % 1'000'000));
      total += static_cast<double>(b.count()) * static_cast<double>(r.size());
      routes.push_back(r);
      engine.schedule_at(Time::ns(static_cast<int64_t>(rng() % 100'000)), [&net, &engine, &ends, r, b, f] {
        net.start(b, r, [&ends, &engine, f] { ends[static_cast<size_t>(f)] = engine.now(); });
      });
    }
    ends.assign(60, Time::infinite());
    engine.run();
    double carried = 0;
    for (LinkId l = 0; l < 6; ++l) carried += net.bytes_carried(l);
    EXPECT_NEAR(carried, total, 1e-6 * total);
    EXPECT_EQ(net.active_flows(), 0u);
  };
  std::vector<Time> a, b;
  run(a);
  run(b);
  EXPECT_EQ(a, b);
  for (const Time t : a) EXPECT_FALSE(t.is_infinite());
}

}  // namespace
}  // namespace trainsim::sim::flow
