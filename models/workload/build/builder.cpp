#include "models/workload/build/builder.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <string>

#include "models/llm/layer_ops.hpp"
#include "models/llm/moe.hpp"
#include "models/memory/footprint.hpp"
#include "models/schedules/schedule.hpp"
#include "models/workload/build/communicators.hpp"
#include "models/workload/build/stage_emitter.hpp"
#include "models/workload/build/stage_memory.hpp"
#include "sim/error.hpp"

// GCC's -Wstringop-overread misfires on boost::small_vector copies of Handles that may be empty
// (memmove of a provably-bounded inline buffer); the copies are correct.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

namespace trainsim::models::workload {

using collectives::CollectiveOp;
using collectives::GroupPlacement;
using llm::Cost;
using sim::Bytes;
using sim::Time;
using sim::task::LabelId;
using sim::task::TaskIndex;
using sim::task::TaskKind;
using sim::task::TaskSpec;

const char* to_string(Category c) {
  switch (c) {
    case Category::kCompute: return "compute";
    case Category::kRecompute: return "recompute";
    case Category::kOptimizer: return "optimizer";
    case Category::kTpComm: return "tp";
    case Category::kDpComm: return "dp";
    case Category::kPpComm: return "pp";
    case Category::kCpComm: return "cp";
    case Category::kEpComm: return "ep";
    case Category::kOffload: return "offload";
  }
  return "?";
}

namespace {

struct Labels {
  LabelId embed_fwd, embed_bwd, head_fwd, head_dgrad, head_wgrad;
  LabelId attn_pre, attn_fwd, mlp_pre, mlp_fwd;
  LabelId re_attn_pre, re_attn_fwd, re_mlp_pre, re_mlp_fwd, re_core;
  LabelId attn_dgrad, attn_wgrad, attn_pre_bwd, mlp_dgrad, mlp_wgrad, mlp_pre_bwd;
  LabelId tp_ar, tp_ag, tp_rs, tp_ag_grad, tp_ag_input, tp_rs_grad, tp_ar_grad;
  LabelId send_fwd, send_bwd, dp_grad, dp_grad_replica, dp_param_ag, zero3_ag, zero3_edge_ag, zero3_rs, zero3_ar,
      embed_sync, optimizer;
  // Blocks split at their GEMMs (context parallelism, TP overlap): head GEMM, core, tail GEMM.
  LabelId parts_fwd[2][3], parts_dgrad[2][3];
  LabelId cp_kv, cp_kv_grad, cp_a2a_in, cp_a2a_out, cp_a2a_grad_out, cp_a2a_grad_in;
  LabelId offload_d2h, offload_h2d, grad_d2h, cpu_adam, param_h2d;
  explicit Labels(sim::task::TaskGraph& g)
      : embed_fwd(g.intern("embedding_fwd")),
        embed_bwd(g.intern("embedding_bwd")),
        head_fwd(g.intern("lm_head_loss_fwd")),
        head_dgrad(g.intern("lm_head_loss_dgrad")),
        head_wgrad(g.intern("lm_head_wgrad")),
        attn_pre(g.intern("attn_norm_fwd")),
        attn_fwd(g.intern("attn_fwd")),
        mlp_pre(g.intern("mlp_norm_fwd")),
        mlp_fwd(g.intern("mlp_fwd")),
        re_attn_pre(g.intern("recompute_attn_norm")),
        re_attn_fwd(g.intern("recompute_attn")),
        re_mlp_pre(g.intern("recompute_mlp_norm")),
        re_mlp_fwd(g.intern("recompute_mlp")),
        re_core(g.intern("recompute_attn_core")),
        attn_dgrad(g.intern("attn_dgrad")),
        attn_wgrad(g.intern("attn_wgrad")),
        attn_pre_bwd(g.intern("attn_norm_bwd")),
        mlp_dgrad(g.intern("mlp_dgrad")),
        mlp_wgrad(g.intern("mlp_wgrad")),
        mlp_pre_bwd(g.intern("mlp_norm_bwd")),
        tp_ar(g.intern("tp_all_reduce")),
        tp_ag(g.intern("tp_all_gather")),
        tp_rs(g.intern("tp_reduce_scatter")),
        tp_ag_grad(g.intern("tp_all_gather_grad")),
        tp_ag_input(g.intern("tp_all_gather_input")),
        tp_rs_grad(g.intern("tp_reduce_scatter_grad")),
        tp_ar_grad(g.intern("tp_all_reduce_grad")),
        send_fwd(g.intern("pp_send_activation")),
        send_bwd(g.intern("pp_send_gradient")),
        dp_grad(g.intern("dp_grad_reduce")),
        dp_grad_replica(g.intern("dp_grad_replica_all_reduce")),
        dp_param_ag(g.intern("dp_param_all_gather")),
        zero3_ag(g.intern("zero3_param_all_gather")),
        zero3_edge_ag(g.intern("zero3_embedding_all_gather")),
        zero3_rs(g.intern("zero3_grad_reduce_scatter")),
        zero3_ar(g.intern("zero3_grad_replica_all_reduce")),
        embed_sync(g.intern("embedding_grad_all_reduce")),
        optimizer(g.intern("optimizer_step")),
        cp_kv(g.intern("cp_ring_kv_send")),
        cp_kv_grad(g.intern("cp_ring_dkv_send")),
        cp_a2a_in(g.intern("cp_ulysses_all_to_all_qkv")),
        cp_a2a_out(g.intern("cp_ulysses_all_to_all_out")),
        cp_a2a_grad_out(g.intern("cp_ulysses_all_to_all_grad_out")),
        cp_a2a_grad_in(g.intern("cp_ulysses_all_to_all_grad_qkv")),
        offload_d2h(g.intern("offload_activations_d2h")),
        offload_h2d(g.intern("offload_activations_h2d")),
        grad_d2h(g.intern("offload_grads_d2h")),
        cpu_adam(g.intern("cpu_optimizer_step")),
        param_h2d(g.intern("offload_params_h2d")) {
    const char* fwd[2][3] = {{"attn_qkv_fwd", "attn_core_fwd", "attn_proj_fwd"},
                             {"mlp_fc1_fwd", "mlp_act_fwd", "mlp_fc2_fwd"}};
    const char* bwd[2][3] = {{"attn_proj_dgrad", "attn_core_bwd", "attn_qkv_dgrad"},
                             {"mlp_fc2_dgrad", "mlp_act_bwd", "mlp_fc1_dgrad"}};
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 3; ++k) {
        parts_fwd[b][k] = g.intern(fwd[b][k]);
        parts_dgrad[b][k] = g.intern(bwd[b][k]);
      }
  }
};

// A block's main kernels split at its GEMMs: the first GEMM (plus the rotary embedding that
// follows it), the core between (attention, activation), the last GEMM.
struct Parts {
  Cost head, core, tail;
};
Parts split_parts(const llm::Kernels& ks, const compute::ComputeModel& cm) {
  Parts p;
  if (ks.empty()) return p;
  size_t head_end = 1;
  if (ks.size() > 2 && ks[1].name.find(".rope.") != std::string::npos) head_end = 2;
  const size_t tail_begin = ks.size() - 1;
  for (size_t i = 0; i < ks.size(); ++i) {
    const Cost c = llm::kernel_cost(ks[i], cm);
    (i < head_end ? p.head : i >= tail_begin ? p.tail : p.core) += c;
  }
  return p;
}

Cost scaled(const Cost& c, int64_t n) {
  return Cost{Time::ns(c.time.count_ns() / n), sim::Flops(c.flops.count() / static_cast<double>(n)), 1};
}

// Costs of one block of a layer, as tasks.
struct BlockTasks {
  llm::BlockCosts whole;
  Parts fwd, dgrad;              // main_fwd / main_dgrad split at the GEMMs
  Parts fwd_chunk, dgrad_chunk;  // one of tp chunks of the GEMMs (tp_comm_overlap)
};

// What a deferred weight-gradient task needs (split schedules run it in the W op).
struct PendingWgrad {
  Handle dgrad, input;
  Cost cost;  // the weight-gradient GEMMs
};

struct Builder {
  const Job& job;
  const compute::ComputeModel& cm;
  const collectives::CommModel& comm;
  Fidelity fidelity;
  Workload w;
  Labels lb{w.graph};
  llm::LayerCosts lc;
  BlockTasks blocks[2];  // attention, MLP
  llm::EdgeCosts ec;
  Communicators comms;
  int64_t p, v, m, vstages;
  int64_t seq_local;    // tokens of a sequence on one CP rank
  int64_t grad_elem;    // bytes per gradient element in data-parallel reduction
  double layer_params;  // parameters of one layer on one TP rank
  bool split_blocks;    // blocks run as head / core / tail tasks
  int64_t overlap_chunks = 1;
  bool reuses_gathered = false;  // breadth-first: consecutive ops of a chunk keep its gathered weights
  // MoE layers' MLP block (every MoE layer has the same shape).
  llm::MoeBlockCosts moe;
  LabelId moe_labels[12] = {};

