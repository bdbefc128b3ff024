// Every shared-memory operand the wgmma attention kernels describe (kernels/attention_wgmma.cu)
// reaches the elements the kernels stored: the descriptor's start, LBO and SBO (from
// kernels/sw128_layout.hpp, as the kernels use them) are put through the PTX ISA's canonical
// 128-byte-swizzle layouts ("Asynchronous Warpgroup Level Matrix Shared Memory Layout") and the
// resulting byte addresses compared with where the tile layout puts each element. The hardware
// itself is not modelled beyond that table; docs/kernels.md says what remains to be run on an H100.

#include "kernels/sw128_layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace trainsim::kernels::sw128 {
namespace {

// Tiles start on 1024-byte boundaries; any aligned base must do, so use a nonzero one.
constexpr uint32_t kBase = 3 * 4096;

// The 128-byte swizzle on a shared-memory byte address: bits 4-6 XOR bits 7-9.
uint32_t swizzle(uint32_t a) { return a ^ (((a >> 7) & 7u) << 4); }

// PTX canonical layouts for bf16 (T = 8 elements of 16 bytes), 128-byte swizzle, in bytes:
//   K-major  ((8,m),(T,2k)) : ((8T,SBO),(1,T))     -> row x (M or N), element k of the k-step
//   MN-major ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO)) -> element x along M or N, row k of the k-step
uint32_t kmajor_address(uint32_t start, uint32_t sbo, int x, int k) {
  return swizzle(start + (x % 8) * 128 + (x / 8) * sbo + k * 2);
}
uint32_t mnmajor_address(uint32_t start, uint32_t lbo, uint32_t sbo, int x, int k) {
  return swizzle(start + (x % 64) * 2 + (x / 64) * lbo + (k % 8) * 128 + (k / 8) * sbo);
}

// A K-major operand of `extent` rows (M or N) starting at tile row row0, for every k-step of a
// `cols`-column tile of ROWS rows: element (row0 + x, 16 kk + k).
template <int ROWS>
int kmajor_mismatches(int row0, int extent, int cols) {
  int bad = 0;
  for (int kk = 0; kk < cols / 16; ++kk) {
    const uint32_t start = kBase + kmajor_start<ROWS>(row0, kk);
    for (int x = 0; x < extent; ++x) {
      for (int k = 0; k < 16; ++k) {
        bad += kmajor_address(start, kSbo, x, k) != kBase + element<ROWS>(row0 + x, kk * 16 + k);
      }
    }
  }
  return bad;
}

// An MN-major operand of `extent` columns (M or N) from span `span`, k-steps of 16 rows from
// k_row0 (steps `steps`): element (k_row0 + 16 kk + k, 64 span + x).
template <int ROWS>
int mnmajor_mismatches(int k_row0, int steps, int span, int extent) {
  int bad = 0;
  for (int kk = 0; kk < steps; ++kk) {
    const uint32_t start = kBase + mnmajor_start<ROWS>(k_row0 + kk * 16, span);
    for (int x = 0; x < extent; ++x) {
      for (int k = 0; k < 16; ++k) {
        bad += mnmajor_address(start, mnmajor_lbo<ROWS>(), kSbo, x, k) !=
               kBase + element<ROWS>(k_row0 + kk * 16 + k, span * 64 + x);
      }
    }
  }
  return bad;
}

TEST(Sw128Layout, ChunksOfARowArePermutedWithinTheirSpan) {
  // Row r's 16-byte chunks occupy row r's 128 bytes of their span, each once.
  for (int r = 0; r < 16; ++r) {
    uint32_t seen = 0;
    for (int c = 0; c < 8; ++c) {
      const uint32_t off = chunk<64>(r, c);
      EXPECT_EQ(off / 128, static_cast<uint32_t>(r));
      seen |= 1u << ((off % 128) / 16);
    }
    EXPECT_EQ(seen, 0xffu) << "row " << r;
  }
  EXPECT_EQ(chunk<64>(5, 8), 64u * 128u + chunk<64>(5, 0));  // chunk 8 opens the second span
}

TEST(Sw128Layout, ForwardOperands) {
  for (const int d : {64, 128}) {
    for (const int wg : {0, 1}) {
      // S = Q K^T: A = the warpgroup's 64 rows of the 128-row Q tile, B = the 128-row K tile.
      EXPECT_EQ(kmajor_mismatches<128>(wg * 64, 64, d), 0) << "Q, d " << d << ", warpgroup " << wg;
    }
    EXPECT_EQ(kmajor_mismatches<128>(0, 128, d), 0) << "K, d " << d;
    // O += P V: B = V (128 key rows = 8 k-steps), N = d across d / 64 spans from span 0.
    EXPECT_EQ(mnmajor_mismatches<128>(0, 8, 0, d), 0) << "V, d " << d;
  }
}

TEST(Sw128Layout, BackwardOperands) {
  for (const int d : {64, 128}) {
    for (const int wg : {0, 1}) {
      // S^T = K_g Q^T, dP^T = V_g dO^T: A = 64 rows of the 128-row K / V tile, B = the 64-row
      // Q / dO tile.
      EXPECT_EQ(kmajor_mismatches<128>(wg * 64, 64, d), 0) << "K, V, d " << d << ", warpgroup " << wg;
    }
    EXPECT_EQ(kmajor_mismatches<64>(0, 64, d), 0) << "Q, dO, d " << d;
    // dV += P^T dO, dK += dS^T Q: B = dO / Q (64 query rows = 4 k-steps), N = d.
    EXPECT_EQ(mnmajor_mismatches<64>(0, 4, 0, d), 0) << "dO, Q (N-major), d " << d;
  }
  // dQ = dS K at d 128: A = dS^T (128 kv rows, M = 64 query columns), B = K span g (64 columns).
  EXPECT_EQ(mnmajor_mismatches<128>(0, 8, 0, 64), 0) << "dS^T";
  for (const int wg : {0, 1}) EXPECT_EQ(mnmajor_mismatches<128>(0, 8, wg, 64), 0) << "K span " << wg;
  // At d 64: warpgroup g takes its own 64 kv rows of dS^T and K.
  for (const int wg : {0, 1}) EXPECT_EQ(mnmajor_mismatches<128>(wg * 64, 4, 0, 64), 0) << "rows of " << wg;
}

// The model itself must be able to fail: a descriptor with the K-major and MN-major strides
// swapped, or without the swizzle, reaches the wrong elements.
TEST(Sw128Layout, TheCheckCatchesWrongStrides) {
  int swapped = 0, unswizzled = 0;
  for (int kk = 0; kk < 8; ++kk) {
    const uint32_t start = kBase + mnmajor_start<128>(kk * 16, 0);
    for (int x = 0; x < 128; ++x) {
      for (int k = 0; k < 16; ++k) {
        const uint32_t want = kBase + element<128>(kk * 16 + k, x);
        swapped += mnmajor_address(start, kSbo, mnmajor_lbo<128>(), x, k) != want;
        unswizzled += start + (x % 64) * 2 + (x / 64) * mnmajor_lbo<128>() + (k % 8) * 128 + (k / 8) * kSbo != want;
      }
    }
  }
  EXPECT_GT(swapped, 0);
  EXPECT_GT(unswizzled, 0);
}

}  // namespace
}  // namespace trainsim::kernels::sw128
