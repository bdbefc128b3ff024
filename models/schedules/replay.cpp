#include "models/schedules/replay.hpp"

#include <algorithm>

namespace trainsim::models::schedules {

std::string describe(const Op& op) {
  return std::string(op.type == OpType::kF   ? "F"
                     : op.type == OpType::kB ? "B"
                                             : "W") +
         "(mb " + std::to_string(op.microbatch) + ", chunk " + std::to_string(op.chunk) + ")";
}

Replay replay(const StageOrders& orders, int p, int m, int v, const OpDurations& d, Placement placement) {
  Replay r;
  r.busy.assign(static_cast<size_t>(p), 0.0);
  r.start.assign(static_cast<size_t>(p), -1.0);
  r.end.assign(static_cast<size_t>(p), 0.0);
  r.op_end.resize(static_cast<size_t>(p));
  for (int s = 0; s < p; ++s) r.op_end[static_cast<size_t>(s)].assign(orders[static_cast<size_t>(s)].size(), 0.0);
  const int vstages = p * v, last = vstages - 1;
  // End time of each op that has run, [type][virtual stage][micro-batch]; < 0: not yet.
  const size_t per_type = static_cast<size_t>(vstages) * static_cast<size_t>(m);
  std::vector<double> done(3 * per_type, -1.0);
  auto slot = [&](OpType t, int vs, int mb) {
    return static_cast<size_t>(t) * per_type + static_cast<size_t>(vs) * static_cast<size_t>(m) +
           static_cast<size_t>(mb);
  };
  std::vector<size_t> pos(static_cast<size_t>(p), 0);
  size_t remaining = 0;
  for (const auto& o : orders) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < p; ++s) {
      const auto& order = orders[static_cast<size_t>(s)];
      size_t& i = pos[static_cast<size_t>(s)];
      while (i < order.size()) {
        const Op& op = order[i];
        const int vs = virtual_stage(placement, p, s, op.chunk);
        double ready = 0.0;
        bool has_dep = true;
        size_t dep = 0;
        if (op.type == OpType::kF) {
          has_dep = vs > 0;
          if (has_dep) dep = slot(OpType::kF, vs - 1, op.microbatch);
        } else if (op.type == OpType::kB) {
          dep = vs == last ? slot(OpType::kF, vs, op.microbatch) : slot(OpType::kB, vs + 1, op.microbatch);
        } else {
          dep = slot(OpType::kB, vs, op.microbatch);
        }
        if (has_dep) {
          if (done[dep] < 0.0) break;  // input not produced yet
          ready = done[dep];
        }
        const double dur = op.type == OpType::kF ? d.f : op.type == OpType::kB ? d.b : d.w;
        const double start = std::max(r.end[static_cast<size_t>(s)], ready);
        if (i == 0) r.start[static_cast<size_t>(s)] = start;
        r.end[static_cast<size_t>(s)] = start + dur;
        r.op_end[static_cast<size_t>(s)][i] = start + dur;
        r.busy[static_cast<size_t>(s)] += dur;
        done[slot(op.type, vs, op.microbatch)] = start + dur;
        ++i;
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) {
      r.deadlock = true;
      for (int s = 0; s < p; ++s) {
        const auto& order = orders[static_cast<size_t>(s)];
        const size_t i = pos[static_cast<size_t>(s)];
        r.stuck += "stage " + std::to_string(s) + ": " + (i < order.size() ? describe(order[i]) : "done") + "; ";
      }
      return r;
    }
  }
  r.makespan = *std::max_element(r.end.begin(), r.end.end());
  return r;
}

}  // namespace trainsim::models::schedules
