#include "validator/replay/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "models/calibration/measurement.hpp"

namespace trainsim::validator::replay {

namespace {

using Intervals = std::vector<std::pair<double, double>>;

// Sorted, disjoint intervals covering the same time as `v`.
Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

double length(const Intervals& m) {
  double s = 0;
  for (const auto& iv : m) s += iv.second - iv.first;
  return s;
}

// Time covered by both (each merged).
double overlap(const Intervals& a, const Intervals& b) {
  double s = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return s;
}

struct Side {
  double iteration = 0, exposed = 0, bubble = 0;
};

// Iteration, exposed communication and bubble of one rank from its op intervals.
Side side_of(const RankProgram& p, const std::vector<double>& start, const std::vector<double>& end) {
  Intervals comm, compute, main_stream;
  Side s;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const auto iv = std::make_pair(start[i], end[i]);
    s.iteration = std::max(s.iteration, end[i]);
    (p.ops[i].is_comm() ? comm : compute).push_back(iv);
    if (!p.ops[i].is_comm() && p.streams[p.ops[i].stream] == "compute") main_stream.push_back(iv);
  }
  const Intervals c = merged(comm), k = merged(compute), m = merged(main_stream);
  s.exposed = length(c) - overlap(c, k);
  s.bubble = m.empty() ? 0 : (m.back().second - m.front().first) - length(m);
  return s;
}

double worst(const std::vector<double>& v) {
  double w = 0;
  for (const double x : v)
    if (std::abs(x) > std::abs(w)) w = x;
  return w;
}

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * v);
  return buf;
}

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", 1e3 * s);
  return buf;
}

}  // namespace

RankComparison compare_rank(const RankProgram& p, const RankTimeline& m) {
  RankComparison c;
  c.rank = p.rank;
  c.ops = static_cast<int64_t>(p.ops.size());
  std::vector<double> ss(p.ops.size()), se(p.ops.size());
  std::vector<double> comp_err, comm_err;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    ss[i] = op.sim_start.seconds();
    se[i] = ss[i] + op.sim_duration.seconds();
    const double sim_d = op.sim_duration.seconds(), got = m.end[i] - m.start[i];
    if (sim_d > 0) (op.is_comm() ? comm_err : comp_err).push_back((got - sim_d) / sim_d);
  }
  const Side sim = side_of(p, ss, se), got = side_of(p, m.start, m.end);
  c.sim_iteration = sim.iteration;
  c.measured_iteration = got.iteration;
  c.sim_exposed_comm = sim.exposed;
  c.measured_exposed_comm = got.exposed;
  c.sim_bubble = sim.bubble;
  c.measured_bubble = got.bubble;
  c.compute_error_median = models::calibration::median(comp_err);
  c.compute_error_max = worst(comp_err);
  c.comm_error_median = models::calibration::median(comm_err);
  c.comm_error_max = worst(comm_err);
  return c;
}

ReplayReport compare(const Program& program, const std::vector<RankTimeline>& measured, const CheckReport& checks,
                     const std::string& backend, double scale) {
  ReplayReport r;
  r.backend = backend;
  r.scale = scale;
  r.checks = checks;
  for (size_t k = 0; k < measured.size(); ++k) {
    const auto& m = measured[k];
    r.ranks.push_back(compare_rank(program.ranks.at(static_cast<size_t>(m.rank)), m));
    r.sim_iteration = std::max(r.sim_iteration, r.ranks.back().sim_iteration);
    r.measured_iteration = std::max(r.measured_iteration, r.ranks.back().measured_iteration);
  }
  return r;
}

