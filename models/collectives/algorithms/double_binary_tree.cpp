// NCCL's double binary tree (Sanders, Speck & Traeff 2009; NCCL 2.4), node-level as NCCL builds
// it (src/graph/trees.cc, connect.cc): the binary trees span servers, and inside each server the
// ranks form a chain whose end (the head) links to the other servers. Tree 0 is NCCL's in-order
// binary tree over servers 0..m-1 (server 0 is the root with a single child); tree 1 is its
// mirror (server k plays position m - 1 - k) when m is even, or its shift by one when m is odd,
// so that most servers that are inner nodes in one tree are leaves in the other. Tree 0's chains
// run from local rank g-1 to local rank 0 (its head), tree 1's the other way, so the two trees
// leave each server through different GPUs and NICs. Each tree all-reduces half of the buffer:
// up each chain (step j: local rank g-1-j adds into g-2-j), up the tree (a server of height h
// adds into its parent's head in step g-1+h), down the tree (a head of depth d forwards to its
// children's heads in step g-1+H+d) and down each chain. Closed forms: 2(g-1) + 2H steps with
// H = ceil(log2 m); each rank sends at most 2.5N (2N with one rank per server, where it is the
// rank-level tree of the reference).
#include "models/collectives/collective.hpp"

#include <algorithm>

namespace trainsim::models::collectives {
namespace {

// Parent of position r in NCCL's binary tree (ncclGetBtree): clear the lowest set bit and set the
// next one up, or only clear it when that falls outside the tree.
int32_t parent(int32_t r, int32_t n) {
  if (r == 0) return -1;
  const int32_t bit = r & -r;
  const int32_t up = (r ^ bit) | (bit << 1);
  return up < n ? up : r ^ bit;
}

CollectivePlan plan_double_binary_tree(const CollectiveSpec& spec, const Group& group, const AlgorithmParams&,
                                       const ChannelInfo&) {
  // Servers (in order) and their ranks; groups whose servers hold different numbers of ranks run
  // the tree over ranks (one "server" per rank).
  std::vector<std::vector<int32_t>> nodes = group.ranks_by_node();
  if (group.ranks_per_node() == 0) {
    nodes.clear();
    for (int32_t r = 0; r < group.size; ++r) nodes.push_back({r});
  }
  const auto m = static_cast<int32_t>(nodes.size());
  const auto g = static_cast<int32_t>(nodes.front().size());
  CollectivePlan p;
  detail::set_chunks(p, spec.bytes, 2);
  std::vector<int32_t> depth(static_cast<size_t>(m), 0), height(static_cast<size_t>(m), 0);
  for (int32_t r = 1; r < m; ++r)
    for (int32_t a = parent(r, m); a >= 0; a = parent(a, m)) ++depth[static_cast<size_t>(r)];
  std::vector<int32_t> order(static_cast<size_t>(m));
  for (int32_t r = 0; r < m; ++r) order[static_cast<size_t>(r)] = r;
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return depth[static_cast<size_t>(a)] > depth[static_cast<size_t>(b)]; });
  for (int32_t r : order)
    if (r != 0) {
      auto& h = height[static_cast<size_t>(parent(r, m))];
      h = std::max(h, height[static_cast<size_t>(r)] + 1);
    }
  const int32_t tree_height = height[0];
  const auto chain = static_cast<size_t>(g - 1);
  for (int32_t tree = 0; tree < 2; ++tree) {
    const auto node = [&](int32_t pos) { return tree == 0 ? pos : (m % 2 == 0 ? m - 1 - pos : (pos + 1) % m); };
    // Rank at chain position j of server k (position 0 is the head).
    const auto at = [&](int32_t k, int32_t j) {
      return nodes[static_cast<size_t>(k)][static_cast<size_t>(tree == 0 ? j : g - 1 - j)];
    };
    const size_t down = chain + 2 * static_cast<size_t>(tree_height);
    for (int32_t k = 0; k < m; ++k)
      for (int32_t j = g - 1; j >= 1; --j) {
        detail::add(p, static_cast<size_t>(g - 1 - j), at(k, j), at(k, j - 1), tree, true);
        detail::add(p, down + static_cast<size_t>(j - 1), at(k, j - 1), at(k, j), tree, false);
      }
    for (int32_t pos = 1; pos < m; ++pos) {
      const int32_t up = parent(pos, m);
      detail::add(p, chain + static_cast<size_t>(height[static_cast<size_t>(pos)]), at(node(pos), 0), at(node(up), 0),
                  tree, true);
      detail::add(p, chain + static_cast<size_t>(tree_height + depth[static_cast<size_t>(up)]), at(node(up), 0),
                  at(node(pos), 0), tree, false);
    }
  }
  return p;
}

TRAINSIM_REGISTER_COLLECTIVE(
    double_binary_tree, "double_binary_tree",
    "NCCL double binary tree over servers with chains inside them: two trees each all-reduce half",
    (CollectiveOp::kAllReduce), plan_double_binary_tree)

}  // namespace
}  // namespace trainsim::models::collectives
