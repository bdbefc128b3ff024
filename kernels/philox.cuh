#pragma once
// Philox-4x32-10 (Salmon et al., SC'11), the counter-based generator cuRAND and PyTorch use, as a
// pure function of (counter, key) callable on host and device, and the dropout mask built on it.
// The dropout kernels and the CPU reference of the checker share this file, so a mask is a
// deterministic function of (seed, element index): the backward regenerates it instead of storing it.

#include <cstdint>

#if defined(__CUDACC__)
#define TRAINSIM_HD __host__ __device__ __forceinline__
#else
#define TRAINSIM_HD inline
#endif

namespace trainsim::kernels {

struct Philox4 {
  uint32_t v[4];
};

TRAINSIM_HD uint32_t philox_mulhi(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}

// Ten rounds of Philox-4x32 on counter c with key k.
TRAINSIM_HD Philox4 philox4x32_10(Philox4 c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = philox_mulhi(kM0, c.v[0]);
    const uint32_t lo0 = kM0 * c.v[0];
    const uint32_t hi1 = philox_mulhi(kM1, c.v[2]);
    const uint32_t lo1 = kM1 * c.v[2];
    c = Philox4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
    k0 += kW0;
    k1 += kW1;
  }
  return c;
}

// Four 32-bit random words for elements 4*block .. 4*block+3 of the stream named by seed.
TRAINSIM_HD Philox4 dropout_words(uint64_t seed, uint64_t block) {
  return philox4x32_10(Philox4{{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u}},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Element e is kept when its word (word e % 4 of dropout_words(seed, e / 4)) is >= threshold.
// threshold = round(p * 2^32), so P(drop) = p to within 2^-32; p = 0 keeps everything.
inline uint32_t dropout_threshold(float p) {
  if (!(p > 0.0f)) return 0u;
  const double t = static_cast<double>(p) * 4294967296.0;
  return t >= 4294967295.0 ? 4294967295u : static_cast<uint32_t>(t);
}

TRAINSIM_HD bool dropout_keep(uint64_t seed, uint64_t e, uint32_t threshold) {
  return dropout_words(seed, e >> 2).v[e & 3] >= threshold;
}

}  // namespace trainsim::kernels
