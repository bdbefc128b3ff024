// FlowNetwork::reroute: a flow moves its remaining bytes onto new links (traffic rerouted around
// a failed link). The cases are small enough to check against the closed form by hand.

#include <gtest/gtest.h>

#include <vector>

#include "sim/flow/network.hpp"

namespace trainsim::sim::flow {
namespace {

TEST(FlowNetworkReroute, ARerouteMidWayFinishesWhenTheClosedFormSays) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId b = net.add_link(Bandwidth::gbyte_per_s(2), Time::zero());
  const LinkId route[] = {a};
  Time done = Time::infinite();
  const FlowId f = net.start(Bytes(1'000'000), route, [&] { done = engine.now(); });
  engine.schedule_at(Time::us(250), [&] {
    const LinkId to[] = {b};
    const double one[] = {1.0};
    EXPECT_TRUE(net.reroute(f, to, one));
  });
  engine.run();
  // 250 KB over a at 1 GB/s in 250 us, the other 750 KB over b at 2 GB/s in 375 us.
  EXPECT_EQ(done, Time::us(625));
  EXPECT_EQ(net.bytes_carried(a), Bytes(250'000));
  EXPECT_EQ(net.bytes_carried(b), Bytes(750'000));
}

TEST(FlowNetworkReroute, AStalledFlowResumesOnItsNewRoute) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId b = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId c = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
  const LinkId route[] = {a, b};
  Time done = Time::infinite();
  const FlowId f = net.start(Bytes(1'000'000), route, [&] { done = engine.now(); });
  // Link a dies at 250 us (the flow stalls); 100 us later the flow is rerouted over c and b.
  engine.schedule_at(Time::us(250), [&] { net.set_capacity(a, Bandwidth::gbyte_per_s(0)); });
  engine.schedule_at(Time::us(350), [&] {
    const LinkId to[] = {c, b};
    const double one[] = {1.0, 1.0};
    EXPECT_TRUE(net.reroute(f, to, one));
  });
  engine.schedule_at(Time::us(600), [] {});  // run_until leaves the clock at the last event
  engine.run_until(Time::us(600));
  // 250 us on the new route at b's 1 GB/s: 250 KB more on b, the first 250 KB on c.
  EXPECT_EQ(net.bytes_carried(a), Bytes(250'000));
  EXPECT_EQ(net.bytes_carried(b), Bytes(500'000));
  EXPECT_EQ(net.bytes_carried(c), Bytes(250'000));
  engine.run();
  // 250 KB before the failure, 100 us stalled, 750 KB at 1 GB/s: 750 us more.
  EXPECT_EQ(done, Time::us(1100));
  EXPECT_EQ(net.bytes_carried(a), Bytes(250'000));
  EXPECT_EQ(net.bytes_carried(b), Bytes(1'000'000));  // on both routes: every byte once
  EXPECT_EQ(net.bytes_carried(c), Bytes(750'000));
}

TEST(FlowNetworkReroute, TheOldLinkIsFreedForTheFlowsLeftOnIt) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId b = net.add_link(Bandwidth::gbyte_per_s(3), Time::zero());
  const LinkId route[] = {a};
  Time moved_done = Time::infinite(), stayed_done = Time::infinite();
  const FlowId moved = net.start(Bytes(1'000'000), route, [&] { moved_done = engine.now(); });
  net.start(Bytes(1'000'000), route, [&] { stayed_done = engine.now(); });
  engine.schedule_at(Time::us(500), [&] {
    const LinkId to[] = {b};
    const double one[] = {1.0};
    EXPECT_TRUE(net.reroute(moved, to, one));
  });
  engine.run();
  // Half of a each for 500 us (250 KB each); then 750 KB at 3 GB/s on b (250 us) and 750 KB at
  // the whole 1 GB/s of a (750 us).
  EXPECT_EQ(moved_done, Time::us(750));
  EXPECT_EQ(stayed_done, Time::us(1250));
  EXPECT_EQ(net.bytes_carried(a), Bytes(1'250'000));
  EXPECT_EQ(net.bytes_carried(b), Bytes(750'000));
}

TEST(FlowNetworkReroute, SharedUsageOnTheNewLinks) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId b = net.add_link(Bandwidth::gbyte_per_s(2), Time::zero());
  const LinkId from[] = {a};
  const double one[] = {1.0};
  Time done = Time::infinite();
  const FlowId f = net.start_shared(Bytes(1'000'000), from, one, Time::zero(), [&] { done = engine.now(); });
  engine.schedule_at(Time::us(500), [&] {
    // Two copies of the flow cross b after the reroute: each gets 1 GB/s of its 2 GB/s.
    const LinkId to[] = {b};
    const double two[] = {2.0};
    EXPECT_TRUE(net.reroute(f, to, two));
  });
  engine.run();
  EXPECT_EQ(done, Time::us(1000));
  EXPECT_EQ(net.bytes_carried(a), Bytes(500'000));
  EXPECT_EQ(net.bytes_carried(b), Bytes(1'000'000));  // both copies' 500 KB
}

TEST(FlowNetworkReroute, InTheLatencyPhaseOnlyTheRouteChanges) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), Time::us(10));
  const LinkId b = net.add_link(Bandwidth::gbyte_per_s(2), Time::us(100));
  const LinkId route[] = {a};
  Time done = Time::infinite();
  const FlowId f = net.start(Bytes(1'000'000), route, [&] { done = engine.now(); });
  engine.schedule_at(Time::us(5), [&] {
    const LinkId to[] = {b};
    const double one[] = {1.0};
    EXPECT_TRUE(net.reroute(f, to, one));
  });
  engine.run();
  // It activates at 10 us as planned, then 1 MB at b's 2 GB/s.
  EXPECT_EQ(done, Time::us(510));
  EXPECT_EQ(net.bytes_carried(a), Bytes(0));
  EXPECT_EQ(net.bytes_carried(b), Bytes(1'000'000));
}

TEST(FlowNetworkReroute, AFinishedFlowCannotBeRerouted) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId route[] = {a};
  const FlowId f = net.start(Bytes(1000), route, [] {});
  engine.run();
  const double one[] = {1.0};
  EXPECT_FALSE(net.reroute(f, route, one));
  EXPECT_EQ(net.bytes_carried(a), Bytes(1000));
}

TEST(FlowNetworkReroute, BytesAreConservedOverManyReroutesAtAwkwardTimes) {
  Engine engine;
  FlowNetwork net(engine);
  std::vector<LinkId> links;
  for (int k = 0; k < 3; ++k) links.push_back(net.add_link(Bandwidth::gbyte_per_s(1.0 + k * 0.7), Time::zero()));
  const LinkId first[] = {links[0]};
  const FlowId f = net.start(Bytes(999'983), first, [] {});
  // Rerouted every 97 ns (a fraction of a byte per ns does not divide evenly), round robin.
  for (int i = 1; i < 40; ++i)
    engine.schedule_at(Time::ns(97 * i), [&, i] {
      const LinkId to[] = {links[static_cast<size_t>(i % 3)]};
      const double one[] = {1.0};
      net.reroute(f, to, one);
    });
  engine.run();
  int64_t total = 0;
  for (const LinkId l : links) total += net.bytes_carried(l).count();
  EXPECT_EQ(total, 999'983);
  EXPECT_FALSE(net.is_running(f));
}

}  // namespace
}  // namespace trainsim::sim::flow
