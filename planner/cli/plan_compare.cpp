#include "planner/cli/plan_compare.hpp"

#include <algorithm>
#include <cmath>

#include "planner/cli/options.hpp"
#include "planner/cli/report.hpp"
#include "planner/search/candidate.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

using models::workload::Job;
using sim::config::Json;

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// The best plan of a row (the row has one).
const search::Plan& best_plan(const SizeResult& s) { return s.result.plans.front(); }

double tokens_per_s(const SizeResult& s) {
  return static_cast<double>(s.job.global_batch) * static_cast<double>(s.job.seq_len) / best_plan(s).iteration_s;
}

// "15T", "300B", "2.5M" tokens.
std::string tokens_text(double t) {
  if (t >= 1e12) return fmt("%gT", t / 1e12);
  if (t >= 1e9) return fmt("%gB", t / 1e9);
  if (t >= 1e6) return fmt("%gM", t / 1e6);
  return fmt("%g", t);
}

// GPU-hours per million tokens of a row's best plan.
double gpu_hours_per_mtok(const SizeResult& s, const PlanReportOptions& o) {
  return plan_json(best_plan(s), s.job, 1, o)["gpu_hours_per_million_tokens"].get<double>();
}

// Which economic columns the table has: with --tokens days, GPU-hours, cost (when a cluster has
// a price) and energy (when a GPU has tdp_watts); without, GPU-hours and energy per million tokens.
struct Columns {
  bool tokens = false, cost = false, energy = false, goodput = false;
};

Columns columns(const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o) {
  Columns c;
  c.tokens = o.tokens > 0;
  c.goodput = o.objective == "goodput";
  for (const auto& cl : clusters) {
    c.cost = c.cost || cl.price_per_gpu_hour > 0;
    for (const auto& s : cl.sizes) c.energy = c.energy || (s.ok && s.job.gpu.tdp_watts > 0);
  }
  c.cost = c.cost && c.tokens;
  return c;
}

std::string gpu_of(const ClusterPlans& c, const SizeResult& s) { return s.ok ? s.job.gpu.name : c.gpu; }

Json row_json(const ClusterPlans& c, size_t k, const PlanReportOptions& o, bool sweep) {
  const SizeResult& s = c.sizes[k];
  const PlanReportOptions oc = options_for(o, c);
  Json row{{"cluster", c.cluster}, {"gpu", gpu_of(c, s)}, {"gpus", s.gpus}, {"fits", s.ok}};
  if (c.price_per_gpu_hour > 0) row["price_per_gpu_hour"] = c.price_per_gpu_hour;
  if (s.ok) {
    row["searched"] = s.result.considered;
    row["feasible"] = s.result.feasible;
    row["elapsed_s"] = s.result.estimate_s + s.result.simulate_s;
    row["plan"] = plan_json(best_plan(s), s.job, 1, oc);
    if (s.job.gpu.tdp_watts > 0)
      row["energy_kwh_per_million_tokens"] = gpu_hours_per_mtok(s, oc) * s.job.gpu.tdp_watts / 1e3;
  } else {
    row["error"] = s.why;
  }
  if (sweep) row["best_of_cluster"] = s.ok && k == best_size_of(c, o);
  return row;
}

void print_json(std::ostream& out, const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o, bool sweep) {
  Json rows = Json::array();
  std::string stack;
  for (const auto& c : clusters)
    for (size_t k = 0; k < c.sizes.size(); ++k) {
      rows.push_back(row_json(c, k, o, sweep));
      if (stack.empty() && c.sizes[k].ok) stack = c.sizes[k].result.stack;
    }
  Json j{{"schema_version", 1}, {"objective", o.objective}, {"mfu_peak", "bf16_dense"}, {"clusters", rows}};
  if (!stack.empty()) j["stack"] = stack;
  const auto [bc, bs] = best_row(clusters, o);
  if (bc < clusters.size()) j["best"] = Json{{"cluster", clusters[bc].cluster}, {"gpus", clusters[bc].sizes[bs].gpus}};
  out << canonical_json(j) << "\n";
}

// The first line: the job, the sizes and what the search ranks by.
void print_heading(std::ostream& out, const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o,
                   bool sweep) {
  const Job* any = nullptr;
  for (const auto& c : clusters)
    for (const auto& s : c.sizes)
      if (!any && s.ok) any = &s.job;
  out << "trainsim plan: " << (any ? any->model.name + " on " : "");
  if (!clusters.empty() && !clusters.front().sizes.empty()) {
    const auto& sz = clusters.front().sizes;
    out << (sweep ? std::to_string(sz.front().gpus) + " to " + std::to_string(sz.back().gpus)
                  : std::to_string(sz.front().gpus))
        << " GPUs of each of ";
  }
  out << clusters.size() << " clusters";
  if (any) out << ", global batch " << any->global_batch << " x " << any->seq_len << " tokens";
  out << "\n  the best plan of each (objective: " << o.objective;
  if (any) out << ", stack " << clusters.front().sizes.front().result.stack;
  out << ")\n";
}

}  // namespace

