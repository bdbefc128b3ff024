#include "sim/task/executor.hpp"

#include "sim/error.hpp"
#include "sim/log.hpp"

namespace trainsim::sim::task {

void FixedDurationRunner::start(TaskIndex i, const Task& t, TaskExecutor& exec) {
  exec.engine().schedule_in(t.spec.duration, [&exec, i] { exec.complete(i); });
}

TaskExecutor::TaskExecutor(Engine& engine, const TaskGraph& graph) : engine_(engine), graph_(graph) {
  TRAINSIM_ASSERT(graph.finalized(), "executor needs a finalized graph");
  runners_.fill(&fixed_);
}

void TaskExecutor::set_runner(TaskKind kind, TaskRunner& runner) { runners_[static_cast<size_t>(kind)] = &runner; }

Time TaskExecutor::run() {
  const size_t n = graph_.size();
  deps_left_.resize(n);
  for (size_t i = 0; i < n; ++i) deps_left_[i] = graph_.task(static_cast<TaskIndex>(i)).n_deps;
  head_.assign(graph_.stream_count(), 0);
  busy_.assign(graph_.stream_count(), 0);
  start_.assign(n, Time::infinite());
  end_.assign(n, Time::infinite());
  done_ = 0;
  stopped_ = false;
  const Time t0 = engine_.now();
  // Seed: the head task of every stream may be startable.
  for (StreamId s = 0; s < graph_.stream_count(); ++s)
    if (!graph_.stream_tasks(s).empty()) try_start(graph_.stream_tasks(s).front());
  const uint64_t events = engine_.run();
  // Logged here rather than in Engine::run, whose event loop stays exactly as the compiler had it.
  TRAINSIM_LOG_DEBUG(kEngine, "run: ", events, " events, ", done_, " of ", n, " tasks done, clock ",
                     engine_.now().count_ns(), " ns", stopped_ ? " (stopped by a failure)" : "");
  if (engine_.limit_reached() && done_ != n) stopped_ = true;  // out of its work budget, not stuck
  if (done_ != n && !stopped_) {
    std::string stuck;
    int listed = 0;
    for (size_t i = 0; i < n && listed < 5; ++i) {
      if (start_[i].is_infinite()) {
        const auto ti = static_cast<TaskIndex>(i);
        const StreamInfo& si = graph_.stream(graph_.streams_of(ti)[0]);
        stuck += (listed ? ", " : "") + graph_.display_name(ti) + " (rank " + std::to_string(si.rank) + " " +
                 graph_.label(si.label) + ", waiting on " + std::to_string(deps_left_[i]) + " deps)";
        ++listed;
      }
    }
    throw InternalError("deadlock: " + std::to_string(n - done_) + " of " + std::to_string(n) +
                        " tasks can never run; first: " + stuck);
  }
  return engine_.now() - t0;
}

void TaskExecutor::stop() {
  stopped_ = true;
  engine_.stop();
}

void TaskExecutor::try_start(TaskIndex i) {
  if (deps_left_[i] != 0 || !start_[i].is_infinite()) return;
  const Task& t = graph_.task(i);
  const StreamId* ss = graph_.streams_of(i);
  for (uint16_t k = 0; k < t.n_streams; ++k) {
    const StreamId s = ss[k];
    if (busy_[s]) return;
    const auto& list = graph_.stream_tasks(s);
    if (head_[s] >= list.size() || list[head_[s]] != i) return;
  }
  launch(i);
}

void TaskExecutor::launch(TaskIndex i) {
  const Task& t = graph_.task(i);
  const StreamId* ss = graph_.streams_of(i);
  for (uint16_t k = 0; k < t.n_streams; ++k) busy_[ss[k]] = 1;
  start_[i] = engine_.now();
  if (!engine_.signals().on_task_start.empty()) engine_.signals().on_task_start.emit(i, start_[i]);
  runners_[static_cast<size_t>(t.spec.kind)]->start(i, t, *this);
}

void TaskExecutor::complete(TaskIndex i) {
  TRAINSIM_ASSERT(end_[i].is_infinite(), "task completed twice: ", graph_.display_name(i));
  end_[i] = engine_.now();
  ++done_;
  if (!engine_.signals().on_task_end.empty()) engine_.signals().on_task_end.emit(i, end_[i]);
  const Task& t = graph_.task(i);
  const StreamId* ss = graph_.streams_of(i);
  for (uint16_t k = 0; k < t.n_streams; ++k) {
    busy_[ss[k]] = 0;
    ++head_[ss[k]];
  }
  for (const TaskIndex* p = graph_.successors_begin(i); p != graph_.successors_end(i); ++p) --deps_left_[*p];
  // New stream heads first (stream order), then successors (edge order): deterministic.
  for (uint16_t k = 0; k < t.n_streams; ++k) {
    const auto& list = graph_.stream_tasks(ss[k]);
    if (head_[ss[k]] < list.size()) try_start(list[head_[ss[k]]]);
  }
  for (const TaskIndex* p = graph_.successors_begin(i); p != graph_.successors_end(i); ++p) try_start(*p);
}

}  // namespace trainsim::sim::task
