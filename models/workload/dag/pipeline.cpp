#include "models/workload/dag/pipeline.hpp"

#include "models/workload/dag/layer_tasks.hpp"
#include "models/workload/dag/stage_memory.hpp"
#include "sim/error.hpp"

// GCC's -Wstringop-overread misfires on boost::small_vector copies of Handles that may be empty
// (memmove of a provably-bounded inline buffer); the copies are correct.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

namespace trainsim::models::workload::dag {

using collectives::CollectiveOp;
using schedules::OpType;
using sim::Bytes;
using sim::Time;
using sim::task::LabelId;

std::vector<uint32_t> members_of(const Workload& w, int64_t stage) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < w.ranks.size(); ++i)
    if (w.ranks[i].stage == stage) out.push_back(i);
  return out;
}

PipelineState make_pipeline_state(const BuildContext& c, Workload& w, Communicators& comms) {
  const Job& job = c.job;
  const auto su = [](int64_t x) { return static_cast<size_t>(x); };
  PipelineState ps;
  ps.microbatches = c.m;
  const auto& sched = schedules::ScheduleRegistry::instance().get(job.schedule, "schedule");
  ps.orders =
      sched.generate(static_cast<int>(c.p), static_cast<int>(c.m), schedules::ScheduleParams{static_cast<int>(c.v)});
  ps.chunks.resize(su(c.vstages * c.m));
  ps.stages.reserve(su(c.p));
  for (int64_t s = 0; s < c.p; ++s) {
    ps.stages.emplace_back(w, comms, members_of(w, s), job.kernel_dispatch);
    ps.stages.back().emit.whole_iteration_graph(c.graphs.iteration);
  }
  if (job.overlap_param_gather && job.dp_shard > 1)
    for (int64_t s = 0; s < c.p; ++s) emit_param_gathers(c, ps.stages[su(s)].emit, s, ps.stages[su(s)].shard);
  // The last gradient-producing op of each chunk on each stage: gradients are final after it.
  const OpType grad_op = job.split_weight_grad ? OpType::kW : OpType::kB;
  for (int64_t s = 0; s < c.p; ++s) {
    StageState& st = ps.stages[su(s)];
    st.last_grad.assign(su(c.v), -1);
    st.last_b.assign(su(c.v), -1);
    for (const auto& op : ps.orders[su(s)]) {
      if (op.type == grad_op) st.last_grad[su(op.chunk)] = op.microbatch;
      if (op.type == OpType::kB) st.last_b[su(op.chunk)] = op.microbatch;
    }
  }
  return ps;
}

namespace {

// One op of a stage's order while it is emitted.
struct OpScope {
  int64_t s;
  StageState& st;
  schedules::Op op;
  bool next_same;      // ZeRO-3: the next op on this stage keeps using this chunk's weights / gradients
  bool backward_next;  // the next op on this stage is this chunk's backward of the same micro-batch
  int mb;
  int64_t vs, nl;
  int first_layer;
  int64_t act;      // activation bytes of one micro-batch of the chunk
  bool final_grad;  // this op makes the chunk's gradients final
  bool gather;      // ZeRO-3: gather each layer's weights (not held from the previous op)
};

class Walk {
 public:
  Walk(const BuildContext& c, const Communicators& comms, Workload& w, PipelineState& ps)
      : c_(c), job_(c.job), lb_(c.lb), comms_(comms), w_(w), ps_(ps), layers_(c, comms) {
    const Bytes act_bytes(job_.micro_batch * c.seq_local * job_.model.hidden * 2);
    const bool split = job_.scatter_gather && job_.tp > 1;
    wire_ = split ? act_bytes / job_.tp : act_bytes;
    regather_ = split ? comms.tp_time(CollectiveOp::kAllGather, act_bytes) : Time::zero();
    grad_op_ = job_.split_weight_grad ? OpType::kW : OpType::kB;
    emb_params_ = c.embedding_params();
    tied_on_one_stage_ = job_.model.tied_embeddings && embedding_stage(job_) == head_stage(job_);
  }

