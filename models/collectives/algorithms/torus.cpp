// Multi-dimensional torus (2D or 3D by Group::dims; e.g. Google TPU pods, ASTRA-sim's
// multi-dimensional collectives): a ring per dimension. Rank r sits at (x, y, z) with
// r = x + d0 * (y + d1 * z), and chunk k of the n chunks is rank k's block. Reduce-scatter runs
// along dimension 0, then 1, then 2, each ring on the blocks the previous ones left to the rank
// (ring i over d_i members moves 1/(d_0..d_{i-1}) of the buffer); all-gather runs the dimensions
// in reverse. Dimensions of size 1 are skipped. Closed forms: all-reduce 2 sum(d_i - 1) steps and
// 2(n-1)/n x N bytes per rank (the sum telescopes), reduce-scatter and all-gather half of that.
#include "models/collectives/collective.hpp"

#include <algorithm>
#include <array>
#include <sstream>

namespace trainsim::models::collectives {
namespace {

std::array<int32_t, 3> shape(const Group& g) {
  return {std::max(g.dims[0], 1), std::max(g.dims[1], 1), std::max(g.dims[2], 1)};
}

CollectivePlan plan_torus(const CollectiveSpec& spec, const Group& group, const AlgorithmParams&,
                          const ChannelInfo& channel) {
  const int32_t n = group.size;
  const auto d = shape(group);
  const std::array<int32_t, 3> stride = {1, d[0], d[0] * d[1]};
  const auto coord = [&](int32_t r, int i) { return (r / stride[static_cast<size_t>(i)]) % d[static_cast<size_t>(i)]; };
  CollectivePlan p;
  detail::set_chunks(p, spec.bytes, n);
  // One ring pass along dimension i on every line of the torus. The block of line member j is the
  // chunks whose coordinates below i are the line's and whose coordinate i is j.
  const auto pass = [&](int i, bool reduce) {
    const size_t first = p.steps.size();
    for (int32_t base = 0; base < n; ++base) {
      if (coord(base, i) != 0) continue;
      std::vector<int32_t> members;
      std::vector<std::vector<int32_t>> blocks;
      for (int32_t j = 0; j < d[static_cast<size_t>(i)]; ++j) {
        members.push_back(base + j * stride[static_cast<size_t>(i)]);
        blocks.emplace_back();
        for (int32_t k = 0; k < n; ++k) {
          bool in = coord(k, i) == j;
          for (int below = 0; below < i; ++below) in = in && coord(k, below) == coord(base, below);
          if (in) blocks.back().push_back(k);
        }
      }
      detail::ring_pass(p, first, members, blocks, reduce, channel.reversed);
    }
  };
  if (spec.op != CollectiveOp::kAllGather)
    for (int i = 0; i < 3; ++i)
      if (d[static_cast<size_t>(i)] > 1) pass(i, true);
  if (spec.op != CollectiveOp::kReduceScatter)
    for (int i = 2; i >= 0; --i)
      if (d[static_cast<size_t>(i)] > 1) pass(i, false);
  return p;
}

std::string check_torus(const CollectiveSpec&, const Group& group, const AlgorithmParams&) {
  const auto d = shape(group);
  if (d[0] * d[1] * d[2] == group.size && group.dims[0] > 0) return "";
  std::ostringstream os;
  os << "torus needs group.dims whose product is the group size, got " << group.dims[0] << "x" << group.dims[1] << "x"
     << group.dims[2] << " for " << group.size << " ranks";
  return os.str();
}

TRAINSIM_REGISTER_COLLECTIVE(torus, "torus",
                             "2D/3D torus: a ring per dimension (group.dims), 2 sum(d_i - 1) steps for all-reduce",
                             (CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter),
                             plan_torus, check_torus, {"bidirectional"})

}  // namespace
}  // namespace trainsim::models::collectives
