#include "sim/flow/network.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim::flow {
namespace {

using namespace trainsim::sim::literals;

TEST(FlowNetwork, SharedFlowUsesItsCopiesShareOfEveryLink) {
  Engine engine;
  FlowNetwork net(engine);
  // A flow standing for 3 copies on link a (a spine they share) and 1 on link b (its own NIC),
  // beside an ordinary flow on a: 3x + y <= 4 GB/s with equal rates gives 1 GB/s each.
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
  const LinkId b = net.add_link(Bandwidth::gbyte_per_s(100), Time::zero());
  const LinkId links[] = {a, b};
  const double usage[] = {3.0, 1.0};
  Time shared = Time::infinite(), plain = Time::infinite();
  net.start_shared(Bytes(1'000'000), links, usage, Time::us(7), [&] { shared = engine.now(); });
  net.start(Bytes(1'000'000), std::span<const LinkId>(&a, 1), [&] { plain = engine.now(); });
  engine.run();
  // The shared flow waits its own latency (7 us), not the sum over links. Until then the plain
  // flow has link a alone (4 GB/s: 28 KB); then both run at 1 GB/s and the plain flow's last
  // 972 KB arrive at 979 us; the shared flow's last 28 KB then go at 4/3 GB/s (3 copies on a).
  EXPECT_EQ(plain, Time::us(979));
  EXPECT_EQ(shared, Time::us(1000));
  // Link a carried the shared flow's three copies and the plain flow.
  EXPECT_EQ(net.bytes_carried(a), Bytes(4'000'000));
  EXPECT_EQ(net.bytes_carried(b), Bytes(1'000'000));
}

TEST(FlowNetwork, OneFlowTakesLatencyPlusBytesOverCapacity) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), 2_us), b = net.add_link(Bandwidth::gbyte_per_s(2), 3_us);
  Time done = Time::infinite();
  const LinkId route[] = {a, b};
  net.start(Bytes(1'000'000), route, [&] { done = engine.now(); });
  engine.run();
  // 5 us of latency (2 + 3), then 1 MB at the 1 GB/s bottleneck: 1 ms.
  EXPECT_EQ(done, Time::us(1005));
}

TEST(FlowNetwork, CompletionTimeIsRoundedUpToWholeNanoseconds) {
  Engine engine;
  const LinkSpec links[] = {{Bandwidth::gbyte_per_s(3), 1_us}};
  FlowNetwork net(engine, links);
  Time done = Time::infinite();
  const LinkId route[] = {0};
  net.start(Bytes(1000), route, [&] { done = engine.now(); });
  engine.run();
  // 1000 B at 3 B/ns = 333.33 ns, rounded up once to 334 ns, after 1000 ns of latency.
  EXPECT_EQ(done, Time::ns(1334));
  EXPECT_EQ(net.bytes_carried(0), Bytes(1000));
}

TEST(FlowNetwork, TwoFlowsStartingTogetherShareAndFinishTogether) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId route[] = {l};
  Time t0 = Time::infinite(), t1 = Time::infinite();
  const FlowId f0 = net.start(Bytes(1'000'000), route, [&] { t0 = engine.now(); });
  const FlowId f1 = net.start(Bytes(1'000'000), route, [&] { t1 = engine.now(); });
  engine.run_until(Time::us(1));
  EXPECT_EQ(net.rate(f0), Bandwidth::gbyte_per_s(0.5));
  EXPECT_EQ(net.rate(f1), Bandwidth::gbyte_per_s(0.5));
  engine.run();
  // Each moves 1 MB at 0.5 GB/s: both end at 2 ms, twice the time alone.
  EXPECT_EQ(t0, Time::ms(2));
  EXPECT_EQ(t1, Time::ms(2));
  // They joined at the same instant: one solve for both. They also end at the same instant, and
  // the re-solve after the first end runs after the second: nothing is left to solve then.
  EXPECT_EQ(net.stats().solves, 1u);
  EXPECT_EQ(net.stats().variables_solved, 2u);
}

