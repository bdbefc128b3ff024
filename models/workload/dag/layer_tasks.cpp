#include "models/workload/dag/layer_tasks.hpp"

#include "models/llm/recompute_modules.hpp"

// GCC's -Wstringop-overread misfires on boost::small_vector copies of Handles that may be empty
// (memmove of a provably-bounded inline buffer); the copies are correct.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

namespace trainsim::models::workload::dag {

using collectives::CollectiveOp;
using llm::Cost;
using sim::Bytes;
using sim::Time;
using sim::task::LabelId;

// ---- one layer --------------------------------------------------------------------------------

Handle LayerTasks::forward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& weights,
                           bool recompute) const {
  const Labels& lb = c_.lb;
  const LabelId pre_m = recompute ? lb.re_mlp_pre : lb.mlp_pre;
  const Category cat = recompute ? Category::kRecompute : Category::kCompute;
  Handle h = in;
  for (int blk = 0; blk < 2; ++blk) {
    const Handle& wdep = blk == 0 ? weights : Handle{};
    if (blk == 1 && c_.moe_layer(layer)) {
      h = c_.moe_of(layer).forward(e, cat, mb, layer, h, wdep, pre_m);
    } else {
      if (c_.graphed(blk, layer)) e.begin_graph();
      h = block_forward(e, blk, recompute, mb, layer, h, wdep);
      e.end_graph();
    }
  }
  return h;
}

Handle LayerTasks::block_forward(StageEmitter& e, int blk, bool recompute, int mb, int layer, const Handle& in,
                                 const Handle& wdep) const {
  const Labels& lb = c_.lb;
  const Job& job = c_.job;
  const Bytes tp_bytes = c_.lc.tp_comm_bytes;
  const LabelId pre_a = recompute ? lb.re_attn_pre : lb.attn_pre, main_a = recompute ? lb.re_attn_fwd : lb.attn_fwd;
  const LabelId pre_m = recompute ? lb.re_mlp_pre : lb.mlp_pre, main_m = recompute ? lb.re_mlp_fwd : lb.mlp_fwd;
  const Category cat = recompute ? Category::kRecompute : Category::kCompute;
  const BlockTasks& bt = c_.block(blk, layer);
  const llm::BlockCosts& c = bt.whole;
  const LabelId* parts = lb.parts_fwd[blk];
  Handle h = in;
  if (recompute && blk == 1 && job.stack.kernels.recompute_early_stop) {
    // PyTorch's checkpoint stops recomputing once the backward has every tensor it saved: the
    // MLP's last GEMM (its output is not saved) and the TP reduction after it are not redone.
    Cost redo = bt.fwd.head;
    redo += bt.fwd.core;
    if (job.sp && job.tp > 1) {
      Handle pre = e.compute(pre_m, c.pre_fwd, cat, mb, layer, {&h, &wdep});
      Handle ag = e.collective(lb.tp_ag, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes, mb, layer, {&pre});
      return e.compute(main_m, redo, cat, mb, layer, {&ag});
    }
    redo += c.pre_fwd;
    return e.compute(main_m, redo, cat, mb, layer, {&h, &wdep});
  }
  if (c_.split_blocks) {
    Handle head;
    if (job.sp) {
      Handle pre = e.compute(blk == 0 ? pre_a : pre_m, c.pre_fwd, cat, mb, layer, {&h, &wdep});
      head = gather_then(e, lb.tp_ag, parts[0], bt.fwd.head, bt.fwd_chunk.head, cat, mb, layer, pre, Handle{});
    } else {
      Cost first = c.pre_fwd;
      first += bt.fwd.head;
      head = e.compute(parts[0], first, cat, mb, layer, {&h, &wdep});
    }
    Handle core = blk == 0 && job.cp > 1 ? cp_core(e, bt.fwd.core, false, parts[1], cat, mb, layer, head)
                                         : e.compute(parts[1], bt.fwd.core, cat, mb, layer, {&head});
    if (job.sp) {
      h = then_scatter(e, parts[2], lb.tp_rs, bt.fwd.tail, bt.fwd_chunk.tail, cat, mb, layer, core);
    } else {
      h = e.compute(parts[2], bt.fwd.tail, cat, mb, layer, {&core});
      if (job.tp > 1) h = e.collective(lb.tp_ar, GroupKind::kTp, CollectiveOp::kAllReduce, tp_bytes, mb, layer, {&h});
    }
  } else if (job.sp) {
    Handle pre = e.compute(blk == 0 ? pre_a : pre_m, c.pre_fwd, cat, mb, layer, {&h, &wdep});
    Handle ag = e.collective(lb.tp_ag, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes, mb, layer, {&pre});
    Handle main = e.compute(blk == 0 ? main_a : main_m, c.main_fwd, cat, mb, layer, {&ag});
    h = e.collective(lb.tp_rs, GroupKind::kTp, CollectiveOp::kReduceScatter, tp_bytes, mb, layer, {&main});
  } else {
    Cost merged = c.pre_fwd;
    merged += c.main_fwd;
    Handle main = e.compute(blk == 0 ? main_a : main_m, merged, cat, mb, layer, {&h, &wdep});
    h = job.tp > 1 ? e.collective(lb.tp_ar, GroupKind::kTp, CollectiveOp::kAllReduce, tp_bytes, mb, layer, {&main})
                   : main;
  }
  return h;
}

