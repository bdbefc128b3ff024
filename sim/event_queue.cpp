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

// Starts fetching the cache line at p. An asm statement on x86-64: GCC takes a function whose
// only effect is __builtin_prefetch for pure and deletes the calls it does not inline, and it
// did so with the look-ahead of pop more than once.
inline void prefetch_line(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}
}  // namespace

template <typename Order>
EventId BasicEventQueue<Order>::push(Time at, Callback cb) {
  TRAINSIM_ASSERT(next_seq_ <= kMaxSeq, "event sequence numbers exhausted after ", kMaxSeq, " events");
  if (order_.size() - live_ > std::max(live_, kCompactMinDead)) compact();
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot].cb = std::move(cb);
  } else {
    TRAINSIM_ASSERT(slots_.size() < kMaxSlots, "more than ", kMaxSlots, " events pending at once");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(Slot{std::move(cb), 0});
  }
  const uint64_t seq = next_seq_++;
  slots_[slot].seq = seq;
  order_.push(Entry{at, (seq << kSlotBits) | slot});
  ++live_;
  return EventId{seq, slot};
}

template <typename Order>
void BasicEventQueue<Order>::cancel(EventId id) {
  if (!is_pending(id)) return;
  slots_[id.slot].seq = 0;  // the entry is skipped (and the slot freed) when popped
  slots_[id.slot].cb = nullptr;
  --live_;
}

template <typename Order>
bool BasicEventQueue<Order>::is_pending(EventId id) const {
  return id.seq != 0 && id.slot < slots_.size() && slots_[id.slot].seq == id.seq;
}

template <typename Order>
void BasicEventQueue<Order>::prefetch(const Entry& e) const {
  const char* slot = reinterpret_cast<const char*>(&slots_[slot_of(e.key)]);
  prefetch_line(slot);
  prefetch_line(slot + sizeof(Slot) - 1);  // the same line or the next
}

template <typename Order>
void BasicEventQueue<Order>::drop_cancelled_top() {
  // Every entry live (the common case): no need to look at the top's slot.
  if (order_.size() == live_) return;
  const auto soon = [this](const Entry& e) { prefetch(e); };
  while (!order_.empty()) {
    const uint64_t key = order_.top(soon).key;
    if (slots_[slot_of(key)].seq == seq_of(key)) return;
    free_slots_.push_back(slot_of(key));
    order_.pop();
    order_.look_ahead(soon);  // keep the prefetches running ahead of the pops
  }
}

template <typename Order>
void BasicEventQueue<Order>::compact() {
  // Drop the dead entries and free their slots. Pop order depends only on the (time, seq) keys,
  // so it is unchanged.
  order_.filter([&](const Entry& e) {
    if (slots_[slot_of(e.key)].seq == seq_of(e.key)) return true;
    free_slots_.push_back(slot_of(e.key));
    return false;
  });
}

template <typename Order>
bool BasicEventQueue<Order>::has_next() {
  drop_cancelled_top();
  return !order_.empty();
}

template <typename Order>
Time BasicEventQueue<Order>::next_time() {
  drop_cancelled_top();
  TRAINSIM_ASSERT(!order_.empty(), "next_time on empty queue");
  return order_.top([this](const Entry& e) { prefetch(e); }).at;
}

template <typename Order>
Callback BasicEventQueue<Order>::pop(Time& at) {
  drop_cancelled_top();
  TRAINSIM_ASSERT(!order_.empty(), "pop on empty queue");
  const auto soon = [this](const Entry& e) { prefetch(e); };
  const Entry top = order_.top(soon);
  order_.pop();
  // The next pops read their slots, which are cold by now: start fetching them, so that the
  // misses overlap with this event's callback. The order only announces entries it knows without
  // moving others (a look-ahead that spreads would raise its reference above the clock, and this
  // callback may schedule at the clock).
  order_.look_ahead(soon);
  const uint32_t slot = slot_of(top.key);
  at = top.at;
  Callback cb = std::move(slots_[slot].cb);
  slots_[slot].cb = nullptr;
  slots_[slot].seq = 0;
  free_slots_.push_back(slot);
  --live_;
  return cb;
}

template class BasicEventQueue<RadixLadder>;
template class BasicEventQueue<RadixHeap>;

}  // namespace trainsim::sim
