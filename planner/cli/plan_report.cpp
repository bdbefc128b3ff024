#include "planner/cli/plan_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/compute/peaks.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/llm/moe.hpp"
#include "models/workload/job/prediction_band.hpp"
#include "planner/cli/report.hpp"
#include "planner/search/distributed.hpp"
#include "planner/search/estimator.hpp"
#include "planner/search/pareto.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

using models::workload::Job;
using sim::config::Json;

// 1234567 -> "1,234,567".
std::string grouped(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string pad(const std::string& s, size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }
std::string lpad(const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

namespace {

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

// Model FLOPs of one iteration (as `trainsim simulate` counts them for MFU).
double model_flops(const Job& j) {
  const double fwd = j.model.moe ? models::llm::moe_forward_model_flops_per_sequence(j.model, j.seq_len)
                                 : models::llm::forward_model_flops_per_sequence(j.model, j.seq_len);
  return 3.0 * fwd * static_cast<double>(j.global_batch);
}

struct Economics {
  double tokens_per_iter = 0;
  double gpu_hours_per_mtok = 0;  // GPU-hours per million tokens
  double days = -1, gpu_hours = -1, cost = -1, energy_mwh = -1;
};

Economics economics(const Job& j, double iteration_s, const PlanReportOptions& o) {
  Economics e;
  e.tokens_per_iter = static_cast<double>(j.global_batch) * static_cast<double>(j.seq_len);
  e.gpu_hours_per_mtok = static_cast<double>(j.gpus) * iteration_s / 3600.0 * 1e6 / e.tokens_per_iter;
  if (o.tokens > 0) {
    const double seconds = o.tokens / e.tokens_per_iter * iteration_s;
    e.days = seconds / 86400.0;
    e.gpu_hours = static_cast<double>(j.gpus) * seconds / 3600.0;
    if (o.price_per_gpu_hour > 0) e.cost = e.gpu_hours * o.price_per_gpu_hour;
    if (j.gpu.tdp_watts > 0) e.energy_mwh = e.gpu_hours * j.gpu.tdp_watts / 1e6;
  }
  return e;
}

}  // namespace

// The quantity --objective minimises, per token (so sizes compare); goodput: the expected wall
// clock to train including failures (the search's score).
double objective_value(const Job& j, const search::Plan& p, const PlanReportOptions& o) {
  const double iteration_s = p.iteration_s;
  if (o.objective == "goodput") return p.score;
  const Economics e = economics(j, iteration_s, o);
  if (o.objective == "cost") return e.gpu_hours_per_mtok * (o.price_per_gpu_hour > 0 ? o.price_per_gpu_hour : 1.0);
  if (o.objective == "energy") return e.gpu_hours_per_mtok * j.gpu.tdp_watts;
  return iteration_s / e.tokens_per_iter;
}

std::string low_precision_label(const Job& j) {
  const auto low = models::compute::precision_peak(j.gpu, j.precision);
  return low ? low->label : "";
}

std::string mfu_header(const std::string& low) {
  return lpad("MFU(BF16)", 11) + (low.empty() ? "" : lpad("MFU(" + low + ")", 11));
}

std::string mfu_cells(const Json& plan, const std::string& low) {
  std::string out = lpad(fmt("%.1f%%", 100.0 * plan["mfu"].get<double>()), 11);
  if (!low.empty())
    out += lpad(
        plan.contains("mfu_low_precision") ? fmt("%.1f%%", 100.0 * plan["mfu_low_precision"].get<double>()) : "-", 11);
  return out;
}

Json plan_json(const search::Plan& p, const Job& j, int rank, const PlanReportOptions& o) {
  const double mfu =
      p.simulated ? p.mfu : model_flops(j) / p.iteration_s / static_cast<double>(j.gpus) / j.gpu.peak_bf16.per_second();
  Json out{{"rank", rank},
           {"description", search::describe(p.candidate)},
           {"config", j.to_json()},
           {"simulated", p.simulated},
           {"fidelity", p.fidelity},
           {"iteration_time_s", p.iteration_s},
           {"estimated_iteration_time_s", p.estimate.iteration_s},
           {"tokens_per_s", static_cast<double>(j.global_batch * j.seq_len) / p.iteration_s},
           {"mfu", mfu},
           {"peak_memory_bytes", p.peak_memory_bytes}};
  models::compute::put_mfu_peaks(out, mfu, j.gpu, j.precision);
  if (p.simulated) out["time_breakdown"] = p.breakdown;
  out["band"] = models::workload::prediction_band(j).to_json();
  const Economics e = economics(j, p.iteration_s, o);
  out["gpu_hours_per_million_tokens"] = e.gpu_hours_per_mtok;
  if (e.days >= 0) out["days"] = e.days;
  if (e.gpu_hours >= 0) out["gpu_hours"] = e.gpu_hours;
  if (e.cost >= 0) out["cost"] = e.cost;
  if (e.energy_mwh >= 0) out["energy_mwh"] = e.energy_mwh;
  if (o.objective == "goodput") {
    out["expected_days_with_failures"] = p.score / 86400.0;
    if (e.days > 0) out["goodput"] = e.days * 86400.0 / p.score;
  }
  return out;
}

namespace {

// Rows of the breakdown comparison, in report order.
const std::vector<std::pair<const char*, const char*>>& breakdown_rows() {
  static const std::vector<std::pair<const char*, const char*>> rows = {{"compute_s", "compute (incl. recompute)"},
                                                                        {"recompute_s", "  of which recompute"},
                                                                        {"tp_exposed_s", "TP exposed"},
                                                                        {"cp_exposed_s", "CP exposed"},
                                                                        {"ep_exposed_s", "EP exposed"},
                                                                        {"pp_exposed_s", "PP exposed"},
                                                                        {"dp_exposed_s", "DP exposed"},
                                                                        {"offload_exposed_s", "offload exposed"},
                                                                        {"bubble_s", "pipeline bubble"}};
  return rows;
}

// The band of the plans' times (prediction_band.hpp), whether the job leaves the evidence, and
// whether #1 and #2 are apart by more than it.
void print_band(std::ostream& out, const search::SearchResult& r, const std::vector<Job>& jobs) {
  if (jobs.empty()) return;
  const models::workload::PredictionBand b = models::workload::prediction_band(jobs.front());
  out << "  band: ± " << fmt("%.1f", 100.0 * b.relative) << " % on #1's time (" << b.basis << ")\n";
  if (b.extrapolated) {
    out << "  EXTRAPOLATED: outside the evidence:";
    for (size_t i = 0; i < b.outside.size(); ++i) out << (i ? "; " : " ") << b.outside[i];
    out << "\n";
  }
  if (r.plans.size() < 2 || r.plans[1].iteration_s <= 0) return;
  const double gap = (r.plans[1].iteration_s - r.plans[0].iteration_s) / r.plans[1].iteration_s;
  if (gap < b.relative)
    out << "  #1 and #2 differ by " << fmt("%.1f", 100.0 * gap) << " %, inside the band: the model does not tell them "
        << "apart; measure both, or weigh memory and simplicity\n";
}

void print_why(std::ostream& out, const search::Plan& a, const search::Plan& b) {
  out << "\nWhy #1 wins: simulated time of its busiest stage beside #2's (seconds per iteration)\n";
  out << "  " << pad("", 28) << lpad("#1", 12) << lpad("#2", 12) << lpad("#1 - #2", 12) << "\n";
  std::string biggest;
  double biggest_gain = 0;
  for (const auto& [key, label] : breakdown_rows()) {
    const double x = a.breakdown.value(key, 0.0), y = b.breakdown.value(key, 0.0);
    if (x == 0.0 && y == 0.0) continue;
    out << "  " << pad(label, 28) << lpad(fmt("%.3f", x), 12) << lpad(fmt("%.3f", y), 12)
        << lpad(fmt("%+.3f", x - y), 12) << "\n";
    if (std::string(key) != "recompute_s" && y - x > biggest_gain) {
      biggest_gain = y - x;
      biggest = label;
    }
  }
  out << "  " << pad("iteration", 28) << lpad(fmt("%.3f", a.iteration_s), 12) << lpad(fmt("%.3f", b.iteration_s), 12)
      << lpad(fmt("%+.3f", a.iteration_s - b.iteration_s), 12) << "\n";
  out << "  " << pad("peak memory (GiB)", 28) << lpad(fmt("%.1f", gib(a.peak_memory_bytes)), 12)
      << lpad(fmt("%.1f", gib(b.peak_memory_bytes)), 12)
      << lpad(fmt("%+.1f", gib(a.peak_memory_bytes - b.peak_memory_bytes)), 12) << "\n";
  out << "  #1 " << search::describe(a.candidate) << "\n  #2 " << search::describe(b.candidate) << "\n";
  const double gap = b.iteration_s > 0 ? (b.iteration_s - a.iteration_s) / b.iteration_s * 100.0 : 0.0;
  out << "  #1 is " << fmt("%.1f", gap) << "% faster";
  if (!biggest.empty())
    out << "; the largest difference is " << biggest << " (" << fmt("%.3f", biggest_gain) << " s less)";
  out << ".\n";
}

}  // namespace

size_t best_size(const std::vector<SizeResult>& rows, const PlanReportOptions& o) {
  size_t best = rows.size();
  double best_value = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].ok) continue;
    const double v = objective_value(rows[i].job, rows[i].result.plans.front(), o);
    if (best == rows.size() || v < best_value) {
      best = i;
      best_value = v;
    }
  }
  return best;
}

