// Binomial tree broadcast and reduce (MPICH's short-message algorithms): with ranks renumbered
// v = (r - root) mod n and L = ceil(log2 n), a broadcast doubles the set of holders each step (in
// step k every v < 2^k sends to v + 2^k), and a reduce runs it backwards (in step k every v whose
// lowest set bit is 2^k adds into v - 2^k). Closed forms: L steps; reduce: N bytes from every rank
// but the root; broadcast: v sends N x #{k < L : v < 2^k and v + 2^k < n} (the root L x N when n
// is a power of two), (n-1) x N in all.
#include "models/collectives/collective.hpp"

#include <bit>

namespace trainsim::models::collectives {
namespace {

CollectivePlan plan_binomial_tree(const CollectiveSpec& spec, const Group& group, const AlgorithmParams&,
                                  const ChannelInfo&) {
  const int32_t n = group.size;
  const auto levels = static_cast<int32_t>(std::bit_width(static_cast<uint32_t>(n - 1)));
  const auto rank = [&](int32_t v) { return (v + spec.root) % n; };
  CollectivePlan p;
  detail::set_chunks(p, spec.bytes, 1);
  for (int32_t k = 0; k < levels; ++k) {
    const int32_t bit = 1 << k;
    for (int32_t v = 0; v < n; ++v) {
      if (spec.op == CollectiveOp::kBroadcast && v < bit && v + bit < n)
        detail::add(p, static_cast<size_t>(k), rank(v), rank(v + bit), 0, false);
      if (spec.op == CollectiveOp::kReduce && (v & -v) == bit)
        detail::add(p, static_cast<size_t>(k), rank(v), rank(v - bit), 0, true);
    }
  }
  return p;
}

TRAINSIM_REGISTER_COLLECTIVE(binomial_tree, "binomial_tree",
                             "Binomial tree broadcast/reduce: ceil(log2 p) steps, for short messages",
                             (CollectiveOp::kBroadcast, CollectiveOp::kReduce), plan_binomial_tree)

}  // namespace
}  // namespace trainsim::models::collectives
