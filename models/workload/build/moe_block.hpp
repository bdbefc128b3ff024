#pragma once
// A MoE block on one rank: the router and permutation on the rank's tokens (its sequence-parallel
// shard), the dispatch all-to-all over the EP group, an all-gather of the received rows over the
// expert-TP group, the local experts, the reverse path, and the shared experts beside it
// (Megatron-Core's all-to-all token dispatcher).

#include <cstdint>

#include "models/compute/compute_model.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/workload/build/stage_emitter.hpp"
#include "models/workload/job/job.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::models::workload::build {

struct MoeBlock {
  llm::MoeBlockCosts costs;
  sim::task::LabelId labels[12] = {};
  int64_t ep = 1, etp = 1;

  MoeBlock() = default;
  // Costs of the block for `shape` (a CP rank's share of the sequence) and its labels, interned.
  MoeBlock(const Job& job, const llm::LayerShape& shape, const compute::ComputeModel& cm, sim::task::TaskGraph& g);

  // Forward of the block after its norm (`pre_label`); returns its last task.
  Handle forward(StageEmitter& e, Category cat, int mb, int layer, const Handle& in, const Handle& wdep,
                 sim::task::LabelId pre_label) const;
  // Backward; returns the block's input gradient and fills the weight-gradient inputs.
  Handle backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& wdep,
                  sim::task::LabelId pre_label, PendingWgrad& pend) const;
};

}  // namespace trainsim::models::workload::build