Handle LayerTasks::backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& weights,
                            Handle& wgrad_out, PendingWgrad* deferred) const {
  const Labels& lb = c_.lb;
  const Job& job = c_.job;
  Handle h = in;
  for (int blk = 1; blk >= 0; --blk) {
    const BlockTasks& bt = c_.block(blk, layer);
    const llm::BlockCosts& c = bt.whole;
    if (c_.graphed(blk, layer)) e.begin_graph();
    // Selective recompute redoes the recomputed modules' forward just before their backward: the
    // attention core (core_attn), and the norm, MLP or MLA up-projections (recompute_modules).
    Handle re;
    Cost redo = c.module_recompute;
    if (job.recompute_modules & llm::kRecomputeCoreAttn) redo += c.selective_recompute;
    if (redo.kernels > 0)
      re = e.compute(c.module_recompute.kernels > 0 ? lb.re_modules : lb.re_core, redo, Category::kRecompute, mb, layer,
                     {&h});
    const LabelId dl = blk == 0 ? lb.attn_dgrad : lb.mlp_dgrad, wl = blk == 0 ? lb.attn_wgrad : lb.mlp_wgrad;
    const LabelId pl = blk == 0 ? lb.attn_pre_bwd : lb.mlp_pre_bwd;
    const LabelId* parts = lb.parts_dgrad[blk];
    const Handle& wdep = blk == 1 ? weights : Handle{};
    Handle wg;
    PendingWgrad pend;
    if (blk == 1 && c_.moe_layer(layer)) {
      h = c_.moe_of(layer).backward(e, mb, layer, h, wdep, pl, pend);
      if (!deferred) {
        // The experts' weight gradients are part of the MoE part's backward graph when it has one.
        if (c_.graphs.moe_rest) e.begin_graph();
        wg = e.compute(wl, pend.cost, Category::kCompute, mb, layer, {&pend.dgrad, &pend.input});
        e.end_graph();
      }
    } else if (job.sp) {
      Handle agi, dgrad;
      const Handle rs = sp_dgrad(e, blk, mb, layer, h, wdep, re, agi, dgrad);
      if (deferred)
        pend = PendingWgrad{dgrad, agi, c.main_wgrad};
      else
        wg = e.compute(wl, c.main_wgrad, Category::kCompute, mb, layer, {&dgrad, &agi});
      h = e.compute(pl, c.pre_bwd, Category::kCompute, mb, layer, {&rs});
    } else {
      Handle dgrad;
      if (c_.split_blocks) {
        Handle core = dgrad_head_core(e, blk, mb, layer, h, wdep, re);
        dgrad = e.compute(parts[2], bt.dgrad.tail, Category::kCompute, mb, layer, {&core});
      } else {
        dgrad = e.compute(dl, c.main_dgrad, Category::kCompute, mb, layer, {&h, &wdep, &re});
      }
      Handle ar = job.tp > 1 ? e.collective(lb.tp_ar_grad, GroupKind::kTp, CollectiveOp::kAllReduce,
                                            c_.lc.tp_comm_bytes, mb, layer, {&dgrad})
                             : dgrad;
      if (deferred) {
        pend = PendingWgrad{dgrad, Handle{}, c.main_wgrad};
        h = e.compute(pl, c.pre_bwd, Category::kCompute, mb, layer, {&ar});
      } else {
        wg = e.compute(wl, c.main_wgrad, Category::kCompute, mb, layer, {&dgrad});
        h = e.compute(pl, c.pre_bwd, Category::kCompute, mb, layer, {&ar, &wg});
      }
    }
    e.end_graph();
    if (deferred)
      deferred[blk] = pend;
    else
      wgrad_out = wg;
  }
  return h;
}