TEST(FlowNetwork, ALaterFlowSlowsTheFirst) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  Time first = Time::infinite(), second = Time::infinite();
  const LinkId route[] = {l};
  net.start(Bytes(1'000'000), route, [&] { first = engine.now(); });
  engine.schedule_at(Time::us(500), [&] { net.start(Bytes(1'000'000), route, [&] { second = engine.now(); }); });
  engine.run_until(Time::us(500));
  EXPECT_EQ(net.bytes_carried(l), Bytes(500'000));  // alone at 1 GB/s for 500 us
  engine.run();
  // First: 0.5 MB alone in 500 us, then its last 0.5 MB at half rate (1 ms): done at 1500 us.
  EXPECT_EQ(first, Time::us(1500));
  // Second: 0.5 MB at half rate until 1500 us, then its last 0.5 MB alone (500 us): 2000 us.
  EXPECT_EQ(second, Time::us(2000));
  EXPECT_EQ(net.bytes_carried(l), Bytes(2'000'000));
}

TEST(FlowNetwork, UnevenLateJoinWithRounding) {
  // Link of 3 GB/s (3 B/ns). A: 9000 B from t = 0. B: 3000 B from t = 1000 ns.
  //   [0, 1000): A alone moves 3000 B, 6000 B left.
  //   From 1000: 1.5 B/ns each. B needs 2000 ns and ends at 3000; A moves 3000 B meanwhile.
  //   From 3000: A alone with 3000 B left at 3 B/ns: 1000 ns, ends at 4000.
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(3), Time::zero());
  const LinkId route[] = {l};
  Time ta, tb;
  net.start(Bytes(9000), route, [&] { ta = engine.now(); });
  engine.schedule_at(Time::ns(1000), [&] { net.start(Bytes(3000), route, [&] { tb = engine.now(); }); });
  engine.run();
  EXPECT_EQ(tb, Time::ns(3000));
  EXPECT_EQ(ta, Time::ns(4000));
}

TEST(FlowNetwork, PrivateBottleneckLeavesCapacityToOthers) {
  // A crosses the shared 10 GB/s link; B crosses it and a private 2 GB/s link. B is held to 2
  // by its private link, so A gets 8, not 5.
  Engine engine;
  FlowNetwork net(engine);
  const LinkId shared = net.add_link(Bandwidth::gbyte_per_s(10), Time::zero());
  const LinkId thin = net.add_link(Bandwidth::gbyte_per_s(2), Time::zero());
  const LinkId ra[] = {shared}, rb[] = {shared, thin};
  Time ta, tb;
  const FlowId a = net.start(Bytes(8'000'000), ra, [&] { ta = engine.now(); });
  const FlowId b = net.start(Bytes(2'000'000), rb, [&] { tb = engine.now(); });
  engine.run_until(Time::ns(1));
  EXPECT_EQ(net.rate(a), Bandwidth::gbyte_per_s(8));
  EXPECT_EQ(net.rate(b), Bandwidth::gbyte_per_s(2));
  engine.run();
  EXPECT_EQ(ta, Time::us(1000));  // 8 MB at 8 GB/s
  EXPECT_EQ(tb, Time::us(1000));  // 2 MB at 2 GB/s
}

TEST(FlowNetwork, WeightTwoGetsAThirdOfTheLink) {
  // 3 GB/s shared by weights 1 and 2: 2 GB/s and 1 GB/s. The heavy-weighted 1 MB flow takes
  // 1 ms; then the other has 4 MB - 2 MB = 2 MB left alone at 3 GB/s: 666,666.67 ns -> 666,667.
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(3), Time::zero());
  const LinkId route[] = {l};
  Time light, heavy;
  auto light_done = [&] { light = engine.now(); };
  auto heavy_done = [&] { heavy = engine.now(); };
  net.start(Bytes(4'000'000), route, light_done, 1.0);
  net.start(Bytes(1'000'000), route, heavy_done, 2.0);
  engine.run();
  EXPECT_EQ(heavy, Time::ms(1));
  EXPECT_EQ(light, Time::ns(1'666'667));
}

