#pragma once
// A monotone radix heap of (time, key) entries: pops in (time, key) order, provided keys are
// pushed in increasing order (the event queue's sequence numbers). Bucket b > 0 holds the
// entries whose time first differs from the last popped time at bit b - 1; bucket 0 holds those
// equal to it, in push order. When bucket 0 runs dry, the lowest non-empty bucket is spread over
// the buckets below it, so each entry moves at most 64 times and, for event delays of d ns,
// about log2(d) times in all: streaming moves instead of a heap's random-access sifts. Every
// bucket stays sorted by key (pushes append the largest key; a spread keeps relative order), so
// equal times pop in key order. A push earlier than the last popped time (allowed, but the
// engine never does it) rebuilds the buckets around the new minimum in O(n log n).

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "sim/huge_page_allocator.hpp"
#include "sim/units.hpp"

namespace trainsim::sim {

class RadixHeap {
 public:
  struct Entry {
    Time at;
    uint64_t key;
  };

  // Requires e.key greater than every key pushed before.
  void push(Entry e) {
    if (e.at < last_) [[unlikely]] {
      rebuild(e);
      return;
    }
    const size_t b = bucket_of(e.at);
    buckets_[b].push_back(e);
    nonempty_ |= mask_of(b);
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The earliest entry (ties: the smallest key); requires !empty().
  const Entry& top() {
    if (head_ == buckets_[0].size()) refill();
    return buckets_[0][head_];
  }
  // The event queue's interface (sim/radix_ladder.hpp): no entry is announced while refilling,
  // and the one looked ahead to is the next top when it is known without a refill.
  template <typename Soon>
  const Entry& top(Soon&&) {
    return top();
  }
  template <typename Soon>
  void look_ahead(Soon&& soon) const {
    if (const Entry* next = ready_top()) soon(*next);
  }
  // The top when it is known without moving entries (else nullptr). top() may move the next
  // bucket down and make its minimum the reference, after which a push before that time costs a
  // rebuild; this never does, so a caller can look ahead before it knows what will be pushed.
  const Entry* ready_top() const { return head_ < buckets_[0].size() ? &buckets_[0][head_] : nullptr; }
  // Removes top(); requires !empty() and top() called since the last change.
  void pop() {
    if (++head_ == buckets_[0].size()) {  // drained: a long run at one time does not pile up
      buckets_[0].clear();
      head_ = 0;
    }
    --size_;
  }
  // Removes every entry for which keep(entry) is false; the order of the rest is unchanged.
  template <typename Keep>
  void filter(Keep keep) {
    for (size_t b = 0; b < kBuckets; ++b) {
      BigVector<Entry>& v = buckets_[b];
      size_t kept = 0;
      for (size_t i = b == 0 ? head_ : 0; i < v.size(); ++i)
        if (keep(v[i])) v[kept++] = v[i];
      size_ -= (v.size() - (b == 0 ? head_ : 0)) - kept;
      v.resize(kept);
      if (kept == 0) nonempty_ &= ~mask_of(b);
    }
    head_ = 0;
  }
  // Visits every entry (any order).
  template <typename Visit>
  void for_each(Visit visit) const {
    for (size_t b = 0; b < kBuckets; ++b)
      for (size_t i = b == 0 ? head_ : 0; i < buckets_[b].size(); ++i) visit(buckets_[b][i]);
  }

 private:
  static constexpr size_t kBuckets = 65;
  // Times as unsigned integers in the same order (negative times included).
  static uint64_t bits(Time t) { return static_cast<uint64_t>(t.count_ns()) ^ (uint64_t{1} << 63); }
  size_t bucket_of(Time at) const {
    const uint64_t diff = bits(at) ^ bits(last_);
    return diff == 0 ? 0 : static_cast<size_t>(64 - __builtin_clzll(diff));
  }
  // Bucket b > 0 as a bit of nonempty_ (bucket 0 is tracked by head_ instead).
  static uint64_t mask_of(size_t b) { return b == 0 ? 0 : uint64_t{1} << (b - 1); }
  void refill();
  void rebuild(Entry e);

  std::array<BigVector<Entry>, kBuckets> buckets_;
  uint64_t nonempty_ = 0;  // buckets 1..64 that hold entries
  size_t head_ = 0;        // entries of bucket 0 before head_ are popped
  size_t size_ = 0;
  Time last_ = Time::ns(std::numeric_limits<int64_t>::min());  // the last popped minimum (a lower bound on every entry)
};

}  // namespace trainsim::sim
