#pragma once
// The tasks of one transformer layer on one pipeline stage: per block (attention, MLP) the norm,
// the GEMMs and the core, with tensor-parallel collectives (all-reduce, or with sequence
// parallelism all-gather / reduce-scatter, chunked and overlapped with the GEMMs under
// tp_comm_overlap), the context-parallel attention core (ring K/V passing, Ulysses all-to-alls),
// selective and full recompute, and MoE blocks.

#include <cstdint>

#include "models/workload/dag/build_context.hpp"
#include "models/workload/dag/communicators.hpp"
#include "models/workload/dag/stage_emitter.hpp"

namespace trainsim::models::workload::dag {

class LayerTasks {
 public:
  LayerTasks(const BuildContext& ctx, const Communicators& comms) : c_(ctx), comms_(comms) {}

  // Forward of one layer; returns the handle of its last task.
  Handle forward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& weights, bool recompute) const;
  // Backward of one layer (MLP block, then attention block). `wgrad_out` gets the last
  // weight-gradient task (the input-gradient collective overlaps with it), or, when `deferred`
  // is set, nothing: the weight-gradient inputs go to `deferred` (one per block) for the W op.
  Handle backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& weights, Handle& wgrad_out,
                  PendingWgrad* deferred) const;

 private:
  // Forward / backward of block `blk` (0 attention, 1 MLP) of a layer that is not a MoE block.
  Handle block_forward(StageEmitter& e, int blk, bool recompute, int mb, int layer, const Handle& in,
                       const Handle& wdep) const;
  // The input gradient under sequence parallelism; fills the gradient all-gather's input
  // all-gather (`agi`) and the last input-gradient GEMM (`dgrad`), returns the reduce-scatter.
  Handle sp_dgrad(StageEmitter& e, int blk, int mb, int layer, const Handle& in, const Handle& wdep, const Handle& re,
                  Handle& agi, Handle& dgrad) const;
  // The head GEMM and the core of a split block's input gradient.
  Handle dgrad_head_core(StageEmitter& e, int blk, int mb, int layer, const Handle& in, const Handle& wdep,
                         const Handle& re) const;

  // All-gather then the head GEMM(s); with overlap, n chunks each gathered and multiplied in turn.
  Handle gather_then(StageEmitter& e, sim::task::LabelId ag_label, sim::task::LabelId head_label, const llm::Cost& head,
                     const llm::Cost& head_chunk, Category cat, int mb, int layer, const Handle& in,
                     const Handle& extra) const;
  // The tail GEMM(s) then a reduce-scatter; with overlap, each chunk's result is scattered while
  // the next chunk multiplies. `computed` (optional) gets the last GEMM chunk.
  Handle then_scatter(StageEmitter& e, sim::task::LabelId tail_label, sim::task::LabelId rs_label,
                      const llm::Cost& tail, const llm::Cost& tail_chunk, Category cat, int mb, int layer,
                      const Handle& in, Handle* computed = nullptr) const;

  // Attention core under context parallelism (ring and / or Ulysses).
  Handle cp_core(StageEmitter& e, const llm::Cost& core, bool backward, sim::task::LabelId core_label, Category cat,
                 int mb, int layer, const Handle& in) const;
  sim::Bytes kv_bytes() const;
  sim::Bytes qkv_bytes() const;
  sim::Bytes out_bytes() const;
  // The previous rank of a rank's CP ring (stride cp_ulysses among the CP ranks).
  int32_t ring_prev(const RankInfo& r) const;

  const BuildContext& c_;
  const Communicators& comms_;
};

}  // namespace trainsim::models::workload::dag
