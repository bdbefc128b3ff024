// A flow that starts on the route of one that finished at the same instant takes its rate without
// a re-solve (FlowNetwork's vacancies): the same set of flows shares the links, so the max-min
// solution stands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "sim/flow/network.hpp"

namespace trainsim::sim::flow {
namespace {

TEST(FlowNetworkVacancy, TheNextSliceOnARouteTakesItsRateWithoutASolve) {
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
  const std::span<const LinkId> route(&a, 1);
  Time first = Time::infinite(), second = Time::infinite(), other = Time::infinite();
  uint64_t solves_when_second_started = 0;
  // A 1 MB slice beside a 3 MB flow: 2 GB/s each. At 500 us the next slice starts on the same
  // link and takes the first one's 2 GB/s; the long flow keeps its rate.
  net.start(Bytes(3'000'000), route, [&] { other = engine.now(); });
  net.start(Bytes(1'000'000), route, [&] {
    first = engine.now();
    solves_when_second_started = net.stats().solves;
    net.start(Bytes(1'000'000), route, [&] { second = engine.now(); });
  });
  engine.run();
  EXPECT_EQ(first, Time::us(500));
  EXPECT_EQ(second, Time::us(1000));
  // 2 MB by 1 ms, the last 1 MB alone at 4 GB/s.
  EXPECT_EQ(other, Time::us(1250));
  EXPECT_EQ(solves_when_second_started, 1u);
  // One solve at the start, one when the second slice leaves the long flow alone: none at 500 us.
  EXPECT_EQ(net.stats().solves, 2u);
  EXPECT_EQ(net.bytes_carried(a), Bytes(5'000'000));
}

TEST(FlowNetworkVacancy, ObserversHearOfTheSliceBeforeTheRateItTakes) {
  // A trace recorder keys rates by the flow ids it was told of (traces/sinks/flow_recorder.cpp).
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
  const std::span<const LinkId> route(&a, 1);
  std::vector<FlowId> started;
  std::vector<std::pair<FlowId, double>> rates;
  size_t unknown = 0;
  net.signals().on_flow_start.connect([&](FlowId id, Bytes, Time) { started.push_back(id); });
  net.signals().on_flow_rate_change.connect([&](FlowId id, Bandwidth rate, Time) {
    if (std::find(started.begin(), started.end(), id) == started.end()) ++unknown;
    rates.emplace_back(id, rate.bytes_per_second());
  });
  net.start(Bytes(3'000'000), route, [] {});
  net.start(Bytes(1'000'000), route, [&] { net.start(Bytes(1'000'000), route, [] {}); });
  engine.run();
  EXPECT_EQ(unknown, 0u);
  ASSERT_EQ(started.size(), 3u);
  // The second slice took the first one's 2 GB/s, and said so.
  bool heard = false;
  for (const auto& [id, rate] : rates) heard = heard || (id == started[2] && rate == 2e9);
  EXPECT_TRUE(heard);
}

TEST(FlowNetworkVacancy, ACapacityChangeAtTheSameInstantIsSolvedWithTheTaker) {
  // The next slice takes the first one's 2 GB/s, and the link doubles at that instant: the
  // instant's re-solve gives it and the long flow 4 GB/s each.
  for (const bool before : {false, true}) {
    Engine engine;
    FlowNetwork net(engine);
    const LinkId a = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
    const std::span<const LinkId> route(&a, 1);
    Time second = Time::infinite(), other = Time::infinite();
    net.start(Bytes(3'000'000), route, [&] { other = engine.now(); });
    net.start(Bytes(1'000'000), route, [&] {
      if (before) net.set_capacity(a, Bandwidth::gbyte_per_s(8));
      net.start(Bytes(1'000'000), route, [&] { second = engine.now(); });
      if (!before) net.set_capacity(a, Bandwidth::gbyte_per_s(8));
    });
    engine.run();
    EXPECT_EQ(second, Time::us(750)) << (before ? "capacity first" : "slice first");
    // 1 MB by 500 us, 1 MB more by 750 us, the last 1 MB alone at 8 GB/s.
    EXPECT_EQ(other, Time::us(875)) << (before ? "capacity first" : "slice first");
  }
}

TEST(FlowNetworkVacancy, SharedFlowsWithWeightsTakeVacanciesToo) {
  // A shared flow (2 copies on the link) of weight 2 beside a weight-1 flow: r1 = lambda,
  // r2 = lambda / 2 and r1 + 2 r2 = 4 GB/s give 2 and 1 GB/s. Its next slice takes the 1 GB/s at
  // 1 ms; the long flow's last MB at 2 GB/s ends at 1.5 ms, the slice's last 0.5 MB then alone
  // at 2 GB/s (its 2 copies fill the link) at 1.75 ms.
  Engine engine;
  FlowNetwork net(engine);
  const LinkId a = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
  const std::span<const LinkId> route(&a, 1);
  const double twice[] = {2.0};
  Time second = Time::infinite(), other = Time::infinite();
  net.start(Bytes(3'000'000), route, [&] { other = engine.now(); });
  net.start_shared(
      Bytes(1'000'000), route, twice, Time::zero(),
      [&] {
        net.start_shared(
            Bytes(1'000'000), route, twice, Time::zero(), [&] { second = engine.now(); }, 2.0);
      },
      2.0);
  engine.run();
  EXPECT_EQ(second, Time::us(1750));
  EXPECT_EQ(other, Time::us(1500));
  EXPECT_EQ(net.stats().solves, 2u);
  EXPECT_EQ(net.bytes_carried(a), Bytes(7'000'000));
}

TEST(FlowNetworkVacancy, ADifferentWeightOrRouteIsSolvedAfresh) {
  for (const bool other_route : {false, true}) {
    Engine engine;
    FlowNetwork net(engine);
    const LinkId a = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
    const LinkId b = net.add_link(Bandwidth::gbyte_per_s(100), Time::zero());
    const LinkId both[] = {a, b};
    const std::span<const LinkId> route(&a, 1);
    Time second = Time::infinite(), other = Time::infinite();
    net.start(Bytes(3'000'000), route, [&] { other = engine.now(); });
    net.start(Bytes(1'000'000), route, [&] {
      // Weight 2 on the same link, or weight 1 on one more link: not the vacated flow.
      if (other_route)
        net.start(Bytes(1'000'000), both, [&] { second = engine.now(); });
      else
        net.start(
            Bytes(1'000'000), route, [&] { second = engine.now(); }, 2.0);
    });
    engine.run();
    if (other_route) {
      // Equal shares again: as if it had taken the vacancy, but found by a solve.
      EXPECT_EQ(second, Time::us(1000));
      EXPECT_EQ(other, Time::us(1250));
    } else {
      // From 500 us the long flow gets 8/3 GB/s and the weight-2 slice 4/3: both finish at 1250 us.
      EXPECT_NEAR(second.seconds(), 1250e-6, 1e-9);
      EXPECT_NEAR(other.seconds(), 1250e-6, 1e-9);
    }
    // At 0 and at 500 us; on the other route also at 1 ms, when the long flow is left alone.
    EXPECT_EQ(net.stats().solves, other_route ? 3u : 2u);
  }
}

TEST(FlowNetworkVacancy, ARerouteOffTheVacatedLinkAtTheSameInstantIsSolvedWithTheTaker) {
  // The long flow shares link a with a 1 MB slice (2 GB/s each). At 500 us the next slice takes the
  // first one's 2 GB/s and the long flow moves to link b: the instant's re-solve leaves the slice
  // alone on a at 4 GB/s (done at 750 us) and the long flow's last 2 MB alone on b (1 ms).
  for (const bool reroute_first : {false, true}) {
    Engine engine;
    FlowNetwork net(engine);
    const LinkId a = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
    const LinkId b = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
    const std::span<const LinkId> route(&a, 1);
    const LinkId to[] = {b};
    const double one[] = {1.0};
    Time second = Time::infinite(), other = Time::infinite();
    const FlowId long_flow = net.start(Bytes(3'000'000), route, [&] { other = engine.now(); });
    net.start(Bytes(1'000'000), route, [&] {
      if (reroute_first) {
        EXPECT_TRUE(net.reroute(long_flow, to, one));
      }
      net.start(Bytes(1'000'000), route, [&] { second = engine.now(); });
      if (!reroute_first) {
        EXPECT_TRUE(net.reroute(long_flow, to, one));
      }
    });
    engine.run();
    EXPECT_EQ(second, Time::us(750)) << (reroute_first ? "reroute first" : "slice first");
    EXPECT_EQ(other, Time::us(1000)) << (reroute_first ? "reroute first" : "slice first");
    EXPECT_EQ(net.bytes_carried(a), Bytes(3'000'000));
    EXPECT_EQ(net.bytes_carried(b), Bytes(2'000'000));
  }
}

TEST(FlowNetworkVacancy, ARerouteOntoTheVacatedLinkAtTheSameInstantIsSolvedWithTheTaker) {
  // A slice alone on a (4 GB/s) finishes at 250 us, when the long flow, alone on b until then,
  // has moved 1 MB. At that instant the long flow moves onto a and the next slice starts there:
  // 2 GB/s each, not the 4 GB/s the vacancy had. The slice ends at 750 us; the long flow's last
  // MB alone at 4 GB/s at 1 ms.
  for (const bool reroute_first : {false, true}) {
    Engine engine;
    FlowNetwork net(engine);
    const LinkId a = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
    const LinkId b = net.add_link(Bandwidth::gbyte_per_s(4), Time::zero());
    const std::span<const LinkId> on_a(&a, 1), on_b(&b, 1);
    const double one[] = {1.0};
    Time second = Time::infinite(), other = Time::infinite();
    const FlowId long_flow = net.start(Bytes(3'000'000), on_b, [&] { other = engine.now(); });
    net.start(Bytes(1'000'000), on_a, [&] {
      if (reroute_first) {
        EXPECT_TRUE(net.reroute(long_flow, on_a, one));
      }
      net.start(Bytes(1'000'000), on_a, [&] { second = engine.now(); });
      if (!reroute_first) {
        EXPECT_TRUE(net.reroute(long_flow, on_a, one));
      }
    });
    engine.run();
    EXPECT_EQ(second, Time::us(750)) << (reroute_first ? "reroute first" : "slice first");
    EXPECT_EQ(other, Time::us(1000)) << (reroute_first ? "reroute first" : "slice first");
    EXPECT_EQ(net.bytes_carried(a), Bytes(4'000'000));
    EXPECT_EQ(net.bytes_carried(b), Bytes(1'000'000));
  }
}

// Chains of slices on random routes over shared links, each slice starting when the previous one
// on its route finishes: taking vacancies at once must give the times that a re-solve of every
// instant gives (starting each next slice from a separate event at the same instant, after the
// instant's re-solve, leaves the vacancy untaken).
std::vector<int64_t> run_chains(bool at_once, uint64_t& solves) {
  Engine engine;
  FlowNetwork net(engine);
  std::mt19937_64 rng(7);
  std::vector<LinkId> links;
  for (int l = 0; l < 6; ++l)
    links.push_back(net.add_link(Bandwidth::gbyte_per_s(1.0 + static_cast<double>(rng() % 8)), Time::ns(rng() % 500)));
  struct Chain {
    std::vector<LinkId> route;
    int64_t slice_bytes = 0;
    int left = 0;
    int64_t done_ns = -1;
  };
  std::vector<Chain> chains(24);
  for (Chain& c : chains) {
    for (const LinkId l : links)
      if (rng() % 3 == 0) c.route.push_back(l);
    if (c.route.empty()) c.route.push_back(links[rng() % links.size()]);
    c.slice_bytes = 100'000 + static_cast<int64_t>(rng() % 400'000);
    c.left = 2 + static_cast<int>(rng() % 6);
  }
  std::function<void(size_t)> next = [&](size_t i) {
    Chain& c = chains[i];
    if (c.left-- == 0) {
      c.done_ns = engine.now().count_ns();
      return;
    }
    const auto start = [&net, &c, &next, i] {
      const std::vector<double> usage(c.route.size(), 1.0);
      net.start_shared(Bytes(c.slice_bytes), c.route, usage, Time::zero(), [&next, i] { next(i); });
    };
    if (at_once)
      start();
    else
      engine.schedule_in(Time::zero(), start);
  };
  for (size_t i = 0; i < chains.size(); ++i)
    engine.schedule_at(Time::ns(static_cast<int64_t>(rng() % 300'000)), [&next, i] { next(i); });
  engine.run();
  solves = net.stats().solves;
  std::vector<int64_t> out;
  for (const Chain& c : chains) out.push_back(c.done_ns);
  return out;
}

TEST(FlowNetworkVacancy, TakingVacanciesGivesTheTimesOfASolveAtEveryInstant) {
  uint64_t solves_at_once = 0, solves_deferred = 0;
  const std::vector<int64_t> at_once = run_chains(true, solves_at_once);
  const std::vector<int64_t> deferred = run_chains(false, solves_deferred);
  ASSERT_EQ(at_once.size(), deferred.size());
  for (size_t i = 0; i < at_once.size(); ++i) {
    EXPECT_GT(at_once[i], 0) << "chain " << i;
    // The same max-min solutions; a solve may round a rate differently in its last bit.
    EXPECT_NEAR(static_cast<double>(at_once[i]), static_cast<double>(deferred[i]), 2.0) << "chain " << i;
  }
  EXPECT_LT(solves_at_once, solves_deferred);
}

}  // namespace
}  // namespace trainsim::sim::flow
