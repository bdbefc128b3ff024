#pragma once
// A Scene from a job: simulate one iteration (models/workload/run/simulate.hpp) and keep what the views
// draw: every finished task per (rank, stream) row, the critical path, each simulated rank's memory
// over time, the cluster's topology laid out, and, when asked, each link's utilization over time
// from the flows the network ran.

#include <cstdint>

#include "models/workload/job/job.hpp"
#include "ui/scene/scene.hpp"

namespace trainsim::ui {

struct SceneOptions {
  // Record every flow for link utilization. Costs a full flow-level run: identical
  // collectives cannot reuse a measured duration (network_runner.hpp), about 10-20x slower.
  bool link_utilization = true;
  int32_t link_bins = 100;            // utilization time bins over the iteration
  size_t max_gpus_drawn = 128;        // more GPUs: one node per server (topology_layout.hpp)
  size_t max_rack_gpus_drawn = 1152;  // rack-scale servers (NVL72): more GPUs, one node per rack
};

// Throws ConfigError for a bad job and PlanError when the plan does not fit in memory (the
// message says which stage needs how much).
Scene simulate_scene(const models::workload::Job& job, const SceneOptions& options = {});

}  // namespace trainsim::ui
