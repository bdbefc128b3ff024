// NVLink SHARP (NVLS, NCCL 2.17+ on NVSwitch systems): the switch reduces in the network. A rank
// sends its data into its server's switch, switch_rank(node), with reduce = true, and the switch
// returns or multicasts the result (see collective.hpp for how an executor maps the switch).
// One server:
//   all-reduce: every rank sends the buffer to the switch; the switch multicasts the sum
//     (2 steps, N bytes sent per rank);
//   reduce-scatter: every rank sends the buffer; the switch returns block k to rank k (2 steps, N);
//   all-gather: rank k sends its block; the switch multicasts it (2 steps, N/n).
// Several servers with g >= 2 ranks each (all-reduce, NCCL's NVLS with a network algorithm): every rank
// sends the buffer to its switch, which returns shard l (summed over the server) to local rank l;
// the ranks with local index l all-reduce shard l across servers with `inter_node` (default ring);
// local rank l sends the shard back into the switch, which multicasts it to the others. Closed
// form with the ring across servers: 2(m-1) + 4 steps and N + 2(m-1)/m x N/g + N/g bytes per rank.
// Servers may hold different numbers of ranks (a job ending on part of an NVL72 rack): g is the
// smallest count, and a server's other ranks only reduce into its switch and receive the result.
// Real NVLS also moves the reduced shard through the GPU that requested it (multimem.ld_reduce
// then multimem.st, about N/g more each way on one server); the one-server plans idealise that.
#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {
namespace {

CollectivePlan plan_nvls(const CollectiveSpec& spec, const Group& group, const AlgorithmParams& params,
                         const ChannelInfo&) {
  const int32_t n = group.size;
  CollectivePlan p;
  p.in_network_reduction = true;
  const auto by_node = group.ranks_by_node();
  if (by_node.size() == 1) {
    const int32_t sw = switch_rank(group.node(0));
    if (spec.op == CollectiveOp::kAllReduce) {
      detail::set_chunks(p, spec.bytes, 1);
      for (int32_t r = 0; r < n; ++r) detail::add(p, 0, r, sw, 0, true);
      for (int32_t r = 0; r < n; ++r) detail::add(p, 1, sw, r, 0, false);
      return p;
    }
    detail::set_chunks(p, spec.bytes, n);
    for (int32_t k = 0; k < n; ++k) {
      if (spec.op == CollectiveOp::kReduceScatter) {
        for (int32_t r = 0; r < n; ++r) detail::add(p, 0, r, sw, k, true);
        detail::add(p, 1, sw, k, k, false);
      } else {
        detail::add(p, 0, k, sw, k, false);
        for (int32_t r = 0; r < n; ++r)
          if (r != k) detail::add(p, 1, sw, r, k, false);
      }
    }
    return p;
  }
  const std::vector<Step> cross = detail::shard_and_plan_cross_node(p, spec, group, params.inter_node);
  const int32_t g = detail::fewest_per_node(group);
  const int32_t per_shard = p.chunks / g;
  const size_t last = 2 + cross.size();
  for (const auto& members : by_node) {
    const int32_t sw = switch_rank(group.node(members.front()));
    for (const int32_t r : members)
      for (int32_t k = 0; k < p.chunks; ++k) detail::add(p, 0, r, sw, k, true);
    for (int32_t l = 0; l < g; ++l) {
      const int32_t r = members[static_cast<size_t>(l)];
      for (int32_t j = 0; j < per_shard; ++j) {
        const int32_t k = l * per_shard + j;
        detail::add(p, 1, sw, r, k, false);
        detail::add(p, last, r, sw, k, false);
        for (int32_t other : members)
          if (other != r) detail::add(p, last + 1, sw, other, k, false);
      }
    }
  }
  detail::append_steps(p, 2, cross);
  return p;
}

std::string check_nvls(const CollectiveSpec& spec, const Group& group, const AlgorithmParams& params) {
  if (!group.nvls_capable) return "the group's servers have no NVLink SHARP switch (nvls_capable is false)";
  if (group.node_count() == 1) return "";
  if (spec.op != CollectiveOp::kAllReduce) return "nvls runs reduce-scatter and all-gather inside one server only";
  const std::string why = detail::cross_node_check(group, params.inter_node, true);
  if (!why.empty() || detail::fewest_per_node(group) >= 2) return why;
  return "nvls across servers needs at least 2 ranks in each server (the switch has nothing to reduce)";
}

TRAINSIM_REGISTER_COLLECTIVE(nvls, "nvls",
                             "NVLink SHARP: the NVSwitch reduces in the network; N bytes per rank for all-reduce",
                             (CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter),
                             plan_nvls, check_nvls, {"inter_node"})

}  // namespace
}  // namespace trainsim::models::collectives
