// Unit tests for sim/engine: clock, scheduling, run/run_until, monotonic time, RNG streams and
// the signal lists an Engine owns.

#include "sim/engine.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim {
// Readable failure messages: GoogleTest finds these printers by argument-dependent lookup.
inline void PrintTo(Time t, std::ostream* os) { *os << t.count_ns() << " ns"; }
inline void PrintTo(Bytes b, std::ostream* os) { *os << b.count() << " B"; }
inline void PrintTo(Bandwidth bw, std::ostream* os) { *os << bw.bytes_per_second() << " B/s"; }

namespace {

using namespace literals;

TEST(EngineTest, CallbacksSeeTheirOwnTimeAndScheduleRelativeToIt) {
  Engine engine;
  std::vector<std::pair<char, int64_t>> log;
  engine.schedule_at(10_ns, [&] {
    log.emplace_back('a', engine.now().count_ns());
    // schedule_in is relative to the current event's time: 10 + 5 = 15.
    engine.schedule_in(5_ns, [&] { log.emplace_back('b', engine.now().count_ns()); });
  });
  EXPECT_EQ(engine.now(), Time::zero());
  EXPECT_EQ(engine.run(), 2u);
  EXPECT_EQ(log, (std::vector<std::pair<char, int64_t>>{{'a', 10}, {'b', 15}}));
  EXPECT_EQ(engine.now(), 15_ns);  // the clock ends at the last event
  EXPECT_EQ(engine.events_executed(), 2u);
}

TEST(EngineTest, EqualTimesRunFifoIncludingEventsScheduledAtNow) {
  Engine engine;
  std::string order;
  engine.schedule_at(5_ns, [&] {
    order += 'A';
    // Scheduled at the current time: runs after B, which was queued earlier for the same time.
    engine.schedule_in(Time::zero(), [&] { order += 'C'; });
  });
  engine.schedule_at(5_ns, [&] { order += 'B'; });
  engine.schedule_at(1_ns, [&] { order += '0'; });
  engine.run();
  EXPECT_EQ(order, "0ABC");
}

TEST(EngineTest, RunUntilIsInclusiveAndLeavesLaterEvents) {
  Engine engine;
  std::vector<int64_t> ran;
  for (int64_t t : {30, 10, 20}) engine.schedule_at(Time::ns(t), [&ran, t] { ran.push_back(t); });
  // Events at 10 and 20 ran (20 <= limit); the one at 30 waits.
  EXPECT_EQ(engine.run_until(20_ns), 2u);
  EXPECT_EQ(ran, (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(engine.now(), 20_ns);
  // Nothing in (20, 25]: no event runs and, as documented, the clock stays at the last event.
  EXPECT_EQ(engine.run_until(25_ns), 0u);
  EXPECT_EQ(engine.now(), 20_ns);
  EXPECT_EQ(engine.run(), 1u);
  EXPECT_EQ(ran, (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(engine.now(), 30_ns);
  EXPECT_EQ(engine.events_executed(), 3u);
}

TEST(EngineTest, RunUntilRunsEventsScheduledDuringTheRunUpToTheLimit) {
  Engine engine;
  std::vector<int64_t> ran;
  engine.schedule_at(10_ns, [&] {
    engine.schedule_in(5_ns, [&] { ran.push_back(engine.now().count_ns()); });   // 15 <= 20
    engine.schedule_in(15_ns, [&] { ran.push_back(engine.now().count_ns()); });  // 25 > 20
  });
  EXPECT_EQ(engine.run_until(20_ns), 2u);
  EXPECT_EQ(ran, (std::vector<int64_t>{15}));
  engine.run();
  EXPECT_EQ(ran, (std::vector<int64_t>{15, 25}));
}

TEST(EngineTest, AnEventLimitStopsTheRunAndSaysSo) {
  Engine e(1);
  int ran = 0;
  for (int i = 0; i < 10; ++i) e.schedule_at(Time::ns(i), [&] { ++ran; });
  e.set_event_limit(4);
  EXPECT_EQ(e.run(), 4u);
  EXPECT_EQ(ran, 4);
  EXPECT_TRUE(e.limit_reached());
  EXPECT_EQ(e.run(), 0u);  // the budget is for the whole engine
  Engine free(1);
  free.schedule_at(Time::ns(1), [] {});
  EXPECT_EQ(free.run(), 1u);
  EXPECT_FALSE(free.limit_reached());
}

TEST(EngineTest, AWorkLimitStopsTheRunOnChargedWork) {
  // Each event charges 10 units; a budget of 35 stops the run after the event that passes it.
  Engine e(1);
  int ran = 0;
  for (int i = 0; i < 10; ++i)
    e.schedule_at(Time::ns(i), [&] {
      ++ran;
      e.charge(10);
    });
  e.set_work_limit(35);
  EXPECT_EQ(e.run(), 4u);
  EXPECT_EQ(ran, 4);
  EXPECT_TRUE(e.limit_reached());
}

TEST(EngineTest, SchedulingInThePastIsAnInternalError) {
  Engine engine;
  engine.schedule_at(20_ns, [] {});
  engine.run();
  try {
    engine.schedule_at(10_ns, [] {});
    FAIL() << "scheduling before now() must throw";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("event scheduled in the past: 10 ns < now 20 ns"), std::string::npos)
        << e.what();
  }
  // Scheduling exactly at now() is fine.
  EXPECT_NO_THROW(engine.schedule_at(20_ns, [] {}));
}

TEST(EngineTest, SchedulingInThePastFromACallbackPropagates) {
  Engine engine;
  engine.schedule_at(50_ns, [&] { engine.schedule_at(49_ns, [] {}); });
  EXPECT_THROW(engine.run(), InternalError);
}

TEST(EngineTest, TimeOverflowIsTheInputsError) {
  Engine engine;
  // An infinite delay (or one that saturates) would park an event at the end of time. Durations
  // come from input values, so a simulation past the clock's 292 years is a ConfigError that says
  // so (exit 2), not an internal error.
  try {
    engine.schedule_in(Time::infinite(), [] {});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "simulated time");
    EXPECT_NE(std::string(e.message()).find("292 years"), std::string::npos);
  }
  engine.schedule_at(Time::s(9'000'000'000),
                     [&] { EXPECT_THROW(engine.schedule_in(Time::s(1'000'000'000), [] {}), ConfigError); });
  engine.run();
}

TEST(EngineTest, CancelThroughTheEngine) {
  Engine engine;
  int ran = 0;
  const EventId doomed = engine.schedule_at(30_ns, [&] { ran += 100; });
  engine.schedule_at(10_ns, [&] {
    ++ran;
    EXPECT_TRUE(engine.is_pending(doomed));
    engine.cancel(doomed);  // a callback cancels a later event
    EXPECT_FALSE(engine.is_pending(doomed));
  });
  EXPECT_EQ(engine.run(), 1u);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(engine.now(), 10_ns);  // the cancelled event did not move the clock
}

TEST(EngineTest, RngStreamsAreOwnedPerEngineAndStable) {
  Engine a(7), b(7), c(8);
  // Same object for the same stream: draws continue the sequence.
  EXPECT_EQ(&a.rng(3), &a.rng(3));
  // Request order does not matter: stream 2 of engine a matches stream 2 of engine b even
  // though b created stream 5 first.
  b.rng(5).next_u64();
  const uint64_t a2 = a.rng(2).next_u64();
  const uint64_t b2 = b.rng(2).next_u64();
  EXPECT_EQ(a2, b2);
  // And it equals a standalone Rng(seed, stream).
  Rng standalone(7, 2);
  EXPECT_EQ(a2, standalone.next_u64());
  // A different seed gives a different stream.
  EXPECT_NE(c.rng(2).next_u64(), a2);
}

TEST(EngineTest, SignalsFireInConnectionOrder) {
  Engine engine;
  std::vector<std::string> log;
  EXPECT_TRUE(engine.signals().on_task_start.empty());
  engine.signals().on_task_start.connect(
      [&](TaskIndex i, Time t) { log.push_back("first " + std::to_string(i) + "@" + std::to_string(t.count_ns())); });
  engine.signals().on_task_start.connect([&](TaskIndex i, Time) { log.push_back("second " + std::to_string(i)); });
  EXPECT_FALSE(engine.signals().on_task_start.empty());
  EXPECT_TRUE(engine.signals().on_task_end.empty());  // signals are independent lists
  engine.signals().on_task_start.emit(4, 12_ns);
  EXPECT_EQ(log, (std::vector<std::string>{"first 4@12", "second 4"}));
}

TEST(EngineTest, StopEndsTheRunAfterTheCurrentEvent) {
  Engine engine;
  std::vector<int64_t> ran;
  for (int64_t t : {1, 2, 3})
    engine.schedule_at(Time::ns(t), [&, t] {
      ran.push_back(t);
      if (t == 2) engine.stop();
    });
  EXPECT_EQ(engine.run(), 2u);
  EXPECT_EQ(engine.now(), 2_ns);
  EXPECT_EQ(ran, (std::vector<int64_t>{1, 2}));
  // The queue is left as it was: a later run() goes on (the stop request does not linger).
  EXPECT_EQ(engine.run(), 1u);
  EXPECT_EQ(ran, (std::vector<int64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace trainsim::sim
