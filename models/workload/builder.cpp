#include "models/workload/builder.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include <boost/container/small_vector.hpp>

#include "models/llm/layer_ops.hpp"
#include "models/memory/footprint.hpp"
#include "models/schedules/schedule.hpp"
#include "sim/error.hpp"

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
  }
  return "?";
}

namespace {

// Per member of a stage (rank slot), which task stands for an op. Compute ops have one task per
// member; a collective has one task per group, shared by the group's members.
// Inline storage: in representative fidelity a stage has one member, so no allocation per task.
using Handle = boost::container::small_vector<TaskIndex, 2>;

// How long a collective takes and which GPUs it spans; interns communication descriptors.
class CommCosts {
 public:
  CommCosts(Workload& w, const collectives::CommModel& comm, int64_t tp, int64_t dp, int64_t gpus_per_node)
      : w_(w), comm_(comm), tp_(tp), dp_(dp), gpn_(gpus_per_node) {}

  int64_t global_rank(int64_t stage, int64_t d, int64_t t) const { return t + tp_ * (d + dp_ * stage); }
  GroupPlacement tp_placement() const { return GroupPlacement{tp_, std::min(tp_, gpn_)}; }
  // DP peers are tp ranks apart (Megatron order tp, dp, pp): per node, gpn/tp of them when tp < gpn.
  GroupPlacement dp_placement() const {
    const int64_t per_node = tp_ >= gpn_ ? 1 : std::min(dp_, gpn_ / tp_);
    return GroupPlacement{dp_, std::max<int64_t>(per_node, 1)};
  }
  Time time(CollectiveOp op, Bytes bytes, bool tp_group) const {
    return comm_.collective(op, bytes, tp_group ? tp_placement() : dp_placement());
  }
  bool crosses_node(int64_t stage_a, int64_t stage_b) const {
    return global_rank(stage_a, 0, 0) / gpn_ != global_rank(stage_b, 0, 0) / gpn_;
  }
  const collectives::CommModel& model() const { return comm_; }

  std::vector<int32_t> tp_group_of(const RankInfo& r) const {
    std::vector<int32_t> out;
    for (int64_t t = 0; t < tp_; ++t) out.push_back(static_cast<int32_t>(global_rank(r.stage, r.dp_index, t)));
    return out;
  }
  std::vector<int32_t> dp_group_of(const RankInfo& r) const {
    std::vector<int32_t> out;
    for (int64_t d = 0; d < dp_; ++d) out.push_back(static_cast<int32_t>(global_rank(r.stage, d, r.tp_index)));
    return out;
  }
  // Interned id of a communicator.
  uint32_t group_id(const std::vector<int32_t>& gpus) {
    auto git = group_ids_.find(gpus);
    if (git == group_ids_.end()) {
      git = group_ids_.emplace(gpus, static_cast<uint32_t>(w_.groups.size())).first;
      w_.groups.push_back(gpus);
    }
    return git->second;
  }
  // The TP or DP communicator of a rank slot (cached: asked once per collective task).
  uint32_t group_of(uint32_t slot, bool tp_group) {
    auto& cache = tp_group ? tp_cache_ : dp_cache_;
    if (cache.size() <= slot) cache.resize(slot + 1, Workload::kNoComm);
    if (cache[slot] == Workload::kNoComm) {
      const RankInfo& r = w_.ranks[slot];
      cache[slot] = group_id(tp_group ? tp_group_of(r) : dp_group_of(r));
    }
    return cache[slot];
  }
  // Records what task `t` moves (ops and sizes repeat, so descriptors are interned).
  void describe(TaskIndex t, CollectiveOp op, Bytes bytes, uint32_t group, Time extra = Time::zero()) {
    const auto key = std::make_tuple(static_cast<int>(op), bytes.count(), group, extra.count_ns());
    auto cit = comm_ids_.find(key);
    if (cit == comm_ids_.end()) {
      cit = comm_ids_.emplace(key, static_cast<uint32_t>(w_.comms.size())).first;
      w_.comms.push_back(CommInfo{op, bytes, group, extra});
    }
    if (w_.task_comm.size() <= t) w_.task_comm.resize(t + 1, Workload::kNoComm);
    w_.task_comm[t] = cit->second;
  }

