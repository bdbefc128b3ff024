// Direct all-to-all (NCCL's grouped send/recv): every rank sends its block for rank d straight to
// d. Step k (1 <= k < n) pairs rank s with (s + k) mod n, a schedule without endpoint contention;
// the blocks are independent, so the dependency lists are empty and an executor may start them all
// at once as NCCL does. Closed form: n - 1 steps and (n-1)/n x N bytes sent per rank.
#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {
namespace {

CollectivePlan plan_all_to_all_direct(const CollectiveSpec& spec, const Group& group, const AlgorithmParams&,
                                      const ChannelInfo&) {
  const int32_t n = group.size;
  CollectivePlan p;
  const std::vector<sim::Bytes> block = detail::split_bytes(spec.bytes, n);
  p.chunks = n * n;
  for (int32_t s = 0; s < n; ++s) p.chunk_bytes.insert(p.chunk_bytes.end(), block.begin(), block.end());
  for (int32_t k = 1; k < n; ++k)
    for (int32_t s = 0; s < n; ++s) {
      const int32_t d = (s + k) % n;
      detail::add(p, static_cast<size_t>(k - 1), s, d, s * n + d, false);
    }
  return p;
}

TRAINSIM_REGISTER_COLLECTIVE(all_to_all_direct, "all_to_all_direct",
                             "Direct all-to-all: every pair exchanges its block, (p-1)/p x N per rank",
                             (CollectiveOp::kAllToAll), plan_all_to_all_direct)

}  // namespace
}  // namespace trainsim::models::collectives
