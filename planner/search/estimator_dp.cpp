// The estimator's data-parallel side: gradient reduction in buckets (and how much of it the
// pipeline hides) and the optimizer step with the distributed optimizer's parameter all-gather.
#include <algorithm>
#include <cmath>

#include "models/workload/job/bf16_layers.hpp"
#include "models/workload/job/expert_layout.hpp"
#include "planner/search/estimator_pass.hpp"

namespace trainsim::planner::search {

using models::collectives::CollectiveOp;
using models::collectives::GroupPlacement;
using models::workload::Job;

// Data-parallel gradient reduction of the critical stage, bucketed: the part the pipeline does
// not hide.
void Estimator::grad_reduction(Pass& s) {
  const Job& j = s.j;
  const auto& m = j.model;
  double params = 0, expert_params = 0;
  if (!m.moe) {
    params = static_cast<double>(j.stage_layers(0)) * j.rank_layer_params(0);
  } else {
    for (int64_t ch = 0; ch < j.vp; ++ch) {
      const int64_t vs = j.virtual_stage(0, ch), first = j.first_layer(vs);
      for (int64_t l = 0; l < j.layers[static_cast<size_t>(vs)]; ++l) {
        params += j.rank_layer_params(first + l);
        expert_params += j.expert_layer_params(first + l);
      }
    }
  }
  // Stage 0 holds the embedding; the LM head too when it is also the last stage (pp = 1, ZB-V),
  // counted once if tied (the builder's stage_parameters).
  const double emb = static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / static_cast<double>(j.tp);
  if (s.first_stage == 0) params += emb;
  if (s.last_stage == 0 && (!m.tied_embeddings || s.first_stage != s.last_stage)) params += emb;
  const double dense_params = params - expert_params;
  double dp_total = 0, dp_last = 0;
  auto bucketed = [&](double bytes, CollectiveOp op, const GroupPlacement& g, int64_t replicas_div) {
    if (g.size <= 1 || bytes <= 0) return;
    // Buckets hold whole layers and close once they reach the bucket size (build/sharding.cpp):
    // ceil(bucket / layer) layers each.
    const double layers = std::max<double>(1.0, static_cast<double>(j.stage_layers(0)));
    const double layer = bytes / layers;
    const double bucket = std::ceil(std::max(1.0, static_cast<double>(j.bucket_size.count())) / layer) * layer;
    const double nb = std::max(1.0, std::ceil(bytes / bucket - 1e-9));
    double one = comm_.collective(op, sim::Bytes(static_cast<int64_t>(bytes / nb)), g).seconds();
    if (replicas_div > 0)
      one += comm_
                 .collective(CollectiveOp::kAllReduce, sim::Bytes(static_cast<int64_t>(bytes / nb / replicas_div)),
                             s.replica)
                 .seconds();
    dp_total += nb * one;
    dp_last = std::max(dp_last, one);
  };
  const int grad_elem = s.grad_elem;
  if (j.zero < 3) {
    if (j.zero >= 1)
      bucketed(dense_params * grad_elem, CollectiveOp::kReduceScatter, s.shard,
               j.dp_shard < j.dp_cp() ? j.dp_shard : 0);
    else
      bucketed(dense_params * grad_elem, CollectiveOp::kAllReduce, s.grad_group, 0);
    if (expert_params > 0) {
      const GroupPlacement eg = models::workload::expert_layout(j).edp_group();
      bucketed(expert_params * grad_elem, j.zero >= 1 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, eg, 0);
    }
  }
  double dp_exposed = 0;
  if (j.zero >= 3) {
    dp_exposed = 0;
  } else if (j.overlap_grad_reduce) {
    // Stage 0 reduces each chunk's gradients once its last gradient op (B, or W) has produced
    // them, bucket by bucket during that op: a queue on the data-parallel stream, chunk by chunk
    // in the order they finish. What runs past the pipeline's end is exposed.
    const double g = s.split ? s.w : s.b;
    const double per_chunk = dp_total / static_cast<double>(s.v);
    const double buckets = std::max(1.0, per_chunk / std::max(dp_last, 1e-12));
    double queue = 0;
    for (const double ready : s.timing.grads_ready)
      queue = std::max(queue, s.fill + ready - g * (1.0 - 1.0 / buckets)) + per_chunk;
    dp_exposed = std::max(dp_last, queue - s.pipe);
  } else {
    dp_exposed = dp_total;
  }
  if (m.tied_embeddings && s.first_stage != s.last_stage)
    dp_exposed +=
        comm_
            .collective(CollectiveOp::kAllReduce,
                        sim::Bytes(static_cast<int64_t>(static_cast<double>(m.vocab) * m.hidden / j.tp * grad_elem)),
                        GroupPlacement{2, 1})
            .seconds();
  s.params = params;
  s.expert_params = expert_params;
  s.dense_params = dense_params;
  s.dp_exposed = dp_exposed;
}

// Optimizer step and the distributed optimizer's parameter all-gather.
void Estimator::optimizer_step(Pass& s) {
  const Job& j = s.j;
  const double dense_params = s.dense_params, expert_params = s.expert_params;
  const double shard_params = j.zero >= 1
                                  ? dense_params / static_cast<double>(j.dp_shard) +
                                        (expert_params > 0 ? expert_params / static_cast<double>(j.expert_dp()) : 0.0)
                                  : s.params;
  double opt = 0;
  if (j.offload_optimizer) {
    const double host_bw = j.cluster.host_link_bandwidth.bytes_per_second();
    opt =
        2.0 * (2.0 * shard_params) / host_bw + 30.0 * shard_params / j.cluster.host_memory_bandwidth.bytes_per_second();
  } else {
    opt = cm_.vector_math(sim::Flops(12.0 * shard_params), sim::Bytes(static_cast<int64_t>(34.0 * shard_params)), 4)
              .seconds();
  }
  if (j.zero >= 1 && j.zero < 3 && j.dp_shard > 1 && !j.overlap_param_gather)
    opt += comm_
               .collective(CollectiveOp::kAllGather,
                           sim::Bytes(static_cast<int64_t>(dense_params * models::workload::gathered_param_bytes(j))),
                           s.shard)
               .seconds();
  // Routed experts' updated parameters, gathered over the ranks holding the same experts.
  if (j.zero >= 1 && j.zero < 3 && expert_params > 0 && j.expert_dp() > 1) {
    opt += comm_
               .collective(CollectiveOp::kAllGather,
                           sim::Bytes(static_cast<int64_t>(expert_params * models::workload::gathered_param_bytes(j))),
                           models::workload::expert_layout(j).edp_group())
               .seconds();
  }
  s.opt = opt;
}

}  // namespace trainsim::planner::search
