// Ring (Patarasuk & Yuan 2009; NCCL's ring). All-reduce, all-gather, reduce-scatter: the buffer is
// cut into n blocks and passed around the ring (detail::ring_pass). Reduce-scatter: in step k rank r
// sends block (r - k - 1) mod n to r + 1, which adds it, so block b ends summed on rank b after n - 1
// steps; all-gather forwards block (r - k) mod n; all-reduce is the two in turn: 2(n - 1) steps and
// 2(n - 1)/n x N bytes sent per rank, the bandwidth-optimal volume. Broadcast and reduce run a
// chain along the ring from (or to) the root: n - 1 steps, N bytes sent by every rank but the
// chain's end. `bidirectional` runs every other channel the opposite way round.
#include "models/collectives/collective.hpp"

#include <numeric>

namespace trainsim::models::collectives {
namespace {

CollectivePlan plan_ring(const CollectiveSpec& spec, const Group& group, const AlgorithmParams&,
                         const ChannelInfo& channel) {
  const int32_t n = group.size;
  CollectivePlan p;
  if (spec.op == CollectiveOp::kBroadcast || spec.op == CollectiveOp::kReduce) {
    // The chain q_0 = root, q_j = root + dir * j (broadcast flows q_0 -> q_1 -> ...); a reduce
    // flows the other way along q_j = root - dir * j and ends at the root.
    detail::set_chunks(p, spec.bytes, 1);
    const int32_t dir = channel.reversed ? -1 : 1;
    const bool bcast = spec.op == CollectiveOp::kBroadcast;
    const auto q = [&](int32_t j) { return (((spec.root + (bcast ? dir : -dir) * j) % n) + n) % n; };
    for (int32_t i = 0; i + 1 < n; ++i) {
      if (bcast)
        detail::add(p, static_cast<size_t>(i), q(i), q(i + 1), 0, false);
      else
        detail::add(p, static_cast<size_t>(i), q(n - 1 - i), q(n - 2 - i), 0, true);
    }
    return p;
  }
  detail::set_chunks(p, spec.bytes, n);
  std::vector<int32_t> members(static_cast<size_t>(n));
  std::iota(members.begin(), members.end(), 0);
  std::vector<std::vector<int32_t>> blocks;
  for (int32_t r = 0; r < n; ++r) blocks.push_back({r});
  if (spec.op != CollectiveOp::kAllGather) detail::ring_pass(p, 0, members, blocks, true, channel.reversed);
  if (spec.op != CollectiveOp::kReduceScatter)
    detail::ring_pass(p, p.steps.size(), members, blocks, false, channel.reversed);
  return p;
}

TRAINSIM_REGISTER_COLLECTIVE(ring, "ring",
                             "Bandwidth-optimal ring: all-reduce in 2(p-1) steps moving 2(p-1)/p x N per rank; "
                             "chain broadcast/reduce",
                             (CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                              CollectiveOp::kBroadcast, CollectiveOp::kReduce),
                             plan_ring, nullptr, {"bidirectional"})

}  // namespace
}  // namespace trainsim::models::collectives