  // Advances any stage whose next op has its inputs, until every op is emitted (a valid schedule
  // always makes progress).
  void run() {
    size_t remaining = 0;
    for (const auto& o : ps_.orders) remaining += o.size();
    while (remaining > 0) {
      bool progressed = false;
      for (int64_t s = 0; s < c_.p; ++s) {
        StageState& st = ps_.stages[static_cast<size_t>(s)];
        const auto& order = ps_.orders[static_cast<size_t>(s)];
        while (st.pos < order.size() && ready(s, order[st.pos])) {
          emit(s, st, order);
          --remaining;
          progressed = true;
        }
      }
      TRAINSIM_ASSERT(progressed, "pipeline schedule \"", job_.schedule, "\" has a cross-stage dependency cycle");
    }
  }

 private:
  bool ready(int64_t s, const schedules::Op& op) {
    const int64_t vs = job_.virtual_stage(s, op.chunk);
    if (op.type == OpType::kF) return vs == 0 || !ps_.chunk(vs - 1, op.microbatch).sent_fwd.empty();
    if (op.type == OpType::kW) return !ps_.chunk(vs, op.microbatch).b_done.empty();
    if (vs == c_.vstages - 1) return !ps_.chunk(vs, op.microbatch).loss.empty();
    return !ps_.chunk(vs + 1, op.microbatch).sent_bwd.empty();
  }

  void emit(int64_t s, StageState& st, const std::vector<schedules::Op>& order) {
    const size_t at = st.pos++;
    const schedules::Op op = order[at];
    const bool has_next = at + 1 < order.size();
    const schedules::Op next = has_next ? order[at + 1] : op;
    const int64_t vs = job_.virtual_stage(s, op.chunk);
    const OpScope o{
        s,
        st,
        op,
        has_next && next.chunk == op.chunk &&
            (next.type == op.type || (op.type == OpType::kB && next.type == OpType::kW)),
        has_next && next.type == OpType::kB && next.microbatch == op.microbatch && next.chunk == op.chunk,
        op.microbatch,
        vs,
        job_.layers[static_cast<size_t>(vs)],
        static_cast<int>(job_.first_layer(vs)),
        w_.activation_per_vstage[static_cast<size_t>(vs)],
        op.type == grad_op_ && st.last_grad[static_cast<size_t>(op.chunk)] == op.microbatch,
        job_.zero >= 3 && op.type != OpType::kW && st.shard.held_chunk != op.chunk,
    };
    const Handle end = op.type == OpType::kF ? forward(o) : op.type == OpType::kB ? backward(o) : weight_grads(o);
    st.op_end.push_back(end);
  }

  // Weights of a layer: ZeRO-3 gathers per layer unless this chunk's weights are still held;
  // else the overlapped parameter gather of its bucket, for the first use.
  Handle weights_for(const OpScope& o, int layer) {
    if (o.gather) return zero3_gather(c_, o.st.emit, o.st.shard, o.mb, layer);
    std::vector<Handle>& ready = o.st.shard.param_ready;
    if (!ready.empty() && !ready[static_cast<size_t>(layer)].empty()) {
      Handle h = ready[static_cast<size_t>(layer)];
      ready[static_cast<size_t>(layer)].clear();
      return h;
    }
    return {};
  }

  // A layer's gradients are final: bucket them, or reduce them now (ZeRO-3).
  void gradients_ready(const OpScope& o, int layer, const Handle& wg) {
    StageState& st = o.st;
    if (job_.zero >= 3) {
      if (!c_.reuses_gathered || !o.next_same)
        st.tail.push_back(zero3_reduce(c_, st.emit, o.mb, layer, wg));
      else
        st.tail.push_back(wg);
    } else if (o.final_grad) {
      Buckets& bk = st.buckets;
      bk.pending.push_back(wg);
      bk.params += c_.rank_params(layer) - c_.expert_params(layer);
      if (c_.expert_params(layer) > 0) {
        Buckets& xb = st.expert_buckets;
        xb.pending.push_back(wg);
        xb.params += c_.expert_params(layer);
        if (job_.overlap_grad_reduce) flush_bucket(c_, st.emit, xb, st.tail, o.mb, false, true);
      }
      if (job_.overlap_grad_reduce) flush_bucket(c_, st.emit, bk, st.tail, o.mb, false);
    } else {
      st.tail.push_back(wg);
    }
  }

