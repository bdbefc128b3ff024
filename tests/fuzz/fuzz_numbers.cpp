// Every fuzz target's mutator (docs/robustness.md): a quarter of the mutations set one number of the
// input (a JSON value, a flag's value, a fault's factor) to a value at the edge of what numbers hold:
// zero, tiny and denormal doubles, the smallest slow-down factor and just below it, huge doubles,
// int64's edges. Random byte mutations reach these only by luck, and they are where computed
// durations, sizes and counts leave their integers (reproducers 18 and 19 of the 2026-11-27 run).
// The rest are libFuzzer's own mutations.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "fuzz_numbers.hpp"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 4 == 0) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const size_t numbers = trainsim::fuzz::count_numbers(text);
    if (numbers > 0) {
      const auto& values = trainsim::fuzz::extreme_numbers();
      const std::string out = trainsim::fuzz::replace_number(text, rng() % numbers, values[rng() % values.size()]);
      if (out.size() <= max_size) {
        std::memcpy(data, out.data(), out.size());
        return out.size();
      }
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
