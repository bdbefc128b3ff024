#include "models/workload/job/expert_layout.hpp"

#include <algorithm>

#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

collectives::GroupPlacement ExpertLayout::strided(int64_t size, int64_t stride) const {
  // Members are `stride` ranks apart: a node of g GPUs holds g / stride of them (at least one).
  const int64_t per_node = stride >= gpus_per_node ? 1 : std::min(size, gpus_per_node / stride);
  return collectives::GroupPlacement{size, std::max<int64_t>(per_node, 1)};
}

ExpertLayout expert_layout(const Job& job) {
  ExpertLayout x;
  x.tp = job.tp;
  x.cp = job.cp;
  x.dp = job.dp;
  x.ep = job.ep;
  x.etp = job.etp;
  x.gpus_per_node = job.cluster.domain_gpus();
  return x;
}

}  // namespace trainsim::models::workload
