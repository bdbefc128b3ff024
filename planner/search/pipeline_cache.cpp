#include "planner/search/pipeline_cache.hpp"

#include <algorithm>
#include <cmath>

#include "sim/checked.hpp"

namespace trainsim::planner::search {

namespace sch = models::schedules;

namespace {

// Keeps the points not dominated in all three coordinates. Per (first, last) pair only the
// largest total can matter, and there are few such pairs (only the end stages have non-zero ones).
std::vector<std::array<int32_t, 3>> pareto(const std::vector<std::array<int32_t, 3>>& pts) {
  std::map<std::pair<int32_t, int32_t>, int32_t> most;
  for (const auto& a : pts) {
    int32_t& x = most[{a[1], a[2]}];
    x = std::max(x, a[0]);
  }
  std::vector<std::array<int32_t, 3>> cand;
  for (const auto& [k, all] : most) cand.push_back({all, k.first, k.second});
  std::vector<std::array<int32_t, 3>> out;
  for (const auto& a : cand) {
    bool dominated = false;
    for (const auto& b : cand)
      if (b != a && b[0] >= a[0] && b[1] >= a[1] && b[2] >= a[2]) {
        dominated = true;
        break;
      }
    if (!dominated) out.push_back(a);
  }
  return out;
}

}  // namespace

const PipelineShape& PipelineCache::shape(uint8_t schedule, int p, int m, int v) {
  auto& slot = shapes_[{schedule, p, m, v}];
  if (slot) return *slot;
  const sch::ScheduleInfo& info = sch::ScheduleRegistry::instance().all()[schedule];
  auto s = std::make_unique<PipelineShape>();
  s->orders = info.generate(p, m, sch::ScheduleParams{v});
  const sch::OpType frees = info.splits_weight_grad ? sch::OpType::kW : sch::OpType::kB;
  const int last_vs = p * v - 1;
  int32_t best = -1;
  s->activation_points.resize(static_cast<size_t>(p));
  for (int st = 0; st < p; ++st) {
    int32_t all = 0, first = 0, last = 0;
    std::vector<std::array<int32_t, 3>> pts;
    bool holds_end = false;
    for (const auto& op : s->orders[static_cast<size_t>(st)]) {
      const int vs = sch::virtual_stage(info.placement, p, st, op.chunk);
      const int32_t d = op.type == sch::OpType::kF ? 1 : op.type == frees ? -1 : 0;
      if (d == 0) continue;
      all += d;
      if (vs == 0)
        first += d;
      else if (vs == last_vs)
        last += d;
      holds_end = holds_end || vs == 0 || vs == last_vs;
      if (d > 0) pts.push_back({all - first - last, first, last});
    }
    s->activation_points[static_cast<size_t>(st)] = pareto(pts);
    if (!holds_end) {
      int32_t peak = 0;
      for (const auto& pt : s->activation_points[static_cast<size_t>(st)]) peak = std::max(peak, pt[0] + pt[1] + pt[2]);
      if (s->busiest_middle_stage < 0 || peak > best) {
        best = peak;
        s->busiest_middle_stage = st;
      }
    }
  }
  slot = std::move(s);
  return *slot;
}

PipelineCache::Timing PipelineCache::timing(uint8_t schedule, int p, int m, int v, double f, double b, double w) {
  if (f <= 0.0) return {};
  constexpr double kSteps = 32.0;
  // Backward and weight-gradient times in 1/32 of the forward's (the key; checked: sim/checked.hpp).
  const int64_t rb = sim::checked_int64(std::round(b / f * kSteps), "pipeline stage", "check the model's sizes");
  const int64_t rw = sim::checked_int64(std::round(w / f * kSteps), "pipeline stage", "check the model's sizes");
  const auto key = std::make_tuple(schedule, p, m, v, rb, rw);
  auto it = timings_.find(key);
  if (it == timings_.end()) {
    const PipelineShape& s = shape(schedule, p, m, v);
    const sch::ScheduleInfo& info = sch::ScheduleRegistry::instance().all()[schedule];
    const sch::Replay r =
        sch::replay(s.orders, p, m, v, sch::OpDurations{1.0, rb / kSteps, rw / kSteps}, info.placement);
    Timing t;
    t.makespan = r.makespan;
    t.stage0_end = r.end[0];
    const sch::OpType grads = info.splits_weight_grad ? sch::OpType::kW : sch::OpType::kB;
    std::vector<double> ready(static_cast<size_t>(v), 0.0);
    const auto& order = s.orders[0];
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i].type == grads) ready[static_cast<size_t>(order[i].chunk)] = r.op_end[0][i];
    std::sort(ready.begin(), ready.end());
    t.grads_ready = std::move(ready);
    it = timings_.emplace(key, std::move(t)).first;
  }
  Timing out = it->second;
  out.makespan *= f;
  out.stage0_end *= f;
  for (double& x : out.grads_ready) x *= f;
  return out;
}

}  // namespace trainsim::planner::search
