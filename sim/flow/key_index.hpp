#pragma once
// A map from 64-bit keys to 32-bit values for a set that is filled and then emptied as a whole, as
// the flow network's vacancies of one instant are: open addressing with linear probing in one
// flat array, so neither an insertion nor the clear allocates once the array has grown to the
// busiest instant (a node-based map allocated and freed a node per vacancy). clear() resets only
// the slots it filled.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainsim::sim::flow {

class KeyIndex {
 public:
  static constexpr uint32_t kAbsent = ~0u;

  // The value stored for `key`, or kAbsent.
  uint32_t find(uint64_t key) const {
    if (used_.empty()) return kAbsent;
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const Entry& e = table_[i];
      if (e.value == kAbsent) return kAbsent;
      if (e.key == key) return e.value;
    }
  }
  // Sets `key` to `value` (not kAbsent) and returns the value it had, or kAbsent.
  uint32_t exchange(uint64_t key, uint32_t value) {
    if (2 * (used_.size() + 1) > table_.size()) grow();
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      Entry& e = table_[i];
      if (e.value == kAbsent) {
        e = {key, value};
        used_.push_back(static_cast<uint32_t>(i));
        return kAbsent;
      }
      if (e.key == key) {
        const uint32_t old = e.value;
        e.value = value;
        return old;
      }
    }
  }
  void clear() {
    for (const uint32_t i : used_) table_[i].value = kAbsent;
    used_.clear();
  }
  bool empty() const { return used_.empty(); }

 private:
  struct Entry {
    uint64_t key = 0;
    uint32_t value = kAbsent;
  };
  size_t slot_of(uint64_t key) const {
    // Fibonacci hashing: the high bits of the product, spread over the table.
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_) & mask_;
  }
  void grow() {
    const std::vector<Entry> old = table_.empty() ? std::vector<Entry>{} : collect();
    const size_t size = table_.empty() ? 64 : 2 * table_.size();
    table_.assign(size, Entry{});
    mask_ = size - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(size));
    used_.clear();
    for (const Entry& e : old) exchange(e.key, e.value);
  }
  std::vector<Entry> collect() const {
    std::vector<Entry> out;
    out.reserve(used_.size());
    for (const uint32_t i : used_) out.push_back(table_[i]);
    return out;
  }

  std::vector<Entry> table_;
  std::vector<uint32_t> used_;  // the filled slots, in insertion order
  size_t mask_ = 0;
  unsigned shift_ = 64;
};

}  // namespace trainsim::sim::flow
