// Unit tests for sim/radix_ladder: (time, key) order against std::priority_queue on random
// workloads (ties, far-future outliers, huge jumps, the ends of the int64 range, drain and refill,
// pushes below the reference), filter, and the announcements of entries popped soon. The event
// queue's ordering tests (event_queue_test.cpp) run over it as well, through EventQueue.

#include "sim/radix_ladder.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace trainsim::sim {
namespace {

using Entry = RadixLadder::Entry;
using Pair = std::pair<int64_t, uint64_t>;
// The reference: a binary heap on (time, key).
using Reference = std::priority_queue<Pair, std::vector<Pair>, std::greater<>>;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::vector<Pair> drain(RadixLadder& q) {
  std::vector<Pair> out;
  while (!q.empty()) {
    const Entry e = q.top();
    out.emplace_back(e.at.count_ns(), e.key);
    q.pop();
  }
  return out;
}

std::vector<Pair> drain(Reference& r) {
  std::vector<Pair> out;
  for (; !r.empty(); r.pop()) out.push_back(r.top());
  return out;
}

// a + d without overflow: saturates at the ends of the range.
int64_t add_sat(int64_t a, int64_t d) {
  int64_t r = 0;
  return __builtin_add_overflow(a, d, &r) ? (d > 0 ? kMax : kMin) : r;
}

TEST(RadixLadderTest, PopsByTimeThenKey) {
  RadixLadder q;
  q.push({Time::ns(30), 1});
  q.push({Time::ns(10), 2});
  q.push({Time::ns(20), 3});
  q.push({Time::ns(10), 4});
  q.push({Time::ns(10), 5});
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(drain(q), (std::vector<Pair>{{10, 2}, {10, 4}, {10, 5}, {20, 3}, {30, 1}}));
  EXPECT_TRUE(q.empty());
}

TEST(RadixLadderTest, NegativeAndExtremeTimesKeepTheirOrder) {
  RadixLadder q;
  q.push({Time::infinite(), 1});
  q.push({Time::ns(-5), 2});
  q.push({Time::ns(0), 3});
  q.push({Time::ns(kMin), 4});
  q.push({Time::ns(kMax - 1), 5});
  q.push({Time::ns(kMin + 1), 6});
  q.push({Time::ns(kMin), 7});
  q.push({Time::infinite(), 8});
  EXPECT_EQ(drain(q), (std::vector<Pair>{
                          {kMin, 4}, {kMin, 7}, {kMin + 1, 6}, {-5, 2}, {0, 3}, {kMax - 1, 5}, {kMax, 1}, {kMax, 8}}));
}

// Many entries at one time, pushed while others pop: FIFO among them, in and across blocks.
TEST(RadixLadderTest, LongRunsAtOneTimePopInKeyOrder) {
  RadixLadder q;
  Reference ref;
  uint64_t key = 0;
  for (int i = 0; i < 5000; ++i) {
    const int64_t t = 1000 + (i % 3);
    q.push({Time::ns(t), ++key});
    ref.emplace(t, key);
  }
  for (int step = 0; step < 20000; ++step) {
    ASSERT_EQ(q.top().at.count_ns(), ref.top().first);
    ASSERT_EQ(q.top().key, ref.top().second);
    const int64_t now = ref.top().first;
    q.pop();
    ref.pop();
    q.push({Time::ns(now + (step % 7 == 0 ? 1 : 0)), ++key});  // at the clock, now and then just after
    ref.emplace(now + (step % 7 == 0 ? 1 : 0), key);
  }
  EXPECT_EQ(drain(q), drain(ref));
}

struct Workload {
  const char* name;
  // The time of a push, given the last popped time and a random draw.
  int64_t (*time)(int64_t now, std::mt19937_64& gen);
  bool monotone;  // never below the last popped time (the engine's case)
};

int64_t near_future(int64_t now, std::mt19937_64& gen) {
  const uint64_t r = gen() % 100;
  if (r < 30) return now;                                              // ties at the clock
  if (r < 80) return add_sat(now, static_cast<int64_t>(gen() % 300));  // inside and just past a window
  if (r < 97) return add_sat(now, static_cast<int64_t>(gen() % 2'000'000));
  return add_sat(now, static_cast<int64_t>(gen() >> 2));  // far-future outliers, up to 2^62 ns
}

int64_t huge_jumps(int64_t now, std::mt19937_64& gen) {
  const uint64_t r = gen() % 100;
  if (r < 50) return add_sat(now, static_cast<int64_t>(gen() % 4));
  if (r < 90) return add_sat(now, int64_t{1} << (gen() % 63));  // every rung
  return add_sat(now, static_cast<int64_t>(gen() >> 1));        // up to the end of the range
}

int64_t int64_ends(int64_t, std::mt19937_64& gen) {
  // Around both ends of the range and zero, independent of the clock: many pushes land below
  // the reference, which the ladder must handle by lowering it.
  const int64_t small = static_cast<int64_t>(gen() % 1000);
  switch (gen() % 5) {
    case 0: return kMin + small;
    case 1: return kMax - small;
    case 2: return small - 500;
    case 3: return static_cast<int64_t>(gen());
    default: return kMax;
  }
}

int64_t below_clock(int64_t now, std::mt19937_64& gen) {
  // Mostly ahead of the clock, sometimes behind it by a little or a lot (a caller that peeked).
  const uint64_t r = gen() % 100;
  if (r < 80) return add_sat(now, static_cast<int64_t>(gen() % 100'000));
  if (r < 95) return add_sat(now, -static_cast<int64_t>(gen() % 300));
  return add_sat(now, -static_cast<int64_t>(gen() % (uint64_t{1} << 40)));
}

class RadixLadderWorkloadTest : public ::testing::TestWithParam<Workload> {};

// Random pushes and pops, phases of growth, steady state and draining to empty (then refilling),
// checked pop by pop against the reference.
TEST_P(RadixLadderWorkloadTest, MatchesPriorityQueue) {
  const Workload w = GetParam();
  std::mt19937_64 gen(20261201);
  RadixLadder q;
  Reference ref;
  uint64_t key = 0;
  int64_t now = w.monotone ? 0 : kMin;
  for (int phase = 0; phase < 12; ++phase) {
    // Grow, hold, drain: the share of pops rises from phase to phase within each group of three.
    const int pop_pct = phase % 3 == 0 ? 30 : phase % 3 == 1 ? 50 : 100;
    const int steps = 6000 + static_cast<int>(gen() % 6000);
    for (int s = 0; s < steps; ++s) {
      if (static_cast<int>(gen() % 100) < pop_pct) {
        if (ref.empty()) {
          ASSERT_TRUE(q.empty());
          continue;
        }
        ASSERT_FALSE(q.empty());
        const Entry e = q.top();
        ASSERT_EQ(e.at.count_ns(), ref.top().first) << w.name << " phase " << phase << " step " << s;
        ASSERT_EQ(e.key, ref.top().second) << w.name << " phase " << phase << " step " << s;
        now = e.at.count_ns();
        q.pop();
        ref.pop();
      } else {
        const int64_t t = w.time(now, gen);
        ASSERT_TRUE(!w.monotone || t >= now);
        q.push({Time::ns(t), ++key});
        ref.emplace(t, key);
      }
      ASSERT_EQ(q.size(), ref.size());
    }
  }
  EXPECT_EQ(drain(q), drain(ref));
}

INSTANTIATE_TEST_SUITE_P(Workloads, RadixLadderWorkloadTest,
                         ::testing::Values(Workload{"near_future", near_future, true},
                                           Workload{"huge_jumps", huge_jumps, true},
                                           Workload{"int64_ends", int64_ends, false},
                                           Workload{"below_clock", below_clock, false}),
                         [](const auto& info) { return std::string(info.param.name); });

// A push below the reference after top() raised it (run_until peeks at the next event, then the
// caller schedules at its clock): only the low rungs move, and the order stays exact.
TEST(RadixLadderTest, PushBelowThePeekedTopKeepsTheOrder) {
  for (const int64_t gap : {int64_t{5}, int64_t{300}, int64_t{70'000}, int64_t{1} << 33}) {
    RadixLadder q;
    Reference ref;
    uint64_t key = 0;
    auto push = [&](int64_t t) {
      q.push({Time::ns(t), ++key});
      ref.emplace(t, key);
    };
    for (int i = 0; i < 3000; ++i) push(gap + i % 500);
    for (int i = 0; i < 200; ++i) push(gap * 3 + i);
    EXPECT_EQ(q.top().at.count_ns(), gap);  // the ladder spreads down to the top
    push(0);                                // then events before it arrive
    push(gap - 1);
    push(gap);
    push(1);
    EXPECT_EQ(drain(q), drain(ref)) << "gap " << gap;
  }
}

TEST(RadixLadderTest, FilterDropsEntriesAndKeepsTheOrder) {
  RadixLadder q;
  std::set<Pair> model;
  for (uint64_t k = 1; k <= 5000; ++k) {
    // Spread over several rungs, with ties.
    const auto t = static_cast<int64_t>((k * 7919) % 101) << ((k % 4) * 8);
    q.push({Time::ns(t), k});
    model.emplace(t, k);
  }
  // Pop a few first, so that filter also sees a partly consumed bottom and bucket.
  for (int i = 0; i < 15; ++i) {
    q.top();
    q.pop();
    model.erase(model.begin());
  }
  q.push({q.top().at, 9000});  // a rung-0 bucket beside the bottom
  model.emplace(q.top().at.count_ns(), 9000);
  q.filter([](const Entry& e) { return e.key % 3 == 0; });
  std::erase_if(model, [](const Pair& m) { return m.second % 3 != 0; });
  EXPECT_EQ(q.size(), model.size());
  std::vector<Pair> visited;
  q.for_each([&](const Entry& e) { visited.emplace_back(e.at.count_ns(), e.key); });
  EXPECT_EQ(std::set<Pair>(visited.begin(), visited.end()), model);
  EXPECT_EQ(drain(q), std::vector<Pair>(model.begin(), model.end()));
  // Filtering everything away leaves an empty ladder that works as new.
  for (uint64_t k = 1; k <= 200; ++k) q.push({Time::ns(static_cast<int64_t>(k % 10)), 10'000 + k});
  q.filter([](const Entry&) { return false; });
  EXPECT_TRUE(q.empty());
  q.push({Time::ns(3), 20'000});
  EXPECT_EQ(drain(q), (std::vector<Pair>{{3, 20'000}}));
}

// Filtering can leave a rung-0 bucket after the bottom's last time; a push at that bucket's time
// must queue behind it, not at the end of the bottom.
TEST(RadixLadderTest, PushAfterFilterKeepsTiesInKeyOrder) {
  RadixLadder q;
  q.push({Time::ns(10), 1});
  q.push({Time::ns(20), 2});
  EXPECT_EQ(q.top().key, 1u);  // the bottom is [10, 20]
  q.push({Time::ns(15), 3});   // before the bottom's end: a rung-0 bucket
  q.filter([](const Entry& e) { return e.key != 2; });
  q.push({Time::ns(15), 4});  // after the bottom's end now, but 3 is older
  EXPECT_EQ(drain(q), (std::vector<Pair>{{10, 1}, {15, 3}, {15, 4}}));
}

// Every entry is announced (for prefetching) before it pops, when the bottom holds it.
TEST(RadixLadderTest, AnnouncesEntriesBeforeTheyPop) {
  RadixLadder q;
  std::mt19937_64 gen(3);
  uint64_t key = 0;
  for (int i = 0; i < 100'000; ++i) q.push({Time::ns(static_cast<int64_t>(gen() % 1'000'000)), ++key});
  std::set<uint64_t> announced;
  const auto soon = [&](const Entry& e) { announced.insert(e.key); };
  size_t hits = 0;
  for (int i = 0; i < 100'000; ++i) {
    const Entry e = q.top(soon);
    hits += announced.count(e.key);
    q.pop();
    q.look_ahead(soon);
  }
  EXPECT_EQ(hits, 100'000u);
}

}  // namespace
}  // namespace trainsim::sim
