// Ring (Patarasuk & Yuan 2009; NCCL's ring): the buffer is cut into n chunks. Reduce-scatter:
// in step k rank r sends chunk (r - k - 1) mod n to rank r + 1, which adds it, so chunk c ends
// fully reduced on rank c after n - 1 steps. All-gather: in step k rank r forwards chunk
// (r - k) mod n. All-reduce = reduce-scatter then all-gather: 2(n - 1) steps and
// 2(n - 1)/n x S bytes sent per rank, the bandwidth-optimal volume.
#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {
namespace {

int32_t mod(int32_t a, int32_t n) { return ((a % n) + n) % n; }

void phase(CollectivePlan& p, int32_t n, sim::Bytes chunk, bool reduce) {
  for (int32_t k = 0; k < n - 1; ++k) {
    Step s;
    for (int32_t r = 0; r < n; ++r)
      s.transfers.push_back(Transfer{r, mod(r + 1, n), reduce ? mod(r - k - 1, n) : mod(r - k, n), chunk, reduce});
    p.steps.push_back(std::move(s));
  }
}

CollectivePlan ring(const CollectiveSpec& spec, int32_t n) {
  CollectivePlan p;
  p.chunks = n;
  if (n <= 1) return p;
  const sim::Bytes chunk = spec.bytes / n;
  switch (spec.op) {
    case CollectiveOp::kAllReduce:
      phase(p, n, chunk, true);
      phase(p, n, chunk, false);
      break;
    case CollectiveOp::kAllGather: phase(p, n, chunk, false); break;
    case CollectiveOp::kReduceScatter: phase(p, n, chunk, true); break;
    default: break;
  }
  return p;
}

}  // namespace
}  // namespace trainsim::models::collectives

TRAINSIM_REGISTER_COLLECTIVE(ring, "ring", "Bandwidth-optimal ring: 2(p-1) steps for all-reduce, (p-1) for AG/RS",
                             (std::vector<::trainsim::models::collectives::CollectiveOp>{
                                 ::trainsim::models::collectives::CollectiveOp::kAllReduce,
                                 ::trainsim::models::collectives::CollectiveOp::kAllGather,
                                 ::trainsim::models::collectives::CollectiveOp::kReduceScatter}),
                             ::trainsim::models::collectives::ring)