  Builder(const Job& j, const compute::ComputeModel& c, const collectives::CommModel& cmm, Fidelity f)
      : job(j), cm(c), comm(cmm), fidelity(f), comms(w, cmm, j) {
    seq_local = j.seq_len / j.cp;
    const llm::LayerShape shape{j.micro_batch, seq_local, j.tp, j.sp, j.attention == "flash", j.cp};
    lc = llm::layer_costs(j.model, shape, cm);
    ec = llm::edge_costs(j.model, shape, cm);
    const llm::LayerKernels lk = llm::layer_kernels(j.model, shape);
    overlap_chunks = j.tp_comm_overlap && j.tp > 1 ? j.tp : 1;
    // The GEMMs of one overlap chunk: the same layer on 1/n of the tokens (TE splits along M).
    llm::LayerShape chunk = shape;
    const bool even = seq_local % overlap_chunks == 0;
    if (even) chunk.seq_len = seq_local / overlap_chunks;
    const llm::LayerKernels ck = llm::layer_kernels(j.model, chunk);
    for (int b = 0; b < 2; ++b) {
      const llm::BlockKernels& k = b == 0 ? lk.attn : lk.mlp;
      BlockTasks& t = blocks[b];
      t.whole = b == 0 ? lc.attn : lc.mlp;
      t.fwd = split_parts(k.main_fwd, cm);
      t.dgrad = split_parts(k.main_dgrad, cm);
      const llm::BlockKernels& kc = b == 0 ? ck.attn : ck.mlp;
      t.fwd_chunk = even ? split_parts(kc.main_fwd, cm)
                         : Parts{scaled(t.fwd.head, overlap_chunks), Cost{}, scaled(t.fwd.tail, overlap_chunks)};
      t.dgrad_chunk = even ? split_parts(kc.main_dgrad, cm)
                           : Parts{scaled(t.dgrad.head, overlap_chunks), Cost{}, scaled(t.dgrad.tail, overlap_chunks)};
    }
    p = j.pp;
    v = j.vp;
    m = j.microbatches;
    vstages = p * v;
    split_blocks = j.cp > 1 || overlap_chunks > 1;
    // Megatron reduces fp32 main gradients under bf16 (accumulate_allreduce_grads_in_fp32) and
    // 16-bit gradients under fp16.
    grad_elem = j.precision == compute::Precision::kFp16 ? 2 : 4;
    layer_params = j.model.layer_parameters() / static_cast<double>(j.tp);
    reuses_gathered = schedules::ScheduleRegistry::instance().get(j.schedule, "schedule").reuses_gathered_weights;
    if (j.model.moe) init_moe(shape);
  }

  // A MoE block on one rank: the router and permutation on the rank's tokens (its sequence-parallel
  // shard), the dispatch all-to-all over the EP group, an all-gather of the received rows over the
  // expert-TP group, the local experts, the reverse path, and the shared experts beside it
  // (Megatron-Core's all-to-all token dispatcher).
  void init_moe(const llm::LayerShape& shape) {
    const int64_t tokens = job.micro_batch * seq_local / (job.sp ? job.tp : 1);
    moe = llm::moe_block_costs(job.model, shape, job.ep, job.etp, tokens, cm);
    const char* names[12] = {"moe_router_fwd",        "moe_shared_experts_fwd",   "ep_dispatch_all_to_all",
                             "etp_all_gather",        "moe_experts_fwd",          "etp_reduce_scatter",
                             "ep_combine_all_to_all", "moe_unpermute_fwd",        "moe_unpermute_dgrad",
                             "moe_experts_dgrad",     "moe_shared_experts_dgrad", "moe_router_dgrad"};
    for (int i = 0; i < 12; ++i) moe_labels[i] = w.graph.intern(names[i]);
  }

  bool moe_layer(int layer) const { return job.model.moe && job.model.is_moe_layer(layer); }

