// NCCL's double binary tree (Sanders, Speck & Traeff 2009; NCCL 2.4). Tree 0 is NCCL's in-order
// binary tree over ranks 0..n-1 (rank 0 is the root with a single child); tree 1 is its mirror
// (rank r plays position n - 1 - r) when n is even, or its shift by one (rank (r + 1) mod n plays
// position r) when n is odd, so that most ranks that are inner nodes in one tree are leaves in the
// other. Each tree all-reduces half of the buffer: up the tree (a node of height h adds into its
// parent in step h), then down (a node of depth d forwards to its children in step H + d).
// Closed forms: 2H steps with H = ceil(log2 n); each tree edge carries N/2 up and N/2 down, so the
// ranks send 2(n-1) x N in all and no rank more than 2N.
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
  const int32_t n = group.size;
  CollectivePlan p;
  detail::set_chunks(p, spec.bytes, 2);
  std::vector<int32_t> depth(static_cast<size_t>(n), 0), height(static_cast<size_t>(n), 0);
  for (int32_t r = 1; r < n; ++r)
    for (int32_t a = parent(r, n); a >= 0; a = parent(a, n)) ++depth[static_cast<size_t>(r)];
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int32_t r = 0; r < n; ++r) order[static_cast<size_t>(r)] = r;
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return depth[static_cast<size_t>(a)] > depth[static_cast<size_t>(b)]; });
  for (int32_t r : order)
    if (r != 0) {
      auto& h = height[static_cast<size_t>(parent(r, n))];
      h = std::max(h, height[static_cast<size_t>(r)] + 1);
    }
  const int32_t tree_height = height[0];
  for (int32_t tree = 0; tree < 2; ++tree) {
    const auto rank = [&](int32_t pos) { return tree == 0 ? pos : (n % 2 == 0 ? n - 1 - pos : (pos + 1) % n); };
    for (int32_t pos = 1; pos < n; ++pos) {
      const int32_t up = parent(pos, n);
      detail::add(p, static_cast<size_t>(height[static_cast<size_t>(pos)]), rank(pos), rank(up), tree, true);
      detail::add(p, static_cast<size_t>(tree_height + depth[static_cast<size_t>(up)]), rank(up), rank(pos), tree,
                  false);
    }
  }
  return p;
}

TRAINSIM_REGISTER_COLLECTIVE(double_binary_tree, "double_binary_tree",
                             "NCCL double binary tree: two trees each all-reduce half, 2 ceil(log2 p) steps",
                             (CollectiveOp::kAllReduce), plan_double_binary_tree)

}  // namespace
}  // namespace trainsim::models::collectives
