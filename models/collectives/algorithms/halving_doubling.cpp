// Recursive halving-doubling (Rabenseifner 2004; Thakur, Rabenseifner & Gropp 2005). For p' = 2^k
// ranks the buffer is cut into p' blocks. Reduce-scatter by recursive halving: at distance
// d = p'/2, p'/4, .., 1 each rank swaps half of its current block range with rank ^ d and keeps
// (adds) the other half, ending with block `rank` summed; all-gather by recursive doubling at
// d = 1, 2, .., p'/2 sends the whole range held so far. Each phase is log2 p' steps and
// (p'-1)/p' x N bytes per rank; all-reduce is both, 2 log2 p' steps and 2(p'-1)/p' x N.
// A non-power-of-two all-reduce folds the r = n - p' extra ranks in first (MPICH's way): among the
// first 2r ranks, each even rank adds its whole buffer into the odd rank above it (one step, N
// bytes) and sits out; the p' others run the algorithm; the odd ranks send the result back (one
// step, N bytes). All-gather and reduce-scatter need n to be a power of two.
#include "models/collectives/collective.hpp"

#include <bit>

namespace trainsim::models::collectives {
namespace {

CollectivePlan plan_halving_doubling(const CollectiveSpec& spec, const Group& group, const AlgorithmParams&,
                                     const ChannelInfo&) {
  const int32_t n = group.size;
  const auto p2 = static_cast<int32_t>(std::bit_floor(static_cast<uint32_t>(n)));
  const int32_t extra = n - p2;
  // Participant v of the power-of-two core is rank 2v + 1 for v < extra, else v + extra.
  const auto rank = [extra](int32_t v) { return v < extra ? 2 * v + 1 : v + extra; };
  CollectivePlan p;
  detail::set_chunks(p, spec.bytes, p2);
  size_t step = 0;
  if (extra > 0) {
    for (int32_t i = 0; i < extra; ++i)
      for (int32_t k = 0; k < p2; ++k) detail::add(p, 0, 2 * i, 2 * i + 1, k, true);
    step = 1;
  }
  std::vector<int32_t> lo(static_cast<size_t>(p2), 0), hi(static_cast<size_t>(p2), p2);
  if (spec.op != CollectiveOp::kAllGather) {
    for (int32_t d = p2 / 2; d >= 1; d /= 2, ++step)
      for (int32_t v = 0; v < p2; ++v) {
        auto& l = lo[static_cast<size_t>(v)];
        auto& h = hi[static_cast<size_t>(v)];
        const int32_t mid = l + (h - l) / 2;
        const bool lower = (v & d) == 0;  // keeps [l, mid), sends [mid, h)
        for (int32_t k = lower ? mid : l; k < (lower ? h : mid); ++k)
          detail::add(p, step, rank(v), rank(v ^ d), k, true);
        (lower ? h : l) = mid;
      }
  } else {
    for (int32_t v = 0; v < p2; ++v) lo[static_cast<size_t>(v)] = v, hi[static_cast<size_t>(v)] = v + 1;
  }
  if (spec.op != CollectiveOp::kReduceScatter) {
    for (int32_t d = 1; d < p2; d *= 2, ++step) {
      for (int32_t v = 0; v < p2; ++v)
        for (int32_t k = lo[static_cast<size_t>(v)]; k < hi[static_cast<size_t>(v)]; ++k)
          detail::add(p, step, rank(v), rank(v ^ d), k, false);
      std::vector<int32_t> nlo = lo, nhi = hi;
      for (int32_t v = 0; v < p2; ++v) {
        nlo[static_cast<size_t>(v)] = std::min(lo[static_cast<size_t>(v)], lo[static_cast<size_t>(v ^ d)]);
        nhi[static_cast<size_t>(v)] = std::max(hi[static_cast<size_t>(v)], hi[static_cast<size_t>(v ^ d)]);
      }
      lo = nlo, hi = nhi;
    }
  }
  if (extra > 0)
    for (int32_t i = 0; i < extra; ++i)
      for (int32_t k = 0; k < p2; ++k) detail::add(p, step, 2 * i + 1, 2 * i, k, false);
  return p;
}

std::string check_halving_doubling(const CollectiveSpec& spec, const Group& group, const AlgorithmParams&) {
  if (spec.op != CollectiveOp::kAllReduce && !std::has_single_bit(static_cast<uint32_t>(group.size)))
    return "halving-doubling all-gather and reduce-scatter need a power-of-two group";
  return "";
}

TRAINSIM_REGISTER_COLLECTIVE(halving_doubling, "halving_doubling",
                             "Rabenseifner halving-doubling: all-reduce in 2 log2 p steps, any p (extra ranks folded)",
                             (CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter),
                             plan_halving_doubling, check_halving_doubling)

}  // namespace
}  // namespace trainsim::models::collectives
