// KeyIndex: the flow network's map from a route key to the last vacancy on it at one instant.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>

#include "sim/flow/key_index.hpp"

namespace trainsim::sim::flow {
namespace {

TEST(KeyIndex, ExchangeReturnsThePreviousValueAndFindTheCurrentOne) {
  KeyIndex index;
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.find(42), KeyIndex::kAbsent);
  EXPECT_EQ(index.exchange(42, 7), KeyIndex::kAbsent);
  EXPECT_EQ(index.exchange(42, 9), 7u);
  EXPECT_EQ(index.find(42), 9u);
  EXPECT_EQ(index.find(43), KeyIndex::kAbsent);
  EXPECT_FALSE(index.empty());
  index.clear();
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.find(42), KeyIndex::kAbsent);
  // An empty index answers without looking: fill it again with another key before asking.
  EXPECT_EQ(index.exchange(5, 1), KeyIndex::kAbsent);
  EXPECT_EQ(index.find(42), KeyIndex::kAbsent);
  EXPECT_EQ(index.find(5), 1u);
}

TEST(KeyIndex, AgreesWithAStandardMapThroughGrowthAndClears) {
  // Rounds of up to 5,000 keys (the table grows from 64 slots), keys drawn from a small range so
  // that many repeat, and keys that differ only in their low bits or only in their high bits.
  std::mt19937_64 rng(11);
  KeyIndex index;
  for (int round = 0; round < 6; ++round) {
    std::unordered_map<uint64_t, uint32_t> reference;
    const int n = round == 0 ? 10 : 1000 * round;
    for (int i = 0; i < n; ++i) {
      uint64_t key = rng() % static_cast<uint64_t>(2 * n);
      if (i % 3 == 1) key <<= 40;
      if (i % 3 == 2) key = ~key;
      const auto value = static_cast<uint32_t>(rng() % 1'000'000);
      const auto it = reference.find(key);
      EXPECT_EQ(index.exchange(key, value), it == reference.end() ? KeyIndex::kAbsent : it->second);
      reference[key] = value;
    }
    for (const auto& [key, value] : reference) EXPECT_EQ(index.find(key), value);
    for (int i = 0; i < 100; ++i) {
      const uint64_t key = rng();
      if (!reference.contains(key)) {
        EXPECT_EQ(index.find(key), KeyIndex::kAbsent);
      }
    }
    index.clear();
    const uint64_t other = ~uint64_t{0} - 1;  // drawn keys are below 2n or have bits set above it
    EXPECT_EQ(index.exchange(other, 3), KeyIndex::kAbsent);
    for (const auto& [key, value] : reference) {
      if (key != other) {
        EXPECT_EQ(index.find(key), KeyIndex::kAbsent);
      }
    }
    index.clear();
  }
}

}  // namespace
}  // namespace trainsim::sim::flow