Handle LayerTasks::sp_dgrad(StageEmitter& e, int blk, int mb, int layer, const Handle& in, const Handle& wdep,
                            const Handle& re, Handle& agi, Handle& dgrad) const {
  // The input all-gather for the weight gradient follows the gradient all-gather on the TP
  // stream (it needs only that), ahead of the reduce-scatter that waits for the GEMMs.
  const Labels& lb = c_.lb;
  const Bytes tp_bytes = c_.lc.tp_comm_bytes;
  const BlockTasks& bt = c_.block(blk, layer);
  const LabelId* parts = lb.parts_dgrad[blk];
  constexpr Category cat = Category::kCompute;
  Handle agg, rs;
  if (c_.split_blocks) {
    if (c_.overlap_chunks > 1) {
      Handle first =
          gather_then(e, lb.tp_ag_grad, parts[0], bt.dgrad.head, bt.dgrad_chunk.head, cat, mb, layer, in, wdep);
      agi = e.collective(lb.tp_ag_input, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes, mb, layer, {&first});
      Handle core = blk == 0 && c_.job.cp > 1 ? cp_core(e, bt.dgrad.core, true, parts[1], cat, mb, layer, first)
                                              : e.compute(parts[1], bt.dgrad.core, cat, mb, layer, {&first, &re});
      rs = then_scatter(e, parts[2], lb.tp_rs_grad, bt.dgrad.tail, bt.dgrad_chunk.tail, cat, mb, layer, core, &dgrad);
    } else {
      agg = e.collective(lb.tp_ag_grad, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes, mb, layer, {&in});
      agi = e.collective(lb.tp_ag_input, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes, mb, layer, {&agg});
      Handle core = dgrad_head_core(e, blk, mb, layer, agg, wdep, re);
      dgrad = e.compute(parts[2], bt.dgrad.tail, cat, mb, layer, {&core});
      rs = e.collective(lb.tp_rs_grad, GroupKind::kTp, CollectiveOp::kReduceScatter, tp_bytes, mb, layer, {&dgrad});
    }
  } else {
    const LabelId dl = blk == 0 ? lb.attn_dgrad : lb.mlp_dgrad;
    agg = e.collective(lb.tp_ag_grad, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes, mb, layer, {&in});
    dgrad = e.compute(dl, bt.whole.main_dgrad, cat, mb, layer, {&agg, &wdep, &re});
    agi = e.collective(lb.tp_ag_input, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes, mb, layer, {&agg});
    rs = e.collective(lb.tp_rs_grad, GroupKind::kTp, CollectiveOp::kReduceScatter, tp_bytes, mb, layer, {&dgrad});
  }
  return rs;
}

Handle LayerTasks::dgrad_head_core(StageEmitter& e, int blk, int mb, int layer, const Handle& in, const Handle& wdep,
                                   const Handle& re) const {
  const BlockTasks& bt = c_.block(blk, layer);
  const LabelId* parts = c_.lb.parts_dgrad[blk];
  Handle head = e.compute(parts[0], bt.dgrad.head, Category::kCompute, mb, layer, {&in, &wdep, &re});
  return blk == 0 && c_.job.cp > 1 ? cp_core(e, bt.dgrad.core, true, parts[1], Category::kCompute, mb, layer, head)
                                   : e.compute(parts[1], bt.dgrad.core, Category::kCompute, mb, layer, {&head});
}

// ---- TP communication, chunked when overlapped ------------------------------------------------

Handle LayerTasks::gather_then(StageEmitter& e, LabelId ag_label, LabelId head_label, const Cost& head,
                               const Cost& head_chunk, Category cat, int mb, int layer, const Handle& in,
                               const Handle& extra) const {
  const int64_t n = c_.overlap_chunks;
  const Bytes tp_bytes = c_.lc.tp_comm_bytes;
  if (n == 1) {
    Handle ag = e.collective(ag_label, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes, mb, layer, {&in});
    return e.compute(head_label, head, cat, mb, layer, {&ag, &extra});
  }
  Handle h;
  for (int64_t k = 0; k < n; ++k) {
    Handle ag = e.collective(ag_label, GroupKind::kTp, CollectiveOp::kAllGather, tp_bytes / n, mb, layer, {&in});
    h = e.compute(head_label, head_chunk, cat, mb, layer, {&ag, &extra, &h});
  }
  return h;
}

