// Unit tests for sim/task/executor: stream FIFO, dependencies, multi-stream (collective) tasks,
// signal order, makespan, runners per kind, and deadlock reports.

#include "sim/task/executor.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim {
// Readable failure messages: GoogleTest finds these printers by argument-dependent lookup.
inline void PrintTo(Time t, std::ostream* os) { *os << t.count_ns() << " ns"; }
inline void PrintTo(Bytes b, std::ostream* os) { *os << b.count() << " B"; }
inline void PrintTo(Bandwidth bw, std::ostream* os) { *os << bw.bytes_per_second() << " B/s"; }
}  // namespace trainsim::sim

namespace trainsim::sim::task {
namespace {

using namespace sim::literals;

TaskSpec timed(TaskGraph& g, const std::string& label, Time duration, TaskKind kind = TaskKind::kCompute) {
  TaskSpec s;
  s.kind = kind;
  s.label = g.intern(label);
  s.duration = duration;
  return s;
}

// Records every task start and end as "start a@0" / "end a@5" through the engine's signals.
class SignalLog {
 public:
  SignalLog(Engine& engine, const TaskGraph& g) {
    engine.signals().on_task_start.connect([this, &g](TaskIndex i, Time t) {
      lines_.push_back("start " + g.display_name(i) + "@" + std::to_string(t.count_ns()));
    });
    engine.signals().on_task_end.connect([this, &g](TaskIndex i, Time t) {
      lines_.push_back("end " + g.display_name(i) + "@" + std::to_string(t.count_ns()));
    });
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;
};

// The InternalError message of a run that must deadlock ("" and a failure if it completes).
std::string deadlock_message(TaskExecutor& exec) {
  try {
    exec.run();
  } catch (const InternalError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a deadlock";
  return "";
}

TEST(TaskExecutorTest, StreamRunsTasksInInsertionOrder) {
  // One stream, no dependencies: the tasks still run one after another, like a CUDA stream.
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  const TaskIndex a = g.add(timed(g, "a", 5_ns), s);
  const TaskIndex b = g.add(timed(g, "b", 3_ns), s);
  const TaskIndex c = g.add(timed(g, "c", 2_ns), s);
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), 10_ns);  // 5 + 3 + 2
  EXPECT_EQ(exec.start_time(a), 0_ns);
  EXPECT_EQ(exec.start_time(b), 5_ns);
  EXPECT_EQ(exec.start_time(c), 8_ns);
  EXPECT_EQ(exec.end_time(c), 10_ns);
}

TEST(TaskExecutorTest, IndependentStreamsOverlap) {
  TaskGraph g;
  const TaskIndex a = g.add(timed(g, "a", 10_ns), g.add_stream(0, "compute"));
  const TaskIndex b = g.add(timed(g, "b", 4_ns), g.add_stream(1, "compute"));
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), 10_ns);  // max(10, 4), not 14
  EXPECT_EQ(exec.start_time(a), 0_ns);
  EXPECT_EQ(exec.start_time(b), 0_ns);
}

TEST(TaskExecutorTest, DependencyWaitsAndBlocksItsStream) {
  // Stream A: a0 (10 ns). Stream B: b0 (2 ns, after a0), then b1 (3 ns, no dependency).
  // b0 starts when a0 ends (10); b1 has no dependency but cannot overtake b0 on its stream.
  TaskGraph g;
  const StreamId sa = g.add_stream(0, "compute");
  const StreamId sb = g.add_stream(1, "compute");
  const TaskIndex a0 = g.add(timed(g, "a0", 10_ns), sa);
  const TaskIndex b0 = g.add(timed(g, "b0", 2_ns), sb);
  const TaskIndex b1 = g.add(timed(g, "b1", 3_ns), sb);
  g.add_dep(a0, b0);
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), 15_ns);  // 10 + 2 + 3
  EXPECT_EQ(exec.start_time(b0), 10_ns);
  EXPECT_EQ(exec.start_time(b1), 12_ns);
}