std::vector<std::string> cluster_list(const Json& job) {
  const auto it = job.find("cluster");
  if (it == job.end() || !it->is_string()) return {};
  const std::string text = it->get<std::string>();
  if (text.find(',') == std::string::npos) return {};
  const std::vector<std::string> names = split(text);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty())
      throw ConfigError("cluster", "the list \"" + text + "\" has an empty name",
                        "separate cluster presets or files with single commas, e.g. dgx-h100,gb200-nvl72");
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i))
      throw ConfigError("cluster", "\"" + names[i] + "\" is named twice in the list", "name each cluster once");
  }
  return names;
}

std::vector<double> cluster_prices(const std::string& text, size_t clusters) {
  std::vector<double> prices;
  for (const std::string& item : split(text)) prices.push_back(number_value(item, "price-per-gpu-hour", 0.0, 1e6));
  if (prices.size() == 1) return std::vector<double>(clusters, prices.front());
  if (prices.size() != clusters)
    throw ConfigError("--price-per-gpu-hour",
                      "gives " + std::to_string(prices.size()) + " prices for " + std::to_string(clusters) +
                          " cluster" + (clusters == 1 ? "" : "s"),
                      "give one price for all, or one per cluster of --cluster in its order");
  return prices;
}

PlanReportOptions options_for(const PlanReportOptions& o, const ClusterPlans& c) {
  PlanReportOptions oc = o;
  oc.price_per_gpu_hour = c.price_per_gpu_hour;
  return oc;
}

size_t best_size_of(const ClusterPlans& c, const PlanReportOptions& o) { return best_size(c.sizes, options_for(o, c)); }

std::pair<size_t, size_t> best_row(const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o) {
  std::pair<size_t, size_t> best{clusters.size(), 0};
  double best_value = 0;
  for (size_t i = 0; i < clusters.size(); ++i) {
    const size_t k = best_size_of(clusters[i], o);
    if (k >= clusters[i].sizes.size()) continue;
    const SizeResult& s = clusters[i].sizes[k];
    const double v = objective_value(s.job, best_plan(s), options_for(o, clusters[i]));
    if (best.first == clusters.size() || v < best_value) {
      best = {i, k};
      best_value = v;
    }
  }
  return best;
}

std::vector<ComparisonMetric> comparison_metrics(const std::vector<ClusterPlans>& clusters,
                                                 const PlanReportOptions& o) {
  const Columns col = columns(clusters, o);
  std::vector<ComparisonMetric> out;
  if (col.tokens) {
    out.push_back({"days to train " + tokens_text(o.tokens) + " tokens", {}, 1});
    out.push_back({col.cost ? "cost ($)" : "GPU-hours", {}, 0});
    if (col.energy) out.push_back({"energy (MWh, GPUs at TDP)", {}, 1});
  } else {
    out.push_back({"iteration time (s)", {}, 3});
    out.push_back({"GPU-hours per million tokens", {}, 3});
    if (col.energy) out.push_back({"energy (kWh per million tokens)", {}, 2});
  }
  for (const auto& c : clusters) {
    const size_t k = best_size_of(c, o);
    const PlanReportOptions oc = options_for(o, c);
    Json pj;
    double tdp = 0;
    if (k < c.sizes.size()) {
      pj = plan_json(best_plan(c.sizes[k]), c.sizes[k].job, 1, oc);
      tdp = c.sizes[k].job.gpu.tdp_watts;
    }
    auto value = [&](const char* key) { return pj.is_null() ? -1.0 : pj.value(key, -1.0); };
    if (col.tokens) {
      out[0].values.push_back(value("days"));
      out[1].values.push_back(col.cost ? value("cost") : value("gpu_hours"));
      if (col.energy) out[2].values.push_back(value("energy_mwh"));
    } else {
      out[0].values.push_back(value("iteration_time_s"));
      const double gh = value("gpu_hours_per_million_tokens");
      out[1].values.push_back(gh);
      if (col.energy) out[2].values.push_back(gh >= 0 && tdp > 0 ? gh * tdp / 1e3 : -1.0);
    }
  }
  return out;
}

