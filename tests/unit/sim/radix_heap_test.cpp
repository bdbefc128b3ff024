// Unit tests for sim/radix_heap: (time, key) order, monotone and non-monotone pushes, filter.
// The event queue's ordering tests (event_queue_test.cpp) run over it as well, through EventQueue.

#include "sim/radix_heap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace trainsim::sim {
namespace {

using Entry = RadixHeap::Entry;

std::vector<std::pair<int64_t, uint64_t>> drain(RadixHeap& h) {
  std::vector<std::pair<int64_t, uint64_t>> out;
  while (!h.empty()) {
    const Entry e = h.top();
    out.emplace_back(e.at.count_ns(), e.key);
    h.pop();
  }
  return out;
}

TEST(RadixHeapTest, PopsByTimeThenKey) {
  RadixHeap h;
  h.push({Time::ns(30), 1});
  h.push({Time::ns(10), 2});
  h.push({Time::ns(20), 3});
  h.push({Time::ns(10), 4});
  h.push({Time::ns(10), 5});
  EXPECT_EQ(h.size(), 5u);
  EXPECT_EQ(drain(h), (std::vector<std::pair<int64_t, uint64_t>>{{10, 2}, {10, 4}, {10, 5}, {20, 3}, {30, 1}}));
}

TEST(RadixHeapTest, NegativeAndExtremeTimesKeepTheirOrder) {
  RadixHeap h;
  h.push({Time::infinite(), 1});
  h.push({Time::ns(-5), 2});
  h.push({Time::ns(0), 3});
  h.push({Time::ns(std::numeric_limits<int64_t>::min()), 4});
  EXPECT_EQ(drain(h),
            (std::vector<std::pair<int64_t, uint64_t>>{
                {std::numeric_limits<int64_t>::min(), 4}, {-5, 2}, {0, 3}, {Time::infinite().count_ns(), 1}}));
}

// A hold model against std::set: pop the minimum, push at or after it (many ties), and now and
// then push below the last popped time, which the heap handles by rebuilding.
TEST(RadixHeapTest, RandomOperationsMatchReferenceModel) {
  std::mt19937_64 gen(7);
  RadixHeap h;
  std::set<std::pair<int64_t, uint64_t>> model;
  uint64_t key = 0;
  int64_t now = 0;
  for (int k = 0; k < 2000; ++k) {
    const int64_t t = static_cast<int64_t>(gen() % 1000);
    h.push({Time::ns(t), ++key});
    model.emplace(t, key);
  }
  for (int step = 0; step < 200'000; ++step) {
    const uint64_t r = gen() % 100;
    if (r < 48 && !model.empty()) {
      ASSERT_EQ(h.top().at.count_ns(), model.begin()->first);
      ASSERT_EQ(h.top().key, model.begin()->second);
      now = model.begin()->first;
      h.pop();
      model.erase(model.begin());
    } else {
      // Mostly at or after the clock (ties included), sometimes before it.
      const int64_t t = r == 99 ? now - static_cast<int64_t>(gen() % 50) : now + static_cast<int64_t>(gen() % 64);
      h.push({Time::ns(t), ++key});
      model.emplace(t, key);
    }
    ASSERT_EQ(h.size(), model.size());
  }
  std::vector<std::pair<int64_t, uint64_t>> rest(model.begin(), model.end());
  EXPECT_EQ(drain(h), rest);
}

TEST(RadixHeapTest, FilterDropsEntriesAndKeepsTheOrder) {
  RadixHeap h;
  std::set<std::pair<int64_t, uint64_t>> model;
  for (uint64_t k = 1; k <= 1000; ++k) {
    const auto t = static_cast<int64_t>((k * 7919) % 101);
    h.push({Time::ns(t), k});
    model.emplace(t, k);
  }
  // Pop a few first, so that filter also sees a partly consumed bucket 0.
  for (int i = 0; i < 15; ++i) {
    h.top();
    h.pop();
    model.erase(model.begin());
  }
  h.filter([](const Entry& e) { return e.key % 3 == 0; });
  std::erase_if(model, [](const auto& m) { return m.second % 3 != 0; });
  EXPECT_EQ(h.size(), model.size());
  std::vector<std::pair<int64_t, uint64_t>> rest(model.begin(), model.end());
  EXPECT_EQ(drain(h), rest);
}

}  // namespace
}  // namespace trainsim::sim
