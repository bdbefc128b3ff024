#pragma once
// The default split of a model's layers over pipeline stages when they do not divide evenly:
// Megatron's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split
// count the embedding and the loss as a layer each, so the first and last virtual stages get fewer
// transformer layers (LLaMA-3-405B's 126 layers over 16 stages: 7, 8, ..., 8, 7, as Meta trained it).
// simulate, reliability, ui and the planner all use this split; --pp-layout overrides it.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::workload {

// Layers per virtual stage (first and last lighter), or empty when `layers` divides evenly over
// `vstages` or no such split leaves every stage a layer.
std::vector<int64_t> uneven_layout(int64_t layers, int64_t vstages);

// The job's `pp_layout` at `path`: a list of layer counts, or the same as text "a,b,bxk,..."
// (`bxk`: k entries of b, as reports print layouts); null gives an empty list. ConfigError names
// the field otherwise.
std::vector<int64_t> read_pp_layout(const sim::config::Json& v, const std::string& path);

}  // namespace trainsim::models::workload