  // With overlapped reduction, the chunk's last gradients close the open buckets.
  void flush_final(const OpScope& o) {
    if (!(o.final_grad && job_.overlap_grad_reduce && job_.zero < 3)) return;
    flush_bucket(c_, o.st.emit, o.st.buckets, o.st.tail, o.mb, true);
    flush_bucket(c_, o.st.emit, o.st.expert_buckets, o.st.tail, o.mb, true, true);
  }

  // The pipeline transfer of `h` to the same position of stage `to`; blocking unless overlap_p2p.
  Handle pp_send(StageEmitter& e, LabelId label, int64_t to, const Handle& h, int mb) {
    Handle sent = e.send(
        label, Category::kPpComm, wire_, regather_, mb,
        [&](const RankInfo& r) {
          return static_cast<int32_t>(comms_.global_rank(to, r.dp_index, r.tp_index, r.cp_index));
        },
        [](const RankInfo& r) { return r.pp; }, {&h});
    if (!job_.overlap_p2p) e.gate_next_compute(sent);
    return sent;
  }

  Handle forward(const OpScope& o);
  Handle backward(const OpScope& o);
  Handle weight_grads(const OpScope& o);
  // DeepSeek-V3's MTP modules on the last chunk (Megatron-Core places them on the last stage),
  // after the main LM head: each takes the previous hidden state, projects it with the shifted
  // tokens' embedding, runs its layer and one more LM head + loss. Returns the last loss.
  Handle mtp_forward(const OpScope& o, const Handle& hidden, const Handle& loss, const Handle& head_gather);
  // Their backward, last module first, ahead of the main LM head's; returns the gradient that
  // joins the main hidden state's. The module layers' weight gradients are not deferred to W ops.
  Handle mtp_backward(const OpScope& o, const Handle& loss, const Handle& head_gather, bool last_b);