TEST(TaskExecutorTest, CollectiveStartsWhenEveryStreamReachesIt) {
  // Stream A (rank 0): a0 (10 ns), allreduce, a1 (1 ns).
  // Stream B (rank 1): b0 (30 ns), allreduce.
  // A reaches the collective at 10 but B only at 30, so it runs 30..35 and holds A meanwhile:
  // a1 starts at 35, not at 10.
  TaskGraph g;
  const StreamId sa = g.add_stream(0, "compute");
  const StreamId sb = g.add_stream(1, "compute");
  const TaskIndex a0 = g.add(timed(g, "a0", 10_ns), sa);
  const TaskIndex b0 = g.add(timed(g, "b0", 30_ns), sb);
  const TaskIndex ar = g.add(timed(g, "allreduce", 5_ns, TaskKind::kCollective), {sa, sb});
  const TaskIndex a1 = g.add(timed(g, "a1", 1_ns), sa);
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), 36_ns);
  EXPECT_EQ(exec.end_time(a0), 10_ns);
  EXPECT_EQ(exec.end_time(b0), 30_ns);
  EXPECT_EQ(exec.start_time(ar), 30_ns);
  EXPECT_EQ(exec.end_time(ar), 35_ns);
  EXPECT_EQ(exec.start_time(a1), 35_ns);
}

TEST(TaskExecutorTest, SignalsFireInDeterministicOrder) {
  // Stream 0: t0 (5), t1 (5). Stream 1: t2 (5).
  // At 0 the stream heads start in stream order (t0, t2). At 5 both complete; t0's completion
  // was scheduled first, so t0 ends, t1 starts (t0's stream moves on), then t2 ends. t1 ends at 10.
  TaskGraph g;
  const StreamId s0 = g.add_stream(0, "compute");
  const StreamId s1 = g.add_stream(1, "compute");
  g.add(timed(g, "t0", 5_ns), s0);
  g.add(timed(g, "t1", 5_ns), s0);
  g.add(timed(g, "t2", 5_ns), s1);
  g.finalize();
  Engine engine;
  SignalLog log(engine, g);
  TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), 10_ns);
  EXPECT_EQ(log.lines(),
            (std::vector<std::string>{"start t0@0", "start t2@0", "end t0@5", "start t1@5", "end t2@5", "end t1@10"}));
}

TEST(TaskExecutorTest, MakespanIsMeasuredFromTheEngineClock) {
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  const TaskIndex a = g.add(timed(g, "a", 5_ns), s);
  const TaskIndex b = g.add(timed(g, "b", 7_ns), s);
  g.finalize();
  Engine engine;
  engine.schedule_at(100_ns, [] {});
  engine.run();  // the clock is at 100 before the graph starts
  TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), 12_ns);
  EXPECT_EQ(exec.start_time(a), 100_ns);
  EXPECT_EQ(exec.end_time(b), 112_ns);
}

TEST(TaskExecutorTest, ZeroDurationTasksRunAtOneInstantInOrder) {
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  g.add(timed(g, "x", Time::zero()), s);
  g.add(timed(g, "y", Time::zero()), s);
  g.add(timed(g, "z", 4_ns), s);
  g.finalize();
  Engine engine;
  SignalLog log(engine, g);
  TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), 4_ns);
  EXPECT_EQ(log.lines(),
            (std::vector<std::string>{"start x@0", "end x@0", "start y@0", "end y@0", "start z@0", "end z@4"}));
}

TEST(TaskExecutorTest, EmptyGraphHasZeroMakespan) {
  TaskGraph g;
  g.add_stream(0, "compute");
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  EXPECT_EQ(exec.run(), Time::zero());
}

// Completes collectives after 1 us whatever their spec says, and counts the calls.
class OneMicrosecondRunner final : public TaskRunner {
 public:
  void start(TaskIndex i, const Task&, TaskExecutor& exec) override {
    ++calls;
    exec.engine().schedule_in(1_us, [&exec, i] { exec.complete(i); });
  }
  int calls = 0;
};

TEST(TaskExecutorTest, RunnerIsChosenByTaskKind) {
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  const TaskIndex c = g.add(timed(g, "compute", 10_ns), s);
  const TaskIndex ar = g.add(timed(g, "allreduce", 10_ns, TaskKind::kCollective), s);
  g.finalize();
  Engine engine;
  OneMicrosecondRunner runner;
  TaskExecutor exec(engine, g);
  exec.set_runner(TaskKind::kCollective, runner);
  EXPECT_EQ(exec.run(), 10_ns + 1_us);  // compute: fixed 10 ns; collective: the runner's 1 us
  EXPECT_EQ(runner.calls, 1);
  EXPECT_EQ(exec.end_time(c), 10_ns);
  EXPECT_EQ(exec.end_time(ar), 1_us + 10_ns);
}

