#pragma once
// A ladder queue whose rungs are radix-256 digits: pops (time, key) entries in (time, key) order,
// provided keys are pushed in increasing order (the event queue's sequence numbers).
//
// Times are compared as unsigned 64-bit integers against a reference `ref_`, a lower bound on
// every entry. Rung L (0..7) has 256 buckets: an entry whose time first differs from the
// reference in byte L sits in rung L, bucket = that byte. Rung 0 buckets thus hold one time each,
// and everything in rung L is earlier than everything in rung L + 1. When rung 0 runs dry, the
// lowest non-empty bucket of the lowest rung is spread over the rungs below, its lower bound the
// new reference, like a ladder queue's bucket spawning a finer rung, but with widths fixed by the
// digits: no width to estimate, no overflow at the ends of the int64 range. An event d ns ahead
// moves down about log256(d) rungs (2 for a millisecond) instead of a radix heap's log2(d)
// buckets, and every move is a streaming copy between 1 KiB blocks.
//
// Each bucket is a chain of blocks from one shared pool, so memory follows the entries, and
// keeps the entries of each time in key order: pushes append the largest key, and a spread goes
// into empty rungs in order. Rung 0, the 256 ns window at the reference, is mostly a sorted array
// (the bottom): a spread sorts the entries that reach it by time (counting sort on the last byte,
// stable, so ties stay in key order), and a push at or after its last time appends to it. Other
// pushes into the window go to rung-0 buckets, which pop after the bottom's entries of the same
// time (their keys are larger). Equal times therefore pop in key order, deterministically.
//
// A push below the reference (allowed; the engine never does it, but a caller may after peeking
// with top()) lowers the reference: only the rungs below the byte where old and new reference
// differ are merged into one bucket, not the whole queue.
//
// Entries about to be popped are announced to a `soon(entry)` callback (the event queue
// prefetches their slots): the first kAhead entries of a new bottom, then after each pop the one
// that pops kAhead pops later.

#include <array>
#include <cstddef>
#include <cstdint>

#include "sim/huge_page_allocator.hpp"
#include "sim/units.hpp"

namespace trainsim::sim {

class RadixLadder {
 public:
  struct Entry {
    Time at;
    uint64_t key;
  };

