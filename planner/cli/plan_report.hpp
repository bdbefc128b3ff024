#pragma once
// What `trainsim plan` prints: the ranked table, why the winner wins (its simulated time breakdown
// beside the runner-up's), the time vs memory front, the what-if comparison and the cluster-size
// sweep; or the same as one JSON object (schema_version 1). Timings (how long the search took,
// processes) are on one line starting "timing:" and in "elapsed_s", the only parts that change
// between runs.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/failure/study.hpp"
#include "models/workload/job/job.hpp"
#include "planner/search/search.hpp"

namespace trainsim::planner::cli {

struct PlanReportOptions {
  bool json = false;
  std::string objective = "time";  // time | cost | energy | goodput
  double tokens = 0;               // --tokens: days (and cost, energy) to train this many
  double price_per_gpu_hour = 0;   // --price-per-gpu-hour (0: cost in GPU-hours)
  int64_t top = 10;
  double headroom = 0.9;
  bool require_power = false;  // energy objective: the GPU needs tdp_watts
  std::vector<std::string> overrides;
};

struct BaselineResult {
  bool ok = false;
  std::string why;
  search::SearchResult result;
  models::workload::Job job;
};

struct SizeResult {
  int64_t gpus = 0;
  bool ok = false;
  std::string why;
  search::SearchResult result;
  models::workload::Job job;  // the best plan's
};

void print_plan(std::ostream& out, const search::SearchResult& r, const models::workload::Job& hardware,
                const models::workload::JobSpec& spec, const models::workload::Job& winner, const PlanReportOptions& o,
                const BaselineResult* baseline, const std::vector<std::string>& written,
                const models::failure::ReliabilityReport* reliability = nullptr);

// One plan as the report's JSON (an entry of "plans"; the sweep's and comparison's "plan").
sim::config::Json plan_json(const search::Plan& p, const models::workload::Job& j, int rank,
                            const PlanReportOptions& o);
// The quantity --objective minimises for plan `p` of job `j`, per token so that sizes and
// clusters compare (goodput: the expected wall clock with failures).
double objective_value(const models::workload::Job& j, const search::Plan& p, const PlanReportOptions& o);
// The utilization columns of the planner's tables (models/compute/peaks.hpp): MFU(BF16) always,
// and MFU(FP8), MFU(MXFP8) or MFU(NVFP4) beside it when the job's GEMMs run quantized. `low` is that
// precision's label ("FP8"), "" for none; a plan without the figure gets "-".
std::string low_precision_label(const models::workload::Job& j);
std::string mfu_header(const std::string& low);
std::string mfu_cells(const sim::config::Json& plan, const std::string& low);
// Table text: 1234567 -> "1,234,567"; `s` padded on the right / left to `w` characters.
std::string grouped(int64_t v);
std::string pad(const std::string& s, size_t w);
std::string lpad(const std::string& s, size_t w);

void print_sweep(std::ostream& out, const std::vector<SizeResult>& rows, const PlanReportOptions& o);
// The row with the best objective value among the sizes that have a plan (rows.size() if none).
size_t best_size(const std::vector<SizeResult>& rows, const PlanReportOptions& o);

}  // namespace trainsim::planner::cli