// Completes every task twice: a runner bug the executor must catch.
class DoubleCompleteRunner final : public TaskRunner {
 public:
  void start(TaskIndex i, const Task&, TaskExecutor& exec) override {
    exec.engine().schedule_in(1_ns, [&exec, i] { exec.complete(i); });
    exec.engine().schedule_in(2_ns, [&exec, i] { exec.complete(i); });
  }
};

TEST(TaskExecutorTest, CompletingATaskTwiceIsAnInternalError) {
  TaskGraph g;
  g.add(timed(g, "send", 1_ns, TaskKind::kP2P), g.add_stream(0, "pp"));
  g.finalize();
  Engine engine;
  DoubleCompleteRunner runner;
  TaskExecutor exec(engine, g);
  exec.set_runner(TaskKind::kP2P, runner);
  try {
    exec.run();
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("task completed twice: send"), std::string::npos) << e.what();
  }
}

TEST(TaskExecutorTest, NeedsAFinalizedGraph) {
  TaskGraph g;
  g.add(timed(g, "a", 1_ns), g.add_stream(0, "compute"));
  Engine engine;
  EXPECT_THROW({ TaskExecutor exec(engine, g); }, InternalError);
}

TEST(TaskExecutorTest, DeadlockOnOneStreamNamesTheStuckTasks) {
  // x is first on the stream but depends on y, which is queued behind x: neither can ever start.
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  const TaskIndex x = g.add(timed(g, "x", 1_ns), s);
  const TaskIndex y = g.add(timed(g, "y", 1_ns), s);
  g.add_dep(y, x);
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  EXPECT_EQ(deadlock_message(exec),
            "deadlock: 2 of 2 tasks can never run; first: x (rank 0 compute, waiting on 1 deps), "
            "y (rank 0 compute, waiting on 0 deps)");
}

TEST(TaskExecutorTest, DeadlockAcrossRanksAfterSomeProgress) {
  // Rank 0: warm (10 ns), a1, a2.   Rank 1: b1, b2.   Edges: a2 -> b1 and b2 -> a1.
  // warm runs; then a1 waits for b2 (behind b1 on rank 1), b1 waits for a2 (behind a1 on
  // rank 0): a cycle through stream order, so 4 of the 5 tasks can never run.
  TaskGraph g;
  const StreamId r0 = g.add_stream(0, "compute");
  const StreamId r1 = g.add_stream(1, "compute");
  const TaskIndex warm = g.add(timed(g, "warm", 10_ns), r0);
  const TaskIndex a1 = g.add(timed(g, "a1", 1_ns), r0);
  const TaskIndex a2 = g.add(timed(g, "a2", 1_ns), r0);
  const TaskIndex b1 = g.add(timed(g, "b1", 1_ns), r1);
  const TaskIndex b2 = g.add(timed(g, "b2", 1_ns), r1);
  g.add_dep(a2, b1);
  g.add_dep(b2, a1);
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  EXPECT_EQ(deadlock_message(exec),
            "deadlock: 4 of 5 tasks can never run; first: a1 (rank 0 compute, waiting on 1 deps), "
            "a2 (rank 0 compute, waiting on 0 deps), b1 (rank 1 compute, waiting on 1 deps), "
            "b2 (rank 1 compute, waiting on 0 deps)");
  EXPECT_EQ(exec.end_time(warm), 10_ns);  // the progress before the deadlock did happen
  EXPECT_TRUE(exec.start_time(a1).is_infinite());
}

