#pragma once
// A MoE block on one rank: the router and permutation on the rank's tokens (its sequence-parallel
// shard), the dispatch all-to-all over the EP group, an all-gather of the received rows over the
// expert-TP group, the local experts, the reverse path, and the shared experts beside it
// (Megatron-Core's all-to-all token dispatcher).

#include <cstdint>

#include "models/collectives/comm_model.hpp"
#include "models/compute/compute_model.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/workload/build/stage_emitter.hpp"
#include "models/workload/job/job.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::models::workload::build {

struct MoeBlock {
  llm::MoeBlockCosts costs;
  sim::task::LabelId labels[13] = {};
  int64_t ep = 1, etp = 1;
  // GPU time lost to the dispatcher's host synchronization in each forward (llm/host_sync.hpp);
  // zero when the stack's dispatcher does not synchronize or nothing is dispatched.
  sim::Time sync_stall;

  MoeBlock() = default;
  // Costs of the block for `shape` (a CP rank's share of the sequence) and its labels, interned;
  // `next` is a layer's cost (the attention the host issues after the synchronization).
  MoeBlock(const Job& job, const llm::LayerShape& shape, const compute::ComputeModel& cm,
           const collectives::CommModel& comm, const llm::LayerCosts& next, sim::task::TaskGraph& g);

  // Forward of the block after its norm (`pre_label`); returns its last task.
  Handle forward(StageEmitter& e, Category cat, int mb, int layer, const Handle& in, const Handle& wdep,
                 sim::task::LabelId pre_label) const;
  // Backward; returns the block's input gradient and fills the weight-gradient inputs.
  Handle backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& wdep,
                  sim::task::LabelId pre_label, PendingWgrad& pend) const;
};

// GPU time one MoE layer forward loses to its dispatcher's host synchronization under the job's
// stack (llm/host_sync.hpp): the dispatch and combine on the job's EP group, the experts, and the
// next layer's attention (`next`) issued by a host that has just caught up. Zero when the stack's
// dispatcher does not synchronize. Shared with the planner's estimator.
sim::Time moe_sync_stall(const Job& job, const llm::MoeBlockCosts& costs, const llm::LayerCosts& next,
                         const collectives::CommModel& comm);

}  // namespace trainsim::models::workload::build
