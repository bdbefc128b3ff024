#include "pipeline_replay.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace trainsim::models::schedules::pipeline {

std::string describe(const Op& op) {
  return std::string(op.type == OpType::kF   ? "F"
                     : op.type == OpType::kB ? "B"
                                             : "W") +
         "(mb " + std::to_string(op.microbatch) + ", chunk " + std::to_string(op.chunk) + ")";
}

Replay replay(const StageOrders& orders, int p, int v, int64_t f, int64_t b) {
  Replay r;
  r.busy.assign(static_cast<size_t>(p), 0);
  r.end.assign(static_cast<size_t>(p), 0);
  // (type, virtual stage, micro-batch) -> end time of the op, once it has run.
  std::map<std::tuple<int, int, int>, int64_t> done;
  std::vector<size_t> pos(static_cast<size_t>(p), 0);
  const int last = p * v - 1;
  size_t remaining = 0;
  for (const auto& o : orders) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < p; ++s) {
      const auto& order = orders[static_cast<size_t>(s)];
      size_t& i = pos[static_cast<size_t>(s)];
      while (i < order.size()) {
        const Op& op = order[i];
        const int vs = op.chunk * p + s;
        std::tuple<int, int, int> dep{-1, 0, 0};
        if (op.type == OpType::kF && vs > 0) dep = {static_cast<int>(OpType::kF), vs - 1, op.microbatch};
        if (op.type == OpType::kB)
          dep = vs == last ? std::tuple<int, int, int>{static_cast<int>(OpType::kF), vs, op.microbatch}
                           : std::tuple<int, int, int>{static_cast<int>(OpType::kB), vs + 1, op.microbatch};
        int64_t ready = 0;
        if (std::get<0>(dep) >= 0) {
          const auto it = done.find(dep);
          if (it == done.end()) break;  // input not produced yet
          ready = it->second;
        }
        const int64_t dur = op.type == OpType::kF ? f : b;
        const int64_t start = std::max(r.end[static_cast<size_t>(s)], ready);
        r.end[static_cast<size_t>(s)] = start + dur;
        r.busy[static_cast<size_t>(s)] += dur;
        done[{static_cast<int>(op.type), vs, op.microbatch}] = start + dur;
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

int64_t peak_in_flight(const std::vector<Op>& order) {
  int64_t live = 0, peak = 0;
  for (const Op& op : order) {
    live += op.type == OpType::kF ? 1 : op.type == OpType::kB ? -1 : 0;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace trainsim::models::schedules::pipeline