 private:
  Workload& w_;
  const collectives::CommModel& comm_;
  int64_t tp_, dp_, gpn_;
  std::map<std::vector<int32_t>, uint32_t> group_ids_;
  std::map<std::tuple<int, int64_t, uint32_t, int64_t>, uint32_t> comm_ids_;
  std::vector<uint32_t> tp_cache_, dp_cache_;
};

class StageEmitter {
 public:
  StageEmitter(Workload& w, CommCosts& costs, std::vector<uint32_t> members, int64_t tp_group, Time dispatch)
      : w_(w), g_(w.graph), costs_(costs), members_(std::move(members)), tp_group_(tp_group), dispatch_(dispatch) {}

  size_t size() const { return members_.size(); }

  // Records the first compute handle emitted between begin_capture() and end_capture().
  void begin_capture() {
    capturing_ = true;
    captured_.clear();
  }
  Handle end_capture() {
    capturing_ = false;
    return captured_;
  }

  // The next compute task also waits for `h` (a blocking pipeline send).
  void gate_next_compute(const Handle& h) { gate_ = h; }

  Handle compute(LabelId label, const Cost& c, Category cat, int mb, int layer,
                 std::initializer_list<const Handle*> deps) {
    Handle h(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) {
      TaskSpec s;
      s.kind = TaskKind::kCompute;
      s.label = label;
      s.category = static_cast<uint8_t>(cat);
      s.microbatch = mb;
      s.layer = layer;
      s.duration = c.with_dispatch(dispatch_);
      s.flops = c.flops;
      h[i] = add(s, w_.ranks[members_[i]].compute, members_[i]);
    }
    link(deps, h);
    if (!gate_.empty()) {
      link(gate_, h);
      gate_.clear();
    }
    if (capturing_ && captured_.empty()) captured_ = h;
    return h;
  }

  // One collective per TP group on the members' TP streams.
  Handle tp_collective(LabelId label, CollectiveOp op, Bytes bytes, int mb, int layer,
                       std::initializer_list<const Handle*> deps) {
    return grouped(
        label, op, bytes, true, mb, layer, Category::kTpComm, deps,
        [&](size_t i) { return i / static_cast<size_t>(tp_group_); }, [&](uint32_t slot) { return w_.ranks[slot].tp; });
  }
  // One collective per DP group (members with the same tp index) on the DP streams.
  Handle dp_collective(LabelId label, CollectiveOp op, Bytes bytes, int mb, int layer,
                       std::initializer_list<const Handle*> deps) {
    return grouped(
        label, op, bytes, false, mb, layer, Category::kDpComm, deps,
        [&](size_t i) { return i % static_cast<size_t>(tp_group_); }, [&](uint32_t slot) { return w_.ranks[slot].dp; });
  }
  // One transfer per member on its PP stream, to the same position of stage `to`. With
  // scatter/gather the wire carries 1/tp of the activation and the receiver all-gathers it.
  Handle pp_send(LabelId label, Bytes wire, Bytes full, bool split, int64_t to, int mb,
                 std::initializer_list<const Handle*> deps) {
    Handle h(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) {
      const RankInfo& r = w_.ranks[members_[i]];
      const Time gather = split ? costs_.time(CollectiveOp::kAllGather, full, true) : Time::zero();
      TaskSpec s;
      s.kind = TaskKind::kP2P;
      s.label = label;
      s.category = static_cast<uint8_t>(Category::kPpComm);
      s.microbatch = mb;
      s.duration = costs_.model().p2p(wire, costs_.crosses_node(r.stage, to)) + gather;
      s.bytes = wire;
      h[i] = add(s, r.pp, members_[i]);
      const int32_t dst = static_cast<int32_t>(costs_.global_rank(to, r.dp_index, r.tp_index));
      costs_.describe(h[i], CollectiveOp::kSendRecv, wire, costs_.group_id({r.rank, dst}), gather);
    }
    link(deps, h);
    return h;
  }