Handle LayerTasks::then_scatter(StageEmitter& e, LabelId tail_label, LabelId rs_label, const Cost& tail,
                                const Cost& tail_chunk, Category cat, int mb, int layer, const Handle& in,
                                Handle* computed) const {
  const int64_t n = c_.overlap_chunks;
  const Bytes tp_bytes = c_.lc.tp_comm_bytes;
  if (n == 1) {
    Handle t = e.compute(tail_label, tail, cat, mb, layer, {&in});
    if (computed) *computed = t;
    return e.collective(rs_label, GroupKind::kTp, CollectiveOp::kReduceScatter, tp_bytes, mb, layer, {&t});
  }
  Handle t = in, rs;
  for (int64_t k = 0; k < n; ++k) {
    t = e.compute(tail_label, tail_chunk, cat, mb, layer, {&t});
    rs = e.collective(rs_label, GroupKind::kTp, CollectiveOp::kReduceScatter, tp_bytes / n, mb, layer, {&t});
  }
  if (computed) *computed = t;
  return rs;
}

// ---- context parallelism ----------------------------------------------------------------------

Bytes LayerTasks::kv_bytes() const {
  const Job& job = c_.job;
  return Bytes(job.micro_batch * c_.seq_local * job.model.kv_width() / job.tp * 2);
}

Bytes LayerTasks::qkv_bytes() const {
  const Job& job = c_.job;
  return Bytes(job.micro_batch * c_.seq_local * (job.model.hidden + job.model.kv_width()) / job.tp * 2);
}

Bytes LayerTasks::out_bytes() const {
  const Job& job = c_.job;
  return Bytes(job.micro_batch * c_.seq_local * job.model.hidden / job.tp * 2);
}

int32_t LayerTasks::ring_prev(const RankInfo& r) const {
  const Job& job = c_.job;
  const int64_t ring = job.cp / job.cp_ulysses;
  const int64_t pos = r.cp_index / job.cp_ulysses, lane = r.cp_index % job.cp_ulysses;
  const int64_t prev = ((pos + ring - 1) % ring) * job.cp_ulysses + lane;
  return static_cast<int32_t>(comms_.global_rank(r.stage, r.dp_index, r.tp_index, prev));
}

// Ulysses: all-to-all the local sequence's Q, K, V into whole sequences of cp_ulysses-th of the
// heads, attend, all-to-all the output back. Ring (Megatron CP with causal load balancing, every
// step the same work): `ring` steps of 1/ring of the core each; while a step computes, the K/V
// block it used travels to the next ring rank, and step k+1 waits for the block of step k.
// Backward passes K/V and their gradients.
Handle LayerTasks::cp_core(StageEmitter& e, const Cost& core, bool backward, LabelId core_label, Category cat, int mb,
                           int layer, const Handle& in) const {
  const Labels& lb = c_.lb;
  const int64_t u = c_.job.cp_ulysses, ring = c_.job.cp / u;
  Handle h = in, returned;  // returned: the dK/dV back at their owner (backward ring)
  if (u > 1)
    h = e.collective(backward ? lb.cp_a2a_grad_out : lb.cp_a2a_in, GroupKind::kUlysses, CollectiveOp::kAllToAll,
                     backward ? out_bytes() : qkv_bytes(), mb, layer, {&h});
  if (ring == 1) {
    h = e.compute(core_label, core, cat, mb, layer, {&h});
  } else {
    // Each rank's transfer task is the block arriving from its ring predecessor, so that a step
    // waits for what it receives (in full fidelity every rank's own incoming transfer; in
    // representative fidelity the wrap-around hop into CP rank 0, the one that leaves the node
    // when any does).
    const Cost step = scaled(core, ring);
    auto incoming = [&](LabelId label, std::initializer_list<const Handle*> deps) {
      return e.send(
          label, Category::kCpComm, kv_bytes(), Time::zero(), mb, [&](const RankInfo& r) { return ring_prev(r); },
          [](const RankInfo& r) { return r.cp; }, deps, true);
    };
    // K/V blocks travel ahead of the compute: the transfer for step k+1 runs during step k.
    Handle kv, dkv;
    for (int64_t k = 0; k < ring; ++k) {
      Handle next_kv;
      if (k + 1 < ring) next_kv = incoming(lb.cp_kv, {k == 0 ? &h : &kv});
      h = e.compute(core_label, step, cat, mb, layer, {&h, &kv});
      // Backward: the partial dK/dV of this step's block follow it to the next rank once computed;
      // the last hop returns them to their owner.
      if (backward) dkv = incoming(lb.cp_kv_grad, {&h, &dkv});
      kv = next_kv;
    }
    if (backward) {
      e.gate_next_compute(dkv);
      returned = dkv;
    }
  }
  if (u > 1)
    h = e.collective(backward ? lb.cp_a2a_grad_in : lb.cp_a2a_out, GroupKind::kUlysses, CollectiveOp::kAllToAll,
                     backward ? qkv_bytes() : out_bytes(), mb, layer, {&h, &returned});
  return h;
}

}  // namespace trainsim::models::workload::dag
