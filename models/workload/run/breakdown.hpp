#pragma once
// Where one rank's iteration time goes, from the simulated timeline: compute-stream busy time
// (kernels, and apart from them the GPU waiting for the host after a synchronization),
// and for the idle rest, which communication the rank was waiting on (TP first, then CP, EP, PP,
// DP, host copies, when several are in flight), else pipeline bubble. The parts add up to the
// iteration.

#include "models/workload/dag/workload.hpp"
#include "sim/config/schema.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::models::workload {

struct TimeBreakdown {
  sim::Time compute;    // forward + backward kernels (including recompute) and optimizer
  sim::Time recompute;  // the recompute part of `compute`
  // The GPU waiting for the host after host-device synchronizations (MoE dispatchers), apart from `compute`.
  sim::Time host_sync;
  sim::Time tp_exposed, pp_exposed, dp_exposed;
  sim::Time cp_exposed, ep_exposed, offload_exposed;  // context / expert parallel, host copies
  sim::Time bubble;  // idle, waiting on nothing of its own: pipeline fill/drain and imbalance
  sim::Flops flops;  // hardware FLOPs executed on the rank
  sim::config::Json to_json() const;
};

TimeBreakdown rank_breakdown(const Workload& w, const sim::task::TaskExecutor& exec, uint32_t slot, sim::Time end);

}  // namespace trainsim::models::workload