namespace {

// The whole report as one JSON document (--json).
void print_plan_json(std::ostream& out, const search::SearchResult& r, const Job& hw, const std::vector<Job>& jobs,
                     const PlanReportOptions& o, const BaselineResult* baseline,
                     const std::vector<std::string>& written, const models::failure::ReliabilityReport* reliability) {
  const double capacity = search::usable_memory_bytes(hw, o.headroom);
  const double total_s = r.estimate_s + r.simulate_s;
  Json j{{"schema_version", 1},
         {"model", hw.model.name},
         {"cluster", hw.cluster.name},
         {"gpu", hw.gpu.name},
         {"gpus", r.gpus},
         {"searched", r.considered},
         {"valid", r.valid},
         {"feasible", r.feasible},
         {"simulated", r.simulated},
         {"memory_limit_bytes", capacity},
         {"objective", o.objective},
         {"simulated_flow", r.simulated_flow},
         {"flow_over_budget", r.flow_over_budget},
         {"elapsed_s", total_s},
         {"rejected", r.rejected},
         {"stack", r.stack},
         {"stack_excluded", r.stack_excluded}};
  if (r.flow_stopped) j["flow_stopped"] = true;
  Json plans = Json::array();
  for (size_t i = 0; i < r.plans.size(); ++i)
    plans.push_back(plan_json(r.plans[i], jobs[i], static_cast<int>(i + 1), o));
  j["plans"] = plans;
  if (r.plans.size() >= 2 && r.plans[1].iteration_s > 0)
    j["top_two_within_band"] = (r.plans[1].iteration_s - r.plans[0].iteration_s) / r.plans[1].iteration_s <
                               models::workload::prediction_band(jobs.front()).relative;
  Json front = Json::array();
  for (const auto& p : r.memory_front)
    front.push_back(Json{{"description", search::describe(p.candidate)},
                         {"estimated_iteration_time_s", p.iteration_s},
                         {"peak_memory_bytes", p.peak_memory_bytes}});
  j["memory_front"] = front;
  if (!o.overrides.empty()) {
    Json w{{"overrides", o.overrides}};
    if (baseline && baseline->ok) {
      const auto& bp = baseline->result.plans.front();
      w["baseline"] = plan_json(bp, baseline->job, 1, o);
      w["speedup"] = bp.iteration_s / r.plans.front().iteration_s;
    } else if (baseline) {
      w["baseline_error"] = baseline->why;
    }
    j["what_if"] = w;
  }
  if (!written.empty()) j["written"] = written;
  if (reliability) j["reliability"] = reliability->to_json();
  out << canonical_json(j) << "\n";
}

// What was searched, what fit, what removed the most configurations, and how long it took.
void print_search_summary(std::ostream& out, const search::SearchResult& r, const Job& hw,
                          const models::workload::JobSpec& spec, const PlanReportOptions& o) {
  const double capacity = search::usable_memory_bytes(hw, o.headroom);
  const auto& dist = search::Distributed::instance();
  out << "trainsim plan: " << hw.model.name << " on " << r.gpus << " x " << hw.gpu.name << " (" << hw.cluster.name
      << "), global batch " << spec.global_batch << " x " << spec.seq_len.value_or(hw.model.seq_len) << " tokens\n";
  out << "  stack " << r.stack << " (" << hw.stack.framework << ")";
  if (!r.stack_excluded.empty()) {
    out << ": not searched:";
    size_t i = 0;
    for (const auto& [dimension, values] : r.stack_excluded) {
      out << (i++ ? ";" : "") << " " << dimension;
      for (size_t k = 0; k < values.size(); ++k) out << (k ? ", " : " ") << values[k];
    }
  }
  out << "\n";
  if (!o.overrides.empty()) {
    out << "  what-if:";
    for (const auto& x : o.overrides) out << " " << x;
    out << "\n";
  }
  out << "  searched " << grouped(r.considered) << " configurations: " << grouped(r.valid) << " valid, "
      << grouped(r.feasible) << " fit in " << fmt("%.1f", gib(capacity)) << " GiB per GPU ("
      << fmt("%.0f", o.headroom * 100) << "% of " << fmt("%.0f", gib(static_cast<double>(hw.gpu.memory.count())))
      << " GiB)\n  the best " << r.simulated << " re-simulated (discrete-event, analytic network)";
  if (r.simulated_flow > 0) out << ", the best " << r.simulated_flow << " of those again on the flow network";
  if (r.flow_over_budget > 0)
    out << " (" << r.flow_over_budget << " more over the flow network's work budget kept their analytic time"
        << (r.flow_stopped ? "; the flow re-ranking stopped there" : "") << ")";
  out << "\n";
  // What removed the most configurations.
  std::vector<std::pair<int64_t, std::string>> rej;
  for (const auto& [k, n] : r.rejected) rej.emplace_back(-n, k);
  std::sort(rej.begin(), rej.end());
  out << "  removed:";
  for (size_t i = 0; i < rej.size() && i < 4; ++i)
    out << (i ? ";" : "") << " " << grouped(-rej[i].first) << " " << rej[i].second;
  out << "\n";
  out << "timing: enumeration and fast estimate " << fmt("%.2f", r.estimate_s) << " s, re-simulation "
      << fmt("%.2f", r.simulate_s) << " s (" << dist.size() << " process" << (dist.size() == 1 ? "" : "es") << ")\n\n";
}

// One row per plan, the notes under the table, and why #1 beats #2.
void print_plan_table(std::ostream& out, const search::SearchResult& r, const std::vector<Job>& jobs,
                      const models::workload::JobSpec& spec, const PlanReportOptions& o) {
  const bool days = o.tokens > 0, goodput = o.objective == "goodput";
  const std::string low = jobs.empty() ? "" : low_precision_label(jobs.front());
  out << " #  " << pad("configuration", 46) << lpad("iter(s)", 9) << lpad("sim", 9) << lpad("est(s)", 9)
      << lpad("tokens/s", 12) << mfu_header(low) << lpad("mem GiB", 9);
  if (days) out << lpad("days", 8) << lpad(o.price_per_gpu_hour > 0 ? "cost $" : "GPU-h", 14);
  if (goodput) out << lpad("+failures", 10);
  out << "\n";
  for (size_t i = 0; i < r.plans.size(); ++i) {
    const auto& p = r.plans[i];
    const Json pj = plan_json(p, jobs[i], static_cast<int>(i + 1), o);
    out << lpad(std::to_string(i + 1), 2) << "  " << pad(search::describe(p.candidate), 46)
        << lpad(fmt("%.3f", p.iteration_s), 9) << lpad(p.fidelity, 9) << lpad(fmt("%.3f", p.estimate.iteration_s), 9)
        << lpad(grouped(static_cast<int64_t>(pj["tokens_per_s"].get<double>())), 12) << mfu_cells(pj, low)
        << lpad(fmt("%.1f", gib(p.peak_memory_bytes)), 9);
    if (days) {
      out << lpad(fmt("%.1f", pj.value("days", 0.0)), 8);
      out << lpad(grouped(static_cast<int64_t>(pj.value(o.price_per_gpu_hour > 0 ? "cost" : "gpu_hours", 0.0))), 14);
    }
    if (goodput) out << lpad(fmt("%.1f", pj.value("expected_days_with_failures", 0.0)), 10);
    out << "\n";
  }
  if (goodput)
    out << "  (+failures: expected days to train with failures, recoveries and checkpoints, closed form; the\n"
           "   ranking's objective)\n";
  out << "  (iter: the iteration time from the most faithful model that ran (sim: flow network, analytic\n"
         "   network, or the fast estimate); est: the fast estimate that chose what to simulate; MFU(BF16):\n"
         "   model FLOP/s over the GPU's dense BF16 peak"
      << (low.empty() ? "" : ", MFU(" + low + ") over its dense " + low + " peak") << ")\n";
  bool big_a2a = false;
  for (const auto& p : r.plans)
    big_a2a = big_a2a || (p.fidelity == "analytic" && (p.candidate.ep > 64 || p.candidate.cp > 64));
  if (big_a2a && spec.network == models::workload::Network::kFlow)
    out << "  (plans with an all-to-all over more than 64 ranks are not re-simulated on the flow network:\n"
           "   their time leaves out network congestion)\n";
  print_band(out, r, jobs);
  if (r.plans.size() >= 2 && r.plans[0].simulated && r.plans[1].simulated) {
    print_why(out, r.plans[0], r.plans[1]);
    if (goodput)
      out << "  Ranked by expected days with failures: #1 " << fmt("%.2f", r.plans[0].score / 86400.0) << ", #2 "
          << fmt("%.2f", r.plans[1].score / 86400.0)
          << " (restarts read more checkpoint the more data-parallel replicas there are).\n";
  }
}

// Up to eight plans spread over the time vs memory Pareto front.
void print_memory_front(std::ostream& out, const search::SearchResult& r) {
  if (r.memory_front.empty()) return;
  out << "\nTime vs memory (fast estimate, Pareto front: no plan is both faster and smaller)\n";
  const size_t n = r.memory_front.size();
  const size_t show = std::min<size_t>(n, 8);
  for (size_t k = 0; k < show; ++k) {
    // Spread the rows over the whole front.
    const size_t i = show == 1 ? 0 : k * (n - 1) / (show - 1);
    const auto& p = r.memory_front[i];
    out << "  " << pad(search::describe(p.candidate), 46) << lpad(fmt("%.3f s", p.iteration_s), 11)
        << lpad(fmt("%.1f GiB", gib(p.peak_memory_bytes)), 11) << "\n";
  }
  if (n > show) out << "  (" << n << " plans on the front; --json lists them all)\n";
}

// The best plan without and with the --what-if overrides.
void print_what_if(std::ostream& out, const search::SearchResult& r, const PlanReportOptions& o,
                   const BaselineResult* baseline) {
  if (o.overrides.empty() || !baseline) return;
  out << "\nWhat-if: best plan without and with the overrides\n";
  if (baseline->ok) {
    const auto& bp = baseline->result.plans.front();
    const auto& wp = r.plans.front();
    out << "  baseline  " << pad(search::describe(bp.candidate), 46) << fmt("%.3f s", bp.iteration_s) << "\n";
    out << "  what-if   " << pad(search::describe(wp.candidate), 46) << fmt("%.3f s", wp.iteration_s) << "\n";
    out << "  speedup   " << fmt("%.3fx", bp.iteration_s / wp.iteration_s) << "\n";
  } else {
    out << "  baseline: " << baseline->why << "\n";
  }
}

// The Monte Carlo reliability study of plan #1.
void print_reliability(std::ostream& out, const models::failure::ReliabilityReport& rr) {
  const auto& sm = rr.summary;
  out << "\nReliability of #1 (Monte Carlo, " << sm.runs << " runs, checkpoint " << rr.model.checkpoint_strategy
      << "; `trainsim reliability` has the details)\n";
  out << "  expected " << fmt("%.2f", sm.wall_s.mean / 86400.0) << " days (p10 " << fmt("%.2f", sm.wall_s.p10 / 86400.0)
      << ", p90 " << fmt("%.2f", sm.wall_s.p90 / 86400.0) << ") for "
      << fmt("%.2f", rr.model.config.work->seconds() / 86400.0) << " days of compute; ETTR " << fmt("%.3f", sm.ettr)
      << "; " << fmt("%.0f", sm.interruptions.mean) << " interruptions; job MTBF "
      << fmt("%.2f h", rr.model.mtbf.seconds() / 3600.0) << "\n";
  out << "  best checkpoint interval " << fmt("%.1f min", rr.best_interval.seconds() / 60.0) << " (Young/Daly "
      << fmt("%.1f min", rr.daly_interval.seconds() / 60.0) << ")\n";
}

}  // namespace