  Handle moe_forward(StageEmitter& e, Category cat, int mb, int layer, const Handle& in, const Handle& wdep,
                     LabelId pre_label) {
    const LabelId* L = moe_labels;
    Handle pre = e.compute(pre_label, moe.pre_fwd, cat, mb, layer, {&in, &wdep});
    Handle route = e.compute(L[0], moe.router_fwd, cat, mb, layer, {&pre});
    Handle shared;
    if (moe.shared_fwd.kernels > 0) shared = e.compute(L[1], moe.shared_fwd, cat, mb, layer, {&pre});
    Handle x = route;
    if (job.ep > 1) x = e.collective(L[2], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
    if (job.etp > 1) x = e.collective(L[3], GroupKind::kEtp, CollectiveOp::kAllGather, moe.etp_rows, mb, layer, {&x});
    x = e.compute(L[4], moe.experts_fwd, cat, mb, layer, {&x});
    if (job.etp > 1)
      x = e.collective(L[5], GroupKind::kEtp, CollectiveOp::kReduceScatter, moe.etp_rows, mb, layer, {&x});
    if (job.ep > 1) x = e.collective(L[6], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
    return e.compute(L[7], moe.post_fwd, cat, mb, layer, {&x, &shared});
  }

  // MoE block backward; returns the block's input gradient and fills the weight-gradient inputs.
  Handle moe_backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& wdep, LabelId pre_label,
                      PendingWgrad& pend) {
    const LabelId* L = moe_labels;
    Handle post = e.compute(L[8], moe.post_dgrad, Category::kCompute, mb, layer, {&in, &wdep});
    Handle shared;
    if (moe.shared_dgrad.kernels > 0)
      shared = e.compute(L[10], moe.shared_dgrad, Category::kCompute, mb, layer, {&post});
    Handle x = post;
    if (job.ep > 1) x = e.collective(L[6], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
    if (job.etp > 1) x = e.collective(L[3], GroupKind::kEtp, CollectiveOp::kAllGather, moe.etp_rows, mb, layer, {&x});
    Handle dgrad = e.compute(L[9], moe.experts_dgrad, Category::kCompute, mb, layer, {&x});
    x = dgrad;
    if (job.etp > 1)
      x = e.collective(L[5], GroupKind::kEtp, CollectiveOp::kReduceScatter, moe.etp_rows, mb, layer, {&x});
    if (job.ep > 1) x = e.collective(L[2], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
    Handle router = e.compute(L[11], moe.router_dgrad, Category::kCompute, mb, layer, {&x, &shared});
    pend = PendingWgrad{dgrad, router, moe.wgrad};
    return e.compute(pre_label, moe.pre_bwd, Category::kCompute, mb, layer, {&router});
  }

  int64_t stage_of(int64_t vs) const {
    return schedules::stage_of(job.placement, static_cast<int>(p), static_cast<int>(vs));
  }

  void make_ranks() {
    const bool full = fidelity == Fidelity::kFullRanks;
    const int64_t dps = full ? job.dp : 1, tps = full ? job.tp : 1, cps = full ? job.cp : 1;
    for (int64_t s = 0; s < p; ++s)
      for (int64_t d = 0; d < dps; ++d)
        for (int64_t c = 0; c < cps; ++c)
          for (int64_t t = 0; t < tps; ++t) {
            RankInfo r;
            r.rank = static_cast<int32_t>(comms.global_rank(s, d, t, c));
            r.stage = static_cast<int32_t>(s);
            r.dp_index = static_cast<int32_t>(d);
            r.tp_index = static_cast<int32_t>(t);
            r.cp_index = static_cast<int32_t>(c);
            r.compute = w.graph.add_stream(r.rank, "compute");
            r.tp = w.graph.add_stream(r.rank, "tp");
            r.dp = w.graph.add_stream(r.rank, "dp");
            r.pp = w.graph.add_stream(r.rank, "pp");
            if (job.cp > 1) r.cp = w.graph.add_stream(r.rank, "cp");
            if (job.model.moe && job.ep > 1) r.ep = w.graph.add_stream(r.rank, "ep");
            if (job.offload_activations || job.offload_optimizer) {
              r.d2h = w.graph.add_stream(r.rank, "d2h");
              r.h2d = w.graph.add_stream(r.rank, "h2d");
            }
            w.ranks.push_back(r);
          }
  }

  std::vector<uint32_t> members_of(int64_t stage) const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < w.ranks.size(); ++i)
      if (w.ranks[i].stage == stage) out.push_back(i);
    return out;
  }

  // ---- ZeRO-3 / FSDP -------------------------------------------------------------------------
  struct StageState {
    int held_chunk = -1;              // chunk whose weights stay gathered (reuse / no reshard)
    std::deque<Handle> recent;        // last task of recently computed layers (prefetch window)
    std::vector<Handle> param_ready;  // per layer: the overlapped parameter all-gather it waits for
  };

  Bytes param_bytes(double params) const {
    return Bytes(static_cast<int64_t>(params * (job.fp8_param_gather ? 1.0 : 2.0)));
  }

  // All-gathers a layer's weights inside the shard group; with prefetch depth k it may start once
  // the layer k+1 places earlier has finished.
  Handle zero3_gather(StageEmitter& e, StageState& st, int mb, int layer) {
    const size_t k = static_cast<size_t>(job.prefetch_layers);
    const Handle gate = st.recent.size() > k ? st.recent[st.recent.size() - 1 - k] : Handle{};
    return e.collective(lb.zero3_ag, GroupKind::kShard, CollectiveOp::kAllGather, param_bytes(layer_params), mb, layer,
                        {&gate});
  }
  // ZeRO-3: the embedding (or LM head) weights are sharded too and gathered before each use
  // (FSDP's root unit).
  Handle edge_gather(StageEmitter& e, int mb) {
    if (job.zero < 3) return {};
    const double emb =
        static_cast<double>(job.model.vocab) * static_cast<double>(job.model.hidden) / static_cast<double>(job.tp);
    return e.collective(lb.zero3_edge_ag, GroupKind::kShard, CollectiveOp::kAllGather, param_bytes(emb), mb, -1, {});
  }
  void layer_done(StageState& st, const Handle& h) {
    st.recent.push_back(h);
    if (st.recent.size() > 64) st.recent.pop_front();
  }

  // Gradient reduction of one layer under ZeRO-3: reduce-scatter inside the shard group, then
  // all-reduce of the shard across replicas (HSDP).
  Handle zero3_reduce(StageEmitter& e, int mb, int layer, const Handle& wg) {
    const Bytes gb(static_cast<int64_t>(layer_params * static_cast<double>(grad_elem)));
    Handle rs = e.collective(lb.zero3_rs, GroupKind::kShard, CollectiveOp::kReduceScatter, gb, mb, layer, {&wg});
    if (job.dp_shard == job.dp_cp()) return rs;
    return e.collective(lb.zero3_ar, GroupKind::kReplica, CollectiveOp::kAllReduce, gb / job.dp_shard, mb, layer,
                        {&rs});
  }

  // ---- TP communication, chunked when overlapped ---------------------------------------------
  // All-gather then the head GEMM(s); with overlap, n chunks each gathered and multiplied in turn.
  Handle gather_then(StageEmitter& e, LabelId ag_label, LabelId head_label, const Cost& head, const Cost& head_chunk,
                     Category cat, int mb, int layer, const Handle& in, const Handle& extra) {
    if (overlap_chunks == 1) {
      Handle ag = e.collective(ag_label, GroupKind::kTp, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer, {&in});
      return e.compute(head_label, head, cat, mb, layer, {&ag, &extra});
    }
    Handle h;
    for (int64_t k = 0; k < overlap_chunks; ++k) {
      Handle ag = e.collective(ag_label, GroupKind::kTp, CollectiveOp::kAllGather, lc.tp_comm_bytes / overlap_chunks,
                               mb, layer, {&in});
      h = e.compute(head_label, head_chunk, cat, mb, layer, {&ag, &extra, &h});
    }
    return h;
  }
  // The tail GEMM(s) then a reduce-scatter; with overlap, each chunk's result is scattered while
  // the next chunk multiplies.
  // `computed` (optional) gets the last GEMM chunk.
  Handle then_scatter(StageEmitter& e, LabelId tail_label, LabelId rs_label, const Cost& tail, const Cost& tail_chunk,
                      Category cat, int mb, int layer, const Handle& in, Handle* computed = nullptr) {
    if (overlap_chunks == 1) {
      Handle t = e.compute(tail_label, tail, cat, mb, layer, {&in});
      if (computed) *computed = t;
      return e.collective(rs_label, GroupKind::kTp, CollectiveOp::kReduceScatter, lc.tp_comm_bytes, mb, layer, {&t});
    }
    Handle t = in, rs;
    for (int64_t k = 0; k < overlap_chunks; ++k) {
      t = e.compute(tail_label, tail_chunk, cat, mb, layer, {&t});
      rs = e.collective(rs_label, GroupKind::kTp, CollectiveOp::kReduceScatter, lc.tp_comm_bytes / overlap_chunks, mb,
                        layer, {&t});
    }
    if (computed) *computed = t;
    return rs;
  }

  // ---- context parallelism --------------------------------------------------------------------
  Bytes kv_bytes() const {
    const int64_t kvd = job.model.kv_heads_or_heads() * job.model.head_dim();
    return Bytes(job.micro_batch * seq_local * 2 * kvd / job.tp * 2);
  }
  Bytes qkv_bytes() const {
    const int64_t kvd = job.model.kv_heads_or_heads() * job.model.head_dim();
    return Bytes(job.micro_batch * seq_local * (job.model.hidden + 2 * kvd) / job.tp * 2);
  }
  Bytes out_bytes() const { return Bytes(job.micro_batch * seq_local * job.model.hidden / job.tp * 2); }
  // The previous rank of a rank's CP ring (stride cp_ulysses among the CP ranks).
  int32_t ring_prev(const RankInfo& r) const {
    const int64_t ring = job.cp / job.cp_ulysses;
    const int64_t pos = r.cp_index / job.cp_ulysses, lane = r.cp_index % job.cp_ulysses;
    const int64_t prev = ((pos + ring - 1) % ring) * job.cp_ulysses + lane;
    return static_cast<int32_t>(comms.global_rank(r.stage, r.dp_index, r.tp_index, prev));
  }

  // Attention core under context parallelism. Ulysses: all-to-all the local sequence's Q, K, V
  // into whole sequences of cp_ulysses-th of the heads, attend, all-to-all the output back. Ring
  // (Megatron CP with causal load balancing, every step the same work): `ring` steps of 1/ring of
  // the core each; while a step computes, the K/V block it used travels to the next ring rank,
  // and step k+1 waits for the block of step k. Backward passes K/V and their gradients.
  Handle cp_core(StageEmitter& e, const Cost& core, bool backward, LabelId core_label, Category cat, int mb, int layer,
                 const Handle& in) {
    const int64_t u = job.cp_ulysses, ring = job.cp / u;
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

  // ---- one layer ------------------------------------------------------------------------------
  // Forward of one layer; returns the handle of its last task.
  Handle layer_forward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& weights, bool recompute) {
    const LabelId pre_a = recompute ? lb.re_attn_pre : lb.attn_pre, main_a = recompute ? lb.re_attn_fwd : lb.attn_fwd;
    const LabelId pre_m = recompute ? lb.re_mlp_pre : lb.mlp_pre, main_m = recompute ? lb.re_mlp_fwd : lb.mlp_fwd;
    const Category cat = recompute ? Category::kRecompute : Category::kCompute;
    Handle h = in;
    for (int blk = 0; blk < 2; ++blk) {
      const BlockTasks& bt = blocks[blk];
      const llm::BlockCosts& c = bt.whole;
      const Handle& wdep = blk == 0 ? weights : Handle{};
      const LabelId* parts = lb.parts_fwd[blk];
      if (blk == 1 && moe_layer(layer)) {
        h = moe_forward(e, cat, mb, layer, h, wdep, pre_m);
      } else if (split_blocks) {
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
          if (job.tp > 1)
            h = e.collective(lb.tp_ar, GroupKind::kTp, CollectiveOp::kAllReduce, lc.tp_comm_bytes, mb, layer, {&h});
        }
      } else if (job.sp) {
        Handle pre = e.compute(blk == 0 ? pre_a : pre_m, c.pre_fwd, cat, mb, layer, {&h, &wdep});
        Handle ag =
            e.collective(lb.tp_ag, GroupKind::kTp, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer, {&pre});
        Handle main = e.compute(blk == 0 ? main_a : main_m, c.main_fwd, cat, mb, layer, {&ag});
        h = e.collective(lb.tp_rs, GroupKind::kTp, CollectiveOp::kReduceScatter, lc.tp_comm_bytes, mb, layer, {&main});
      } else {
        Cost merged = c.pre_fwd;
        merged += c.main_fwd;
        Handle main = e.compute(blk == 0 ? main_a : main_m, merged, cat, mb, layer, {&h, &wdep});
        h = job.tp > 1
                ? e.collective(lb.tp_ar, GroupKind::kTp, CollectiveOp::kAllReduce, lc.tp_comm_bytes, mb, layer, {&main})
                : main;
      }
    }
    return h;
  }