TEST(FlowNetwork, HalvingCapacityMidFlow) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId route[] = {l};
  Time done;
  net.start(Bytes(1'000'000), route, [&] { done = engine.now(); });
  engine.schedule_at(Time::us(400), [&] { net.set_capacity(l, Bandwidth::gbyte_per_s(0.5)); });
  engine.run();
  // 400 KB in the first 400 us, then 600 KB at 0.5 GB/s = 1200 us: done at 1600 us.
  EXPECT_EQ(done, Time::us(1600));
}

TEST(FlowNetwork, ZeroCapacityStallsUntilRestored) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId route[] = {l};
  Time done;
  const FlowId f = net.start(Bytes(1'000'000), route, [&] { done = engine.now(); });
  engine.schedule_at(Time::us(250), [&] { net.set_capacity(l, Bandwidth::gbyte_per_s(0)); });    // fails
  engine.schedule_at(Time::us(750), [&] { net.set_capacity(l, Bandwidth::gbyte_per_s(0.5)); });  // back at half
  engine.run_until(Time::us(500));
  EXPECT_TRUE(net.is_running(f));
  EXPECT_EQ(net.rate(f), Bandwidth::bytes_per_s(0));
  EXPECT_EQ(net.bytes_carried(l), Bytes(250'000));
  engine.run();
  // 250 KB before the failure, 500 us stalled, then 750 KB at 0.5 GB/s = 1500 us.
  EXPECT_EQ(done, Time::us(2250));
  EXPECT_FALSE(net.is_running(f));
}

TEST(FlowNetwork, ZeroByteAndEmptyRouteFlows) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), 7_us);
  const LinkId route[] = {l};
  Time zero_bytes = Time::infinite(), no_route = Time::infinite();
  net.start(Bytes(0), route, [&] { zero_bytes = engine.now(); });
  net.start(Bytes(1000), std::span<const LinkId>{}, [&] { no_route = engine.now(); });
  engine.run();
  EXPECT_EQ(zero_bytes, 7_us);  // the latency only
  EXPECT_EQ(no_route, Time::zero());
  EXPECT_EQ(net.stats().solves, 0u);
  EXPECT_EQ(net.stats().flows_completed, 2u);
}

TEST(FlowNetwork, SelectiveUpdateLeavesOtherComponentsAlone) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId b = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId ra[] = {a}, rb[] = {b};
  int rate_changes = 0;
  net.signals().on_flow_rate_change.connect([&](FlowId, Bandwidth, Time) { ++rate_changes; });
  for (int i = 0; i < 10; ++i) net.start(Bytes(1'000'000), ra, [] {});
  engine.run_until(Time::ns(1));
  EXPECT_EQ(rate_changes, 10);
  const FlowNetworkStats before = net.stats();
  net.start(Bytes(1000), rb, [] {});
  engine.run();
  // The flow on link b forms its own component: its start solves one variable, not eleven. Its
  // end leaves link b empty (nothing to solve), and the ten on link a, untouched meanwhile, end
  // together at 10 ms, after which nothing is left to solve.
  EXPECT_EQ(net.stats().solves - before.solves, 1u);
  EXPECT_EQ(net.stats().variables_solved - before.variables_solved, 1u);
  EXPECT_EQ(rate_changes, 11);
  EXPECT_EQ(net.stats().flows_started, 11u);
  EXPECT_EQ(net.stats().flows_completed, 11u);
}

