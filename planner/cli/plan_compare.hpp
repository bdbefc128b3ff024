#pragma once
// `trainsim plan --cluster A,B,C`: the same plan search on several clusters, side by side
// (docs/planner.md, "Comparing clusters"). Per cluster (and per size of a --gpus MIN:MAX sweep):
// the best plan, its iteration time, tokens/s and MFU (model FLOPs over the GPU's dense BF16
// peak), whether any plan fits, and the run's economics: GPU-hours and energy per million tokens,
// or with --tokens the days, GPU-hours, cost (--price-per-gpu-hour, one price or one per cluster)
// and energy (every GPU at its tdp_watts, as --objective energy counts it). Or the same as JSON.

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "planner/cli/plan_report.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::planner::cli {

// One cluster of a comparison and its searches.
struct ClusterPlans {
  std::string cluster;            // as given in the list: a preset name or a JSON file
  std::string gpu;                // its GPU (the preset named by the cluster, or --gpu)
  double price_per_gpu_hour = 0;  // this cluster's price (0: none given)
  std::vector<SizeResult> sizes;  // one per --gpus size
};

// The clusters of a comparison: the job's "cluster" split at commas ("dgx-h100,gb200-nvl72").
// Empty when it names one cluster (no comma), which keeps the one-cluster plan. Throws
// ConfigError at "cluster" for an empty name or one named twice.
std::vector<std::string> cluster_list(const sim::config::Json& job);

// --price-per-gpu-hour: "2.5" (every cluster) or "2.5,4,6.1" (one per cluster, in the list's
// order); each in [0, 1e6], 0 meaning no price. Throws ConfigError at --price-per-gpu-hour.
std::vector<double> cluster_prices(const std::string& text, size_t clusters);

// The report options of one cluster: its price.
PlanReportOptions options_for(const PlanReportOptions& o, const ClusterPlans& c);

// The (cluster, size) indices with the best --objective value among the rows with a plan, or
// {clusters.size(), 0} when none has one.
std::pair<size_t, size_t> best_row(const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o);
// The size index with the best objective of one cluster (c.sizes.size() when none has a plan).
size_t best_size_of(const ClusterPlans& c, const PlanReportOptions& o);

// One bar chart of the comparison: a quantity per cluster (its best plan's; < 0: none).
struct ComparisonMetric {
  std::string label;  // "days to train 15T tokens", "cost ($)", ...
  std::vector<double> values;
  int decimals = 1;
};
// What the one-size comparison plot draws: days, cost (or GPU-hours) and energy with --tokens;
// iteration time, GPU-hours and energy per million tokens without. Energy only when a GPU has
// tdp_watts.
std::vector<ComparisonMetric> comparison_metrics(const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o);

// The side-by-side table (one row per cluster, or per cluster and size with a sweep), or with
// o.json the JSON object {"schema_version", "objective", "stack", "mfu_peak", "clusters": [row],
// "best"}.
void print_comparison(std::ostream& out, const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o,
                      bool sweep);

}  // namespace trainsim::planner::cli
