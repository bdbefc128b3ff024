#pragma once
// TaskExecutor: issues the ready tasks of a TaskGraph on an Engine. A task starts when all its
// dependencies have finished and it is at the head of every stream it occupies; the runner for
// its kind decides how long it takes (fixed duration now, network flows later) and reports back
// through complete(). Start and end times are kept for reports and inspection.

#include <array>
#include <vector>

#include "sim/engine.hpp"
#include "sim/huge_page_allocator.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::sim::task {

class TaskExecutor;

// How tasks of one kind execute. start() must eventually lead to exec.complete(i).
class TaskRunner {
 public:
  virtual ~TaskRunner() = default;
  virtual void start(TaskIndex i, const Task& t, TaskExecutor& exec) = 0;
};

// Completes each task after its precomputed spec.duration.
class FixedDurationRunner final : public TaskRunner {
 public:
  void start(TaskIndex i, const Task& t, TaskExecutor& exec) override;
};

class TaskExecutor {
 public:
  TaskExecutor(Engine& engine, const TaskGraph& graph);
  // Replaces the runner for a kind (default: FixedDurationRunner for every kind).
  void set_runner(TaskKind kind, TaskRunner& runner);

  // Runs the whole graph; returns the makespan. Throws InternalError naming the stuck tasks
  // when the queue drains with tasks left (a deadlock in the generated DAG).
  Time run();
  // Called by runners when task i is done.
  void complete(TaskIndex i);
  // Ends the run at this instant (a simulated failure: a GPU died): run() returns the time so
  // far, tasks not yet done stay unfinished (end_time infinite) and no deadlock is reported.
  void stop();
  bool stopped() const { return stopped_; }
  size_t completed() const { return done_; }

  Engine& engine() { return engine_; }
  const TaskGraph& graph() const { return graph_; }
  Time start_time(TaskIndex i) const { return start_[i]; }
  Time end_time(TaskIndex i) const { return end_[i]; }

 private:
  void try_start(TaskIndex i);
  void launch(TaskIndex i);

  Engine& engine_;
  const TaskGraph& graph_;
  FixedDurationRunner fixed_;
  std::array<TaskRunner*, 4> runners_;
  BigVector<uint32_t> deps_left_;
  std::vector<uint32_t> head_;  // per stream: position of the next task to run
  std::vector<uint8_t> busy_;   // per stream
  BigVector<Time> start_, end_;
  size_t done_ = 0;
  bool stopped_ = false;
};

}  // namespace trainsim::sim::task