void print_plan(std::ostream& out, const search::SearchResult& r, const Job& hw, const models::workload::JobSpec& spec,
                const Job& winner, const PlanReportOptions& o, const BaselineResult* baseline,
                const std::vector<std::string>& written, const models::failure::ReliabilityReport* reliability) {
  (void)winner;
  std::vector<Job> jobs;
  for (const auto& p : r.plans) jobs.push_back(search::plan_job(hw, spec, p.candidate));
  if (o.json) {
    print_plan_json(out, r, hw, jobs, o, baseline, written, reliability);
    return;
  }
  print_search_summary(out, r, hw, spec, o);
  print_plan_table(out, r, jobs, spec, o);
  print_memory_front(out, r);
  print_what_if(out, r, o, baseline);
  if (reliability) print_reliability(out, *reliability);
  for (const auto& f : written) out << "wrote " << f << "\n";
}

void print_sweep(std::ostream& out, const std::vector<SizeResult>& rows, const PlanReportOptions& o) {
  // Pareto front of time vs GPUs among the sizes that have a plan.
  std::vector<search::TimeMemory> pts;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].ok) pts.push_back({rows[i].result.plans.front().iteration_s, static_cast<double>(rows[i].gpus), i});
  const std::vector<size_t> front = search::pareto_time_memory(pts, [](size_t a, size_t b) { return a < b; });
  auto on_front = [&](size_t i) { return std::find(front.begin(), front.end(), i) != front.end(); };
  const size_t best = best_size(rows, o);
  std::string stack;  // the stack searched (every size's job names the same)
  for (const auto& row : rows)
    if (row.ok && stack.empty()) stack = row.result.stack;
  if (o.json) {
    Json sizes = Json::array();
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& row = rows[i];
      Json s{{"gpus", row.gpus}};
      if (row.ok) {
        s["searched"] = row.result.considered;
        s["feasible"] = row.result.feasible;
        s["elapsed_s"] = row.result.estimate_s + row.result.simulate_s;
        s["plan"] = plan_json(row.result.plans.front(), row.job, 1, o);
        s["pareto"] = on_front(i);
      } else {
        s["error"] = row.why;
      }
      sizes.push_back(s);
    }
    Json j{{"schema_version", 1}, {"objective", o.objective}, {"sizes", sizes}};
    if (!stack.empty()) j["stack"] = stack;
    if (best < rows.size()) j["best_gpus"] = rows[best].gpus;
    out << canonical_json(j) << "\n";
    return;
  }
  out << "trainsim plan: cluster sizes, best plan of each (objective: " << o.objective
      << (stack.empty() ? "" : ", stack " + stack) << ")\n";
  std::string low;
  for (const auto& row : rows)
    if (row.ok && low.empty()) low = low_precision_label(row.job);
  out << lpad("GPUs", 7) << "  " << pad("configuration", 46) << lpad("iter(s)", 9) << lpad("tokens/s", 13)
      << mfu_header(low) << lpad("GPU-h/Mtok", 12);
  if (o.tokens > 0) out << lpad("days", 8);
  if (o.objective == "goodput") out << lpad("+failures", 10);
  out << "  front\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    out << lpad(std::to_string(row.gpus), 7) << "  ";
    if (!row.ok) {
      out << row.why << "\n";
      continue;
    }
    const auto& p = row.result.plans.front();
    const Json pj = plan_json(p, row.job, 1, o);
    out << pad(search::describe(p.candidate), 46) << lpad(fmt("%.3f", p.iteration_s), 9)
        << lpad(grouped(static_cast<int64_t>(pj["tokens_per_s"].get<double>())), 13) << mfu_cells(pj, low)
        << lpad(fmt("%.3f", pj["gpu_hours_per_million_tokens"].get<double>()), 12);
    if (o.tokens > 0) out << lpad(fmt("%.1f", pj.value("days", 0.0)), 8);
    if (o.objective == "goodput") out << lpad(fmt("%.1f", pj.value("expected_days_with_failures", 0.0)), 10);
    out << (on_front(i) ? "  *" : "") << (i == best ? "  <- best " + o.objective : "") << "\n";
  }
  out << "  (* on the time-vs-GPUs Pareto front: faster than every smaller size)\n";
}

}  // namespace trainsim::planner::cli