TEST(FlowNetwork, SignalsReportStartRateAndEnd) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(2), 1_us);
  const LinkId route[] = {l};
  std::vector<std::string> log;
  // Appends piecewise (GCC 12 warns falsely on long `"lit" + std::string + "lit"` chains).
  auto note = [&log](const char* what, const std::string& value, Time t) {
    std::string s = what;
    s += value;
    s += " @";
    s += to_string(t);
    log.push_back(s);
  };
  net.signals().on_flow_start.connect([&](FlowId, Bytes b, Time t) { note("start ", std::to_string(b.count()), t); });
  net.signals().on_flow_rate_change.connect([&](FlowId, Bandwidth r, Time t) { note("rate ", to_string(r), t); });
  net.signals().on_flow_end.connect([&](FlowId, Time t) { note("end", "", t); });
  net.start(Bytes(2000), route, [&] { log.push_back("done"); });
  engine.run();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].rfind("start 2000", 0), 0u);
  EXPECT_EQ(log[1].rfind("rate ", 0), 0u);
  EXPECT_EQ(log[2].rfind("end ", 0), 0u);
  EXPECT_EQ(log[3], "done");
}

TEST(FlowNetwork, FlowIdsStayUniqueWhenSlotsAreReused) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), Time::zero());
  const LinkId route[] = {l};
  std::vector<FlowId> ids;
  // Each completion starts the next flow, which reuses the freed slot.
  std::function<void()> chain = [&] {
    if (ids.size() < 5) ids.push_back(net.start(Bytes(1000), route, chain));
  };
  chain();
  engine.run();
  ASSERT_EQ(ids.size(), 5u);
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t j = i + 1; j < ids.size(); ++j) EXPECT_NE(ids[i], ids[j]);
  for (const FlowId id : ids) EXPECT_FALSE(net.is_running(id));
  EXPECT_EQ(engine.now(), Time::ns(5000));  // five back-to-back 1 us transfers
}

TEST(FlowNetwork, DestroyingTheNetworkCancelsItsEvents) {
  Engine engine;
  bool ran = false;
  {
    FlowNetwork net(engine);
    const LinkId l = net.add_link(Bandwidth::gbyte_per_s(1), 1_us);
    const LinkId route[] = {l};
    net.start(Bytes(1000), route, [&] { ran = true; });
    net.start(Bytes(1000), route, [&] { ran = true; });
    engine.run_until(1_us);  // one flow solved and scheduled, nothing finished
  }
  engine.run();
  EXPECT_FALSE(ran);
}

// Random traffic over 8 links with capacity changes; records every flow's completion time.
struct RandomRun {
  std::vector<Time> ends;
  std::vector<int64_t> expected, carried;  // per link: sum of flow bytes, and bytes carried
  FlowNetworkStats stats;
};

RandomRun random_run(uint64_t seed) {
  constexpr int kLinks = 8, kFlows = 400;
  RandomRun out;
  Engine engine;
  FlowNetwork net(engine);
  for (int l = 0; l < kLinks; ++l) net.add_link(Bandwidth::gbyte_per_s(1 + l), Time::ns(100 * l));
  std::mt19937_64 rng(seed);
  out.expected.assign(kLinks, 0);
  out.ends.assign(kFlows, Time::infinite());
  for (int f = 0; f < kFlows; ++f) {
    std::vector<LinkId> r;
    for (LinkId l = 0; l < kLinks; ++l)
      if (rng() % 3 == 0) r.push_back(l);
    if (r.empty()) r.push_back(static_cast<LinkId>(rng() % kLinks));
    const Bytes b(static_cast<int64_t>(rng() % 1'000'000));
    const double w = rng() % 4 == 0 ? 2.0 : 1.0;
    for (const LinkId l : r) out.expected[l] += b.count();
    engine.schedule_at(Time::ns(static_cast<int64_t>(rng() % 2'000'000)), [&net, &engine, &out, r, b, w, f] {
      auto done = [&out, &engine, f] { out.ends[static_cast<size_t>(f)] = engine.now(); };
      net.start(b, r, done, w);
    });
  }
  // Degrade, fail and restore a few links while traffic runs.
  for (int k = 0; k < 20; ++k) {
    const auto l = static_cast<LinkId>(rng() % kLinks);
    const double gbps = static_cast<double>(rng() % 4);  // 0 = failed
    engine.schedule_at(Time::ns(static_cast<int64_t>(rng() % 2'000'000)),
                       [&net, l, gbps] { net.set_capacity(l, Bandwidth::gbyte_per_s(gbps)); });
  }
  engine.schedule_at(Time::ms(3), [&net] {
    for (LinkId l = 0; l < kLinks; ++l) net.set_capacity(l, Bandwidth::gbyte_per_s(1));
  });
  engine.run();
  for (LinkId l = 0; l < kLinks; ++l) out.carried.push_back(net.bytes_carried(l).count());
  out.stats = net.stats();
  EXPECT_EQ(net.running_flows(), 0u);
  return out;
}