  void link(std::initializer_list<const Handle*> deps, const Handle& to) {
    for (const Handle* d : deps) link(*d, to);
  }
  void link(const Handle& from, const Handle& to) {
    if (from.empty()) return;
    TRAINSIM_ASSERT(from.size() == to.size(), "handle size mismatch");
    pairs_.clear();
    for (size_t i = 0; i < to.size(); ++i) pairs_.emplace_back(from[i], to[i]);
    std::sort(pairs_.begin(), pairs_.end());
    pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
    for (const auto& [a, b] : pairs_) g_.add_dep(a, b);
  }

  void memory(const Handle& h, bool at_start, int64_t bytes) {
    for (size_t i = 0; i < members_.size(); ++i)
      w_.memory_events.push_back(memory::TimelineEvent{h[i], at_start, bytes, members_[i]});
  }

 private:
  template <typename Streams>
  TaskIndex add(const TaskSpec& s, const Streams& streams, uint32_t slot) {
    const TaskIndex idx = g_.add(s, streams);
    w_.task_rank_slot.push_back(slot);
    return idx;
  }

  template <typename GroupOf, typename StreamOf>
  Handle grouped(LabelId label, CollectiveOp op, Bytes bytes, bool tp_group, int mb, int layer, Category cat,
                 std::initializer_list<const Handle*> deps, GroupOf group_of, StreamOf stream_of) {
    const Time t = costs_.time(op, bytes, tp_group);
    Handle h(members_.size());
    size_t groups = 0;
    for (size_t i = 0; i < members_.size(); ++i) groups = std::max(groups, group_of(i) + 1);
    for (size_t gi = 0; gi < groups; ++gi) {
      streams_.clear();
      std::vector<sim::task::StreamId>& streams = streams_;
      uint32_t first = 0;
      for (size_t i = 0; i < members_.size(); ++i)
        if (group_of(i) == gi) {
          if (streams.empty()) first = members_[i];
          streams.push_back(stream_of(members_[i]));
        }
      TaskSpec s;
      s.kind = TaskKind::kCollective;
      s.label = label;
      s.category = static_cast<uint8_t>(cat);
      s.microbatch = mb;
      s.layer = layer;
      s.duration = t;
      s.bytes = bytes;
      const TaskIndex idx = streams.size() == 1 ? add(s, streams.front(), first) : add(s, streams, first);
      costs_.describe(idx, op, bytes, costs_.group_of(first, tp_group));
      for (size_t i = 0; i < members_.size(); ++i)
        if (group_of(i) == gi) h[i] = idx;
    }
    link(deps, h);
    return h;
  }

  Workload& w_;
  sim::task::TaskGraph& g_;
  CommCosts& costs_;
  std::vector<uint32_t> members_;
  int64_t tp_group_;
  Time dispatch_;
  std::vector<std::pair<TaskIndex, TaskIndex>> pairs_;
  std::vector<sim::task::StreamId> streams_;
  bool capturing_ = false;
  Handle captured_, gate_;
};

struct Labels {
  LabelId embed_fwd, embed_bwd, head_fwd, head_dgrad, head_wgrad;
  LabelId attn_pre, attn_fwd, mlp_pre, mlp_fwd;
  LabelId re_attn_pre, re_attn_fwd, re_mlp_pre, re_mlp_fwd, re_core;
  LabelId attn_dgrad, attn_wgrad, attn_pre_bwd, mlp_dgrad, mlp_wgrad, mlp_pre_bwd;
  LabelId tp_ar, tp_ag, tp_rs, tp_ag_grad, tp_ag_input, tp_rs_grad, tp_ar_grad;
  LabelId send_fwd, send_bwd, dp_grad, dp_param_ag, zero3_ag, zero3_rs, embed_sync, optimizer;
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
        dp_param_ag(g.intern("dp_param_all_gather")),
        zero3_ag(g.intern("zero3_param_all_gather")),
        zero3_rs(g.intern("zero3_grad_reduce_scatter")),
        embed_sync(g.intern("embedding_grad_all_reduce")),
        optimizer(g.intern("optimizer_step")) {}
};

struct Builder {
  const Job& job;
  const compute::ComputeModel& cm;
  const collectives::CommModel& comm;
  Fidelity fidelity;
  Workload w;
  Labels lb{w.graph};
  llm::LayerCosts lc;
  llm::EdgeCosts ec;
  CommCosts costs;
  int64_t p, v, m, layers_per_chunk;
  int64_t grad_elem;    // bytes per gradient element in data-parallel reduction
  double layer_params;  // parameters of one layer on one TP rank

