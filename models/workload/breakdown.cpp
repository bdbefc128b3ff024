#include "models/workload/breakdown.hpp"

#include <algorithm>

namespace trainsim::models::workload {

namespace {
struct Interval {
  int64_t begin, end;
  int kind;  // 0 compute, 1 tp, 2 pp, 3 dp
};
}  // namespace

TimeBreakdown rank_breakdown(const Workload& w, const sim::task::TaskExecutor& exec, uint32_t slot, sim::Time end) {
  const RankInfo& r = w.ranks[slot];
  const auto& g = w.graph;
  TimeBreakdown b;
  std::vector<Interval> iv;
  for (const sim::task::TaskIndex i : g.stream_tasks(r.compute)) {
    const int64_t s = exec.start_time(i).count_ns(), e = exec.end_time(i).count_ns();
    iv.push_back({s, e, 0});
    b.compute += sim::Time::ns(e - s);
    if (g.task(i).spec.category == static_cast<uint8_t>(Category::kRecompute)) b.recompute += sim::Time::ns(e - s);
    b.flops += g.task(i).spec.flops;
  }
  const std::pair<sim::task::StreamId, int> comm[] = {{r.tp, 1}, {r.pp, 2}, {r.dp, 3}};
  for (const auto& [stream, kind] : comm)
    for (const sim::task::TaskIndex i : g.stream_tasks(stream))
      iv.push_back({exec.start_time(i).count_ns(), exec.end_time(i).count_ns(), kind});
  // Sweep elementary segments between all interval boundaries.
  std::vector<std::pair<int64_t, int>> points;  // (time, +kind+1 open / -(kind+1) close)
  points.reserve(iv.size() * 2 + 2);
  for (const auto& x : iv) {
    if (x.end <= x.begin) continue;
    points.emplace_back(x.begin, x.kind + 1);
    points.emplace_back(x.end, -(x.kind + 1));
  }
  std::sort(points.begin(), points.end());
  int active[4] = {0, 0, 0, 0};
  int64_t cursor = 0;
  int64_t exposed[4] = {0, 0, 0, 0}, idle = 0;
  auto account = [&](int64_t until) {
    if (until <= cursor) return;
    const int64_t d = until - cursor;
    if (active[0] > 0) {
    } else if (active[1] > 0) {
      exposed[1] += d;
    } else if (active[2] > 0) {
      exposed[2] += d;
    } else if (active[3] > 0) {
      exposed[3] += d;
    } else {
      idle += d;
    }
    cursor = until;
  };
  for (const auto& [t, delta] : points) {
    account(t);
    if (delta > 0)
      ++active[delta - 1];
    else
      --active[-delta - 1];
  }
  account(end.count_ns());
  b.tp_exposed = sim::Time::ns(exposed[1]);
  b.pp_exposed = sim::Time::ns(exposed[2]);
  b.dp_exposed = sim::Time::ns(exposed[3]);
  b.bubble = sim::Time::ns(idle);
  return b;
}

sim::config::Json TimeBreakdown::to_json() const {
  return sim::config::Json{{"compute_s", compute.seconds()},       {"recompute_s", recompute.seconds()},
                           {"tp_exposed_s", tp_exposed.seconds()}, {"pp_exposed_s", pp_exposed.seconds()},
                           {"dp_exposed_s", dp_exposed.seconds()}, {"bubble_s", bubble.seconds()}};
}

}  // namespace trainsim::models::workload