TEST(TaskExecutorTest, DeadlockThroughACollective) {
  // Rank 0 stream: wait_recv, allreduce.   Rank 1 stream: allreduce, send.
  // wait_recv depends on send, which rank 1 only issues after the all-reduce, which needs
  // rank 0 to get past wait_recv first.
  TaskGraph g;
  const StreamId r0 = g.add_stream(0, "dp");
  const StreamId r1 = g.add_stream(1, "dp");
  TaskSpec recv = timed(g, "wait_recv", 1_ns, TaskKind::kP2P);
  recv.microbatch = 0;
  const TaskIndex wait_recv = g.add(recv, r0);
  TaskSpec ar = timed(g, "allreduce", 5_ns, TaskKind::kCollective);
  ar.layer = 3;
  g.add(ar, {r0, r1});
  const TaskIndex send = g.add(timed(g, "send", 1_ns, TaskKind::kP2P), r1);
  g.add_dep(send, wait_recv);
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  EXPECT_EQ(deadlock_message(exec),
            "deadlock: 3 of 3 tasks can never run; first: wait_recv mb0 (rank 0 dp, waiting on 1 deps), "
            "allreduce L3 (rank 0 dp, waiting on 0 deps), send (rank 1 dp, waiting on 0 deps)");
}

// A layered DAG over four ranks with collectives and cross-rank edges, built deterministically.
TaskGraph layered_graph() {
  TaskGraph g;
  std::vector<StreamId> compute, comm;
  for (int r = 0; r < 4; ++r) {
    compute.push_back(g.add_stream(r, "compute"));
    comm.push_back(g.add_stream(r, "dp"));
  }
  std::vector<TaskIndex> prev(4);
  for (int layer = 0; layer < 6; ++layer) {
    std::vector<TaskIndex> cur;
    for (int r = 0; r < 4; ++r) {
      TaskSpec s = timed(g, "fwd", Time::ns(10 + 3 * r + layer));
      s.layer = layer;
      cur.push_back(g.add(s, compute[static_cast<size_t>(r)]));
      if (layer > 0) g.add_dep(prev[static_cast<size_t>((r + 1) % 4)], cur.back());
    }
    TaskSpec ar = timed(g, "allreduce", Time::ns(7), TaskKind::kCollective);
    ar.layer = layer;
    const TaskIndex coll = g.add(ar, comm);
    for (const TaskIndex t : cur) g.add_dep(t, coll);
    prev = cur;
  }
  g.finalize();
  return g;
}

TEST(TaskExecutorTest, TwoEnginesGiveIdenticalSchedules) {
  const TaskGraph g = layered_graph();
  Engine e1, e2;
  TaskExecutor x1(e1, g), x2(e2, g);
  const Time m1 = x1.run();
  const Time m2 = x2.run();
  EXPECT_EQ(m1, m2);
  for (TaskIndex i = 0; i < g.size(); ++i) {
    ASSERT_EQ(x1.start_time(i), x2.start_time(i)) << g.display_name(i);
    ASSERT_EQ(x1.end_time(i), x2.end_time(i)) << g.display_name(i);
    ASSERT_FALSE(x1.end_time(i).is_infinite()) << g.display_name(i);
  }
  // Every task ran no earlier than its stream predecessor ended.
  for (StreamId s = 0; s < g.stream_count(); ++s) {
    const auto& list = g.stream_tasks(s);
    for (size_t k = 1; k < list.size(); ++k) ASSERT_GE(x1.start_time(list[k]), x1.end_time(list[k - 1]));
  }
}

TEST(TaskExecutorTest, StopEndsTheRunWithoutADeadlock) {
  // A simulated failure at 6 ns: a (0-5) is done, b (5-8) is cut short, c never starts.
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  const TaskIndex a = g.add(timed(g, "a", 5_ns), s);
  const TaskIndex b = g.add(timed(g, "b", 3_ns), s);
  const TaskIndex c = g.add(timed(g, "c", 2_ns), s);
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  engine.schedule_at(6_ns, [&] { exec.stop(); });
  EXPECT_EQ(exec.run(), 6_ns);
  EXPECT_TRUE(exec.stopped());
  EXPECT_EQ(exec.completed(), 1u);
  EXPECT_EQ(exec.end_time(a), 5_ns);
  EXPECT_EQ(exec.start_time(b), 5_ns);
  EXPECT_TRUE(exec.end_time(b).is_infinite());
  EXPECT_TRUE(exec.start_time(c).is_infinite());
}

}  // namespace
}  // namespace trainsim::sim::task