  // Backward of one layer (MLP block, then attention block). `wgrad_out` gets the last
  // weight-gradient task (the input-gradient collective overlaps with it), or, when `defer`
  // is set, nothing: the weight-gradient inputs go to `deferred` for the W op.
  Handle layer_backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& weights, Handle& wgrad_out,
                        PendingWgrad* deferred) {
    Handle h = in;
    for (int blk = 1; blk >= 0; --blk) {
      const BlockTasks& bt = blocks[blk];
      const llm::BlockCosts& c = bt.whole;
      // Selective recompute redoes the attention core's forward just before its backward.
      Handle re;
      if (job.recompute == "selective" && c.selective_recompute.kernels > 0)
        re = e.compute(lb.re_core, c.selective_recompute, Category::kRecompute, mb, layer, {&h});
      const LabelId dl = blk == 0 ? lb.attn_dgrad : lb.mlp_dgrad, wl = blk == 0 ? lb.attn_wgrad : lb.mlp_wgrad;
      const LabelId pl = blk == 0 ? lb.attn_pre_bwd : lb.mlp_pre_bwd;
      const LabelId* parts = lb.parts_dgrad[blk];
      const Handle& wdep = blk == 1 ? weights : Handle{};
      // Input gradient: whole, or head GEMM / core / tail GEMM.
      auto dgrad_chain = [&](const Handle& first_in) {
        Handle head = e.compute(parts[0], bt.dgrad.head, Category::kCompute, mb, layer, {&first_in, &wdep, &re});
        Handle core = blk == 0 && job.cp > 1
                          ? cp_core(e, bt.dgrad.core, true, parts[1], Category::kCompute, mb, layer, head)
                          : e.compute(parts[1], bt.dgrad.core, Category::kCompute, mb, layer, {&head});
        return core;
      };
      Handle wg;
      PendingWgrad pend;
      if (blk == 1 && moe_layer(layer)) {
        h = moe_backward(e, mb, layer, h, wdep, pl, pend);
        if (!deferred) wg = e.compute(wl, pend.cost, Category::kCompute, mb, layer, {&pend.dgrad, &pend.input});
      } else if (job.sp) {
        // The input all-gather for the weight gradient follows the gradient all-gather on the TP
        // stream (it needs only that), ahead of the reduce-scatter that waits for the GEMMs.
        Handle agg, agi, dgrad, rs;
        if (split_blocks) {
          if (overlap_chunks > 1) {
            Handle first = gather_then(e, lb.tp_ag_grad, parts[0], bt.dgrad.head, bt.dgrad_chunk.head,
                                       Category::kCompute, mb, layer, h, wdep);
            agg = first;
            agi = e.collective(lb.tp_ag_input, GroupKind::kTp, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer,
                               {&first});
            Handle core = blk == 0 && job.cp > 1
                              ? cp_core(e, bt.dgrad.core, true, parts[1], Category::kCompute, mb, layer, first)
                              : e.compute(parts[1], bt.dgrad.core, Category::kCompute, mb, layer, {&first, &re});
            rs = then_scatter(e, parts[2], lb.tp_rs_grad, bt.dgrad.tail, bt.dgrad_chunk.tail, Category::kCompute, mb,
                              layer, core, &dgrad);
          } else {
            agg = e.collective(lb.tp_ag_grad, GroupKind::kTp, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer,
                               {&h});
            agi = e.collective(lb.tp_ag_input, GroupKind::kTp, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer,
                               {&agg});
            Handle core = dgrad_chain(agg);
            dgrad = e.compute(parts[2], bt.dgrad.tail, Category::kCompute, mb, layer, {&core});
            rs = e.collective(lb.tp_rs_grad, GroupKind::kTp, CollectiveOp::kReduceScatter, lc.tp_comm_bytes, mb, layer,
                              {&dgrad});
          }
        } else {
          agg =
              e.collective(lb.tp_ag_grad, GroupKind::kTp, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer, {&h});
          dgrad = e.compute(dl, c.main_dgrad, Category::kCompute, mb, layer, {&agg, &wdep, &re});
          agi = e.collective(lb.tp_ag_input, GroupKind::kTp, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer,
                             {&agg});
          rs = e.collective(lb.tp_rs_grad, GroupKind::kTp, CollectiveOp::kReduceScatter, lc.tp_comm_bytes, mb, layer,
                            {&dgrad});
        }
        if (deferred)
          pend = PendingWgrad{dgrad, agi, c.main_wgrad};
        else
          wg = e.compute(wl, c.main_wgrad, Category::kCompute, mb, layer, {&dgrad, &agi});
        h = e.compute(pl, c.pre_bwd, Category::kCompute, mb, layer, {&rs});
      } else {
        Handle dgrad;
        if (split_blocks) {
          Handle core = dgrad_chain(h);
          dgrad = e.compute(parts[2], bt.dgrad.tail, Category::kCompute, mb, layer, {&core});
        } else {
          dgrad = e.compute(dl, c.main_dgrad, Category::kCompute, mb, layer, {&h, &wdep, &re});
        }
        Handle ar = job.tp > 1 ? e.collective(lb.tp_ar_grad, GroupKind::kTp, CollectiveOp::kAllReduce, lc.tp_comm_bytes,
                                              mb, layer, {&dgrad})
                               : dgrad;
        if (deferred) {
          pend = PendingWgrad{dgrad, Handle{}, c.main_wgrad};
          h = e.compute(pl, c.pre_bwd, Category::kCompute, mb, layer, {&ar});
        } else {
          wg = e.compute(wl, c.main_wgrad, Category::kCompute, mb, layer, {&dgrad});
          h = e.compute(pl, c.pre_bwd, Category::kCompute, mb, layer, {&ar, &wg});
        }
      }
      if (deferred)
        deferred[blk] = pend;
      else
        wgrad_out = wg;
    }
    return h;
  }

