#include "sim/event_queue.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace trainsim::sim {

namespace {
constexpr size_t kArity = 4;  // 4 x 16-byte entries = one 64-byte cache line of children
constexpr int kSlotBits = 24;
constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
constexpr uint64_t kMaxSeq = (uint64_t{1} << (64 - kSlotBits)) - 1;
constexpr size_t kMaxSlots = size_t{1} << kSlotBits;
// Below this many entries the heap stays in L1/L2 and prefetching only costs instructions.
constexpr size_t kPrefetchMinSize = size_t{1} << 13;
// Dead (cancelled) entries are compacted away once they exceed max(live, this).
constexpr size_t kCompactMinDead = 1024;

constexpr uint32_t slot_of(uint64_t key) { return static_cast<uint32_t>(key & kSlotMask); }
constexpr uint64_t seq_of(uint64_t key) { return key >> kSlotBits; }

// (time, seq) order: the earlier time first, FIFO among equal times.
template <typename E>
bool before(const E& a, const E& b) {
  return a.at != b.at ? a.at < b.at : a.key < b.key;
}
}  // namespace

void EventQueue::sift_up(size_t hole, Entry e) {
  Entry* h = heap_.data();
  while (hole > 0) {
    const size_t parent = (hole - 1) / kArity;
    if (!before(e, h[parent])) break;
    h[hole] = h[parent];
    hole = parent;
  }
  h[hole] = e;
}

void EventQueue::sift_down(size_t hole, Entry e) {
  Entry* h = heap_.data();
  const size_t n = heap_.size();
  const bool prefetch = n >= kPrefetchMinSize;
  for (;;) {
    const size_t first = hole * kArity + 1;
    if (first >= n) break;
    if (prefetch) {
      // Start loading the four grandchild groups while this level is compared, so the cache
      // misses of two levels overlap instead of adding up.
      const size_t grand = first * kArity + 1;
      for (size_t k = 0; k < kArity && grand + k * kArity < n; ++k) __builtin_prefetch(h + grand + k * kArity);
    }
    size_t best = first;
    const size_t end = std::min(first + kArity, n);
    for (size_t c = first + 1; c < end; ++c)
      if (before(h[c], h[best])) best = c;
    if (!before(h[best], e)) break;
    h[hole] = h[best];
    hole = best;
  }
  h[hole] = e;
}

EventId EventQueue::push(Time at, Callback cb) {
  TRAINSIM_ASSERT(next_seq_ <= kMaxSeq, "event sequence numbers exhausted after ", kMaxSeq, " events");
  if (heap_.size() - live_ > std::max(live_, kCompactMinDead)) compact();
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    callbacks_[slot] = std::move(cb);
  } else {
    TRAINSIM_ASSERT(callbacks_.size() < kMaxSlots, "more than ", kMaxSlots, " events pending at once");
    slot = static_cast<uint32_t>(callbacks_.size());
    callbacks_.push_back(std::move(cb));
    slot_seq_.push_back(0);
  }
  const uint64_t seq = next_seq_++;
  slot_seq_[slot] = seq;
  const Entry e{at, (seq << kSlotBits) | slot};
  heap_.push_back(e);
  sift_up(heap_.size() - 1, e);
  ++live_;
  return EventId{seq, slot};
}

void EventQueue::cancel(EventId id) {
  if (!is_pending(id)) return;
  slot_seq_[id.slot] = 0;  // the heap entry is skipped (and the slot freed) when popped
  callbacks_[id.slot] = nullptr;
  --live_;
}

bool EventQueue::is_pending(EventId id) const {
  return id.seq != 0 && id.slot < slot_seq_.size() && slot_seq_[id.slot] == id.seq;
}

void EventQueue::remove_top() {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (heap_.empty()) return;
  sift_down(0, last);
  // The next has_next()/pop() reads the new top's slot: start fetching it now.
  const uint32_t slot = slot_of(heap_.front().key);
  __builtin_prefetch(&slot_seq_[slot]);
  __builtin_prefetch(&callbacks_[slot]);
}

void EventQueue::drop_cancelled_top() {
  // Every heap entry live (the common case): no need to look at the top's slot.
  if (heap_.size() == live_) return;
  while (!heap_.empty() && slot_seq_[slot_of(heap_.front().key)] != seq_of(heap_.front().key)) {
    free_slots_.push_back(slot_of(heap_.front().key));
    remove_top();
  }
}

void EventQueue::compact() {
  // Keep the live entries, free the slots of the dead ones, then heapify bottom-up (O(n)).
  // Pop order depends only on the (time, seq) keys, so it is unchanged.
  size_t kept = 0;
  for (const Entry& e : heap_) {
    if (slot_seq_[slot_of(e.key)] == seq_of(e.key))
      heap_[kept++] = e;
    else
      free_slots_.push_back(slot_of(e.key));
  }
  heap_.resize(kept);
  if (kept > 1)
    for (size_t i = (kept - 2) / kArity + 1; i-- > 0;) sift_down(i, heap_[i]);
}

bool EventQueue::has_next() {
  drop_cancelled_top();
  return !heap_.empty();
}

Time EventQueue::next_time() {
  drop_cancelled_top();
  TRAINSIM_ASSERT(!heap_.empty(), "next_time on empty queue");
  return heap_.front().at;
}

Callback EventQueue::pop(Time& at) {
  drop_cancelled_top();
  TRAINSIM_ASSERT(!heap_.empty(), "pop on empty queue");
  const Entry top = heap_.front();
  remove_top();
  const uint32_t slot = slot_of(top.key);
  at = top.at;
  Callback cb = std::move(callbacks_[slot]);
  callbacks_[slot] = nullptr;
  slot_seq_[slot] = 0;
  free_slots_.push_back(slot);
  --live_;
  return cb;
}

}  // namespace trainsim::sim
