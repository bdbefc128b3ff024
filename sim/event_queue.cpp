#include "sim/event_queue.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace trainsim::sim {

namespace {
constexpr int kSlotBits = 24;
constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
constexpr uint64_t kMaxSeq = (uint64_t{1} << (64 - kSlotBits)) - 1;
constexpr size_t kMaxSlots = size_t{1} << kSlotBits;
// Dead (cancelled) entries are compacted away once they exceed max(live, this).
constexpr size_t kCompactMinDead = 1024;

constexpr uint32_t slot_of(uint64_t key) { return static_cast<uint32_t>(key & kSlotMask); }
constexpr uint64_t seq_of(uint64_t key) { return key >> kSlotBits; }
}  // namespace

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
  heap_.push(Entry{at, (seq << kSlotBits) | slot});
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

void EventQueue::drop_cancelled_top() {
  // Every heap entry live (the common case): no need to look at the top's slot.
  if (heap_.size() == live_) return;
  while (!heap_.empty()) {
    const uint64_t key = heap_.top().key;
    if (slot_seq_[slot_of(key)] == seq_of(key)) return;
    free_slots_.push_back(slot_of(key));
    heap_.pop();
  }
}

void EventQueue::compact() {
  // Drop the dead entries and free their slots. Pop order depends only on the (time, seq) keys,
  // so it is unchanged.
  heap_.filter([&](const Entry& e) {
    if (slot_seq_[slot_of(e.key)] == seq_of(e.key)) return true;
    free_slots_.push_back(slot_of(e.key));
    return false;
  });
}

bool EventQueue::has_next() {
  drop_cancelled_top();
  return !heap_.empty();
}

Time EventQueue::next_time() {
  drop_cancelled_top();
  TRAINSIM_ASSERT(!heap_.empty(), "next_time on empty queue");
  return heap_.top().at;
}

Callback EventQueue::pop(Time& at) {
  drop_cancelled_top();
  TRAINSIM_ASSERT(!heap_.empty(), "pop on empty queue");
  const Entry top = heap_.top();
  heap_.pop();
  // The next pop reads the new top's slot, which is cold by now: start fetching it, so that the
  // miss overlaps with this event's callback. Only when the top is known without a refill: a
  // refill would make the next time the reference, and this callback may schedule before it.
  if (const Entry* next = heap_.ready_top()) {
    __builtin_prefetch(&slot_seq_[slot_of(next->key)]);
    __builtin_prefetch(&callbacks_[slot_of(next->key)]);
  }
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