  // Requires e.key greater than every key pushed before.
  void push(Entry e) {
    const uint64_t u = bits(e.at);
    if (u < ref_) [[unlikely]]
      lower_ref(u);
    const size_t b = bucket_of(u);
    // In the window, at or after the bottom's last time and with no older entry of that time in
    // its rung-0 bucket: the end of the bottom is its place (events at the clock, mostly).
    if (b < kDigits && (bottom_.empty() || !(e.at < bottom_.back().at)) && !marked(b))
      bottom_.push_back(e);
    else
      append(b, e);
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // The earliest entry (ties: the smallest key); requires !empty(). May spread buckets down the
  // ladder, which raises the reference to the top's bucket: a later push below that costs a
  // (partial) merge, see lower_ref.
  template <typename Soon>
  const Entry& top(Soon&& soon) {
    const bool bottom_empty = bottom_head_ == bottom_.size();
    if (bottom_empty && (rungs_ & 1) == 0) {
      descend(soon);
    } else if (rungs_ & 1) {
      const size_t b = lowest_bucket(0);
      const Entry& e = arena_[buckets_[b].head];
      if (bottom_empty || e.at < bottom_[bottom_head_].at) {
        cur_ = b;
        return e;
      }
    }
    cur_ = kBottom;
    return bottom_[bottom_head_];
  }
  const Entry& top() {
    return top([](const Entry&) {});
  }
  // Removes top(); requires !empty() and top() called since the last change.
  void pop() {
    if (cur_ != kBottom) {
      pop_front(cur_);
    } else if (++bottom_head_ == bottom_.size()) {
      bottom_.clear();
      bottom_head_ = 0;
    }
    --size_;
  }
  // After pop(): announces the bottom's entry that pops kAhead pops from now, if any (a new
  // bottom announces its first kAhead entries itself).
  template <typename Soon>
  void look_ahead(Soon&& soon) const {
    if (bottom_head_ + kAhead - 1 < bottom_.size()) soon(bottom_[bottom_head_ + kAhead - 1]);
  }

  // Removes every entry for which keep(entry) is false; the order of the rest is unchanged.
  template <typename Keep>
  void filter(Keep keep);
  // Visits every entry (any order).
  template <typename Visit>
  void for_each(Visit visit) const;

 private:
  static constexpr int kRungs = 8;
  static constexpr int kDigits = 256;
  static constexpr size_t kBuckets = size_t{kRungs} * kDigits;
  // A block is 64 slots (1 KiB): slot 0 holds the link to the next block of its chain (or of the
  // free list) in its key, slots 1-63 hold entries. A walk reads the link with the first entries
  // and prefetches the next block a whole block ahead.
  static constexpr int kBlockShift = 6;
  static constexpr uint32_t kBlockMask = (uint32_t{1} << kBlockShift) - 1;
  static constexpr uint32_t kNone = ~uint32_t{0};
  static constexpr size_t kAhead = 16;
  static constexpr size_t kInsertionSortMax = 32;  // bottoms up to this size sort by insertion
  static constexpr size_t kBottom = ~size_t{0};    // cur_: the top is the bottom's

  // A chain of blocks: head and last are arena positions of the first and the last entry; last is
  // kNone when empty.
  struct Bucket {
    uint32_t head = kNone;
    uint32_t last = kNone;
  };

  // Times as unsigned integers in the same order (negative times included).
  static uint64_t bits(Time t) { return static_cast<uint64_t>(t.count_ns()) ^ (uint64_t{1} << 63); }
  static int rung_of(uint64_t diff) { return (63 - __builtin_clzll(diff | 1)) >> 3; }
  size_t bucket_of(uint64_t u) const {
    const int r = rung_of(u ^ ref_);
    return static_cast<size_t>(r) * kDigits + ((u >> (8 * r)) & 0xff);
  }
  size_t lowest_bucket(int rung) const {
    const uint64_t* w = &occupied_[static_cast<size_t>(rung) * 4];
    const size_t base = static_cast<size_t>(rung) * kDigits;
    if (w[0] != 0) return base + static_cast<size_t>(__builtin_ctzll(w[0]));
    if (w[1] != 0) return base + 64 + static_cast<size_t>(__builtin_ctzll(w[1]));
    if (w[2] != 0) return base + 128 + static_cast<size_t>(__builtin_ctzll(w[2]));
    return base + 192 + static_cast<size_t>(__builtin_ctzll(w[3]));
  }
  bool marked(size_t b) const { return (occupied_[b >> 6] >> (b & 63)) & 1; }
  void mark(size_t b) {
    occupied_[b >> 6] |= uint64_t{1} << (b & 63);
    rungs_ |= 1u << (b >> 8);
  }
  void unmark(size_t b) {
    occupied_[b >> 6] &= ~(uint64_t{1} << (b & 63));
    const size_t w = (b >> 8) * 4;
    if ((occupied_[w] | occupied_[w + 1] | occupied_[w + 2] | occupied_[w + 3]) == 0) rungs_ &= ~(1u << (b >> 8));
  }

  uint32_t alloc_block() {
    if (free_block_ == kNone) [[unlikely]]
      return grow();
    const uint32_t blk = free_block_;
    free_block_ = link(blk);
    return blk;
  }
  void free_block(uint32_t blk) {
    set_link(blk, free_block_);
    free_block_ = blk;
  }
  uint32_t link(uint32_t blk) const { return static_cast<uint32_t>(arena_[size_t{blk} << kBlockShift].key); }
  void set_link(uint32_t blk, uint32_t next) { arena_[size_t{blk} << kBlockShift].key = next; }
  static uint32_t first_pos(uint32_t blk) { return (blk << kBlockShift) | 1; }
  // Starts fetching a block that a walk reads next.
  void prefetch_block(uint32_t blk) const {
    const char* p = reinterpret_cast<const char*>(&arena_[size_t{blk} << kBlockShift]);
    for (size_t line = 0; line < (sizeof(Entry) << kBlockShift); line += 64) __builtin_prefetch(p + line);
  }
  void append(size_t b, Entry e) {
    Bucket& bk = buckets_[b];
    if (bk.last == kNone) {
      bk.head = bk.last = first_pos(alloc_block());
      mark(b);
    } else if (((bk.last + 1) & kBlockMask) == 0) {
      const uint32_t blk = alloc_block();
      set_link(bk.last >> kBlockShift, blk);
      bk.last = first_pos(blk);
    } else {
      ++bk.last;
    }
    arena_[bk.last] = e;
  }
  void pop_front(size_t b) {
    Bucket& bk = buckets_[b];
    if (bk.head == bk.last) {
      free_block(bk.head >> kBlockShift);
      bk.head = bk.last = kNone;
      unmark(b);
    } else if (((bk.head + 1) & kBlockMask) == 0) {
      const uint32_t blk = bk.head >> kBlockShift;
      bk.head = first_pos(link(blk));
      free_block(blk);
    } else {
      ++bk.head;
    }
  }
  // Calls f(entry) on a chain's entries in order. take() returns each block to the pool once read
  // (f may append to other buckets, reusing it); visit() leaves the chain as it is.
  template <bool Free, typename Self, typename F>
  static void walk(Self& self, Bucket chain, F f);
  template <typename F>
  void take(Bucket chain, F f) {
    walk<true>(*this, chain, f);
  }
  template <typename F>
  void visit(Bucket chain, F f) const {
    walk<false>(*this, chain, f);
  }

  uint32_t grow();
  // The reference for spreading `chain`, bucket `digit` of rung r: its lower bound; from rung 3 up
  // (wide buckets, rarely spread), the earliest time with the bytes zeroed below which the
  // earliest and latest agree, so that close times skip the rungs between (one time: straight to
  // the bottom) instead of moving down one rung per spread.
  uint64_t spread_reference(Bucket chain, int r, uint64_t digit) const;
  template <typename Soon>
  void descend(Soon& soon);
  void lower_ref(uint64_t u);
  // Sorts bottom_ (in key order, one 256 ns window) by time, stably.
  void sort_bottom();

  BigVector<Entry> arena_;  // blocks of 1 << kBlockShift slots
  uint32_t free_block_ = kNone;
  std::array<Bucket, kBuckets> buckets_{};
  std::array<uint64_t, kBuckets / 64> occupied_{};  // non-empty buckets
  uint32_t rungs_ = 0;                              // rungs with a non-empty bucket
  // Most of rung 0, sorted by (time, key), popped from bottom_head_; scratch_ serves its sort.
  BigVector<Entry> bottom_;
  size_t bottom_head_ = 0;
  BigVector<Entry> scratch_;
  size_t cur_ = kBottom;  // the last top(): kBottom or a rung-0 bucket
  size_t size_ = 0;
  uint64_t ref_ = 0;  // bits() of a lower bound on every entry
};

template <bool Free, typename Self, typename F>
void RadixLadder::walk(Self& self, Bucket chain, F f) {
  uint32_t pos = chain.head;
  for (;;) {
    const uint32_t blk = pos >> kBlockShift;
    const bool last_block = (chain.last >> kBlockShift) == blk;
    const uint32_t next = last_block ? kNone : self.link(blk);
    if (!last_block) self.prefetch_block(next);
    const uint32_t end = last_block ? chain.last + 1 : (blk + 1) << kBlockShift;
    for (; pos < end; ++pos) f(Entry(self.arena_[pos]));  // a copy: f may write the arena
    if constexpr (Free) self.free_block(blk);
    if (last_block) return;
    pos = first_pos(next);
  }
}

template <typename Soon>
void RadixLadder::descend(Soon& soon) {
  // Rung 0 and the bottom are empty, and size_ > 0. Spread the lowest non-empty bucket of the
  // lowest rung over the (empty) rungs below it, until entries reach rung 0: they go to the
  // bottom. The buckets of higher rungs are unchanged, as the new reference agrees with the old
  // one in every byte above the bucket's rung.
  while (bottom_.empty()) {
    const int r = __builtin_ctz(rungs_);
    const size_t b = lowest_bucket(r);
    const Bucket chain = buckets_[b];
    buckets_[b] = Bucket{};
    unmark(b);
    if (chain.head == chain.last) {
      // One entry, the earliest of all: straight to the bottom, its window the reference.
      const Entry e = arena_[chain.head];
      free_block(chain.head >> kBlockShift);
      ref_ = bits(e.at) & ~uint64_t{0xff};
      bottom_.push_back(e);
      break;
    }
    ref_ = spread_reference(chain, r, b & 0xff);
    take(chain, [&](const Entry& e) {
      const size_t to = bucket_of(bits(e.at));
      if (to < kDigits)
        bottom_.push_back(e);
      else
        append(to, e);
    });
  }
  if (bottom_.size() > 1) sort_bottom();
  for (size_t i = 0; i < kAhead && i < bottom_.size(); ++i) soon(bottom_[i]);
}

template <typename Keep>
void RadixLadder::filter(Keep keep) {
  for (size_t b = 0; b < kBuckets; ++b) {
    Bucket& bk = buckets_[b];
    if (bk.last == kNone) continue;
    // Compact the chain in place: the write position trails the read position along the chain.
    const Bucket chain = bk;
    uint32_t w = kNone;
    visit(chain, [&](const Entry& e) {
      if (!keep(e)) {
        --size_;
        return;
      }
      if (w == kNone) {
        w = chain.head;
      } else if (((w + 1) & kBlockMask) == 0) {
        w = first_pos(link(w >> kBlockShift));
      } else {
        ++w;
      }
      arena_[w] = e;
    });
    // Free the blocks after the one holding the last kept entry (all of them if none is kept).
    uint32_t blk = w == kNone ? chain.head >> kBlockShift : link(w >> kBlockShift);
    const uint32_t last_blk = chain.last >> kBlockShift;
    if (w == kNone || (w >> kBlockShift) != last_blk) {
      for (;;) {
        const bool done = blk == last_blk;
        const uint32_t next = done ? kNone : link(blk);
        free_block(blk);
        if (done) break;
        blk = next;
      }
    }
    if (w == kNone) {
      bk = Bucket{};
      unmark(b);
    } else {
      bk.last = w;
    }
  }
  size_t kept = 0;
  for (size_t i = bottom_head_; i < bottom_.size(); ++i) {
    if (keep(bottom_[i]))
      bottom_[kept++] = bottom_[i];
    else
      --size_;
  }
  bottom_.resize(kept);
  bottom_head_ = 0;
  cur_ = kBottom;
}

template <typename Visit>
void RadixLadder::for_each(Visit visit_entry) const {
  for (size_t i = bottom_head_; i < bottom_.size(); ++i) visit_entry(bottom_[i]);
  for (size_t b = 0; b < kBuckets; ++b)
    if (buckets_[b].last != kNone) visit(buckets_[b], visit_entry);
}

}  // namespace trainsim::sim
