#pragma once
// Event queue ordered by (time, insertion sequence): equal times run FIFO.
// The order lives in 16-byte (time, seq|slot) entries of a radix ladder (sim/radix_ladder): a
// discrete-event engine never schedules before its clock, so an entry's place is the highest
// byte in which its time differs from a reference below every entry, and entries only stream
// down a few rungs of 256 buckets (docs/event-queue.md). Entries that are about to be popped are
// announced by the ladder, and their slots prefetched, so a pop rarely waits on memory for its
// callback. cancel() is O(1): the entry is skipped lazily when it reaches the top, and dead
// entries are compacted away (amortised O(1)) once they outnumber the live ones. The arrays are
// huge-page backed, which saves TLB misses once the queue grows past a few MiB.
//
// BasicEventQueue<RadixHeap> keeps the order used before issue 35 (issue 21's monotone radix
// heap) in the same queue: the benchmark's baseline, tested alongside.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/huge_page_allocator.hpp"
#include "sim/radix_heap.hpp"
#include "sim/radix_ladder.hpp"
#include "sim/units.hpp"

namespace trainsim::sim {

using Callback = std::function<void()>;

// Handle to a scheduled event; value 0 is "no event".
struct EventId {
  uint64_t seq = 0;
  uint32_t slot = 0;
  friend bool operator==(EventId a, EventId b) { return a.seq == b.seq; }
};

// Order: a monotone priority queue of {Time at; uint64_t key} entries popping in (at, key) order
// for increasing keys, with push, empty, size, top(soon), pop, look_ahead(soon), filter(keep).
template <typename Order>
class BasicEventQueue {
 public:
  // Limits: 2^40 events over the queue's life, 2^24 entries (live or cancelled) at once.
  EventId push(Time at, Callback cb);
  // Cancels a pending event; cancelling a fired or unknown event is a no-op.
  void cancel(EventId id);
  bool is_pending(EventId id) const;
  // Removes cancelled entries at the top; true when a live event remains.
  bool has_next();
  Time next_time();  // requires has_next()
  // Pops the earliest live event; requires has_next().
  Callback pop(Time& at);
  size_t size_live() const { return live_; }

 private:
  // An entry's key packs (seq << kSlotBits) | slot: seq is unique and increasing, so (at, key)
  // orders exactly as (at, seq), and keys are pushed in increasing order as Order requires.
  using Entry = typename Order::Entry;
  static_assert(sizeof(Entry) == 16, "queue entries are 16 bytes");
  void drop_cancelled_top();
  void compact();
  // Starts fetching the slot of an entry that is popped soon.
  void prefetch(const Entry& e) const;

  Order order_;
  // Callbacks live in slots recycled through a free list; seq tells live from cancelled. One
  // array of 40-byte slots: a pop touches one or two cache lines, not one in each of two arrays.
  struct Slot {
    Callback cb;
    uint64_t seq = 0;  // seq currently owning the slot (0 = free or cancelled)
  };
  BigVector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  uint64_t next_seq_ = 1;
  size_t live_ = 0;
};

extern template class BasicEventQueue<RadixLadder>;
extern template class BasicEventQueue<RadixHeap>;

using EventQueue = BasicEventQueue<RadixLadder>;
using RadixHeapEventQueue = BasicEventQueue<RadixHeap>;

}  // namespace trainsim::sim
