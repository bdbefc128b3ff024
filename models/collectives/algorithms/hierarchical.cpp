// Two-level all-reduce for groups spanning servers with g ranks each (m servers): ring
// reduce-scatter inside every server (local rank l ends with shard l summed over its server), an
// all-reduce of shard l across the m ranks with local index l using the registered algorithm
// `inter_node` (default ring), then ring all-gather inside every server. Closed form with the
// ring across servers: 2(g-1) + 2(m-1) steps and (g-1)/g x N + 2(m-1)/m x N/g + (g-1)/g x N bytes
// per rank; with another inter_node the middle term is that algorithm's on N/g bytes.
#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {
namespace {

CollectivePlan plan_hierarchical(const CollectiveSpec& spec, const Group& group, const AlgorithmParams& params,
                                 const ChannelInfo&) {
  CollectivePlan p;
  const std::vector<Step> cross = detail::shard_and_plan_cross_node(p, spec, group, params.inter_node);
  const auto by_node = group.ranks_by_node();
  const auto g = static_cast<int32_t>(by_node.front().size());
  const int32_t per_shard = p.chunks / g;
  std::vector<std::vector<int32_t>> shards(static_cast<size_t>(g));
  for (int32_t l = 0; l < g; ++l)
    for (int32_t j = 0; j < per_shard; ++j) shards[static_cast<size_t>(l)].push_back(l * per_shard + j);
  for (const auto& members : by_node) detail::ring_pass(p, 0, members, shards, true, false);
  const auto first = static_cast<size_t>(g - 1);
  detail::append_steps(p, first, cross);
  for (const auto& members : by_node) detail::ring_pass(p, first + cross.size(), members, shards, false, false);
  return p;
}

std::string check_hierarchical(const CollectiveSpec&, const Group& group, const AlgorithmParams& params) {
  return detail::cross_node_check(group, params.inter_node);
}

TRAINSIM_REGISTER_COLLECTIVE(hierarchical, "hierarchical",
                             "Reduce-scatter in each server, all-reduce across servers per local rank, all-gather",
                             (CollectiveOp::kAllReduce), plan_hierarchical, check_hierarchical, {"inter_node"})

}  // namespace
}  // namespace trainsim::models::collectives
