#pragma once
// The 128-byte swizzled shared-memory layout of the wgmma attention kernels (attention_wgmma.cu)
// and the start offsets and strides of the descriptors that read it: plain integer math, so the
// host test tests/unit/kernels/sw128_layout_test.cpp can check every operand the kernels describe
// against the PTX ISA's canonical layouts without a GPU.
//
// A [ROWS x COLS] bf16 tile is stored as COLS / 64 spans, each ROWS rows of 128 bytes (64
// elements), span s at s * ROWS * 128 bytes; the 16-byte chunk c of row r sits at chunk
// c ^ (r % 8) of the row (address bits 4-6 XOR bits 7-9, with every span 1024-byte aligned).
// A wgmma k-step is 16 elements of K:
// - K-major operand (the tile's rows are M or N, K runs along the row): rows row0.., step kk is
//   span kk / 4, 32 bytes per step inside it; LBO unused (16), SBO 1024 between 8-row blocks.
// - MN-major operand (the tile's rows are K, M or N runs along the row): step kk is rows
//   16 kk.., span s holds M or N columns 64 s..; LBO = the span stride, SBO 1024.

#include <cstdint>

#if defined(__CUDACC__)
#define TRAINSIM_SW128_FN __host__ __device__ constexpr
#else
#define TRAINSIM_SW128_FN constexpr
#endif

namespace trainsim::kernels::sw128 {

constexpr uint32_t kRowBytes = 128;    // one span row: 64 bf16
constexpr uint32_t kSbo = 1024;        // 8 rows of 128 bytes
constexpr uint32_t kKMajorLbo = 16;    // unused by the hardware for swizzled K-major operands
constexpr uint32_t kKStepBytes = 32;   // 16 bf16 of K inside a span (K-major)
constexpr uint32_t kKStepRowsMn = 16;  // 16 rows of K (MN-major)

// Byte offset of 16-byte chunk c (of COLS / 8) of row r.
template <int ROWS>
TRAINSIM_SW128_FN uint32_t chunk(int r, int c) {
  return static_cast<uint32_t>((c >> 3) * ROWS * kRowBytes + r * kRowBytes + (((c & 7) ^ (r & 7)) << 4));
}

// Byte offset of bf16 element (r, col).
template <int ROWS>
TRAINSIM_SW128_FN uint32_t element(int r, int col) {
  return chunk<ROWS>(r, col >> 3) + static_cast<uint32_t>((col & 7) * 2);
}

// Start of a K-major operand whose rows begin at row0, at k-step kk.
template <int ROWS>
TRAINSIM_SW128_FN uint32_t kmajor_start(int row0, int kk) {
  return static_cast<uint32_t>((kk / 4) * ROWS * kRowBytes + row0 * kRowBytes + (kk % 4) * kKStepBytes);
}

// Start of an MN-major operand at K row k_row0 (16 kk for step kk), columns from span `span`.
template <int ROWS>
TRAINSIM_SW128_FN uint32_t mnmajor_start(int k_row0, int span) {
  return static_cast<uint32_t>(span * ROWS * kRowBytes + k_row0 * kRowBytes);
}

// LBO of an MN-major operand: the stride between its 64-column spans.
template <int ROWS>
TRAINSIM_SW128_FN uint32_t mnmajor_lbo() {
  return static_cast<uint32_t>(ROWS * kRowBytes);
}

}  // namespace trainsim::kernels::sw128

#undef TRAINSIM_SW128_FN
