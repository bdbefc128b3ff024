#pragma once
// The critical path of a simulated iteration: the chain of tasks, each one waiting on the one
// before it, that ends at the last task to finish. Walking back from that task, each step goes to
// the dependency or the previous task on one of its streams that finished last, no later than the
// task started (the one that gated it). A task whose start no finished predecessor explains (it
// waited on the network, not on a task) ends the walk.

#include <vector>

#include "sim/task/executor.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::sim::task {

// Tasks on the critical path, first to last; empty when no task finished.
std::vector<TaskIndex> critical_path(const TaskGraph& graph, const TaskExecutor& exec);

}  // namespace trainsim::sim::task
