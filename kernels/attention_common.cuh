#pragma once
// What the two attention implementations share: the mma.sync kernels (attention.cu) and the
// wgmma kernels (attention_wgmma.cu). Their accumulators have the same per-thread layout per
// 8-column block (ptx.cuh, wgmma.cuh): the thread holds columns 2t, 2t+1 (t = lane % 4) of rows
// g and g + 8 (g = lane / 4) of a 16-row slice. The helpers below take an accessor x(nt, e) to
// element e (0, 1) of 8-column block nt of one of those two rows (a "row half"), so each kernel
// keeps its own register arrays. Internal to kernels/.

#include <cmath>
#include <cstdint>

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/ptx.cuh"

namespace trainsim::kernels::detail {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// 2^x with one MUFU.EX2 (flush to zero; -inf -> 0), without exp2f's denormal fix-ups.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Offset of head h of batch b in a [batch, seq, heads, d] tensor (its rows are heads * d apart).
__device__ __forceinline__ int64_t head_offset(int b, int h, int seq, int heads, int d) {
  return (static_cast<int64_t>(b) * seq * heads + h) * d;
}

// Offset of (b, h)'s rows in a [batch, heads, seq] per-row tensor (lse, delta).
__device__ __forceinline__ int64_t row_stats_offset(int b, int h, int seq, int heads) {
  return (static_cast<int64_t>(b) * heads + h) * seq;
}

// Causal mask of one row half: column nt * 8 + e of the tile is masked (-inf) above lim.
template <int NT, class X>
__device__ __forceinline__ void causal_mask_half(X&& x, int lim) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      if (nt * 8 + e > lim) x(nt, e) = -INFINITY;
    }
  }
}

// One step of the online softmax (base 2) for one row half: scales the scores by scale_log2,
// takes the row maximum over the quad, replaces the scores by exp2(score - max), adds their sum
// (this thread's part) to row_sum after rescaling it, and returns the factor the output
// accumulator of the row must be multiplied by (1 when the maximum did not grow).
template <int NT, class X>
__device__ __forceinline__ float online_softmax_half(X&& x, float& row_max, float& row_sum, float scale_log2) {
  float mx = -INFINITY;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float& v = x(nt, e);
      v *= scale_log2;
      mx = fmaxf(mx, v);
    }
  }
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
  const float m_new = fmaxf(row_max, mx);
  const float m_use = m_new == -INFINITY ? 0.0f : m_new;
  const float corr = fast_exp2(row_max - m_use);
  row_max = m_new;
  float sum = 0.0f;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float& v = x(nt, e);
      v = fast_exp2(v - m_use);
      sum += v;
    }
  }
  row_sum = row_sum * corr + sum;  // per-thread partial; reduced over the quad at the end
  return corr;
}

// The end of the forward for one row half: reduces the row sum over the quad, then (for rows
// below S) writes o = acc / sum as bf16 (x(dt, e): block dt of the output accumulator) and, from
// the quad's first lane, lse = (max + log2 sum) ln 2.
template <int DT, class X>
__device__ __forceinline__ void store_output_half(X&& x, float row_max, float row_sum, int row, int S, bf16* orow,
                                                  float* lse_row) {
  float l = row_sum;
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if (row >= S) return;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int dt = 0; dt < DT; ++dt) {
    *reinterpret_cast<uint32_t*>(orow + dt * 8 + (lane & 3) * 2) = pack_bf16x2(x(dt, 0) * inv, x(dt, 1) * inv);
  }
  if ((lane & 3) == 0) *lse_row = (row_max + log2f(l)) * kLn2;
}

// cp.async of the lse and delta values of query rows row0 .. row0 + ROWS - 1 into sL and sDl
// (rows >= S read as 0), by threads 0 .. 2 ROWS - 1 of the block.
template <int ROWS>
__device__ __forceinline__ void load_row_stats(float* sL, float* sDl, const float* lse_rows, const float* delta_rows,
                                               int row0, int S) {
  for (int i = static_cast<int>(threadIdx.x); i < 2 * ROWS; i += static_cast<int>(blockDim.x)) {
    const int r = i % ROWS;
    const int gr = row0 + r;
    const bool ok = gr < S;
    if (i < ROWS) {
      cp_async_4(sL + r, lse_rows + (ok ? gr : 0), ok);
    } else {
      cp_async_4(sDl + r, delta_rows + (ok ? gr : 0), ok);
    }
  }
}

// Adds one 8-column block of a dQ accumulator to fp32 memory with one float4 atomic per thread.
// c0, c1 are row g's columns 2t, 2t+1; c2, c3 row g+8's. Lanes 2c and 2c+1 of a quad swap
// halves: the even lane then holds 4 consecutive columns of row g, the odd lane 4 of row g + 8.
// dst: this thread's destination, row g (even lane) or g + 8 (odd lane), column 4 (t / 2) of
// the block; `valid` false skips the store (rows beyond the sequence), not the shuffles.
__device__ __forceinline__ void atomic_add_block_swapped(float* dst, float c0, float c1, float c2, float c3, bool odd,
                                                         bool valid) {
  // Send what the partner needs: the even lane its row g + 8 pair, the odd lane its row g pair.
  const float r0 = __shfl_xor_sync(0xffffffffu, odd ? c0 : c2, 1);
  const float r1 = __shfl_xor_sync(0xffffffffu, odd ? c1 : c3, 1);
  const float4 val = odd ? make_float4(r0, r1, c2, c3) : make_float4(c0, c1, r0, r1);
  if (valid) atomicAdd(reinterpret_cast<float4*>(dst), val);
}

// Adds a thread's dK and dV row halves (blocks 0 .. DT-1, element pairs (dt, 0..1)) to the fp32
// accumulators at off (this thread's row, column 2t) with float2 atomics.
template <int DT, class XK, class XV>
__device__ __forceinline__ void atomic_add_kv_half(float* dk_acc, float* dv_acc, int64_t off, XK&& dk, XV&& dv) {
#pragma unroll
  for (int dt = 0; dt < DT; ++dt) {
    atomicAdd(reinterpret_cast<float2*>(dk_acc + off + dt * 8), make_float2(dk(dt, 0), dk(dt, 1)));
    atomicAdd(reinterpret_cast<float2*>(dv_acc + off + dt * 8), make_float2(dv(dt, 0), dv(dt, 1)));
  }
}

}  // namespace trainsim::kernels::detail
