#pragma once
// Event queue ordered by (time, insertion sequence): equal times run FIFO.
// The order lives in a monotone radix heap of 16-byte (time, seq|slot) entries (sim/radix_heap):
// a discrete-event engine never schedules before its clock, so entries only stream down a few
// buckets instead of being sifted through a 4-ary heap (on a par at 1K pending, 1.3-2.4x the
// throughput at 1M and with many events at nearby times: docs/event-queue.md). cancel() is O(1): the entry is
// skipped lazily when it reaches the top, and dead entries are compacted away (amortised O(1))
// once they outnumber the live ones. The arrays are huge-page backed, which saves TLB misses
// once the queue grows past a few MiB.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/huge_page_allocator.hpp"
#include "sim/radix_heap.hpp"
#include "sim/units.hpp"

namespace trainsim::sim {

using Callback = std::function<void()>;

// Handle to a scheduled event; value 0 is "no event".
struct EventId {
  uint64_t seq = 0;
  uint32_t slot = 0;
  friend bool operator==(EventId a, EventId b) { return a.seq == b.seq; }
};

class EventQueue {
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
  // orders exactly as (at, seq), and keys are pushed in increasing order as RadixHeap requires.
  using Entry = RadixHeap::Entry;
  static_assert(sizeof(Entry) == 16, "queue entries are 16 bytes");
  void drop_cancelled_top();
  void compact();

  RadixHeap heap_;
  // Callbacks live in slots recycled through a free list; slot_seq_ tells live from cancelled.
  BigVector<Callback> callbacks_;
  BigVector<uint64_t> slot_seq_;  // seq currently owning the slot (0 = free or cancelled)
  std::vector<uint32_t> free_slots_;
  uint64_t next_seq_ = 1;
  size_t live_ = 0;
};

}  // namespace trainsim::sim
