#include "ui/scene/plan_table.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "planner/search/space.hpp"
#include "sim/error.hpp"

namespace trainsim::ui {

using sim::config::Json;

const char* to_string(PlanColumn c) {
  switch (c) {
    case PlanColumn::kRank: return "#";
    case PlanColumn::kConfig: return "configuration";
    case PlanColumn::kIteration: return "iteration s";
    case PlanColumn::kMfu: return "MFU (BF16)";  // model FLOP/s over the dense BF16 peak
    case PlanColumn::kTokens: return "tokens/s";
    case PlanColumn::kMemory: return "peak GiB";
    case PlanColumn::kFidelity: return "fidelity";
  }
  return "?";
}

void PlanTable::sort(PlanColumn c, bool ascending) {
  auto value = [c](const PlanRow& r) -> double {
    switch (c) {
      case PlanColumn::kRank: return r.rank;
      case PlanColumn::kIteration: return r.plan.iteration_s;
      case PlanColumn::kMfu: return r.plan.mfu;
      case PlanColumn::kTokens: return r.plan.tokens_per_s;
      case PlanColumn::kMemory: return r.plan.peak_memory_bytes;
      default: return 0;
    }
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const PlanRow& a, const PlanRow& b) {
    if (c == PlanColumn::kConfig) return ascending ? a.config < b.config : b.config < a.config;
    if (c == PlanColumn::kFidelity)
      return ascending ? a.plan.fidelity < b.plan.fidelity : b.plan.fidelity < a.plan.fidelity;
    return ascending ? value(a) < value(b) : value(b) < value(a);
  });
}

models::workload::Job PlanTable::job(size_t i) const {
  return planner::search::plan_job(hardware, spec, rows.at(i).plan.candidate);
}

models::workload::JobSpec PlanTable::job_spec(size_t i) const {
  models::workload::JobSpec s = spec;
  planner::search::apply(rows.at(i).plan.candidate, hardware, s);
  return s;
}

PlanTable plan_table(const Json& job_json, int64_t top, int64_t simulate, int threads) {
  const auto t0 = std::chrono::steady_clock::now();
  PlanTable t;
  t.spec = models::workload::parse_job(job_json);
  t.hardware = models::workload::resolve_hardware(t.spec);
  if (t.spec.global_batch <= 0)
    throw ConfigError("global_batch", "is required to plan", "pass --global-batch N (sequences per iteration)");
  // Only what is not a parallel choice is pinned.
  Json given = Json::object();
  for (const char* key : {"model", "cluster", "gpu", "calibration", "global_batch", "seq_len", "precision", "attention",
                          "network", "seed"})
    if (job_json.contains(key)) given[key] = job_json[key];
  planner::search::SearchOptions so;
  so.keep = top;
  so.rerank = simulate;
  so.rerank_flow = 0;
  so.threads = threads;
  const planner::search::SearchResult r = planner::search::run_search(t.hardware, t.spec, given, so);
  t.considered = r.considered;
  t.feasible = r.feasible;
  for (size_t i = 0; i < r.plans.size(); ++i) {
    PlanRow row;
    row.rank = static_cast<int32_t>(i + 1);
    row.plan = r.plans[i];
    row.config = planner::search::describe(r.plans[i].candidate);
    t.rows.push_back(std::move(row));
  }
  t.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

}  // namespace trainsim::ui
