#include "models/workload/dag/sharding.hpp"

#include <algorithm>

#include "models/llm/layer_ops.hpp"

// GCC's -Wstringop-overread misfires on boost::small_vector copies of Handles that may be empty
// (memmove of a provably-bounded inline buffer); the copies are correct.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

namespace trainsim::models::workload::dag {

using collectives::CollectiveOp;
using sim::Bytes;

// ---- ZeRO-3 / FSDP ----------------------------------------------------------------------------

// A MoE layer under FSDP with expert parallelism (torchtitan, NeMo AutoModel, Megatron FSDP): the
// routed experts are sharded over the ranks holding the same experts (the expert data-parallel
// group), the rest of the layer over the whole shard group; each part is gathered (and its
// gradient reduce-scattered) over its own group.
namespace {

// FSDP2 (per-parameter sharding): the all-gather's flat output is copied out into the unsharded
// parameters on the compute stream (split_with_sizes_copy reads and writes the gathered bytes).
Handle copy_out(const BuildContext& c, StageEmitter& e, const Handle& gathered, Bytes bytes, int mb, int layer) {
  if (!c.job.stack.kernels.fsdp_copy_out) return gathered;
  const llm::Cost cost = llm::fsdp_copy_out_cost(static_cast<double>(bytes.count()), c.cm);
  return e.compute(c.lb.zero3_copy_out, cost, Category::kCompute, mb, layer, {&gathered});
}

}  // namespace

Handle zero3_gather(const BuildContext& c, StageEmitter& e, const ShardState& st, int mb, int layer) {
  const size_t k = static_cast<size_t>(c.job.prefetch_layers);
  const Handle gate = st.recent.size() > k ? st.recent[st.recent.size() - 1 - k] : Handle{};
  const double experts = c.job.model.moe ? c.expert_params(layer) : 0.0;
  const double dense = c.job.model.moe ? c.rank_params(layer) - experts : c.layer_params;
  Handle h = e.collective(c.lb.zero3_ag, GroupKind::kShard, CollectiveOp::kAllGather, c.param_bytes(dense, layer), mb,
                          layer, {&gate});
  if (experts > 0.0 && c.job.expert_dp() > 1)
    h = e.collective(c.lb.zero3_ag, GroupKind::kExpertGrad, CollectiveOp::kAllGather, c.param_bytes(experts, layer), mb,
                     layer, {&h});
  return copy_out(c, e, h, c.param_bytes(dense + experts, layer), mb, layer);
}

Handle edge_gather(const BuildContext& c, StageEmitter& e, int mb) {
  if (c.job.zero < 3) return {};
  // 16-bit whatever the gather's precision: no stack quantizes the embedding or the LM head.
  const Bytes bytes = Bytes::checked(c.embedding_params() * 2.0, "parameter gather", "a smaller model");
  const Handle h = e.collective(c.lb.zero3_edge_ag, GroupKind::kShard, CollectiveOp::kAllGather, bytes, mb, -1, {});
  return copy_out(c, e, h, bytes, mb, -1);
}

void layer_done(ShardState& st, const Handle& h) {
  st.recent.push_back(h);
  if (st.recent.size() > 64) st.recent.pop_front();
}

Handle zero3_reduce(const BuildContext& c, StageEmitter& e, int mb, int layer, const Handle& wg) {
  const Job& job = c.job;
  const double experts = job.model.moe ? c.expert_params(layer) : 0.0;
  const double dense = job.model.moe ? c.rank_params(layer) - experts : c.layer_params;
  const Bytes gb = Bytes::checked(dense * static_cast<double>(c.grad_elem), "gradients", "a smaller model");
  Handle rs = e.collective(c.lb.zero3_rs, GroupKind::kShard, CollectiveOp::kReduceScatter, gb, mb, layer, {&wg});
  if (experts > 0.0 && job.expert_dp() > 1) {
    const Bytes eb = Bytes::checked(experts * static_cast<double>(c.grad_elem), "gradients", "a smaller model");
    rs = e.collective(c.lb.zero3_rs, GroupKind::kExpertGrad, CollectiveOp::kReduceScatter, eb, mb, layer, {&rs});
  }
  if (job.dp_shard == job.dp_cp()) return rs;
  return e.collective(c.lb.zero3_ar, GroupKind::kReplica, CollectiveOp::kAllReduce, gb / job.dp_shard, mb, layer,
                      {&rs});
}

// ---- data-parallel gradient buckets -----------------------------------------------------------

void flush_bucket(const BuildContext& c, StageEmitter& e, Buckets& b, std::vector<Handle>& tail, int mb, bool force,
                  bool expert) {
  const Job& job = c.job;
  if (b.pending.empty()) return;
  if (expert) {
    // Routed experts: reduced over the ranks holding the same experts (dp*cp/ep of them).
    const Bytes bytes = Bytes::checked(b.params * static_cast<double>(c.grad_elem), "gradients", "a smaller model");
    if (!force && bytes < job.bucket_size) return;
    if (job.expert_dp() > 1) {
      Handle d =
          e.collective(c.lb.dp_grad, GroupKind::kExpertGrad,
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
    const Bytes bytes = Bytes::checked(b.params * static_cast<double>(c.grad_elem), "gradients", "a smaller model");
    if (!force && bytes < job.bucket_size) return;
    Handle d;
    if (job.zero >= 1) {
      d = e.collective(c.lb.dp_grad, GroupKind::kShard, CollectiveOp::kReduceScatter, bytes, mb, -1, {});
      for (const Handle& hnd : b.pending) e.link(hnd, d);
      if (job.dp_shard < job.dp_cp())
        d = e.collective(c.lb.dp_grad_replica, GroupKind::kReplica, CollectiveOp::kAllReduce, bytes / job.dp_shard, mb,
                         -1, {&d});
    } else {
      d = e.collective(c.lb.dp_grad, GroupKind::kGrad, CollectiveOp::kAllReduce, bytes, mb, -1, {});
      for (const Handle& hnd : b.pending) e.link(hnd, d);
    }
    tail.push_back(d);
  }
  b.pending.clear();
  b.params = 0;
}

// ---- distributed optimizer: overlapped parameter all-gathers ----------------------------------

void emit_param_gathers(const BuildContext& c, StageEmitter& e, int64_t s, ShardState& st) {
  const Job& job = c.job;
  st.param_ready.assign(static_cast<size_t>(job.model.layers), Handle{});
  std::vector<int> layers;
  for (int64_t ch = 0; ch < c.v; ++ch) {
    const int64_t vs = job.virtual_stage(s, ch);
    for (int64_t l = 0; l < job.layers[static_cast<size_t>(vs)]; ++l)
      layers.push_back(static_cast<int>(job.first_layer(vs) + l));
  }
  std::sort(layers.begin(), layers.end());
  const double per_bucket = static_cast<double>(job.bucket_size.count()) / static_cast<double>(c.grad_elem);
  size_t i = 0;
  while (i < layers.size()) {
    size_t jend = i;
    double params = 0;
    Bytes bytes(0);
    // Dense parameters; routed experts are gathered over their own group after the step.
    while (jend < layers.size() && (jend == i || params + c.layer_params <= per_bucket)) {
      const double p = c.rank_params(layers[jend]) - c.expert_params(layers[jend]);
      params += p;
      bytes += c.param_bytes(p, layers[jend]);
      ++jend;
    }
    Handle ag = e.collective(c.lb.dp_param_ag, GroupKind::kShard, CollectiveOp::kAllGather, bytes, -1, -1, {});
    for (size_t k = i; k < jend; ++k) st.param_ready[static_cast<size_t>(layers[k])] = ag;
    i = jend;
  }
}

}  // namespace trainsim::models::workload::dag
