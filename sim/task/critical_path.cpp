#include "sim/task/critical_path.hpp"

#include <algorithm>
#include <limits>

namespace trainsim::sim::task {

std::vector<TaskIndex> critical_path(const TaskGraph& g, const TaskExecutor& exec) {
  const size_t n = g.size();
  constexpr TaskIndex kNone = std::numeric_limits<TaskIndex>::max();
  auto finished = [&](TaskIndex i) { return !exec.end_time(i).is_infinite() && !exec.start_time(i).is_infinite(); };
  TaskIndex last = kNone;
  for (TaskIndex i = 0; i < n; ++i)
    if (finished(i) && (last == kNone || exec.end_time(i) > exec.end_time(last))) last = i;
  if (last == kNone) return {};

  // Predecessors (reverse of the successor lists), as CSR.
  std::vector<uint32_t> pred_begin(n + 1, 0);
  for (TaskIndex i = 0; i < n; ++i)
    for (const TaskIndex* s = g.successors_begin(i); s != g.successors_end(i); ++s) ++pred_begin[*s + 1];
  for (size_t i = 0; i < n; ++i) pred_begin[i + 1] += pred_begin[i];
  std::vector<TaskIndex> preds(pred_begin[n]);
  std::vector<uint32_t> fill(pred_begin.begin(), pred_begin.end() - 1);
  for (TaskIndex i = 0; i < n; ++i)
    for (const TaskIndex* s = g.successors_begin(i); s != g.successors_end(i); ++s) preds[fill[*s]++] = i;
  // Position of each task in each stream it occupies: the previous task on that stream.
  std::vector<uint32_t> pos_begin(n + 1, 0);
  for (TaskIndex i = 0; i < n; ++i) pos_begin[i + 1] = pos_begin[i] + g.task(i).n_streams;
  std::vector<TaskIndex> stream_prev(pos_begin[n], kNone);
  std::vector<uint16_t> seen(n, 0);
  for (size_t s = 0; s < g.stream_count(); ++s) {
    const auto& order = g.stream_tasks(static_cast<StreamId>(s));
    for (size_t k = 1; k < order.size(); ++k) stream_prev[pos_begin[order[k]] + seen[order[k]]++] = order[k - 1];
    if (!order.empty()) ++seen[order[0]];
  }

  std::vector<TaskIndex> path{last};
  TaskIndex cur = last;
  while (true) {
    const sim::Time start = exec.start_time(cur);
    TaskIndex best = kNone;
    auto consider = [&](TaskIndex p) {
      if (p == kNone || !finished(p) || exec.end_time(p) > start) return;
      if (best == kNone || exec.end_time(p) > exec.end_time(best)) best = p;
    };
    for (uint32_t k = pred_begin[cur]; k < pred_begin[cur + 1]; ++k) consider(preds[k]);
    for (uint32_t k = pos_begin[cur]; k < pos_begin[cur + 1]; ++k) consider(stream_prev[k]);
    if (best == kNone) break;
    path.push_back(best);
    cur = best;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace trainsim::sim::task
