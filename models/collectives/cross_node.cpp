// The cross-node phase of hierarchical and nvls: a registered all-reduce per local rank index.
#include <algorithm>

#include "models/collectives/collective.hpp"
#include "sim/error.hpp"

namespace trainsim::models::collectives {

namespace detail {

int32_t fewest_per_node(const Group& group) {
  const auto by_node = group.ranks_by_node();
  size_t fewest = by_node.empty() ? 0 : by_node.front().size();
  for (const auto& ranks : by_node) fewest = std::min(fewest, ranks.size());
  return static_cast<int32_t>(fewest);
}

std::string cross_node_check(const Group& group, const std::string& inter, bool uneven) {
  if (!uneven && group.ranks_per_node() == 0) return "its servers hold different numbers of ranks";
  if (inter == "hierarchical") return "inter_node cannot be \"hierarchical\" itself";
  const auto& reg = AlgorithmRegistry::instance();
  const auto names = reg.names();
  if (std::find(names.begin(), names.end(), inter) == names.end())
    return "inter_node \"" + inter + "\" is not an algorithm (valid: " + sim::config::join(names) + ")";
  const AlgorithmInfo& a = reg.get(inter, "inter_node");
  if (!a.supports(CollectiveOp::kAllReduce)) return "inter_node \"" + inter + "\" has no all_reduce";
  const std::string why = a.why_not(CollectiveSpec{}, Group::blocked(group.node_count(), 1), AlgorithmParams{});
  return why.empty() ? why : "inter_node \"" + inter + "\": " + why;
}

std::vector<Step> shard_and_plan_cross_node(CollectivePlan& plan, const CollectiveSpec& spec, const Group& group,
                                            const std::string& inter) {
  const auto by_node = group.ranks_by_node();
  const auto m = static_cast<int32_t>(by_node.size());
  const int32_t g = fewest_per_node(group);
  const AlgorithmInfo& algo = AlgorithmRegistry::instance().get(inter, "inter_node");
  const std::vector<sim::Bytes> shard = split_bytes(spec.bytes, g);
  std::vector<Step> steps;
  plan.chunk_bytes.clear();
  int32_t per_shard = -1;
  for (int32_t l = 0; l < g; ++l) {
    const CollectivePlan sub = algo.plan(CollectiveSpec{CollectiveOp::kAllReduce, shard[static_cast<size_t>(l)], 0},
                                         Group::blocked(m, 1), AlgorithmParams{});
    TRAINSIM_ASSERT(per_shard < 0 || per_shard == sub.chunks, inter, ": chunk count depends on the buffer size");
    per_shard = sub.chunks;
    plan.chunk_bytes.insert(plan.chunk_bytes.end(), sub.chunk_bytes.begin(), sub.chunk_bytes.end());
    if (steps.size() < sub.steps.size()) steps.resize(sub.steps.size());
    for (size_t s = 0; s < sub.steps.size(); ++s)
      for (const Transfer& t : sub.steps[s].transfers)
        steps[s].transfers.push_back(Transfer{by_node[static_cast<size_t>(t.src)][static_cast<size_t>(l)],
                                              by_node[static_cast<size_t>(t.dst)][static_cast<size_t>(l)],
                                              l * per_shard + t.chunk, t.bytes, t.reduce});
  }
  plan.chunks = g * per_shard;
  return steps;
}

}  // namespace detail

}  // namespace trainsim::models::collectives
