#pragma once
// The default split of a model's layers over pipeline stages when they do not divide evenly:
// Megatron's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split
// count the embedding and the loss as a layer each, so the first and last virtual stages get fewer
// transformer layers (LLaMA-3-405B's 126 layers over 16 stages: 7, 8, ..., 8, 7, as Meta trained it).
// simulate, reliability, ui and the planner all use this split; --pp-layout overrides it.

#include <cstdint>
#include <vector>

namespace trainsim::models::workload {

// Layers per virtual stage (first and last lighter), or empty when `layers` divides evenly over
// `vstages` or no such split leaves every stage a layer.
std::vector<int64_t> uneven_layout(int64_t layers, int64_t vstages);

}  // namespace trainsim::models::workload
