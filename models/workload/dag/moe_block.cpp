#include "models/workload/dag/moe_block.hpp"

#include "models/llm/host_sync.hpp"
#include "models/llm/recompute_modules.hpp"
#include "models/workload/job/cuda_graphs.hpp"
#include "models/workload/job/expert_layout.hpp"
#include "models/workload/job/moe_options.hpp"

namespace trainsim::models::workload::dag {

using collectives::CollectiveOp;
using sim::task::LabelId;

sim::Time moe_sync_stall(const Job& job, const llm::MoeBlockCosts& costs, const llm::LayerCosts& next,
                         const collectives::CommModel& comm) {
  const stack::StackHost& host = job.stack.host;
  if (!moe_dispatch_syncs(job)) return sim::Time::zero();
  const ExpertLayout x = expert_layout(job);
  const auto coll = [&](CollectiveOp op, sim::Bytes b, const collectives::GroupPlacement& g) {
    return g.size > 1 ? comm.collective(op, b, g) : sim::Time::zero();
  };
  // The forward's dispatch and combine on the EP group (the all-gather dispatcher gathers every
  // token and reduce-scatters back; the others exchange by all-to-all).
  const bool gather = job.moe_dispatcher == llm::MoeDispatcher::kAllGather;
  const sim::Time dispatch = gather ? coll(CollectiveOp::kAllGather, costs.gather_ep_fwd, x.ep_group())
                                    : coll(CollectiveOp::kAllToAll, costs.a2a_dispatch, x.ep_group());
  const sim::Time combine = gather ? coll(CollectiveOp::kReduceScatter, costs.gather_ep, x.ep_group())
                                   : coll(CollectiveOp::kAllToAll, costs.a2a, x.ep_group());
  const sim::Bytes etp_bytes = gather ? costs.gather_etp : costs.etp_rows;
  const sim::Time etp = coll(CollectiveOp::kAllGather, etp_bytes, x.etp_group()) +
                        coll(CollectiveOp::kReduceScatter, etp_bytes, x.etp_group());
  const int64_t local_experts = job.model.moe->experts / job.ep;
  const GraphedParts graphs = graphed_parts(job);
  return llm::host_sync_stall(
      llm::moe_sync_steps(costs, next, dispatch, combine, etp, local_experts, graphs.moe_attention, graphs.moe_router),
      job.kernel_dispatch, host.sync_latency);
}

MoeBlock::MoeBlock(const Job& job, const llm::LayerShape& shape, const compute::ComputeModel& cm,
                   const collectives::CommModel& comm, const llm::LayerCosts& next, sim::task::TaskGraph& g)
    : ep(job.ep), etp(job.etp), dispatcher(job.moe_dispatcher) {
  const int64_t tokens = job.micro_batch * shape.seq_len / (job.sp ? job.tp : 1);
  costs = llm::moe_block_costs(job.model, shape, job.ep, job.etp, tokens, cm, moe_run(job));
  sync_stall = moe_sync_stall(job, costs, next, comm);
  const GraphedParts graphs = graphed_parts(job);
  graph_router = graphs.moe_router;
  graph_rest = graphs.moe_rest;
  const char* names[14] = {"moe_router_fwd",        "moe_shared_experts_fwd",   "ep_dispatch_all_to_all",
                           "etp_all_gather",        "moe_experts_fwd",          "etp_reduce_scatter",
                           "ep_combine_all_to_all", "moe_unpermute_fwd",        "moe_unpermute_dgrad",
                           "moe_experts_dgrad",     "moe_shared_experts_dgrad", "moe_router_dgrad",
                           "ep_all_gather",         "ep_reduce_scatter"};
  // The all-gather dispatcher's EP collectives only where it runs (the label table stays as it was).
  const int n = dispatcher == llm::MoeDispatcher::kAllGather ? 14 : 12;
  for (int i = 0; i < n; ++i) labels[i] = g.intern(names[i]);
  if (sync_stall > sim::Time::zero()) labels[14] = g.intern("moe_host_sync");
  redo_block = (job.recompute_modules & llm::kRecomputeMoe) != 0;
  if (redo_block)
    labels[15] = g.intern("recompute_mlp_norm");  // the re-emitted forward's norm, as full recompute labels it
  else if (costs.recompute.kernels > 0)
    labels[15] = g.intern("moe_recompute");
}

// Rows to the experts: the forward dispatch, or the combine's gradient in the backward (under
// alltoall and flex labelled as the combine they reverse, as before).
Handle MoeBlock::dispatch(StageEmitter& e, int mb, int layer, const Handle& in, bool forward) const {
  const LabelId* L = labels;
  const llm::MoeBlockCosts& moe = costs;
  Handle x = in;
  if (dispatcher == llm::MoeDispatcher::kAllGather) {
    const sim::Bytes ep_bytes = forward ? moe.gather_ep_fwd : moe.gather_ep;
    const sim::Bytes etp_bytes = forward ? moe.gather_etp_fwd : moe.gather_etp;
    if (ep > 1) x = e.collective(L[12], GroupKind::kEp, CollectiveOp::kAllGather, ep_bytes, mb, layer, {&x});
    if (etp > 1) x = e.collective(L[3], GroupKind::kEtp, CollectiveOp::kAllGather, etp_bytes, mb, layer, {&x});
    return x;
  }
  if (ep > 1)
    x = e.collective(forward ? L[2] : L[6], GroupKind::kEp, CollectiveOp::kAllToAll,
                     forward ? moe.a2a_dispatch : moe.a2a, mb, layer, {&x});
  if (etp > 1) x = e.collective(L[3], GroupKind::kEtp, CollectiveOp::kAllGather, moe.etp_rows, mb, layer, {&x});
  return x;
}

// The experts' outputs (or input gradients) back to the rows' ranks.
Handle MoeBlock::combine(StageEmitter& e, int mb, int layer, const Handle& in, bool forward) const {
  const LabelId* L = labels;
  const llm::MoeBlockCosts& moe = costs;
  const bool gather = dispatcher == llm::MoeDispatcher::kAllGather;
  Handle x = in;
  if (etp > 1)
    x = e.collective(L[5], GroupKind::kEtp, CollectiveOp::kReduceScatter, gather ? moe.gather_etp : moe.etp_rows, mb,
                     layer, {&x});
  if (ep > 1 && gather)
    x = e.collective(L[13], GroupKind::kEp, CollectiveOp::kReduceScatter, moe.gather_ep, mb, layer, {&x});
  if (ep > 1 && !gather)
    x = e.collective(forward ? L[6] : L[2], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
  return x;
}

Handle MoeBlock::forward(StageEmitter& e, Category cat, int mb, int layer, const Handle& in, const Handle& wdep,
                         LabelId pre_label) const {
  const LabelId* L = labels;
  const llm::MoeBlockCosts& moe = costs;
  // CUDA graphs: the norm and router as one graph, the rest as another (never across the
  // dispatcher's host synchronization: graph_rest is off where it runs).
  if (graph_router) e.begin_graph();
  Handle pre = e.compute(pre_label, moe.pre_fwd, cat, mb, layer, {&in, &wdep});
  Handle route = e.compute(L[0], moe.router_fwd, cat, mb, layer, {&pre});
  e.end_graph();
  if (graph_rest) e.begin_graph();
  Handle shared;
  if (moe.shared_fwd.kernels > 0) shared = e.compute(L[1], moe.shared_fwd, cat, mb, layer, {&pre});
  Handle x = route;
  if (sync_stall > sim::Time::zero()) {
    // The host waits for the token counts, then issues the rest of the layer while the GPU waits.
    llm::Cost wait;
    wait.time = sync_stall;
    x = e.compute(L[14], wait, Category::kHostSync, mb, layer, {&x});
  }
  x = dispatch(e, mb, layer, x, true);
  x = e.compute(L[4], moe.experts_fwd, cat, mb, layer, {&x});
  x = combine(e, mb, layer, x, true);
  x = e.compute(L[7], moe.post_fwd, cat, mb, layer, {&x, &shared});
  e.end_graph();
  return x;
}

Handle MoeBlock::backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& wdep, LabelId pre_label,
                          PendingWgrad& pend) const {
  const LabelId* L = labels;
  const llm::MoeBlockCosts& moe = costs;
  // Selective recompute: the whole block's forward again (moe), or the norm, the experts'
  // activation and the shared experts (layernorm, moe_act, shared_experts), before the backward.
  Handle start = in;
  if (redo_block) start = forward(e, Category::kRecompute, mb, layer, in, wdep, L[15]);
  if (graph_rest) e.begin_graph();
  if (!redo_block && moe.recompute.kernels > 0)
    start = e.compute(L[15], moe.recompute, Category::kRecompute, mb, layer, {&in});
  Handle post = e.compute(L[8], moe.post_dgrad, Category::kCompute, mb, layer, {&start, &wdep});
  Handle shared;
  if (moe.shared_dgrad.kernels > 0) shared = e.compute(L[10], moe.shared_dgrad, Category::kCompute, mb, layer, {&post});
  Handle x = dispatch(e, mb, layer, post, false);
  Handle dgrad = e.compute(L[9], moe.experts_dgrad, Category::kCompute, mb, layer, {&x});
  x = combine(e, mb, layer, dgrad, false);
  e.end_graph();
  if (graph_router) e.begin_graph();
  Handle router = e.compute(L[11], moe.router_dgrad, Category::kCompute, mb, layer, {&x, &shared});
  pend = PendingWgrad{dgrad, router, moe.wgrad};
  Handle out = e.compute(pre_label, moe.pre_bwd, Category::kCompute, mb, layer, {&router});
  e.end_graph();
  return out;
}

}  // namespace trainsim::models::workload::dag
