#include "pipeline_replay.hpp"

#include <algorithm>
#include <sstream>

namespace trainsim::models::schedules::pipeline {

std::string describe(const Op& op) { return schedules::describe(op); }

std::vector<Op> parse_order(const std::string& text) {
  std::vector<Op> out;
  std::istringstream in(text);
  for (std::string tok; in >> tok;) {
    const size_t c = tok.find('c');
    const OpType type = tok[0] == 'F' ? OpType::kF : tok[0] == 'B' ? OpType::kB : OpType::kW;
    out.push_back(Op{type, std::stoi(tok.substr(1, c == std::string::npos ? std::string::npos : c - 1)),
                     c == std::string::npos ? 0 : std::stoi(tok.substr(c + 1))});
  }
  return out;
}

// The models' replay (double durations) in integer time units.
Replay replay(const StageOrders& orders, int p, int v, int64_t f, int64_t b, int64_t w, Placement placement) {
  int m = 0;
  for (const auto& o : orders)
    for (const Op& op : o) m = std::max(m, op.microbatch + 1);
  const schedules::Replay d = schedules::replay(
      orders, p, m, v, OpDurations{static_cast<double>(f), static_cast<double>(b), static_cast<double>(w)}, placement);
  Replay r;
  r.deadlock = d.deadlock;
  r.stuck = d.stuck;
  r.makespan = static_cast<int64_t>(d.makespan);
  for (size_t s = 0; s < d.busy.size(); ++s) {
    r.busy.push_back(static_cast<int64_t>(d.busy[s]));
    r.start.push_back(static_cast<int64_t>(d.start[s]));
    r.end.push_back(static_cast<int64_t>(d.end[s]));
  }
  return r;
}

Replay replay(const ScheduleInfo& info, const StageOrders& orders, int p, int v) {
  return info.splits_weight_grad ? replay(orders, p, v, 1, 1, 1, info.placement)
                                 : replay(orders, p, v, 1, 2, 1, info.placement);
}

int64_t peak_in_flight(const std::vector<Op>& order, bool splits_weight_grad) {
  const OpType frees = splits_weight_grad ? OpType::kW : OpType::kB;
  int64_t live = 0, peak = 0;
  for (const Op& op : order) {
    live += op.type == OpType::kF ? 1 : op.type == frees ? -1 : 0;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace trainsim::models::schedules::pipeline