sim::config::Json ReplayReport::to_json() const {
  using Json = sim::config::Json;
  Json ranks_j = Json::array();
  for (const auto& c : ranks)
    ranks_j.push_back({{"rank", c.rank},
                       {"ops", c.ops},
                       {"iteration_s", {{"simulated", c.sim_iteration}, {"measured", c.measured_iteration}}},
                       {"compute_error", {{"median", c.compute_error_median}, {"worst", c.compute_error_max}}},
                       {"comm_error", {{"median", c.comm_error_median}, {"worst", c.comm_error_max}}},
                       {"exposed_comm_s", {{"simulated", c.sim_exposed_comm}, {"measured", c.measured_exposed_comm}}},
                       {"bubble_s", {{"simulated", c.sim_bubble}, {"measured", c.measured_bubble}}}});
  return Json{{"backend", backend},
              {"time_scale", scale},
              {"checks",
               {{"ops", checks.ops},
                {"transfers", checks.transfers},
                {"collectives", checks.collectives},
                {"communicators", checks.communicators},
                {"problems", checks.problems}}},
              {"iteration_s", {{"simulated", sim_iteration}, {"measured", measured_iteration}}},
              {"ranks", ranks_j}};
}

void print_report(std::ostream& out, const ReplayReport& r) {
  out << "Replay on " << r.backend << ", " << r.ranks.size() << " ranks, time scale " << r.scale
      << " (wall seconds per simulated second)\n";
  out << "Checks: " << r.checks.ops << " ops; " << r.checks.transfers << " transfers each matched by its receive; "
      << r.checks.collectives << " collectives on " << r.checks.communicators
      << " communicators, issued in the same order by every member; no deadlock\n\n";
  out << "rank   ops  iteration ms (sim / replay)   compute err (median, worst)   comm err (median, worst)"
         "   exposed comm ms (sim / replay)   bubble ms (sim / replay)\n";
  char line[320];
  for (const auto& c : r.ranks) {
    std::snprintf(line, sizeof line,
                  "%4d %5lld  %10s / %-10s       %8s, %-8s              %8s, %-8s"
                  "          %8s / %-8s              %8s / %-8s\n",
                  c.rank, static_cast<long long>(c.ops), ms(c.sim_iteration).c_str(), ms(c.measured_iteration).c_str(),
                  pct(c.compute_error_median).c_str(), pct(c.compute_error_max).c_str(),
                  pct(c.comm_error_median).c_str(), pct(c.comm_error_max).c_str(), ms(c.sim_exposed_comm).c_str(),
                  ms(c.measured_exposed_comm).c_str(), ms(c.sim_bubble).c_str(), ms(c.measured_bubble).c_str());
    out << line;
  }
  out << "\nIteration: simulated " << ms(r.sim_iteration) << " ms, replayed " << ms(r.measured_iteration) << " ms ("
      << pct(r.sim_iteration > 0 ? r.measured_iteration / r.sim_iteration - 1 : 0) << ")\n";
}

sim::config::Json perfetto_trace(const Program& program, const std::vector<RankTimeline>& measured) {
  using Json = sim::config::Json;
  Json events = Json::array();
  auto name_process = [&](int pid, const std::string& name) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", name}}}});
  };
  for (const auto& m : measured) {
    const auto& p = program.ranks.at(static_cast<size_t>(m.rank));
    const int sim_pid = 2 * m.rank, replay_pid = 2 * m.rank + 1;
    name_process(sim_pid, "sim rank " + std::to_string(m.rank));
    name_process(replay_pid, "replay rank " + std::to_string(m.rank));
    for (size_t s = 0; s < p.streams.size(); ++s)
      for (const int pid : {sim_pid, replay_pid})
        events.push_back({{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", pid},
                          {"tid", static_cast<int>(s)},
                          {"args", {{"name", p.streams[s]}}}});
    for (size_t i = 0; i < p.ops.size(); ++i) {
      const Op& op = p.ops[i];
      const Json args = {{"kind", to_string(op.kind)}, {"bytes", op.bytes}, {"task", op.task}};
      events.push_back({{"ph", "X"},
                        {"name", op.name},
                        {"pid", sim_pid},
                        {"tid", op.stream},
                        {"ts", op.sim_start.seconds() * 1e6},
                        {"dur", op.sim_duration.seconds() * 1e6},
                        {"args", args}});
      events.push_back({{"ph", "X"},
                        {"name", op.name},
                        {"pid", replay_pid},
                        {"tid", op.stream},
                        {"ts", m.start[i] * 1e6},
                        {"dur", (m.end[i] - m.start[i]) * 1e6},
                        {"args", args}});
    }
  }
  return Json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace trainsim::validator::replay