  // Parameters of layer `layer` one rank holds: dense ones split over TP, routed experts over
  // EP x expert-TP.
  double rank_params(int layer) const { return job.model.moe ? job.rank_layer_params(layer) : layer_params; }
  double expert_params(int layer) const { return job.expert_layer_params(layer); }

  double stage_parameters(int64_t s) const {
    double params = 0;
    if (!job.model.moe) {
      params = static_cast<double>(job.stage_layers(s)) * layer_params;
    } else {
      for (int64_t c = 0; c < v; ++c) {
        const int64_t vs = job.virtual_stage(s, c);
        for (int64_t l = 0; l < job.layers[static_cast<size_t>(vs)]; ++l)
          params += rank_params(static_cast<int>(job.first_layer(vs) + l));
      }
    }
    const double emb =
        static_cast<double>(job.model.vocab) * static_cast<double>(job.model.hidden) / static_cast<double>(job.tp);
    const int64_t first = embedding_stage(job), last = head_stage(job);
    if (s == first) params += emb;
    // The last stage holds the LM head, or with tied embeddings its own copy of the embedding
    // (Megatron's embedding group) unless it is also the first stage.
    if (s == last && (!job.model.tied_embeddings || first != last)) params += emb;
    return params;
  }

  // Per-stage state of the bucketed gradient reduction.
  struct Buckets {
    std::vector<Handle> pending;  // weight-gradient tasks whose gradients are in the open bucket
    double params = 0;            // parameters in the open bucket
  };

  // Issues the open bucket's reduction once it holds bucket_size bytes (or when forced): an
  // all-reduce over the gradient group, or with ZeRO a reduce-scatter inside the shard group (and
  // an all-reduce of the shard across replica groups under HSDP / MiCS).
  void flush_bucket(StageEmitter& e, Buckets& b, std::vector<Handle>& tail, int mb, bool force, bool expert = false) {
    if (b.pending.empty()) return;
    if (expert) {
      // Routed experts: reduced over the ranks holding the same experts (dp*cp/ep of them).
      const Bytes bytes(static_cast<int64_t>(b.params * static_cast<double>(grad_elem)));
      if (!force && bytes < job.bucket_size) return;
      if (job.expert_dp() > 1) {
        Handle d =
            e.collective(lb.dp_grad, GroupKind::kExpertGrad,
                         job.zero >= 1 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, bytes, mb, -1, {});
        for (const Handle& hnd : b.pending) e.link(hnd, d);
        tail.push_back(d);
      } else {
        for (auto& hnd : b.pending) tail.push_back(hnd);
      }
      b.pending.clear();
      b.params = 0;
      return;
    }
    if (job.dp_cp() <= 1) {
      for (auto& hnd : b.pending) tail.push_back(hnd);
    } else {
      const Bytes bytes(static_cast<int64_t>(b.params * static_cast<double>(grad_elem)));
      if (!force && bytes < job.bucket_size) return;
      Handle d;
      if (job.zero >= 1) {
        d = e.collective(lb.dp_grad, GroupKind::kShard, CollectiveOp::kReduceScatter, bytes, mb, -1, {});
        for (const Handle& hnd : b.pending) e.link(hnd, d);
        if (job.dp_shard < job.dp_cp())
          d = e.collective(lb.dp_grad_replica, GroupKind::kReplica, CollectiveOp::kAllReduce, bytes / job.dp_shard, mb,
                           -1, {&d});
      } else {
        d = e.collective(lb.dp_grad, GroupKind::kGrad, CollectiveOp::kAllReduce, bytes, mb, -1, {});
        for (const Handle& hnd : b.pending) e.link(hnd, d);
      }
      tail.push_back(d);
    }
    b.pending.clear();
    b.params = 0;
  }

  // Distributed optimizer with --overlap-param-gather: the parameters updated by the previous
  // step are all-gathered at the start of this iteration, bucket by bucket in layer order, and
  // each layer's first forward waits for its bucket.
  void emit_param_gathers(StageEmitter& e, int64_t s, StageState& st) {
    st.param_ready.assign(static_cast<size_t>(job.model.layers), Handle{});
    std::vector<int> layers;
    for (int64_t c = 0; c < v; ++c) {
      const int64_t vs = job.virtual_stage(s, c);
      for (int64_t l = 0; l < job.layers[static_cast<size_t>(vs)]; ++l)
        layers.push_back(static_cast<int>(job.first_layer(vs) + l));
    }
    std::sort(layers.begin(), layers.end());
    const double per_bucket = static_cast<double>(job.bucket_size.count()) / static_cast<double>(grad_elem);
    size_t i = 0;
    while (i < layers.size()) {
      size_t jend = i;
      double params = 0;
      // Dense parameters; routed experts are gathered over their own group after the step.
      while (jend < layers.size() && (jend == i || params + layer_params <= per_bucket)) {
        params += rank_params(layers[jend]) - expert_params(layers[jend]);
        ++jend;
      }
      Handle ag =
          e.collective(lb.dp_param_ag, GroupKind::kShard, CollectiveOp::kAllGather, param_bytes(params), -1, -1, {});
      for (size_t k = i; k < jend; ++k) st.param_ready[static_cast<size_t>(layers[k])] = ag;
      i = jend;
    }
  }

