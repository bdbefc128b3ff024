#pragma once
// The plans view's table: the planner's ranked plans for the job's model, cluster, GPU count and
// batch (every parallel dimension searched, whatever the job pins), one row each, sortable by any
// column. Picking a row loads that plan's schedule (plan_job).

#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "planner/search/search.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::ui {

struct PlanRow {
  int32_t rank = 0;  // the planner's rank, 1 = best
  planner::search::Plan plan;
  std::string config;  // "tp 8 pp 4 dp 32 mb 1 1f1b selective"
};

enum class PlanColumn : int { kRank, kConfig, kIteration, kMfu, kTokens, kMemory, kFidelity };
inline constexpr int kPlanColumns = 7;
const char* to_string(PlanColumn c);

struct PlanTable {
  std::vector<PlanRow> rows;
  int64_t considered = 0, feasible = 0;
  double search_s = 0;
  models::workload::Job hardware;
  models::workload::JobSpec spec;
  // Stable sort by a column; ties keep the planner's order.
  void sort(PlanColumn column, bool ascending);
  // The resolved job of row `i`, and its spec (the what-if panel's base once it is picked).
  models::workload::Job job(size_t i) const;
  models::workload::JobSpec job_spec(size_t i) const;
};

// Runs the planner on `job_json` (a merged job) with its parallel keys left free. `top` plans
// are kept; the best `simulate` of them are re-simulated by the discrete-event simulation.
// Throws ConfigError / PlanError as `trainsim plan` does.
PlanTable plan_table(const sim::config::Json& job_json, int64_t top = 20, int64_t simulate = 20, int threads = 1);

}  // namespace trainsim::ui