void print_comparison(std::ostream& out, const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o,
                      bool sweep) {
  if (o.json) {
    print_json(out, clusters, o, sweep);
    return;
  }
  const Columns col = columns(clusters, o);
  size_t wc = 9, wg = 5, wd = 46;
  for (const auto& c : clusters) {
    wc = std::max(wc, c.cluster.size() + 2);
    for (const auto& s : c.sizes) {
      wg = std::max(wg, gpu_of(c, s).size() + 2);
      if (s.ok) wd = std::max(wd, search::describe(best_plan(s).candidate).size() + 2);
    }
  }
  print_heading(out, clusters, o, sweep);
  std::string low;
  for (const auto& c : clusters)
    for (const auto& s : c.sizes)
      if (s.ok && low.empty()) low = low_precision_label(s.job);
  out << pad("cluster", wc) << pad("GPU", wg) << lpad("GPUs", 6) << lpad("fits", 6) << "  " << pad("configuration", wd)
      << lpad("iter(s)", 9) << lpad("tokens/s", 13) << mfu_header(low);
  if (col.tokens) {
    out << lpad("days", 8) << lpad("GPU-h", 14);
    if (col.cost) out << lpad("cost $", 14);
    if (col.energy) out << lpad("MWh", 10);
  } else {
    out << lpad("GPU-h/Mtok", 12);
    if (col.energy) out << lpad("kWh/Mtok", 10);
  }
  if (col.goodput) out << lpad("+failures", 10);
  out << "\n";
  const auto [bc, bs] = best_row(clusters, o);
  for (size_t i = 0; i < clusters.size(); ++i) {
    const ClusterPlans& c = clusters[i];
    const PlanReportOptions oc = options_for(o, c);
    const size_t best_k = best_size_of(c, o);
    for (size_t k = 0; k < c.sizes.size(); ++k) {
      const SizeResult& s = c.sizes[k];
      out << pad(k == 0 ? c.cluster : "", wc) << pad(k == 0 ? gpu_of(c, s) : "", wg) << lpad(std::to_string(s.gpus), 6);
      if (!s.ok) {
        out << lpad("no", 6) << "  " << s.why << "\n";
        continue;
      }
      const search::Plan& p = best_plan(s);
      const Json pj = plan_json(p, s.job, 1, oc);
      out << lpad("yes", 6) << "  " << pad(search::describe(p.candidate), wd) << lpad(fmt("%.3f", p.iteration_s), 9)
          << lpad(grouped(static_cast<int64_t>(pj["tokens_per_s"].get<double>())), 13) << mfu_cells(pj, low);
      const bool power = s.job.gpu.tdp_watts > 0;
      if (col.tokens) {
        out << lpad(fmt("%.1f", pj.value("days", 0.0)), 8)
            << lpad(grouped(static_cast<int64_t>(pj.value("gpu_hours", 0.0))), 14);
        if (col.cost)
          out << lpad(pj.contains("cost") ? grouped(static_cast<int64_t>(pj["cost"].get<double>())) : "-", 14);
        if (col.energy) out << lpad(power ? fmt("%.1f", pj.value("energy_mwh", 0.0)) : "-", 10);
      } else {
        const double gh = pj["gpu_hours_per_million_tokens"].get<double>();
        out << lpad(fmt("%.3f", gh), 12);
        if (col.energy) out << lpad(power ? fmt("%.3f", gh * s.job.gpu.tdp_watts / 1e3) : "-", 10);
      }
      if (col.goodput) out << lpad(fmt("%.1f", pj.value("expected_days_with_failures", 0.0)), 10);
      if (sweep && k == best_k) out << "  <- best of " << c.cluster;
      if (!sweep && i == bc && k == bs) out << "  <- best " << o.objective;
      out << "\n";
    }
  }
  out << "  (MFU(BF16): model FLOP/s over the GPU's dense BF16 peak";
  if (!low.empty()) out << ", MFU(" << low << ") over its dense " << low << " peak";
  out << "; iter: the most faithful simulated time, as in a\n"
         "   one-cluster plan";
  if (col.energy) out << "; energy: every GPU at its tdp_watts for the whole run, no host or network power";
  out << ")\n";
  if (bc >= clusters.size()) return;
  out << "  best by " << o.objective << ": " << clusters[bc].cluster << " (" << clusters[bc].sizes[bs].gpus << " GPUs, "
      << search::describe(best_plan(clusters[bc].sizes[bs]).candidate) << ")\n";
  if (sweep) return;
  // Throughput against the first cluster that has a plan.
  const SizeResult* ref = nullptr;
  const ClusterPlans* ref_c = nullptr;
  std::string against;
  for (const auto& c : clusters) {
    const SizeResult& s = c.sizes.front();
    if (!s.ok) continue;
    if (!ref) {
      ref = &s;
      ref_c = &c;
      continue;
    }
    against += (against.empty() ? " " : ", ") + c.cluster + " " + fmt("%.2fx", tokens_per_s(s) / tokens_per_s(*ref));
  }
  if (!against.empty()) out << "  tokens/s against " << ref_c->cluster << ":" << against << "\n";
}

}  // namespace trainsim::planner::cli
