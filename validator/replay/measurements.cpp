#include "validator/replay/measurements.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace trainsim::validator::replay {

namespace calibration = models::calibration;

namespace {
std::string link_class(const std::vector<int32_t>& members, int gpus_per_node) {
  for (const int32_t m : members)
    if (m / gpus_per_node != members.front() / gpus_per_node) return "ib";
  return "nvlink";
}
}  // namespace

std::vector<calibration::Measurement> comm_measurements(const Program& program,
                                                        const std::vector<RankTimeline>& timelines, double scale,
                                                        int gpus_per_node) {
  // Per task: every member's (start, end), in wall seconds.
  struct Instance {
    std::string op, link;
    int64_t bytes = 0;
    int ranks = 0;
    std::vector<std::pair<double, double>> ends;
  };
  std::map<uint32_t, Instance> tasks;
  for (const RankTimeline& t : timelines) {
    const RankProgram& rp = program.ranks.at(static_cast<size_t>(t.rank));
    for (size_t i = 0; i < rp.ops.size(); ++i) {
      const Op& op = rp.ops[i];
      if (!op.is_comm()) continue;
      Instance& in = tasks[op.task];
      if (in.ranks == 0) {
        const bool coll = op.kind == OpKind::kCollective;
        const std::vector<int32_t> pair = {rp.rank, op.peer};
        const auto& members = coll ? program.groups.at(static_cast<size_t>(op.group)) : pair;
        in.op = coll ? models::collectives::to_string(op.collective) : "send_recv";
        in.bytes = op.bytes;
        in.ranks = static_cast<int>(members.size());
        in.link = link_class(members, std::max(1, gpus_per_node));
      }
      // A receive's re-gather is not link time.
      const double end = t.end[i] - (op.kind == OpKind::kRecv ? op.extra.seconds() : 0.0);
      in.ends.emplace_back(t.start[i] * scale, end * scale);
    }
  }
  std::map<std::tuple<std::string, int64_t, int, std::string>, std::vector<double>> times;
  for (auto& [task, in] : tasks) {
    if (static_cast<int>(in.ends.size()) < in.ranks || in.ranks < 2) continue;  // a member not replayed here
    double last_start = 0;
    std::vector<double> ends;
    for (const auto& [s, e] : in.ends) {
      last_start = std::max(last_start, s);
      ends.push_back(e);
    }
    const double t = calibration::median(ends) - last_start;
    if (t > 0) times[{in.op, in.bytes, in.ranks, in.link}].push_back(t);
  }
  std::vector<calibration::Measurement> out;
  for (const auto& [key, v] : times) {
    calibration::Measurement m;
    m.kind = calibration::OpKind::kCollective;
    m.op = std::get<0>(key);
    m.name = "replay." + m.op;
    m.bytes = std::get<1>(key);
    m.ranks = std::get<2>(key);
    m.link_class = std::get<3>(key);
    m.measured_s = calibration::median(v);
    m.reps = static_cast<int>(v.size());
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace trainsim::validator::replay
