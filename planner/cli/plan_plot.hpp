#pragma once
// `trainsim plan --plot FILE.svg`: the search drawn as SVG (docs/plots.md). One cluster size: the
// estimated time vs peak memory Pareto front, the ranked top plans marked and numbered, the
// usable memory as a vertical line. A sweep (--gpus MIN:MAX): the best plan's iteration time per
// cluster size, the best size (by the objective) marked.

#include <string>
#include <vector>

#include "planner/cli/plan_report.hpp"
#include "planner/search/search.hpp"

namespace trainsim::planner::cli {

std::string pareto_svg(const search::SearchResult& r, double memory_limit_bytes, int64_t top, const std::string& title);
std::string sweep_svg(const std::vector<SizeResult>& rows, size_t best, const std::string& title);

}  // namespace trainsim::planner::cli