  Builder(const Job& j, const compute::ComputeModel& c, const collectives::CommModel& cmm, Fidelity f)
      : job(j), cm(c), comm(cmm), fidelity(f), costs(w, cmm, j.tp, j.dp, j.cluster.gpus_per_node) {
    const llm::LayerShape shape{j.micro_batch, j.seq_len, j.tp, j.sp, j.attention == "flash"};
    lc = llm::layer_costs(j.model, shape, cm);
    ec = llm::edge_costs(j.model, shape, cm);
    p = j.pp;
    v = j.vp;
    m = j.microbatches;
    layers_per_chunk = j.model.layers / (p * v);
    // Megatron reduces fp32 main gradients under bf16 (accumulate_allreduce_grads_in_fp32) and
    // 16-bit gradients under fp16.
    grad_elem = j.precision == compute::Precision::kFp16 ? 2 : 4;
    layer_params = j.model.layer_parameters() / static_cast<double>(j.tp);
  }

  int64_t gpn() const { return job.cluster.gpus_per_node; }
  int64_t global_rank(int64_t stage, int64_t d, int64_t t) const { return costs.global_rank(stage, d, t); }

  void make_ranks() {
    const int64_t dps = fidelity == Fidelity::kFullRanks ? job.dp : 1;
    const int64_t tps = fidelity == Fidelity::kFullRanks ? job.tp : 1;
    for (int64_t s = 0; s < p; ++s)
      for (int64_t d = 0; d < dps; ++d)
        for (int64_t t = 0; t < tps; ++t) {
          RankInfo r;
          r.rank = static_cast<int32_t>(global_rank(s, d, t));
          r.stage = static_cast<int32_t>(s);
          r.dp_index = static_cast<int32_t>(d);
          r.tp_index = static_cast<int32_t>(t);
          r.compute = w.graph.add_stream(r.rank, "compute");
          r.tp = w.graph.add_stream(r.rank, "tp");
          r.dp = w.graph.add_stream(r.rank, "dp");
          r.pp = w.graph.add_stream(r.rank, "pp");
          w.ranks.push_back(r);
        }
  }

