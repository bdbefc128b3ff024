#pragma once
// Explicit (seed, stream) random number streams: no global RNG. Each stochastic component
// draws from engine.rng(stream_id); the same (seed, stream) always gives the same sequence.

#include <cstdint>
#include <random>

namespace trainsim::sim {

class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) : gen_(mix(seed, stream)) {}
  uint64_t next_u64() { return gen_(); }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  std::mt19937_64& generator() { return gen_; }

 private:
  // SplitMix64 finaliser over the pair, so nearby seeds/streams decorrelate.
  static uint64_t mix(uint64_t seed, uint64_t stream) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + stream + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::mt19937_64 gen_;
};

}  // namespace trainsim::sim
