// Unit tests for sim/event_queue: (time, seq) order, FIFO at equal times, lazy O(1) cancel.
// Every queue implementation must pass the same ordering tests (conv. 4): they run over the event
// queue (a radix ladder) and over the radix-heap queue it replaced.

#include "sim/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim {
// Readable failure messages: GoogleTest finds these printers by argument-dependent lookup.
inline void PrintTo(Time t, std::ostream* os) { *os << t.count_ns() << " ns"; }
inline void PrintTo(Bytes b, std::ostream* os) { *os << b.count() << " B"; }
inline void PrintTo(Bandwidth bw, std::ostream* os) { *os << bw.bytes_per_second() << " B/s"; }

namespace {

template <typename Queue>
class EventQueueTest : public ::testing::Test {};
using Queues = ::testing::Types<EventQueue, RadixHeapEventQueue>;
struct QueueName {
  template <typename Queue>
  static std::string GetName(int) {
    return std::is_same_v<Queue, EventQueue> ? "RadixLadder" : "RadixHeap";
  }
};
TYPED_TEST_SUITE(EventQueueTest, Queues, QueueName);

// Pops every remaining event, runs its callback and returns the times popped.
template <typename Queue>
std::vector<int64_t> drain(Queue& q) {
  std::vector<int64_t> times;
  while (q.has_next()) {
    Time at;
    Callback cb = q.pop(at);
    times.push_back(at.count_ns());
    cb();
  }
  return times;
}

TYPED_TEST(EventQueueTest, OrdersByTimeThenInsertion) {
  TypeParam q;
  std::vector<char> log;
  q.push(Time::ns(30), [&] { log.push_back('e'); });
  q.push(Time::ns(10), [&] { log.push_back('a'); });
  q.push(Time::ns(20), [&] { log.push_back('d'); });
  q.push(Time::ns(10), [&] { log.push_back('b'); });
  q.push(Time::ns(10), [&] { log.push_back('c'); });
  EXPECT_EQ(q.size_live(), 5u);
  EXPECT_EQ(q.next_time(), Time::ns(10));
  // Time first; the three events at t=10 in the order they were pushed (a, b, c).
  EXPECT_EQ(drain(q), (std::vector<int64_t>{10, 10, 10, 20, 30}));
  EXPECT_EQ(log, (std::vector<char>{'a', 'b', 'c', 'd', 'e'}));
  EXPECT_EQ(q.size_live(), 0u);
}

TYPED_TEST(EventQueueTest, ManyEqualTimesRunFifo) {
  // 10000 events at one time: the heap reorders entries internally, only seq keeps FIFO.
  TypeParam q;
  std::vector<int> order;
  constexpr int kN = 10'000;
  for (int i = 0; i < kN; ++i) q.push(Time::us(7), [&order, i] { order.push_back(i); });
  drain(q);
  ASSERT_EQ(order.size(), static_cast<size_t>(kN));
  for (int i = 0; i < kN; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i) << "position " << i;
}

TYPED_TEST(EventQueueTest, CancelSkipsTheEventLazily) {
  TypeParam q;
  std::vector<char> log;
  const EventId a = q.push(Time::ns(10), [&] { log.push_back('a'); });
  const EventId b = q.push(Time::ns(20), [&] { log.push_back('b'); });
  const EventId c = q.push(Time::ns(30), [&] { log.push_back('c'); });
  EXPECT_TRUE(q.is_pending(b));
  q.cancel(b);
  EXPECT_FALSE(q.is_pending(b));
  EXPECT_TRUE(q.is_pending(a));
  EXPECT_TRUE(q.is_pending(c));
  EXPECT_EQ(q.size_live(), 2u);  // cancelled events stop counting at once
  EXPECT_EQ(drain(q), (std::vector<int64_t>{10, 30}));
  EXPECT_EQ(log, (std::vector<char>{'a', 'c'}));
  EXPECT_FALSE(q.is_pending(a));  // fired events are no longer pending
}

TYPED_TEST(EventQueueTest, CancelledTopIsSkippedByNextTime) {
  TypeParam q;
  const EventId first = q.push(Time::ns(5), [] {});
  q.push(Time::ns(7), [] {});
  q.cancel(first);
  EXPECT_TRUE(q.has_next());
  EXPECT_EQ(q.next_time(), Time::ns(7));
}

TYPED_TEST(EventQueueTest, CancelIsIdempotentAndIgnoresFiredOrUnknownEvents) {
  TypeParam q;
  const EventId a = q.push(Time::ns(1), [] {});
  const EventId b = q.push(Time::ns(2), [] {});
  q.cancel(b);
  q.cancel(b);  // twice: no-op
  EXPECT_EQ(q.size_live(), 1u);
  Time at;
  q.pop(at);
  q.cancel(a);                    // already fired: no-op
  q.cancel(EventId{});            // "no event"
  q.cancel(EventId{12345, 999});  // never issued
  EXPECT_EQ(q.size_live(), 0u);
  EXPECT_FALSE(q.is_pending(EventId{}));
  EXPECT_FALSE(q.is_pending(EventId{12345, 999}));
  EXPECT_FALSE(q.has_next());
}

TYPED_TEST(EventQueueTest, RecycledSlotDoesNotResurrectOldHandle) {
  TypeParam q;
  int fired = 0;
  const EventId old_id = q.push(Time::ns(1), [&] { ++fired; });
  Time at;
  q.pop(at)();
  const EventId new_id = q.push(Time::ns(2), [&] { fired += 10; });
  // The new event reuses the freed callback slot (this is what the test exercises) ...
  ASSERT_EQ(new_id.slot, old_id.slot);
  EXPECT_FALSE(new_id == old_id);
  // ... yet the stale handle neither reads as pending nor cancels the new event.
  EXPECT_FALSE(q.is_pending(old_id));
  q.cancel(old_id);
  EXPECT_TRUE(q.is_pending(new_id));
  drain(q);
  EXPECT_EQ(fired, 11);
}

TYPED_TEST(EventQueueTest, CancelEverythingEmptiesTheQueue) {
  TypeParam q;
  std::vector<EventId> ids;
  for (int i = 0; i < 100; ++i) ids.push_back(q.push(Time::ns(100 - i), [] { FAIL() << "cancelled event ran"; }));
  for (const EventId id : ids) q.cancel(id);
  EXPECT_EQ(q.size_live(), 0u);
  EXPECT_FALSE(q.has_next());
  // The queue is reusable afterwards.
  q.push(Time::ns(3), [] {});
  EXPECT_EQ(drain(q), (std::vector<int64_t>{3}));
}

TYPED_TEST(EventQueueTest, EmptyQueueAccessIsAnInternalError) {
  TypeParam q;
  Time at;
  EXPECT_FALSE(q.has_next());
  EXPECT_THROW(q.pop(at), InternalError);
  EXPECT_THROW(q.next_time(), InternalError);
  const EventId id = q.push(Time::ns(1), [] {});
  q.cancel(id);
  EXPECT_THROW(q.pop(at), InternalError);  // only a cancelled entry is left
}

// Model-based test: random pushes (times from a narrow range, so many ties), pops and cancels,
// checked step by step against std::set ordered by (time, push index). Pushes may land before
// events already popped (the bare queue does not require monotonic time). Heavy cancelling makes
// dead entries outnumber live ones, which exercises the compaction path too.
TYPED_TEST(EventQueueTest, RandomOperationsMatchReferenceModel) {
  std::mt19937_64 gen(20240611);
  TypeParam q;
  std::set<std::pair<int64_t, int>> model;  // (time, push index) of live events
  std::vector<EventId> ids;                 // by push index
  std::vector<int64_t> time_of;             // by push index
  int fired = -1;                           // push index of the last callback run
  for (int round = 0; round < 60; ++round) {
    // Every 5th round is a cancel storm: many pushes, no pops, then 95% of the live events are
    // cancelled, so dead entries outnumber live ones and the next pushes compact the heap.
    const bool storm = round % 5 == 4;
    const int pushes = static_cast<int>(gen() % 4000) + (storm ? 4000 : 0);
    const int cancel_pct = static_cast<int>(gen() % 100);
    const int pops = storm ? 0 : static_cast<int>(gen() % 4000);
    for (int k = 0; k < pushes; ++k) {
      const int idx = static_cast<int>(ids.size());
      const int64_t t = static_cast<int64_t>(gen() % 500);
      ids.push_back(q.push(Time::ns(t), [&fired, idx] { fired = idx; }));
      time_of.push_back(t);
      model.emplace(t, idx);
    }
    // Cancel a share of handles: mostly recent ones (still live), some from anywhere (often
    // fired or cancelled already, which must be a no-op).
    for (int k = 0; k < pushes * cancel_pct / 100; ++k) {
      const size_t recent = std::min<size_t>(ids.size(), 4000);
      const int idx = static_cast<int>(gen() % 4 != 0 ? ids.size() - 1 - gen() % recent : gen() % ids.size());
      ASSERT_EQ(q.is_pending(ids[static_cast<size_t>(idx)]),
                model.count({time_of[static_cast<size_t>(idx)], idx}) == 1);
      q.cancel(ids[static_cast<size_t>(idx)]);
      model.erase({time_of[static_cast<size_t>(idx)], idx});
    }
    if (storm) {
      for (auto it = model.begin(); it != model.end();) {
        if (gen() % 20 != 0) {
          q.cancel(ids[static_cast<size_t>(it->second)]);
          it = model.erase(it);
        } else {
          ++it;
        }
      }
    }
    ASSERT_EQ(q.size_live(), model.size());
    for (int k = 0; k < pops && !model.empty(); ++k) {
      ASSERT_TRUE(q.has_next());
      const auto expected = *model.begin();
      ASSERT_EQ(q.next_time().count_ns(), expected.first);
      Time at;
      q.pop(at)();
      ASSERT_EQ(at.count_ns(), expected.first);
      ASSERT_EQ(fired, expected.second) << "round " << round;  // the right callback came with it
      model.erase(model.begin());
    }
    ASSERT_EQ(q.size_live(), model.size());
  }
  // Drain the rest in order.
  while (!model.empty()) {
    Time at;
    q.pop(at)();
    ASSERT_EQ(fired, model.begin()->second);
    model.erase(model.begin());
  }
  EXPECT_FALSE(q.has_next());
}

// The engine's use against std::priority_queue on (time, push index): pushes at or after the
// clock (ties at it, near and far future, jumps towards the end of the int64 range), cancels,
// next_time peeks, and draining to empty before refilling. Pops must run the same callbacks in
// the same order.
TYPED_TEST(EventQueueTest, MatchesPriorityQueueOnEngineWorkloads) {
  using Pair = std::pair<int64_t, int>;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::mt19937_64 gen(35);
  TypeParam q;
  std::priority_queue<Pair, std::vector<Pair>, std::greater<>> ref;
  std::vector<EventId> ids;
  std::vector<bool> cancelled;
  int fired = -1;
  int64_t now = std::numeric_limits<int64_t>::min() + 10;  // start at the bottom of the range
  auto delay = [&]() -> int64_t {
    const uint64_t r = gen() % 100;
    if (r < 30) return 0;
    if (r < 70) return static_cast<int64_t>(gen() % 500);
    if (r < 95) return static_cast<int64_t>(gen() % 5'000'000);
    return static_cast<int64_t>(gen() >> (1 + gen() % 40));  // far future, up to 2^63
  };
  for (int round = 0; round < 40; ++round) {
    const int pushes = static_cast<int>(gen() % 3000);
    const int pops = round % 8 == 7 ? 1'000'000 : static_cast<int>(gen() % 3000);  // now and then: drain
    for (int k = 0; k < pushes; ++k) {
      const int idx = static_cast<int>(ids.size());
      int64_t t = 0;
      if (__builtin_add_overflow(now, delay(), &t)) t = kMax;
      ids.push_back(q.push(Time::ns(t), [&fired, idx] { fired = idx; }));
      cancelled.push_back(false);
      ref.emplace(t, idx);
      if (gen() % 10 == 0) {  // cancel a recent event (maybe fired already: a no-op)
        const size_t victim = ids.size() - 1 - gen() % std::min<size_t>(ids.size(), 50);
        q.cancel(ids[victim]);
        cancelled[victim] = true;
      }
    }
    for (int k = 0; k < pops; ++k) {
      while (!ref.empty() && cancelled[static_cast<size_t>(ref.top().second)]) ref.pop();
      if (ref.empty()) break;
      ASSERT_TRUE(q.has_next());
      ASSERT_EQ(q.next_time().count_ns(), ref.top().first) << "round " << round;
      Time at;
      q.pop(at)();
      ASSERT_EQ(at.count_ns(), ref.top().first) << "round " << round;
      ASSERT_EQ(fired, ref.top().second) << "round " << round;
      cancelled[static_cast<size_t>(fired)] = true;  // fired: later cancels are no-ops in both
      now = at.count_ns();
      ref.pop();
    }
    if (ref.empty()) {
      ASSERT_FALSE(q.has_next());
    }
  }
}

// Cancelling most of a large queue and then pushing more must keep the survivors in order and
// their handles valid (the dead entries are compacted away behind the scenes).
TYPED_TEST(EventQueueTest, SurvivorsOfMassCancelKeepOrderAndHandles) {
  TypeParam q;
  std::vector<EventId> ids;
  std::vector<int> order;
  for (int i = 0; i < 5'000; ++i) ids.push_back(q.push(Time::ns(5'000 - i), [&order, i] { order.push_back(i); }));
  // Keep every 10th event: 500 live, 4500 dead.
  for (int i = 0; i < 5'000; ++i)
    if (i % 10 != 0) q.cancel(ids[static_cast<size_t>(i)]);
  // New events after the mass cancel, at times interleaved with the survivors.
  for (int i = 0; i < 100; ++i) q.push(Time::ns(50 * i + 1), [&order, i] { order.push_back(10'000 + i); });
  EXPECT_EQ(q.size_live(), 600u);
  for (int i = 0; i < 5'000; i += 10) EXPECT_TRUE(q.is_pending(ids[static_cast<size_t>(i)]));
  for (int i = 1; i < 5'000; i += 10) EXPECT_FALSE(q.is_pending(ids[static_cast<size_t>(i)]));
  // A survivor can still be cancelled through its old handle.
  q.cancel(ids[4'990]);  // time 10
  const std::vector<int64_t> times = drain(q);
  ASSERT_EQ(times.size(), 599u);
  for (size_t k = 1; k < times.size(); ++k) ASSERT_LE(times[k - 1], times[k]);
  EXPECT_EQ(times.front(), 1);  // new event i=0 at t=1; survivor 4990 (t=10) was cancelled
  EXPECT_EQ(order.front(), 10'000);
  EXPECT_EQ(std::count(order.begin(), order.end(), 4'990), 0);
}

}  // namespace
}  // namespace trainsim::sim