  const BuildContext& c_;
  const Job& job_;
  const Labels& lb_;
  const Communicators& comms_;
  Workload& w_;
  PipelineState& ps_;
  const LayerTasks layers_;
  Bytes wire_;      // a pipeline transfer (a TP shard of it under scatter_gather)
  Time regather_;   // the receiver's all-gather under scatter_gather
  OpType grad_op_;  // the op that produces weight gradients
  double emb_params_;
  bool tied_on_one_stage_;  // a tied embedding on a single stage is the LM head's tensor
};

Handle Walk::forward(const OpScope& o) {
  StageState& st = o.st;
  StageEmitter& e = st.emit;
  ChunkState& cs = ps_.chunk(o.vs, o.mb);
  const int mb = o.mb;
  Handle h = o.vs > 0 ? ps_.chunk(o.vs - 1, mb).sent_fwd : Handle{};
  e.begin_capture();
  if (o.vs == 0) {
    const Handle eg = edge_gather(c_, e, mb);
    h = e.compute(lb_.embed_fwd, c_.ec.embed_fwd, Category::kCompute, mb, -1, {&h, &eg});
  }
  for (int l = 0; l < o.nl; ++l) {
    const Handle weights = weights_for(o, o.first_layer + l);
    h = layers_.forward(e, mb, o.first_layer + l, h, weights, false);
    if (job_.zero >= 3) layer_done(st.shard, h);
  }
  const Handle first = e.end_capture();
  e.memory(first.empty() ? h : first, true, o.act);  // activations live from the first forward kernel
  if (o.vs == c_.vstages - 1) {
    const Handle hg = edge_gather(c_, e, mb);
    const Handle loss = e.compute(lb_.head_fwd, c_.ec.head_fwd, Category::kCompute, mb, -1, {&h, &hg});
    h = cs.loss = job_.model.mtp_layers > 0 ? mtp_forward(o, h, loss, hg) : loss;
  } else {
    const int64_t to = c_.stage_of(o.vs + 1);
    // The next chunk on this rank (V turn): no transfer.
    cs.sent_fwd = to == o.s ? h : pp_send(e, lb_.send_fwd, to, h, mb);
  }
  // Stored activations go to the host while later work runs (unless this chunk's backward
  // comes next); the device copy is freed when the copy is done.
  if (job_.offload_activations && !o.backward_next) {
    Handle d2h = e.host(true, lb_.offload_d2h, c_.transfer(o.act), Bytes(o.act), mb, {&h});
    e.memory(d2h, false, o.act);
    cs.offloaded = d2h;
  }
  st.shard.held_chunk = c_.reuses_gathered || !job_.reshard_after_forward ? o.op.chunk : -1;
  return h;
}

Handle Walk::backward(const OpScope& o) {
  StageState& st = o.st;
  StageEmitter& e = st.emit;
  ChunkState& cs = ps_.chunk(o.vs, o.mb);
  const int mb = o.mb;
  const bool last_b = st.last_b[static_cast<size_t>(o.op.chunk)] == mb;
  Handle h = o.vs == c_.vstages - 1 ? cs.loss : ps_.chunk(o.vs + 1, mb).sent_bwd;
  if (!cs.offloaded.empty()) {
    // Prefetched: copied back once it is on the host and the op before the previous one
    // has finished, so that it overlaps the previous op.
    const auto& ends = st.op_end;
    const Handle gate = ends.size() >= 2 ? ends[ends.size() - 2] : Handle{};
    Handle h2d = e.host(false, lb_.offload_h2d, c_.transfer(o.act), Bytes(o.act), mb, {&gate, &cs.offloaded});
    e.memory(h2d, true, o.act);
    e.gate_next_compute(h2d);
  }
  if (o.vs == c_.vstages - 1) {
    const Handle hg = edge_gather(c_, e, mb);
    if (job_.model.mtp_layers > 0) h = mtp_backward(o, h, hg, last_b);
    h = e.compute(lb_.head_dgrad, c_.ec.head_dgrad, Category::kCompute, mb, -1, {&h, &hg});
    Handle hw = e.compute(lb_.head_wgrad, c_.ec.head_wgrad, Category::kCompute, mb, -1, {&h});
    if (last_b) {
      st.head_grad = hw;
      st.buckets.pending.push_back(hw);
      st.buckets.params += emb_params_;
    } else {
      st.tail.push_back(hw);
    }
  }
  // The next layer's weights are gathered (FSDP backward prefetch) before this layer's
  // gradient reduction is queued on the same stream, so the gather need not wait for it.
  Handle next_weights = o.nl > 0 ? weights_for(o, o.first_layer + static_cast<int>(o.nl) - 1) : Handle{};
  for (int l = static_cast<int>(o.nl) - 1; l >= 0; --l) {
    const int layer = o.first_layer + l;
    const Handle weights = next_weights;
    const bool recompute = job_.recompute == Recompute::kFull && l < job_.recompute_layers;
    if (recompute) h = layers_.forward(e, mb, layer, h, weights, true);
    Handle wg;
    auto* defer = job_.split_weight_grad ? cs.deferred.emplace_back().data() : nullptr;
    h = layers_.backward(e, mb, layer, h, recompute ? Handle{} : weights, wg, defer);
    if (job_.zero >= 3) layer_done(st.shard, h);
    if (l > 0) next_weights = weights_for(o, layer - 1);
    if (!job_.split_weight_grad) gradients_ready(o, layer, wg);
  }
  if (!job_.split_weight_grad) e.memory(h, false, o.act);  // freed when the chunk's backward is done
  cs.b_done = h;
  if (o.vs == 0) {
    h = e.compute(lb_.embed_bwd, c_.ec.embed_bwd, Category::kCompute, mb, -1, {&h});
    if (last_b) {
      st.embed_grad = h;
      st.buckets.pending.push_back(h);
      // A tied embedding on a single stage is the LM head's tensor: counted there already.
      if (!tied_on_one_stage_) st.buckets.params += emb_params_;
    }
  } else {
    const int64_t to = c_.stage_of(o.vs - 1);
    cs.sent_bwd = to == o.s ? h : pp_send(e, lb_.send_bwd, to, h, mb);
  }
  st.tail.push_back(h);
  flush_final(o);
  st.shard.held_chunk = c_.reuses_gathered ? o.op.chunk : -1;
  return h;
}

Handle Walk::mtp_forward(const OpScope& o, const Handle& hidden, const Handle& loss, const Handle& head_gather) {
  StageEmitter& e = o.st.emit;
  const int mb = o.mb;
  Handle x = hidden, last = loss;
  for (int k = 0; k < job_.model.mtp_layers; ++k) {
    const int layer = static_cast<int>(job_.model.layers) + k;
    x = e.compute(lb_.mtp_fwd, c_.ec.mtp_fwd, Category::kCompute, mb, layer, {&x, &last});
    if (job_.tp > 1)
      x = e.collective(lb_.tp_ag, GroupKind::kTp, CollectiveOp::kAllGather, c_.lc.tp_comm_bytes, mb, layer, {&x});
    x = layers_.forward(e, mb, layer, x, Handle{}, false);
    last = e.compute(lb_.head_fwd, c_.ec.head_fwd, Category::kCompute, mb, -1, {&x, &head_gather});
  }
  return last;
}

Handle Walk::mtp_backward(const OpScope& o, const Handle& loss, const Handle& head_gather, bool last_b) {
  StageState& st = o.st;
  StageEmitter& e = st.emit;
  const int mb = o.mb;
  Handle g = loss;
  for (int k = static_cast<int>(job_.model.mtp_layers) - 1; k >= 0; --k) {
    const int layer = static_cast<int>(job_.model.layers) + k;
    g = e.compute(lb_.head_dgrad, c_.ec.head_dgrad, Category::kCompute, mb, -1, {&g, &head_gather});
    st.tail.push_back(e.compute(lb_.head_wgrad, c_.ec.head_wgrad, Category::kCompute, mb, -1, {&g}));
    Handle wg;
    g = layers_.backward(e, mb, layer, g, Handle{}, wg, nullptr);
    gradients_ready(o, layer, wg);
    if (job_.tp > 1)
      g = e.collective(lb_.tp_rs_grad, GroupKind::kTp, CollectiveOp::kReduceScatter, c_.lc.tp_comm_bytes, mb, layer,
                       {&g});
    g = e.compute(lb_.mtp_dgrad, c_.ec.mtp_dgrad, Category::kCompute, mb, layer, {&g});
    const Handle pw = e.compute(lb_.mtp_wgrad, c_.ec.mtp_wgrad, Category::kCompute, mb, layer, {&g});
    if (last_b) {
      st.buckets.pending.push_back(pw);
      st.buckets.params += job_.model.mtp_projection_parameters() / static_cast<double>(job_.tp);
    } else {
      st.tail.push_back(pw);
    }
  }
  return g;
}

// W: the deferred weight-gradient GEMMs of every layer of the chunk, last layer first.
Handle Walk::weight_grads(const OpScope& o) {
  StageState& st = o.st;
  StageEmitter& e = st.emit;
  ChunkState& cs = ps_.chunk(o.vs, o.mb);
  auto& pend = cs.deferred;
  Handle h = cs.b_done;
  for (int l = static_cast<int>(o.nl) - 1; l >= 0; --l) {
    const int layer = o.first_layer + l;
    const auto& pw = pend[static_cast<size_t>(o.nl - 1 - l)];
    Handle wg;
    for (int blk = 1; blk >= 0; --blk) {
      const PendingWgrad& p = pw[static_cast<size_t>(blk)];
      // Captured like the block's backward (one launch; the estimator prices them so too).
      const bool graphed = blk == 1 && c_.moe_layer(layer) ? c_.graphs.moe_rest : c_.graphed(blk, layer);
      if (graphed) e.begin_graph();
      wg = e.compute(blk == 0 ? lb_.attn_wgrad : lb_.mlp_wgrad, p.cost, Category::kCompute, o.mb, layer,
                     {&p.dgrad, &p.input, &h});
      e.end_graph();
      h = wg;
    }
    gradients_ready(o, layer, wg);
  }
  pend.clear();
  e.memory(h, false, o.act);  // the stored inputs are needed until the weight gradients
  st.tail.push_back(h);
  flush_final(o);
  return h;
}

}  // namespace

void walk_pipeline(const BuildContext& c, const Communicators& comms, Workload& w, PipelineState& ps) {
  Walk(c, comms, w, ps).run();
}

}  // namespace trainsim::models::workload::dag
