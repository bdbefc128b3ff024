#pragma once
// `trainsim plan --plot FILE.svg`: the search drawn as SVG (docs/plots.md). One cluster size: the
// estimated time vs peak memory Pareto front, the ranked top plans marked and numbered, the
// usable memory as a vertical line. A sweep (--gpus MIN:MAX): the best plan's iteration time per
// cluster size, the best size (by the objective) marked. A comparison of clusters (--cluster A,B):
// bars per cluster of days, cost and energy (with --tokens; else iteration time, GPU-hours and
// energy per million tokens); with a sweep, the best plan's time vs GPUs, one line per cluster.

#include <string>
#include <vector>

#include "planner/cli/plan_compare.hpp"
#include "planner/cli/plan_report.hpp"
#include "planner/search/search.hpp"

namespace trainsim::planner::cli {

std::string pareto_svg(const search::SearchResult& r, double memory_limit_bytes, int64_t top, const std::string& title);
std::string sweep_svg(const std::vector<SizeResult>& rows, size_t best, const std::string& title);
std::string compare_svg(const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o,
                        const std::string& title);
std::string compare_sweep_svg(const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o,
                              const std::string& title);

}  // namespace trainsim::planner::cli
