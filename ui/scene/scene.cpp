#include "ui/scene/scene.hpp"

#include <algorithm>
#include <numeric>

namespace trainsim::ui {

int64_t MemoryTrack::peak() const {
  int64_t p = 0;
  for (const auto& [t, b] : points) p = std::max(p, b);
  return p;
}

float TopoLink::mean_utilization() const {
  if (utilization.empty()) return 0;
  return std::accumulate(utilization.begin(), utilization.end(), 0.0f) / static_cast<float>(utilization.size());
}

float TopoLink::utilization_in(int64_t t0, int64_t t1, int64_t span_ns) const {
  if (utilization.empty() || span_ns <= 0) return 0;
  const auto bins = static_cast<int64_t>(utilization.size());
  t0 = std::clamp<int64_t>(t0, 0, span_ns);
  t1 = std::clamp<int64_t>(t1, t0, span_ns);
  if (t1 == t0) {
    const int64_t b = std::min(bins - 1, t0 * bins / span_ns);
    return utilization[static_cast<size_t>(b)];
  }
  // Each bin covers [b*span/bins, (b+1)*span/bins): weight it by its overlap with the window.
  double sum = 0;
  for (int64_t b = 0; b < bins; ++b) {
    const double lo = static_cast<double>(b) * static_cast<double>(span_ns) / static_cast<double>(bins);
    const double hi = static_cast<double>(b + 1) * static_cast<double>(span_ns) / static_cast<double>(bins);
    const double overlap = std::min(hi, static_cast<double>(t1)) - std::max(lo, static_cast<double>(t0));
    if (overlap > 0) sum += overlap * utilization[static_cast<size_t>(b)];
  }
  return static_cast<float>(sum / static_cast<double>(t1 - t0));
}

void Scene::index_rows() {
  std::stable_sort(tasks.begin(), tasks.end(), [](const SceneTask& a, const SceneTask& b) {
    return a.row != b.row ? a.row < b.row : a.start_ns < b.start_ns;
  });
  row_begin.assign(rows.size() + 1, 0);
  for (const SceneTask& t : tasks) ++row_begin[t.row + 1];
  for (size_t r = 0; r < rows.size(); ++r) row_begin[r + 1] += row_begin[r];
  span_ns = 1;
  for (const SceneTask& t : tasks) span_ns = std::max(span_ns, t.end_ns);
}

int64_t Scene::task_at(uint32_t row, int64_t t, int64_t slack) const {
  if (row + 1 >= row_begin.size()) return -1;
  const auto first = tasks.begin() + row_begin[row], last = tasks.begin() + row_begin[row + 1];
  // Last task starting at or before t + slack.
  auto it = std::upper_bound(first, last, t + slack, [](int64_t v, const SceneTask& k) { return v < k.start_ns; });
  int64_t best = -1;
  int64_t best_gap = slack + 1;
  // Overlapping tasks on one row are rare (a stream runs one task at a time), so look a few back.
  for (int k = 0; k < 4 && it != first; ++k) {
    --it;
    const int64_t gap = t < it->start_ns ? it->start_ns - t : (t > it->end_ns ? t - it->end_ns : 0);
    if (gap < best_gap) {
      best_gap = gap;
      best = it - tasks.begin();
    }
  }
  return best;
}

double Scene::idle_share(uint32_t row) const {
  if (row + 1 >= row_begin.size() || span_ns <= 0) return 1;
  // Union of the row's busy intervals (tasks are start-sorted).
  int64_t busy = 0, cur_lo = -1, cur_hi = -1;
  for (uint32_t i = row_begin[row]; i < row_begin[row + 1]; ++i) {
    const SceneTask& t = tasks[i];
    if (t.start_ns > cur_hi) {
      busy += cur_hi - cur_lo;
      cur_lo = t.start_ns;
      cur_hi = t.end_ns;
    } else {
      cur_hi = std::max(cur_hi, t.end_ns);
    }
  }
  busy += cur_hi - cur_lo;
  return 1.0 - static_cast<double>(busy) / static_cast<double>(span_ns);
}

}  // namespace trainsim::ui
