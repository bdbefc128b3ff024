#include "sim/task/critical_path.hpp"

#include <gtest/gtest.h>

#include "sim/task/executor.hpp"

namespace trainsim::sim::task {
namespace {

using sim::Time;
using sim::task::TaskGraph;
using sim::task::TaskIndex;
using sim::task::TaskKind;
using sim::task::TaskSpec;

TaskSpec spec(TaskGraph& g, const char* label, int64_t us, TaskKind kind = TaskKind::kCompute) {
  TaskSpec s;
  s.kind = kind;
  s.label = g.intern(label);
  s.duration = Time::us(us);
  return s;
}

// Two ranks. Rank 0: a (10 us) then c (5 us) on compute; rank 1: b (30 us) on compute. A
// collective x (20 us) on both tp streams needs a and b; d (1 us) on rank 0 compute needs x.
// Rank 0's compute runs a, c (ends at 15) and waits for x, which waits for b (ends at 30): the
// path is b -> x -> d, not a -> c.
TEST(CriticalPath, FollowsTheTaskThatGatedEachStart) {
  TaskGraph g;
  const auto c0 = g.add_stream(0, "compute"), t0 = g.add_stream(0, "tp");
  const auto c1 = g.add_stream(1, "compute"), t1 = g.add_stream(1, "tp");
  const TaskIndex a = g.add(spec(g, "a", 10), c0);
  const TaskIndex c = g.add(spec(g, "c", 5), c0);
  const TaskIndex b = g.add(spec(g, "b", 30), c1);
  const TaskIndex x = g.add(spec(g, "x", 20, TaskKind::kCollective), std::vector{t0, t1});
  const TaskIndex d = g.add(spec(g, "d", 1), c0);
  g.add_dep(a, x);
  g.add_dep(b, x);
  g.add_dep(x, d);
  g.finalize();
  sim::Engine engine;
  sim::task::TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), Time::us(51));
  EXPECT_EQ(critical_path(g, exec), (std::vector<TaskIndex>{b, x, d}));
  (void)c;
}

// A chain on one stream with no dependencies: the stream order alone gates each task.
TEST(CriticalPath, StreamOrderCountsAsAnEdge) {
  TaskGraph g;
  const auto s = g.add_stream(0, "compute");
  const TaskIndex a = g.add(spec(g, "a", 3), s);
  const TaskIndex b = g.add(spec(g, "b", 4), s);
  const TaskIndex c = g.add(spec(g, "c", 5), s);
  g.finalize();
  sim::Engine engine;
  sim::task::TaskExecutor exec(engine, g);
  exec.run();
  EXPECT_EQ(critical_path(g, exec), (std::vector<TaskIndex>{a, b, c}));
}

TEST(CriticalPath, EmptyWhenNothingRan) {
  TaskGraph g;
  g.add_stream(0, "compute");
  g.finalize();
  sim::Engine engine;
  sim::task::TaskExecutor exec(engine, g);
  EXPECT_TRUE(critical_path(g, exec).empty());
}

}  // namespace
}  // namespace trainsim::sim::task
