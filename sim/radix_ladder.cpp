#include "sim/radix_ladder.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

#include "sim/error.hpp"

namespace trainsim::sim {

uint32_t RadixLadder::grow() {
  // The pool is out of blocks: add one at the end of the arena (which doubles its capacity when
  // full). Positions stay below kNone: 2^26 blocks of 63 entries is far beyond the event queue's
  // 2^24 entries.
  const uint32_t blk = static_cast<uint32_t>(arena_.size() >> kBlockShift);
  TRAINSIM_ASSERT(blk < (kNone >> kBlockShift), "radix ladder: block pool exhausted");
  arena_.resize(arena_.size() + (size_t{1} << kBlockShift));
  return blk;
}

void RadixLadder::lower_ref(uint64_t u) {
  // A push below the reference. u agrees with ref_ above byte k and is smaller in byte k. Buckets
  // of rung k and above keep their place relative to u; the entries of the rungs below k (the
  // bottom included) share byte k with ref_, so relative to u they all belong in one bucket of
  // rung k, empty so far (rung-k buckets are above ref_'s digit). Entries of one time come from
  // one bucket, or from the bottom and then a rung-0 bucket, so moving the bottom first and then
  // bucket by bucket keeps them in key order. Within one window (k = 0) nothing moves: u goes to
  // a rung-0 bucket, which pops before the bottom's later times.
  const int k = rung_of(u ^ ref_);
  if (k > 0) {
    const size_t to = static_cast<size_t>(k) * kDigits + ((ref_ >> (8 * k)) & 0xff);
    for (size_t i = bottom_head_; i < bottom_.size(); ++i) append(to, bottom_[i]);
    bottom_.clear();
    bottom_head_ = 0;
    for (size_t b = 0; b < static_cast<size_t>(k) * kDigits; ++b) {
      if (buckets_[b].last == kNone) continue;
      const Bucket chain = buckets_[b];
      buckets_[b] = Bucket{};
      unmark(b);
      take(chain, [&](const Entry& e) { append(to, e); });
    }
  }
  ref_ = u;
}

uint64_t RadixLadder::spread_reference(Bucket chain, int r, uint64_t digit) const {
  if (r < 3) {
    const int shift = 8 * r;
    return (ref_ & ~((uint64_t{1} << (shift + 8)) - 1)) | (digit << shift);
  }
  uint64_t lo = ~uint64_t{0}, hi = 0;
  visit(chain, [&](const Entry& e) {
    lo = std::min(lo, bits(e.at));
    hi = std::max(hi, bits(e.at));
  });
  return lo & ~((uint64_t{1} << (8 * rung_of(lo ^ hi) + 8)) - 1);  // rung_of(lo ^ hi) < r <= 7
}

void RadixLadder::sort_bottom() {
  // The bottom's entries share every byte but the last with the reference and are in key order.
  const size_t n = bottom_.size();
  if (n <= kInsertionSortMax) {
    for (size_t i = 1; i < n; ++i) {
      const Entry e = bottom_[i];
      size_t j = i;
      for (; j > 0 && bottom_[j - 1].at > e.at; --j) bottom_[j] = bottom_[j - 1];
      bottom_[j] = e;
    }
    return;
  }
  std::array<size_t, kDigits + 1> start{};
  for (const Entry& e : bottom_) ++start[(bits(e.at) & 0xff) + 1];
  for (size_t d = 1; d <= kDigits; ++d) start[d] += start[d - 1];
  scratch_.resize(n);
  for (const Entry& e : bottom_) scratch_[start[bits(e.at) & 0xff]++] = e;
  bottom_.swap(scratch_);
}

}  // namespace trainsim::sim
