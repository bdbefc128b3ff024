// Rail-aggregated all-to-all for m servers with g ranks each (NCCL's PXN idea, NCCL 2.12): first,
// inside each server, rank (a, l) gathers from its local peers every block bound for local index
// l on any server (the blocks for its own server are then delivered); second, along each rail,
// (a, l) sends to (b, l) the g blocks from server a bound for (b, l), one message per server
// instead of one per rank. The data lands at its destination in the second phase, so no scatter
// phase is needed. Closed form: (g-1) + (m-1) steps and (g-1)/g x N + (m-1)/m x N bytes per rank
// (the same (m-1)/m x N crosses the network as with the direct algorithm, in g times fewer,
// g times larger messages).
#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {
namespace {

CollectivePlan plan_all_to_all_hierarchical(const CollectiveSpec& spec, const Group& group, const AlgorithmParams&,
                                            const ChannelInfo&) {
  const int32_t n = group.size;
  const auto by = group.ranks_by_node();
  const auto m = static_cast<int32_t>(by.size());
  const auto g = static_cast<int32_t>(by.front().size());
  const auto at = [&](int32_t node, int32_t local) {
    return by[static_cast<size_t>(node)][static_cast<size_t>(local)];
  };
  CollectivePlan p;
  const std::vector<sim::Bytes> block = detail::split_bytes(spec.bytes, n);
  p.chunks = n * n;
  for (int32_t s = 0; s < n; ++s) p.chunk_bytes.insert(p.chunk_bytes.end(), block.begin(), block.end());
  const auto chunk = [n](int32_t s, int32_t d) { return s * n + d; };
  for (int32_t k = 1; k < g; ++k)
    for (int32_t a = 0; a < m; ++a)
      for (int32_t l = 0; l < g; ++l) {
        const int32_t to = (l + k) % g;
        for (int32_t b = 0; b < m; ++b)
          detail::add(p, static_cast<size_t>(k - 1), at(a, l), at(a, to), chunk(at(a, l), at(b, to)), false);
      }
  for (int32_t k = 1; k < m; ++k)
    for (int32_t a = 0; a < m; ++a)
      for (int32_t l = 0; l < g; ++l) {
        const int32_t b = (a + k) % m;
        for (int32_t from = 0; from < g; ++from)
          detail::add(p, static_cast<size_t>(g - 2 + k), at(a, l), at(b, l), chunk(at(a, from), at(b, l)), false);
      }
  return p;
}

std::string check_all_to_all_hierarchical(const CollectiveSpec&, const Group& group, const AlgorithmParams&) {
  return group.ranks_per_node() == 0 ? "its servers hold different numbers of ranks" : "";
}

TRAINSIM_REGISTER_COLLECTIVE(all_to_all_hierarchical, "all_to_all_hierarchical",
                             "All-to-all gathered inside each server, then one message per server along each rail",
                             (CollectiveOp::kAllToAll), plan_all_to_all_hierarchical, check_all_to_all_hierarchical)

}  // namespace
}  // namespace trainsim::models::collectives
