#include "models/memory/timeline.hpp"

#include <gtest/gtest.h>

#include "sim/engine.hpp"
#include "sim/task/executor.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::models::memory {
namespace {

using sim::task::TaskGraph;
using sim::task::TaskSpec;

TaskSpec unit(int64_t ns) {
  TaskSpec s;
  s.duration = sim::Time::ns(ns);
  return s;
}

TEST(ActivationTimeline, PeakFollowsTheTasksThatRan) {
  // One stream runs F0 F1 B0 F2 B1 B2 (1F1B-like): micro-batch i allocates 10 << i bytes when
  // its F starts and frees them when its B ends. Live sets: {0}, {0,1}, {1}, {1,2}, {2}, {}:
  // peak = max(1 + 2, 2 + 4) x 10 = 60.
  TaskGraph g;
  const auto st = g.add_stream(0, "compute");
  const auto f0 = g.add(unit(1), st), f1 = g.add(unit(1), st), b0 = g.add(unit(2), st);
  const auto f2 = g.add(unit(1), st), b1 = g.add(unit(2), st), b2 = g.add(unit(2), st);
  g.finalize();
  const std::vector<TimelineEvent> events = {
      {f0, true, 10, 0}, {f1, true, 20, 0},  {b0, false, 10, 0},
      {f2, true, 40, 0}, {b1, false, 20, 0}, {b2, false, 40, 0},
  };
  sim::Engine engine;
  ActivationTimeline tl(engine, events, 1);
  sim::task::TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), sim::Time::ns(9));
  EXPECT_EQ(tl.peak(0), 60);
  EXPECT_EQ(tl.current(0), 0);
}

TEST(ActivationTimeline, SlotsAreIndependentAndTasksWithoutEventsAreIgnored) {
  // Two ranks (slots); a task may carry both a start and an end event; untracked tasks beyond
  // the last tracked index are ignored.
  TaskGraph g;
  const auto s0 = g.add_stream(0, "compute"), s1 = g.add_stream(1, "compute");
  const auto a = g.add(unit(5), s0);  // slot 0: +7 at start, -7 at end
  const auto b = g.add(unit(5), s1);  // slot 1: +3 at start
  const auto c = g.add(unit(5), s1);  // slot 1: +4 at start
  g.add(unit(1), s0);                 // no events
  g.finalize();
  const std::vector<TimelineEvent> events = {{a, true, 7, 0}, {a, false, 7, 0}, {b, true, 3, 1}, {c, true, 4, 1}};
  sim::Engine engine;
  ActivationTimeline tl(engine, events, 2);
  sim::task::TaskExecutor exec(engine, g);
  exec.run();
  EXPECT_EQ(tl.peak(0), 7);
  EXPECT_EQ(tl.current(0), 0);
  EXPECT_EQ(tl.peak(1), 7);
  EXPECT_EQ(tl.current(1), 7);
}

TEST(ActivationTimeline, FreeBeforeAllocateAtTheSameInstantDoesNotInflateThePeak) {
  // Two streams: x (slot 0, +5 at start) starts at t = 2 exactly when y (slot 0, -5 at end)
  // ends; y itself started at 0 with +5. The executor ends y before it starts x (x depends on
  // y), so the peak stays 5.
  TaskGraph g;
  const auto s0 = g.add_stream(0, "compute"), s1 = g.add_stream(0, "comm");
  const auto y = g.add(unit(2), s0);
  const auto x = g.add(unit(2), s1);
  g.add_dep(y, x);
  g.finalize();
  const std::vector<TimelineEvent> events = {{y, true, 5, 0}, {y, false, 5, 0}, {x, true, 5, 0}, {x, false, 5, 0}};
  sim::Engine engine;
  ActivationTimeline tl(engine, events, 1);
  sim::task::TaskExecutor exec(engine, g);
  exec.run();
  EXPECT_EQ(tl.peak(0), 5);
}

}  // namespace
}  // namespace trainsim::models::memory
