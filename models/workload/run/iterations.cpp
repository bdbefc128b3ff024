#include "models/workload/run/iterations.hpp"

#include <algorithm>
#include <sstream>

#include "sim/error.hpp"

namespace trainsim::models::workload {

using sim::config::Json;

namespace {
double ratio(sim::Time a, sim::Time b) {
  return b.count_ns() > 0 ? static_cast<double>(a.count_ns()) / static_cast<double>(b.count_ns()) : 0.0;
}
}  // namespace

sim::Time IterationsResult::total() const {
  sim::Time t;
  for (const IterationTime& it : iterations) t += it.time;
  return t;
}

IterationsResult simulate_iterations(const Job& job, const SimulateOptions& options, int32_t iterations) {
  if (iterations < 1 || iterations > kMaxIterations) {
    std::ostringstream msg, hint;
    msg << "expected 1 to " << kMaxIterations << " iterations, got " << iterations;
    hint << "pass --iterations N with 1 <= N <= " << kMaxIterations;
    throw ConfigError("--iterations", msg.str(), hint.str());
  }
  if (!options.faults.empty()) check_faults(job, options.faults);
  IterationsResult out;
  out.requested = iterations;
  SimulateOptions opt = options;
  opt.faults.clear();
  SimulationResult healthy = simulate(job, opt);
  out.fault_free = healthy.iteration;
  if (!healthy.fits) {
    out.detail = std::move(healthy);
    out.completed = false;
    return out;
  }
  // Faults by time (stable: equal times keep their order).
  std::vector<Fault> pending = options.faults, from_start;
  std::stable_sort(pending.begin(), pending.end(), [](const Fault& a, const Fault& b) { return a.at < b.at; });
  bool have_detail = false;
  sim::Time cursor;                        // start of the next iteration
  sim::Time steady = healthy.iteration;    // an iteration with the faults that have struck, from the start
  bool steady_known = true, fresh = true;  // fresh: `steady` was just simulated
  SimulationResult steady_result = std::move(healthy);
  int32_t i = 0;
  while (i < iterations) {
    if (!steady_known) {
      opt.faults = from_start;
      steady_result = simulate(job, opt);
      steady = steady_result.iteration;
      steady_known = fresh = true;
      if (!steady_result.completed()) {  // cannot happen for faults that let it finish once
        out.iterations.push_back({steady, false, true, "faults from the start stopped the job"});
        out.completed = false;
        break;
      }
    }
    // Whole iterations before the next fault take the steady time.
    const int64_t room =
        pending.empty() ? iterations - i : (pending.front().at - cursor).count_ns() / steady.count_ns();
    const auto skip = static_cast<int32_t>(std::min<int64_t>(room, iterations - i));
    for (int32_t k = 0; k < skip; ++k) {
      out.iterations.push_back({steady, true, fresh, from_start.empty() ? "fault-free" : "faults from the start"});
      fresh = false;
    }
    cursor += steady * skip;
    i += skip;
    if (i >= iterations) break;
    // The next fault falls in this iteration: simulate it with the pending faults at their
    // offsets (those past its end never strike).
    opt.faults = from_start;
    for (Fault f : pending) {
      f.at = f.at > cursor ? f.at - cursor : sim::Time::zero();
      opt.faults.push_back(f);
    }
    SimulationResult r = simulate(job, opt);
    std::string note;
    std::vector<Fault> left;
    const size_t first = from_start.size();  // outcomes of the pending faults follow these
    for (size_t k = 0; k < pending.size(); ++k) {
      const FaultOutcome& o = r.faults->faults[first + k];
      if (!o.struck) {
        left.push_back(pending[k]);
        continue;
      }
      Fault f = pending[k];
      f.at = sim::Time::zero();
      from_start.push_back(f);
      note += (note.empty() ? "" : ", ") + to_string(pending[k]) + " struck";
    }
    pending = std::move(left);
    steady_known = false;
    out.iterations.push_back({r.iteration, r.completed(), true, note});
    if (!have_detail) {
      out.detail = std::move(r);
      out.detail_index = i;
      out.detail_start = cursor;
      have_detail = true;
    }
    cursor += out.iterations.back().time;
    ++i;
    if (!out.iterations.back().completed) {
      out.completed = false;
      break;
    }
  }
  if (!have_detail) out.detail = std::move(steady_result);
  out.not_reached = std::move(pending);
  return out;
}

Json IterationsResult::to_json() const {
  Json per = Json::array();
  for (size_t k = 0; k < iterations.size(); ++k) {
    const IterationTime& it = iterations[k];
    per.push_back(Json{{"index", k},
                       {"time_s", it.time.seconds()},
                       {"vs_fault_free", ratio(it.time, fault_free)},
                       {"completed", it.completed},
                       {"simulated", it.simulated},
                       {"note", it.note}});
  }
  Json not_reached_json = Json::array();
  for (const Fault& f : not_reached) not_reached_json.push_back(to_string(f));
  const sim::Time free_total = fault_free * static_cast<int64_t>(iterations.size());
  return Json{{"requested", requested},
              {"run", iterations.size()},
              {"completed", completed},
              {"fault_free_iteration_s", fault_free.seconds()},
              {"total_s", total().seconds()},
              {"fault_free_total_s", free_total.seconds()},
              {"slowdown", ratio(total(), free_total)},
              {"detail_iteration", detail_index},
              {"detail_iteration_start_s", detail_start.seconds()},
              {"faults_not_reached", not_reached_json},
              {"per_iteration", per}};
}

}  // namespace trainsim::models::workload