  Workload build() {
    make_ranks();
    // Upper bound: about 40 tasks per layer, micro-batch and simulated rank (SP + full recompute
    // emit 28; TP overlap adds 4 per chunk, CP ring steps 2 per step), plus per-micro-batch edges;
    // untouched reserved pages cost nothing.
    const int64_t per_layer = 40 + 8 * (overlap_chunks - 1) + 4 * (job.cp - 1);
    const size_t per_rank = static_cast<size_t>(m * job.model.layers / p) * static_cast<size_t>(per_layer) +
                            static_cast<size_t>(m * v) * 12 + 64;
    w.graph.reserve(per_rank * w.ranks.size(), 2 * per_rank * w.ranks.size());
    w.task_rank_slot.reserve(per_rank * w.ranks.size());
    w.task_comm.reserve(per_rank * w.ranks.size());
    const auto& sched = schedules::ScheduleRegistry::instance().get(job.schedule, "schedule");
    const schedules::StageOrders orders =
        sched.generate(static_cast<int>(p), static_cast<int>(m), schedules::ScheduleParams{static_cast<int>(v)});
    w.activation_per_vstage.assign(static_cast<size_t>(vstages), 0);
    for (int64_t vs = 0; vs < vstages; ++vs)
      w.activation_per_vstage[static_cast<size_t>(vs)] = chunk_activation_bytes(job, vs);

    const auto su = [](int64_t x) { return static_cast<size_t>(x); };
    // Pipeline transfers between virtual stages, indexed [virtual stage][micro-batch].
    std::vector<std::vector<Handle>> sent_fwd(su(vstages), std::vector<Handle>(su(m)));
    std::vector<std::vector<Handle>> sent_bwd = sent_fwd, loss = sent_fwd, b_done = sent_fwd, offloaded = sent_fwd;
    const Bytes act_bytes(job.micro_batch * seq_local * job.model.hidden * 2);
    const bool split = job.scatter_gather && job.tp > 1;
    const Bytes wire = split ? act_bytes / job.tp : act_bytes;
    const Time regather = split ? comms.tp_time(CollectiveOp::kAllGather, act_bytes) : Time::zero();
    const double emb_params =
        static_cast<double>(job.model.vocab) * static_cast<double>(job.model.hidden) / static_cast<double>(job.tp);
    const int64_t first_stage = embedding_stage(job), last_stage = head_stage(job);

    std::vector<StageEmitter> emitters;
    for (int64_t s = 0; s < p; ++s) emitters.emplace_back(w, comms, members_of(s), job.kernel_dispatch);
    std::vector<StageState> state(su(p));
    if (job.overlap_param_gather && job.dp_shard > 1)
      for (int64_t s = 0; s < p; ++s) emit_param_gathers(emitters[su(s)], s, state[su(s)]);
    std::vector<std::vector<Handle>> tail(su(p));  // tasks the optimizer step waits for
    std::vector<Buckets> buckets(su(p)), expert_buckets(su(p));
    std::vector<Handle> embed_grad(su(p)), head_grad(su(p));
    // Deferred weight gradients of split schedules: [virtual stage][micro-batch][layer][block].
    std::vector<std::vector<std::vector<std::array<PendingWgrad, 2>>>> deferred(
        su(vstages), std::vector<std::vector<std::array<PendingWgrad, 2>>>(su(m)));
    const schedules::OpType grad_op = job.split_weight_grad ? schedules::OpType::kW : schedules::OpType::kB;
    // The last gradient-producing op of each chunk on each stage: gradients are final after it.
    std::vector<std::vector<int>> last_grad(su(p), std::vector<int>(su(v), -1)), last_b = last_grad;
    for (int64_t s = 0; s < p; ++s)
      for (const auto& op : orders[su(s)]) {
        if (op.type == grad_op) last_grad[su(s)][su(op.chunk)] = op.microbatch;
        if (op.type == schedules::OpType::kB) last_b[su(s)][su(op.chunk)] = op.microbatch;
      }
    // Activation offload: the end of each op on a stage, in order (the prefetch gate).
    std::vector<std::vector<Handle>> op_end(su(p));

    // Cross-stage edges need their producer built first: advance any stage whose next op has its
    // inputs, until every op is emitted (a valid schedule always makes progress).
    auto ready = [&](int64_t s, const schedules::Op& op) {
      const int64_t vs = job.virtual_stage(s, op.chunk);
      if (op.type == schedules::OpType::kF) return vs == 0 || !sent_fwd[su(vs - 1)][su(op.microbatch)].empty();
      if (op.type == schedules::OpType::kW) return !b_done[su(vs)][su(op.microbatch)].empty();
      if (vs == vstages - 1) return !loss[su(vs)][su(op.microbatch)].empty();
      return !sent_bwd[su(vs + 1)][su(op.microbatch)].empty();
    };
    std::vector<size_t> pos(su(p), 0);
    size_t remaining = 0;
    for (const auto& o : orders) remaining += o.size();
    while (remaining > 0) {
      bool progressed = false;
      for (int64_t s = 0; s < p; ++s) {
        StageEmitter& e = emitters[su(s)];
        StageState& st = state[su(s)];
        const auto& order = orders[su(s)];
        while (pos[su(s)] < order.size() && ready(s, order[pos[su(s)]])) {
          const size_t at = pos[su(s)]++;
          const schedules::Op op = order[at];
          // ZeRO-3: does the next op on this stage keep using this chunk's weights / gradients?
          const bool next_same = at + 1 < order.size() && order[at + 1].chunk == op.chunk &&
                                 (order[at + 1].type == op.type ||
                                  (op.type == schedules::OpType::kB && order[at + 1].type == schedules::OpType::kW));
          --remaining;
          progressed = true;
          const int mb = op.microbatch;
          const int64_t vs = job.virtual_stage(s, op.chunk);
          const int64_t nl = job.layers[su(vs)];
          const int first_layer = static_cast<int>(job.first_layer(vs));
          const int64_t act = w.activation_per_vstage[su(vs)];
          Buckets& bk = buckets[su(s)];
          const bool final_grad = op.type == grad_op && last_grad[su(s)][su(op.chunk)] == mb;
          // Weights: ZeRO-3 gathers per layer unless this chunk's weights are still held.
          const bool gather = job.zero >= 3 && op.type != schedules::OpType::kW && st.held_chunk != op.chunk;
          auto weights_for = [&](int layer) -> Handle {
            if (gather) return zero3_gather(e, st, mb, layer);
            if (!st.param_ready.empty() && !st.param_ready[su(layer)].empty()) {
              Handle h = st.param_ready[su(layer)];
              st.param_ready[su(layer)].clear();
              return h;
            }
            return {};
          };
          // A layer's gradients are final: bucket them, or reduce them now (ZeRO-3).
          auto gradients_ready = [&](int layer, const Handle& wg) {
            if (job.zero >= 3) {
              if (!reuses_gathered || !next_same)
                tail[su(s)].push_back(zero3_reduce(e, mb, layer, wg));
              else
                tail[su(s)].push_back(wg);
            } else if (final_grad) {
              bk.pending.push_back(wg);
              bk.params += rank_params(layer) - expert_params(layer);
              if (expert_params(layer) > 0) {
                Buckets& xb = expert_buckets[su(s)];
                xb.pending.push_back(wg);
                xb.params += expert_params(layer);
                if (job.overlap_grad_reduce) flush_bucket(e, xb, tail[su(s)], mb, false, true);
              }
              if (job.overlap_grad_reduce) flush_bucket(e, bk, tail[su(s)], mb, false);
            } else {
              tail[su(s)].push_back(wg);
            }
          };
          Handle end;
          if (op.type == schedules::OpType::kF) {
            Handle h = vs > 0 ? sent_fwd[su(vs - 1)][su(mb)] : Handle{};
            e.begin_capture();
            if (vs == 0) {
              const Handle eg = edge_gather(e, mb);
              h = e.compute(lb.embed_fwd, ec.embed_fwd, Category::kCompute, mb, -1, {&h, &eg});
            }
            for (int l = 0; l < nl; ++l) {
              const Handle weights = weights_for(first_layer + l);
              h = layer_forward(e, mb, first_layer + l, h, weights, false);
              if (job.zero >= 3) layer_done(st, h);
            }
            const Handle first = e.end_capture();
            e.memory(first.empty() ? h : first, true, act);  // activations live from the first forward kernel
            if (vs == vstages - 1) {
              const Handle hg = edge_gather(e, mb);
              h = loss[su(vs)][su(mb)] = e.compute(lb.head_fwd, ec.head_fwd, Category::kCompute, mb, -1, {&h, &hg});
            } else {
              const int64_t to = stage_of(vs + 1);
              if (to == s) {
                sent_fwd[su(vs)][su(mb)] = h;  // the next chunk is on this rank (V turn): no transfer
              } else {
                sent_fwd[su(vs)][su(mb)] = e.send(
                    lb.send_fwd, Category::kPpComm, wire, regather, mb,
                    [&](const RankInfo& r) {
                      return static_cast<int32_t>(comms.global_rank(to, r.dp_index, r.tp_index, r.cp_index));
                    },
                    [](const RankInfo& r) { return r.pp; }, {&h});
                if (!job.overlap_p2p) e.gate_next_compute(sent_fwd[su(vs)][su(mb)]);
              }
            }
            // Stored activations go to the host while later work runs (unless this chunk's backward
            // comes next); the device copy is freed when the copy is done.
            const bool backward_next = at + 1 < order.size() && order[at + 1].type == schedules::OpType::kB &&
                                       order[at + 1].microbatch == mb && order[at + 1].chunk == op.chunk;
            if (job.offload_activations && !backward_next) {
              Handle d2h = e.host(true, lb.offload_d2h, transfer(act), Bytes(act), mb, {&h});
              e.memory(d2h, false, act);
              offloaded[su(vs)][su(mb)] = d2h;
            }
            st.held_chunk = reuses_gathered || !job.reshard_after_forward ? op.chunk : -1;
            end = h;
          } else if (op.type == schedules::OpType::kB) {
            Handle h = vs == vstages - 1 ? loss[su(vs)][su(mb)] : sent_bwd[su(vs + 1)][su(mb)];
            if (!offloaded[su(vs)][su(mb)].empty()) {
              // Prefetched: copied back once it is on the host and the op before the previous one
              // has finished, so that it overlaps the previous op.
              const auto& ends = op_end[su(s)];
              const Handle gate = ends.size() >= 2 ? ends[ends.size() - 2] : Handle{};
              Handle h2d =
                  e.host(false, lb.offload_h2d, transfer(act), Bytes(act), mb, {&gate, &offloaded[su(vs)][su(mb)]});
              e.memory(h2d, true, act);
              e.gate_next_compute(h2d);
            }
            if (vs == vstages - 1) {
              const Handle hg = edge_gather(e, mb);
              h = e.compute(lb.head_dgrad, ec.head_dgrad, Category::kCompute, mb, -1, {&h, &hg});
              Handle hw = e.compute(lb.head_wgrad, ec.head_wgrad, Category::kCompute, mb, -1, {&h});
              if (last_b[su(s)][su(op.chunk)] == mb) {
                head_grad[su(s)] = hw;
                bk.pending.push_back(hw);
                bk.params += emb_params;
              } else {
                tail[su(s)].push_back(hw);
              }
            }
            // The next layer's weights are gathered (FSDP backward prefetch) before this layer's
            // gradient reduction is queued on the same stream, so the gather need not wait for it.
            Handle next_weights = nl > 0 ? weights_for(first_layer + static_cast<int>(nl) - 1) : Handle{};
            for (int l = static_cast<int>(nl) - 1; l >= 0; --l) {
              const int layer = first_layer + l;
              const Handle weights = next_weights;
              const bool recompute = job.recompute == "full" && l < job.recompute_layers;
              if (recompute) h = layer_forward(e, mb, layer, h, weights, true);
              Handle wg;
              auto* defer = job.split_weight_grad ? deferred[su(vs)][su(mb)].emplace_back().data() : nullptr;
              h = layer_backward(e, mb, layer, h, recompute ? Handle{} : weights, wg, defer);
              if (job.zero >= 3) layer_done(st, h);
              if (l > 0) next_weights = weights_for(layer - 1);
              if (!job.split_weight_grad) gradients_ready(layer, wg);
            }
            if (!job.split_weight_grad) e.memory(h, false, act);  // freed when the chunk's backward is done
            b_done[su(vs)][su(mb)] = h;
            if (vs == 0) {
              h = e.compute(lb.embed_bwd, ec.embed_bwd, Category::kCompute, mb, -1, {&h});
              if (last_b[su(s)][su(op.chunk)] == mb) {
                embed_grad[su(s)] = h;
                bk.pending.push_back(h);
                // A tied embedding on a single stage is the LM head's tensor: counted there already.
                if (!(job.model.tied_embeddings && first_stage == last_stage)) bk.params += emb_params;
              }
            } else {
              const int64_t to = stage_of(vs - 1);
              if (to == s) {
                sent_bwd[su(vs)][su(mb)] = h;
              } else {
                sent_bwd[su(vs)][su(mb)] = e.send(
                    lb.send_bwd, Category::kPpComm, wire, regather, mb,
                    [&](const RankInfo& r) {
                      return static_cast<int32_t>(comms.global_rank(to, r.dp_index, r.tp_index, r.cp_index));
                    },
                    [](const RankInfo& r) { return r.pp; }, {&h});
                if (!job.overlap_p2p) e.gate_next_compute(sent_bwd[su(vs)][su(mb)]);
              }
            }
            tail[su(s)].push_back(h);
            if (final_grad && job.overlap_grad_reduce && job.zero < 3) {
              flush_bucket(e, bk, tail[su(s)], mb, true);
              flush_bucket(e, expert_buckets[su(s)], tail[su(s)], mb, true, true);
            }
            st.held_chunk = reuses_gathered ? op.chunk : -1;
            end = h;
          } else {
            // W: the deferred weight-gradient GEMMs of every layer of the chunk, last layer first.
            auto& pend = deferred[su(vs)][su(mb)];
            Handle h = b_done[su(vs)][su(mb)];
            for (int l = static_cast<int>(nl) - 1; l >= 0; --l) {
              const int layer = first_layer + l;
              const auto& pw = pend[su(nl - 1 - l)];
              Handle wg;
              for (int blk = 1; blk >= 0; --blk) {
                wg = e.compute(blk == 0 ? lb.attn_wgrad : lb.mlp_wgrad, pw[su(blk)].cost, Category::kCompute, mb, layer,
                               {&pw[su(blk)].dgrad, &pw[su(blk)].input, &h});
                h = wg;
              }
              gradients_ready(layer, wg);
            }
            pend.clear();
            e.memory(h, false, act);  // the stored inputs are needed until the weight gradients
            tail[su(s)].push_back(h);
            if (final_grad && job.overlap_grad_reduce && job.zero < 3) {
              flush_bucket(e, bk, tail[su(s)], mb, true);
              flush_bucket(e, expert_buckets[su(s)], tail[su(s)], mb, true, true);
            }
            end = h;
          }
          op_end[su(s)].push_back(end);
        }
      }
      TRAINSIM_ASSERT(progressed, "pipeline schedule \"", job.schedule, "\" has a cross-stage dependency cycle");
    }

    for (int64_t s = 0; s < p; ++s) {
      // Without overlap the whole reduction starts after the stage's last backward task.
      Buckets& bk = buckets[su(s)];
      Buckets& xb = expert_buckets[su(s)];
      if (!xb.pending.empty()) {
        for (const Handle& hnd : tail[su(s)]) xb.pending.push_back(hnd);
        flush_bucket(emitters[su(s)], xb, tail[su(s)], -1, true, true);
      }
      if (!bk.pending.empty()) {
        for (const Handle& hnd : tail[su(s)]) bk.pending.push_back(hnd);
        flush_bucket(emitters[su(s)], bk, tail[su(s)], -1, true);
      }
    }

    // Tied embeddings across pipeline stages: the first and last stage all-reduce the embedding
    // gradient (Megatron's embedding group) before the optimizer step.
    if (job.model.tied_embeddings && first_stage != last_stage) {
      const Bytes eb(static_cast<int64_t>(emb_params * static_cast<double>(grad_elem)));
      const std::vector<uint32_t> first = members_of(first_stage), last = members_of(last_stage);
      Handle hf(first.size()), hl(last.size());
      for (size_t i = 0; i < first.size(); ++i) {
        TaskSpec sp;
        sp.kind = TaskKind::kCollective;
        sp.label = lb.embed_sync;
        sp.category = static_cast<uint8_t>(Category::kDpComm);
        sp.bytes = eb;
        sp.duration = comm.collective(CollectiveOp::kAllReduce, eb, GroupPlacement{2, 1});
        const TaskIndex idx = w.graph.add(sp, {w.ranks[first[i]].dp, w.ranks[last[i]].dp});
        w.task_rank_slot.push_back(first[i]);
        comms.describe(idx, CollectiveOp::kAllReduce, eb,
                       comms.group_id({w.ranks[first[i]].rank, w.ranks[last[i]].rank}));
        w.graph.add_dep(embed_grad[su(first_stage)][i], idx);
        w.graph.add_dep(head_grad[su(last_stage)][i], idx);
        hf[i] = hl[i] = idx;
      }
      tail[su(first_stage)].push_back(hf);
      tail[su(last_stage)].push_back(hl);
    }

    // Optimizer step once a stage's gradients are reduced; the distributed optimizer (ZeRO 1/2)
    // then all-gathers the updated parameters inside the shard group (or, overlapped, at the start
    // of the next iteration: emitted above).
    for (int64_t s = 0; s < p; ++s) {
      StageEmitter& e = emitters[su(s)];
      const double params = stage_parameters(s);
      // Routed experts (MoE) shard over the ranks holding the same experts, the rest over the
      // shard group.
      double experts = 0;
      if (job.model.moe)
        for (int64_t c = 0; c < v; ++c) {
          const int64_t vs = job.virtual_stage(s, c);
          for (int64_t l = 0; l < job.layers[su(vs)]; ++l)
            experts += expert_params(static_cast<int>(job.first_layer(vs) + l));
        }
      const int64_t expert_dp = job.expert_dp();
      const double shard = job.zero >= 1 ? (params - experts) / static_cast<double>(job.dp_shard) +
                                               experts / static_cast<double>(expert_dp)
                                         : params;
      Handle opt;
      if (job.offload_optimizer) {
        // ZeRO-Offload: 16-bit gradients to the host, Adam on the CPU (a streaming pass over
        // ~30 bytes of fp32 state per parameter, bound by host memory bandwidth), 16-bit
        // parameters back.
        Handle d2h = e.host(true, lb.grad_d2h, transfer(static_cast<int64_t>(2 * shard)),
                            Bytes(static_cast<int64_t>(2 * shard)), -1, {});
        for (const Handle& t : tail[su(s)]) e.link(t, d2h);
        const Time cpu = Bytes(static_cast<int64_t>(30.0 * shard)) / job.cluster.host_memory_bandwidth;
        Handle step = e.host(true, lb.cpu_adam, cpu, Bytes(0), -1, {&d2h});
        opt = e.host(false, lb.param_h2d, transfer(static_cast<int64_t>(2 * shard)),
                     Bytes(static_cast<int64_t>(2 * shard)), -1, {&step});
      } else {
        // Adam over fp32 master weights (multi-tensor apply): read gradient, master, m, v (16 B),
        // write master, m, v (12 B) and the 16-bit weight (2 B), plus the gradient-norm pass for
        // clipping (4 B): 34 bytes and about 12 FLOPs per parameter.
        const Cost step{cm.vector_math(sim::Flops(12.0 * shard), Bytes(static_cast<int64_t>(34.0 * shard)), 4),
                        sim::Flops(12.0 * shard), 4};
        opt = e.compute(lb.optimizer, step, Category::kOptimizer, -1, -1, {});
        for (const Handle& t : tail[su(s)]) e.link(t, opt);
      }
      if (job.zero >= 1 && job.zero < 3 && job.dp_shard > 1 && !job.overlap_param_gather)
        e.collective(lb.dp_param_ag, GroupKind::kShard, CollectiveOp::kAllGather, param_bytes(params - experts), -1, -1,
                     {&opt});
      if (job.zero >= 1 && job.zero < 3 && experts > 0 && expert_dp > 1)
        e.collective(lb.dp_param_ag, GroupKind::kExpertGrad, CollectiveOp::kAllGather, param_bytes(experts), -1, -1,
                     {&opt});
    }
    w.task_comm.resize(w.graph.size(), Workload::kNoComm);
    w.graph.finalize();
    std::stable_sort(w.memory_events.begin(), w.memory_events.end(),
                     [](const memory::TimelineEvent& a, const memory::TimelineEvent& b) { return a.task < b.task; });
    return std::move(w);
  }

  // Time of a host <-> device copy of `bytes` over the GPU's host link.
  Time transfer(int64_t bytes) const { return Bytes(bytes) / job.cluster.host_link_bandwidth; }
};

}  // namespace

Workload build_workload(const Job& job, const compute::ComputeModel& cm, const collectives::CommModel& comm,
                        Fidelity fidelity) {
  Builder b(job, cm, comm, fidelity);
  return b.build();
}

}  // namespace trainsim::models::workload