TEST(FlowNetwork, RandomTrafficConservesBytesPerLink) {
  const RandomRun run = random_run(3);
  // Every byte of every flow crossed every link of its route, exactly once.
  EXPECT_EQ(run.carried, run.expected);
  EXPECT_EQ(run.stats.flows_started, 400u);
  EXPECT_EQ(run.stats.flows_completed, 400u);
  for (const Time t : run.ends) EXPECT_FALSE(t.is_infinite());
}

TEST(FlowNetwork, IdenticalRunsGiveIdenticalCompletionTimes) {
  const RandomRun a = random_run(5), b = random_run(5);
  EXPECT_EQ(a.ends, b.ends);
  EXPECT_EQ(a.stats.solves, b.stats.solves);
  EXPECT_EQ(a.stats.variables_solved, b.stats.variables_solved);
}

TEST(FlowNetwork, TwoNetworksInTwoThreadsMatchOneRun) {
  // No process-global state: concurrent engines give the same answers as a lone run.
  const RandomRun alone = random_run(6);
  RandomRun a, b;
  std::thread ta([&a] { a = random_run(6); }), tb([&b] { b = random_run(6); });
  ta.join();
  tb.join();
  EXPECT_EQ(a.ends, alone.ends);
  EXPECT_EQ(b.ends, alone.ends);
}

TEST(FlowNetwork, AFlowTooSlowForTheClockIsTheInputsError) {
  // 2^62 bytes at 1 byte/s finish after the clock's 292 years: a ConfigError (exit 2) naming the
  // overflow, where the flow used to stay unscheduled until the run reported a deadlock.
  Engine engine;
  FlowNetwork net(engine);
  const LinkId link = net.add_link(Bandwidth::bytes_per_s(1.0), Time::zero());
  const LinkId route[] = {link};
  net.start(Bytes(int64_t{1} << 62), route, [] {});
  EXPECT_THROW(engine.run(), ConfigError);
}

TEST(FlowNetwork, NoFlowFinishesBeforeItsBytesCouldCross) {
  // Lower bound check on random traffic: each flow needs at least latency + bytes / (its
  // route's smallest capacity), however the sharing goes. Capacities here never change.
  Engine engine;
  FlowNetwork net(engine);
  for (int l = 0; l < 4; ++l) net.add_link(Bandwidth::gbyte_per_s(1 + l), Time::ns(10 * l));
  std::mt19937_64 rng(9);
  int checked = 0;
  for (int f = 0; f < 200; ++f) {
    const LinkId r[] = {static_cast<LinkId>(rng() % 4), static_cast<LinkId>(rng() % 4)};
    const Bytes b(static_cast<int64_t>(1 + rng() % 100'000));
    const Time at = Time::ns(static_cast<int64_t>(rng() % 100'000));
    engine.schedule_at(at, [&, r0 = r[0], r1 = r[1], b, at] {
      const LinkId route[] = {r0, r1};
      const Bandwidth slowest = std::min(net.capacity(r0), net.capacity(r1));
      const Time earliest = at + net.latency(r0) + net.latency(r1) + b / slowest;
      net.start(b, route, [&, earliest] {
        EXPECT_GE(engine.now(), earliest);
        ++checked;
      });
    });
  }
  engine.run();
  EXPECT_EQ(checked, 200);
}

}  // namespace
}  // namespace trainsim::sim::flow
