#pragma once
// What one straggler costs a plan: the iteration re-simulated with one GPU slowed to the
// profile's speed (in the first, the busiest and the last pipeline stage, weighted by how many
// stages each stands for), and with a GPU of the busiest stage's link into the network fabric
// degraded to the profile's share of its bandwidth, each over the fault-free iteration. A slow
// GPU holds back its tensor-parallel group and, through the data-parallel reduction, every
// replica; a slow link holds back every collective that crosses it.

#include "models/failure/profile.hpp"
#include "models/failure/study.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::failure {

// `base` is the fault-free simulation of `job` (simulated, fits). Link degradation needs the
// flow network: a job on the analytic network is re-simulated on the flow network for it.
StragglerSlowdowns straggler_slowdowns(const workload::Job& job, const workload::SimulationResult& base,
                                       const FailureProfile& profile);

}  // namespace trainsim::models::failure
