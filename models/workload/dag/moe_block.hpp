#pragma once
// A MoE block on one rank: the router and permutation on the rank's tokens (its sequence-parallel
// shard), the job's token dispatcher (models/llm/moe_dispatch.hpp), the local experts, the reverse
// path, and the shared experts beside it. alltoall and flex: the dispatch all-to-all over the EP
// group (flex: DeepEP's deduplicated bytes), an all-gather of the received rows over the expert-TP
// group; allgather: all-gathers of every token over EP then ETP, reduce-scatters back.

#include <cstdint>

#include "models/collectives/comm_model.hpp"
#include "models/compute/compute_model.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/workload/dag/stage_emitter.hpp"
#include "models/workload/job/job.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::models::workload::dag {

struct MoeBlock {
  llm::MoeBlockCosts costs;
  sim::task::LabelId labels[16] = {};
  bool redo_block = false;  // selective recompute of the whole MoE block (recompute_modules moe)
  int64_t ep = 1, etp = 1;
  llm::MoeDispatcher dispatcher = llm::MoeDispatcher::kAllToAll;
  // GPU time lost to the dispatcher's host synchronization in each forward (llm/host_sync.hpp);
  // zero when the stack's dispatcher does not synchronize or nothing is dispatched.
  sim::Time sync_stall;
  // CUDA graphs (job/cuda_graphs.hpp): the norm and router, and the dispatch to the combine.
  bool graph_router = false, graph_rest = false;

  MoeBlock() = default;
  // Costs of the block for `shape` (a CP rank's share of the sequence) and its labels, interned;
  // `next` is a layer's cost (the attention the host issues after the synchronization).
  MoeBlock(const Job& job, const llm::LayerShape& shape, const compute::ComputeModel& cm,
           const collectives::CommModel& comm, const llm::LayerCosts& next, sim::task::TaskGraph& g);

  // Forward of the block after its norm (`pre_label`); returns its last task.
  Handle forward(StageEmitter& e, Category cat, int mb, int layer, const Handle& in, const Handle& wdep,
                 sim::task::LabelId pre_label) const;
  // The dispatcher's collectives to the experts (forward, or the backward's reversed combine) and
  // back; each returns its last task (`in` when there is none).
  Handle dispatch(StageEmitter& e, int mb, int layer, const Handle& in, bool forward) const;
  Handle combine(StageEmitter& e, int mb, int layer, const Handle& in, bool forward) const;
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

}  // namespace trainsim::models::workload::dag
