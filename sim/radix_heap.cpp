#include "sim/radix_heap.hpp"

#include <algorithm>
#include <vector>

namespace trainsim::sim {

void RadixHeap::refill() {
  // Bucket 0 is used up: start it afresh from the lowest non-empty bucket, whose minimum time
  // becomes the new reference. Its entries all move to lower buckets (their time now differs
  // from the reference at a lower bit), in their order, so every bucket stays sorted by key.
  buckets_[0].clear();
  head_ = 0;
  const size_t b = static_cast<size_t>(__builtin_ctzll(nonempty_)) + 1;  // size_ > 0: one holds an entry
  BigVector<Entry>& from = buckets_[b];
  Time lo = from.front().at;
  for (const Entry& e : from) lo = std::min(lo, e.at);
  last_ = lo;
  nonempty_ &= ~mask_of(b);
  for (const Entry& e : from) {
    const size_t to = bucket_of(e.at);
    buckets_[to].push_back(e);
    nonempty_ |= mask_of(to);
  }
  from.clear();
}

void RadixHeap::rebuild(Entry e) {
  // A push below the reference: spread everything again around the new minimum, in key order.
  std::vector<Entry> all;
  all.reserve(size_ + 1);
  for_each([&](const Entry& x) { all.push_back(x); });
  all.push_back(e);
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  for (BigVector<Entry>& v : buckets_) v.clear();
  head_ = 0;
  nonempty_ = 0;
  last_ = e.at;  // below every other entry
  for (const Entry& x : all) {
    const size_t to = bucket_of(x.at);
    buckets_[to].push_back(x);
    nonempty_ |= mask_of(to);
  }
  size_ = all.size();
}

}  // namespace trainsim::sim
