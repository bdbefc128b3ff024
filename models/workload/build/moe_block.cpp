#include "models/workload/build/moe_block.hpp"

#include "models/llm/host_sync.hpp"
#include "models/workload/job/expert_layout.hpp"

namespace trainsim::models::workload::build {

using collectives::CollectiveOp;
using sim::task::LabelId;

sim::Time moe_sync_stall(const Job& job, const llm::MoeBlockCosts& costs, const llm::LayerCosts& next,
                         const collectives::CommModel& comm) {
  const stack::StackHost& host = job.stack.host;
  if (!host.moe_dispatch_sync || !job.model.moe) return sim::Time::zero();
  const ExpertLayout x = expert_layout(job);
  const sim::Time a2a =
      job.ep > 1 ? comm.collective(CollectiveOp::kAllToAll, costs.a2a, x.ep_group()) : sim::Time::zero();
  const sim::Time etp = job.etp > 1 ? comm.collective(CollectiveOp::kAllGather, costs.etp_rows, x.etp_group()) +
                                          comm.collective(CollectiveOp::kReduceScatter, costs.etp_rows, x.etp_group())
                                    : sim::Time::zero();
  const int64_t local_experts = job.model.moe->experts / job.ep;
  return llm::host_sync_stall(llm::moe_sync_steps(costs, next, a2a, etp, local_experts), job.kernel_dispatch,
                              host.sync_latency);
}

MoeBlock::MoeBlock(const Job& job, const llm::LayerShape& shape, const compute::ComputeModel& cm,
                   const collectives::CommModel& comm, const llm::LayerCosts& next, sim::task::TaskGraph& g)
    : ep(job.ep), etp(job.etp) {
  const int64_t tokens = job.micro_batch * shape.seq_len / (job.sp ? job.tp : 1);
  costs = llm::moe_block_costs(job.model, shape, job.ep, job.etp, tokens, cm);
  sync_stall = moe_sync_stall(job, costs, next, comm);
  const char* names[13] = {"moe_router_fwd",        "moe_shared_experts_fwd",   "ep_dispatch_all_to_all",
                           "etp_all_gather",        "moe_experts_fwd",          "etp_reduce_scatter",
                           "ep_combine_all_to_all", "moe_unpermute_fwd",        "moe_unpermute_dgrad",
                           "moe_experts_dgrad",     "moe_shared_experts_dgrad", "moe_router_dgrad",
                           "moe_host_sync"};
  for (int i = 0; i < 13; ++i) labels[i] = g.intern(names[i]);
}

Handle MoeBlock::forward(StageEmitter& e, Category cat, int mb, int layer, const Handle& in, const Handle& wdep,
                         LabelId pre_label) const {
  const LabelId* L = labels;
  const llm::MoeBlockCosts& moe = costs;
  Handle pre = e.compute(pre_label, moe.pre_fwd, cat, mb, layer, {&in, &wdep});
  Handle route = e.compute(L[0], moe.router_fwd, cat, mb, layer, {&pre});
  Handle shared;
  if (moe.shared_fwd.kernels > 0) shared = e.compute(L[1], moe.shared_fwd, cat, mb, layer, {&pre});
  Handle x = route;
  if (sync_stall > sim::Time::zero()) {
    // The host waits for the token counts, then issues the rest of the layer while the GPU waits.
    llm::Cost wait;
    wait.time = sync_stall;
    x = e.compute(L[12], wait, Category::kHostSync, mb, layer, {&x});
  }
  if (ep > 1) x = e.collective(L[2], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
  if (etp > 1) x = e.collective(L[3], GroupKind::kEtp, CollectiveOp::kAllGather, moe.etp_rows, mb, layer, {&x});
  x = e.compute(L[4], moe.experts_fwd, cat, mb, layer, {&x});
  if (etp > 1) x = e.collective(L[5], GroupKind::kEtp, CollectiveOp::kReduceScatter, moe.etp_rows, mb, layer, {&x});
  if (ep > 1) x = e.collective(L[6], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
  return e.compute(L[7], moe.post_fwd, cat, mb, layer, {&x, &shared});
}

Handle MoeBlock::backward(StageEmitter& e, int mb, int layer, const Handle& in, const Handle& wdep, LabelId pre_label,
                          PendingWgrad& pend) const {
  const LabelId* L = labels;
  const llm::MoeBlockCosts& moe = costs;
  Handle post = e.compute(L[8], moe.post_dgrad, Category::kCompute, mb, layer, {&in, &wdep});
  Handle shared;
  if (moe.shared_dgrad.kernels > 0) shared = e.compute(L[10], moe.shared_dgrad, Category::kCompute, mb, layer, {&post});
  Handle x = post;
  if (ep > 1) x = e.collective(L[6], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
  if (etp > 1) x = e.collective(L[3], GroupKind::kEtp, CollectiveOp::kAllGather, moe.etp_rows, mb, layer, {&x});
  Handle dgrad = e.compute(L[9], moe.experts_dgrad, Category::kCompute, mb, layer, {&x});
  x = dgrad;
  if (etp > 1) x = e.collective(L[5], GroupKind::kEtp, CollectiveOp::kReduceScatter, moe.etp_rows, mb, layer, {&x});
  if (ep > 1) x = e.collective(L[2], GroupKind::kEp, CollectiveOp::kAllToAll, moe.a2a, mb, layer, {&x});
  Handle router = e.compute(L[11], moe.router_dgrad, Category::kCompute, mb, layer, {&x, &shared});
  pend = PendingWgrad{dgrad, router, moe.wgrad};
  return e.compute(pre_label, moe.pre_bwd, Category::kCompute, mb, layer, {&router});
}

}  // namespace trainsim::models::workload::build