  std::vector<uint32_t> members_of(int64_t stage) const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < w.ranks.size(); ++i)
      if (w.ranks[i].stage == stage) out.push_back(i);
    return out;
  }

  // ZeRO-3 gathers a layer's weights before each use (forward and backward).
  Handle zero3_gather(StageEmitter& e, int mb, int layer) {
    if (job.zero < 3) return {};
    const Bytes pb(static_cast<int64_t>(layer_params * 2));
    return e.dp_collective(lb.zero3_ag, CollectiveOp::kAllGather, pb, mb, layer, {});
  }

  // Forward of one layer; returns the handle of its last task.
  Handle layer_forward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& weights, bool recompute) {
    const LabelId pre_a = recompute ? lb.re_attn_pre : lb.attn_pre, main_a = recompute ? lb.re_attn_fwd : lb.attn_fwd;
    const LabelId pre_m = recompute ? lb.re_mlp_pre : lb.mlp_pre, main_m = recompute ? lb.re_mlp_fwd : lb.mlp_fwd;
    const Category cat = recompute ? Category::kRecompute : Category::kCompute;
    Handle h = in;
    for (int blk = 0; blk < 2; ++blk) {
      const llm::BlockCosts& c = blk == 0 ? lc.attn : lc.mlp;
      const Handle& wdep = blk == 0 ? weights : Handle{};
      if (job.sp) {
        Handle pre = e.compute(blk == 0 ? pre_a : pre_m, c.pre_fwd, cat, mb, layer, {&h, &wdep});
        Handle ag = e.tp_collective(lb.tp_ag, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer, {&pre});
        Handle main = e.compute(blk == 0 ? main_a : main_m, c.main_fwd, cat, mb, layer, {&ag});
        h = e.tp_collective(lb.tp_rs, CollectiveOp::kReduceScatter, lc.tp_comm_bytes, mb, layer, {&main});
      } else {
        Cost merged = c.pre_fwd;
        merged += c.main_fwd;
        Handle main = e.compute(blk == 0 ? main_a : main_m, merged, cat, mb, layer, {&h, &wdep});
        h = job.tp > 1 ? e.tp_collective(lb.tp_ar, CollectiveOp::kAllReduce, lc.tp_comm_bytes, mb, layer, {&main})
                       : main;
      }
    }
    return h;
  }

  // Backward of one layer (MLP block, then attention block). `wgrad_out` gets the last
  // weight-gradient task: the input-gradient collective overlaps with the weight-gradient GEMMs.
  Handle layer_backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& weights,
                        Handle& wgrad_out) {
    Handle h = in;
    for (int blk = 1; blk >= 0; --blk) {
      const llm::BlockCosts& c = blk == 0 ? lc.attn : lc.mlp;
      const Cost& dg = c.main_dgrad;
      // Selective recompute redoes the attention core's forward just before its backward.
      Handle re;
      if (job.recompute == "selective" && c.selective_recompute.kernels > 0)
        re = e.compute(lb.re_core, c.selective_recompute, Category::kRecompute, mb, layer, {&h});
      const LabelId dl = blk == 0 ? lb.attn_dgrad : lb.mlp_dgrad, wl = blk == 0 ? lb.attn_wgrad : lb.mlp_wgrad;
      const LabelId pl = blk == 0 ? lb.attn_pre_bwd : lb.mlp_pre_bwd;
      const Handle& wdep = blk == 1 ? weights : Handle{};
      if (job.sp) {
        Handle agg = e.tp_collective(lb.tp_ag_grad, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer, {&h});
        Handle dgrad = e.compute(dl, dg, Category::kCompute, mb, layer, {&agg, &wdep, &re});
        Handle agi = e.tp_collective(lb.tp_ag_input, CollectiveOp::kAllGather, lc.tp_comm_bytes, mb, layer, {&agg});
        Handle rs = e.tp_collective(lb.tp_rs_grad, CollectiveOp::kReduceScatter, lc.tp_comm_bytes, mb, layer, {&dgrad});
        wgrad_out = e.compute(wl, c.main_wgrad, Category::kCompute, mb, layer, {&dgrad, &agi});
        h = e.compute(pl, c.pre_bwd, Category::kCompute, mb, layer, {&rs});
      } else {
        Handle dgrad = e.compute(dl, dg, Category::kCompute, mb, layer, {&h, &wdep, &re});
        Handle ar =
            job.tp > 1 ? e.tp_collective(lb.tp_ar_grad, CollectiveOp::kAllReduce, lc.tp_comm_bytes, mb, layer, {&dgrad})
                       : dgrad;
        wgrad_out = e.compute(wl, c.main_wgrad, Category::kCompute, mb, layer, {&dgrad});
        h = e.compute(pl, c.pre_bwd, Category::kCompute, mb, layer, {&ar, &wgrad_out});
      }
    }
    return h;
  }

  double stage_parameters(int64_t s) const {
    double params = static_cast<double>(layers_per_chunk * v) * layer_params;
    const double emb =
        static_cast<double>(job.model.vocab) * static_cast<double>(job.model.hidden) / static_cast<double>(job.tp);
    if (s == 0) params += emb;
    // The last stage holds the LM head, or with tied embeddings its own copy of the embedding
    // (Megatron's embedding group) unless it is also the first stage.
    if (s == p - 1 && (!job.model.tied_embeddings || p > 1)) params += emb;
    return params;
  }

  // Per-stage state of the bucketed gradient reduction.
  struct Buckets {
    std::vector<Handle> pending;  // weight-gradient tasks whose gradients are in the open bucket
    double params = 0;            // parameters in the open bucket
  };

  // Issues the open bucket's reduction once it holds bucket_size bytes (or when forced).
  void flush_bucket(StageEmitter& e, Buckets& b, std::vector<Handle>& tail, int mb, bool force) {
    if (b.pending.empty()) return;
    if (job.dp <= 1) {
      for (auto& hnd : b.pending) tail.push_back(hnd);
    } else {
      const Bytes bytes(static_cast<int64_t>(b.params * static_cast<double>(grad_elem)));
      if (!force && bytes < job.bucket_size) return;
      const CollectiveOp op = job.zero >= 1 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
      Handle d = e.dp_collective(lb.dp_grad, op, bytes, mb, -1, {});
      for (const Handle& hnd : b.pending) e.link(hnd, d);
      tail.push_back(d);
    }
    b.pending.clear();
    b.params = 0;
  }

  Workload build() {
    make_ranks();
    // Upper bound: about 40 tasks per layer, micro-batch and simulated rank (SP + full recompute
    // emit 28), plus per-micro-batch edges; untouched reserved pages cost nothing.
    const size_t per_rank = static_cast<size_t>(m * v * layers_per_chunk) * 40 + static_cast<size_t>(m * v) * 8 + 64;
    w.graph.reserve(per_rank * w.ranks.size(), 2 * per_rank * w.ranks.size());
    w.task_rank_slot.reserve(per_rank * w.ranks.size());
    w.task_comm.reserve(per_rank * w.ranks.size());
    const auto& sched = schedules::ScheduleRegistry::instance().get(job.schedule, "schedule");
    const schedules::StageOrders orders =
        sched.generate(static_cast<int>(p), static_cast<int>(m), schedules::ScheduleParams{static_cast<int>(v)});
    w.activation_per_chunk.assign(static_cast<size_t>(p), 0);
    for (int64_t s = 0; s < p; ++s) {
      memory::StageMemoryInput in;
      in.model = &job.model;
      in.layers = layers_per_chunk * v;
      in.layers_per_chunk = layers_per_chunk;
      in.first = s == 0;
      in.last = s == p - 1;
      in.tp = job.tp;
      in.dp = job.dp;
      in.zero = job.zero;
      in.sp = job.sp;
      in.recompute = job.recompute;
      in.flash = job.attention == "flash";
      in.micro_batch = job.micro_batch;
      in.seq_len = job.seq_len;
      in.bucket_size = job.bucket_size;
      w.activation_per_chunk[static_cast<size_t>(s)] = memory::stage_memory(in).activation_per_chunk.count();
    }

    const int64_t vstages = p * v;
    const auto su = [](int64_t x) { return static_cast<size_t>(x); };
    // Pipeline transfers between virtual stages, indexed [virtual stage][micro-batch].
    std::vector<std::vector<Handle>> sent_fwd(su(vstages), std::vector<Handle>(su(m)));
    std::vector<std::vector<Handle>> sent_bwd = sent_fwd, loss = sent_fwd;
    const Bytes act_bytes(job.micro_batch * job.seq_len * job.model.hidden * 2);
    const bool split = job.scatter_gather && job.tp > 1;
    const Bytes wire = split ? act_bytes / job.tp : act_bytes;
    const double emb_params =
        static_cast<double>(job.model.vocab) * static_cast<double>(job.model.hidden) / static_cast<double>(job.tp);

    std::vector<StageEmitter> emitters;
    for (int64_t s = 0; s < p; ++s)
      emitters.emplace_back(w, costs, members_of(s), fidelity == Fidelity::kFullRanks ? job.tp : 1,
                            job.kernel_dispatch);
    std::vector<std::vector<Handle>> tail(su(p));  // tasks the optimizer step waits for
    std::vector<Buckets> buckets(su(p));
    std::vector<Handle> embed_grad(su(p)), head_grad(su(p));
    // The last backward of each chunk on each stage: gradients are final after it.
    std::vector<std::vector<int>> last_b(su(p), std::vector<int>(su(v), -1));
    for (int64_t s = 0; s < p; ++s)
      for (const auto& op : orders[su(s)])
        if (op.type == schedules::OpType::kB) last_b[su(s)][su(op.chunk)] = op.microbatch;

    // Cross-stage edges need their producer built first: advance any stage whose next op has its
    // inputs, until every op is emitted (a valid schedule always makes progress).
    auto ready = [&](int64_t s, const schedules::Op& op) {
      const int64_t vs = op.chunk * p + s;
      if (op.type == schedules::OpType::kF) return vs == 0 || !sent_fwd[su(vs - 1)][su(op.microbatch)].empty();
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
        const auto& order = orders[su(s)];
        while (pos[su(s)] < order.size() && ready(s, order[pos[su(s)]])) {
          const schedules::Op op = order[pos[su(s)]++];
          --remaining;
          progressed = true;
          const int mb = op.microbatch;
          const int64_t vs = op.chunk * p + s;
          const int first_layer = static_cast<int>(vs * layers_per_chunk);
          const int64_t act = w.activation_per_chunk[su(s)];
          if (op.type == schedules::OpType::kF) {
            Handle h = vs > 0 ? sent_fwd[su(vs - 1)][su(mb)] : Handle{};
            e.begin_capture();
            if (vs == 0) h = e.compute(lb.embed_fwd, ec.embed_fwd, Category::kCompute, mb, -1, {&h});
            for (int l = 0; l < layers_per_chunk; ++l) {
              const Handle weights = zero3_gather(e, mb, first_layer + l);
              h = layer_forward(e, mb, first_layer + l, h, weights, false);
            }
            e.memory(e.end_capture(), true, act);  // activations live from the first forward kernel
            if (vs == vstages - 1) {
              loss[su(vs)][su(mb)] = e.compute(lb.head_fwd, ec.head_fwd, Category::kCompute, mb, -1, {&h});
            } else {
              const int64_t to = (vs + 1) % p;
              sent_fwd[su(vs)][su(mb)] = e.pp_send(lb.send_fwd, wire, act_bytes, split, to, mb, {&h});
              if (!job.overlap_p2p) e.gate_next_compute(sent_fwd[su(vs)][su(mb)]);
            }
          } else {
            Handle h = vs == vstages - 1 ? loss[su(vs)][su(mb)] : sent_bwd[su(vs + 1)][su(mb)];
            const bool final_b = last_b[su(s)][su(op.chunk)] == mb;
            Buckets& bk = buckets[su(s)];
            if (vs == vstages - 1) {
              h = e.compute(lb.head_dgrad, ec.head_dgrad, Category::kCompute, mb, -1, {&h});
              Handle hw = e.compute(lb.head_wgrad, ec.head_wgrad, Category::kCompute, mb, -1, {&h});
              if (final_b) {
                head_grad[su(s)] = hw;
                bk.pending.push_back(hw);
                bk.params += emb_params;
              } else {
                tail[su(s)].push_back(hw);
              }
            }
            for (int l = layers_per_chunk - 1; l >= 0; --l) {
              const int layer = first_layer + l;
              const Handle weights = zero3_gather(e, mb, layer);
              if (job.recompute == "full") h = layer_forward(e, mb, layer, h, weights, true);
              Handle wg;
              h = layer_backward(e, mb, layer, h, job.recompute == "full" ? Handle{} : weights, wg);
              if (job.zero >= 3) {
                // ZeRO-3 reduce-scatters each layer's gradients right after they are produced.
                const Bytes gb(static_cast<int64_t>(layer_params * static_cast<double>(grad_elem)));
                tail[su(s)].push_back(e.dp_collective(lb.zero3_rs, CollectiveOp::kReduceScatter, gb, mb, layer, {&wg}));
              } else if (final_b && job.overlap_grad_reduce) {
                bk.pending.push_back(wg);
                bk.params += layer_params;
                flush_bucket(e, bk, tail[su(s)], mb, false);
              } else if (final_b) {
                bk.pending.push_back(wg);
                bk.params += layer_params;
              } else {
                tail[su(s)].push_back(wg);
              }
            }
            e.memory(h, false, act);  // freed when the chunk's backward is done
            if (vs == 0) {
              h = e.compute(lb.embed_bwd, ec.embed_bwd, Category::kCompute, mb, -1, {&h});
              if (final_b) {
                embed_grad[su(s)] = h;
                bk.pending.push_back(h);
                // A tied embedding on a single stage is the LM head's tensor: counted there already.
                if (!(job.model.tied_embeddings && p == 1)) bk.params += emb_params;
              }
            } else {
              const int64_t to = (vs - 1) % p;
              sent_bwd[su(vs)][su(mb)] = e.pp_send(lb.send_bwd, wire, act_bytes, split, to, mb, {&h});
              if (!job.overlap_p2p) e.gate_next_compute(sent_bwd[su(vs)][su(mb)]);
            }
            tail[su(s)].push_back(h);
            if (final_b && job.overlap_grad_reduce && job.zero < 3) flush_bucket(e, bk, tail[su(s)], mb, true);
          }
        }
      }
      TRAINSIM_ASSERT(progressed, "pipeline schedule \"", job.schedule, "\" has a cross-stage dependency cycle");
    }

    for (int64_t s = 0; s < p; ++s) {
      // Without overlap the whole reduction starts after the stage's last backward task.
      Buckets& bk = buckets[su(s)];
      if (!bk.pending.empty()) {
        for (const Handle& hnd : tail[su(s)]) bk.pending.push_back(hnd);
        flush_bucket(emitters[su(s)], bk, tail[su(s)], -1, true);
      }
    }

    // Tied embeddings across pipeline stages: the first and last stage all-reduce the embedding
    // gradient (Megatron's embedding group) before the optimizer step.
    if (job.model.tied_embeddings && p > 1) {
      const Bytes eb(static_cast<int64_t>(emb_params * static_cast<double>(grad_elem)));
      const std::vector<uint32_t> first = members_of(0), last = members_of(p - 1);
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
        costs.describe(idx, CollectiveOp::kAllReduce, eb,
                       costs.group_id({w.ranks[first[i]].rank, w.ranks[last[i]].rank}));
        w.graph.add_dep(embed_grad[0][i], idx);
        w.graph.add_dep(head_grad[su(p - 1)][i], idx);
        hf[i] = hl[i] = idx;
      }
      tail[0].push_back(hf);
      tail[su(p - 1)].push_back(hl);
    }

    // Optimizer step once a stage's gradients are reduced; the distributed optimizer (ZeRO 1/2)
    // then all-gathers the updated parameters across data-parallel ranks.
    for (int64_t s = 0; s < p; ++s) {
      StageEmitter& e = emitters[su(s)];
      const double params = stage_parameters(s);
      const double shard = job.zero >= 1 ? params / static_cast<double>(job.dp) : params;
      // Adam over fp32 master weights (multi-tensor apply): read gradient, master, m, v (16 B),
      // write master, m, v (12 B) and the 16-bit weight (2 B), plus the gradient-norm pass for
      // clipping (4 B): 34 bytes and about 12 FLOPs per parameter.
      const Cost step{cm.vector_math(sim::Flops(12.0 * shard), Bytes(static_cast<int64_t>(34.0 * shard)), 4),
                      sim::Flops(12.0 * shard), 4};
      Handle opt = e.compute(lb.optimizer, step, Category::kOptimizer, -1, -1, {});
      for (const Handle& t : tail[su(s)]) e.link(t, opt);
      if (job.zero >= 1 && job.zero < 3 && job.dp > 1) {
        const Bytes pb(static_cast<int64_t>(params * 2));
        e.dp_collective(lb.dp_param_ag, CollectiveOp::kAllGather, pb, -1, -1, {&opt});
      }
    }
    w.task_comm.resize(w.graph.size(), Workload::kNoComm);
    w.graph.finalize();
    std::stable_sort(w.memory_events.begin(), w.memory_events.end(),
                     [](const memory::TimelineEvent& a, const memory::TimelineEvent& b) { return a.task < b.task; });
    return std::move(w);
  }
};

}  // namespace

Workload build_workload(const Job& job, const compute::ComputeModel& cm, const collectives::CommModel& comm,
                        Fidelity fidelity) {
  Builder b(job, cm, comm, fidelity);
  return b.build();
}

}  // namespace trainsim::models::workload
