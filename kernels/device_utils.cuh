#pragma once
// Device helpers shared by the memory-bound kernels: 16-byte bf16 vector loads and stores (with a
// scalar variant for sizes or pointers that do not allow them), warp and block reductions in fp32,
// and the host-side launch helpers (SM count, alignment tests). Internal to kernels/.

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace trainsim::kernels::detail {

using bf16 = __nv_bfloat16;

constexpr int kWarpSize = 32;

// ---- host side -----------------------------------------------------------------------------

// Number of SMs of the current device (132 on an H100 SXM); 1 if it cannot be queried.
inline int num_sms() {
  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
    return 1;
  }
  return sms;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Threads per block for a row of `nvec` vectors handled `slots` vectors per thread: a multiple of
// 32 in [min_threads, max_threads].
inline int row_block_threads(int64_t nvec, int slots, int min_threads, int max_threads) {
  int64_t t = ceil_div(ceil_div(nvec, slots), kWarpSize) * kWarpSize;
  if (t < min_threads) t = min_threads;
  if (t > max_threads) t = max_threads;
  return static_cast<int>(t);
}

// Blocks for a grid-stride elementwise kernel over `work` items, `threads` per block: enough to
// cover the work once, capped at `waves` full waves of resident blocks on every SM.
inline unsigned grid_for(int64_t work, int threads, int waves = 8) {
  const int64_t needed = ceil_div(work, threads);
  const int64_t cap = static_cast<int64_t>(num_sms()) * (2048 / threads) * waves;
  int64_t g = needed < cap ? needed : cap;
  if (g < 1) g = 1;
  return static_cast<unsigned>(g);
}

#ifndef TRAINSIM_NORM_BWD_INFLIGHT
#define TRAINSIM_NORM_BWD_INFLIGHT 65536
#endif
// Blocks per SM for the norm backwards (rows of `hidden` bf16 dy and x, `depth` rows loaded ahead
// by each block): enough that about TRAINSIM_NORM_BWD_INFLIGHT bytes are in flight per SM, and no
// more (each block adds `hidden` atomics at the end). Measured on H100: 16 KB in flight per SM
// reaches 54% of HBM bandwidth, 32 KB 77-80%.
inline int norm_bwd_blocks_per_sm(int hidden, int depth) {
  const int64_t bytes = 4 * static_cast<int64_t>(hidden) * depth;
  const int64_t b = ceil_div(TRAINSIM_NORM_BWD_INFLIGHT, bytes);
  return static_cast<int>(b < 1 ? 1 : (b > 32 ? 32 : b));
}

// ---- device side ---------------------------------------------------------------------------

// VEC bf16 elements moved as one access: 16 bytes for VEC = 8, 2 bytes for VEC = 1.
template <int VEC>
struct Pack;
template <>
struct Pack<8> {
  uint4 raw;
};
template <>
struct Pack<1> {
  bf16 raw;
};

template <int VEC>
__device__ __forceinline__ Pack<VEC> load_pack(const bf16* p) {
  Pack<VEC> r;
  if constexpr (VEC == 8) {
    r.raw = *reinterpret_cast<const uint4*>(p);
  } else {
    r.raw = *p;
  }
  return r;
}

// bf16 -> fp32 is exact: the bf16 bits are the top half of the fp32 bits.
__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

template <int VEC>
__device__ __forceinline__ void unpack(const Pack<VEC>& pk, float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    const uint32_t words[4] = {pk.raw.x, pk.raw.y, pk.raw.z, pk.raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = bf16_lo(words[i]);
      f[2 * i + 1] = bf16_hi(words[i]);
    }
  } else {
    f[0] = __bfloat162float(pk.raw);
  }
}

template <int VEC>
__device__ __forceinline__ void load_f(const bf16* p, float (&f)[VEC]) {
  unpack<VEC>(load_pack<VEC>(p), f);
}

// A row of `nvec` vectors walked by one block: thread t owns vectors t, t + blockDim, ... The first
// kSlots of them are kept in registers (`cache`); the rest are read again (from L2) on a second
// walk. `visit(i, f)` receives vector i as floats. read_row fills the cache, revisit_row replays it.
template <int VEC, int kSlots, class Visit>
__device__ __forceinline__ void read_row(const bf16* row, int nvec, Pack<VEC> (&cache)[kSlots], Visit&& visit) {
#pragma unroll
  for (int s = 0; s < kSlots; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
    if (i < nvec) {
      cache[s] = load_pack<VEC>(row + static_cast<int64_t>(i) * VEC);
      float f[VEC];
      unpack<VEC>(cache[s], f);
      visit(i, f);
    }
  }
  for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
    float f[VEC];
    load_f<VEC>(row + static_cast<int64_t>(i) * VEC, f);
    visit(i, f);
  }
}

template <int VEC, int kSlots, class Visit>
__device__ __forceinline__ void revisit_row(const bf16* row, int nvec, const Pack<VEC> (&cache)[kSlots],
                                            Visit&& visit) {
#pragma unroll
  for (int s = 0; s < kSlots; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
    if (i < nvec) {
      float f[VEC];
      unpack<VEC>(cache[s], f);
      visit(i, f);
    }
  }
  for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
    float f[VEC];
    load_f<VEC>(row + static_cast<int64_t>(i) * VEC, f);
    visit(i, f);
  }
}

// Two floats to one bf16x2 word, round to nearest even (lo = lower address / lower column).
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162_raw r = __floats2bfloat162_rn(lo, hi);
  return static_cast<uint32_t>(r.x) | (static_cast<uint32_t>(r.y) << 16);
}

template <int VEC>
__device__ __forceinline__ void store_f(bf16* p, const float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    *reinterpret_cast<uint4*>(p) =
        make_uint4(pack_bf16x2(f[0], f[1]), pack_bf16x2(f[2], f[3]), pack_bf16x2(f[4], f[5]), pack_bf16x2(f[6], f[7]));
  } else {
    *p = __float2bfloat16(f[0]);
  }
}

// fp32 vectors of 4 (16 bytes) or 1.
template <int VEC>
__device__ __forceinline__ void load_f32(const float* p, float (&f)[VEC]) {
  if constexpr (VEC == 4) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    f[0] = v.x;
    f[1] = v.y;
    f[2] = v.z;
    f[3] = v.w;
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) f[i] = p[i];
  }
}

template <int VEC>
__device__ __forceinline__ void store_f32(float* p, const float (&f)[VEC]) {
  if constexpr (VEC == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(f[0], f[1], f[2], f[3]);
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) p[i] = f[i];
  }
}

// dst[j] += v[j] for j < VEC, fp32 atomics (VEC = 8: two float4 atomics on sm_90, dst 16-byte
// aligned; one per element elsewhere).
template <int VEC>
__device__ __forceinline__ void atomic_add_vec(float* dst, const float (&v)[VEC]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (VEC == 8) {
    atomicAdd(reinterpret_cast<float4*>(dst), make_float4(v[0], v[1], v[2], v[3]));
    atomicAdd(reinterpret_cast<float4*>(dst + 4), make_float4(v[4], v[5], v[6], v[7]));
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) atomicAdd(dst + j, v[j]);
  }
#else
#pragma unroll
  for (int j = 0; j < VEC; ++j) atomicAdd(dst + j, v[j]);
#endif
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over the block; every thread gets the result. blockDim.x must be a multiple of 32 and all
// threads must call it. `scratch` is 32 floats of shared memory; back-to-back calls may reuse it.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int nwarps = blockDim.x / kWarpSize;
  v = warp_sum(v);
  __syncthreads();  // a previous call may still be reading scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < nwarps ? scratch[lane] : 0.0f;
  return warp_sum(v);
}

// Two sums at once (scratch: 64 floats).
__device__ __forceinline__ float2 block_sum2(float2 v, float* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int nwarps = blockDim.x / kWarpSize;
  v.x = warp_sum(v.x);
  v.y = warp_sum(v.y);
  __syncthreads();
  if (lane == 0) {
    scratch[warp] = v.x;
    scratch[32 + warp] = v.y;
  }
  __syncthreads();
  v.x = lane < nwarps ? scratch[lane] : 0.0f;
  v.y = lane < nwarps ? scratch[32 + lane] : 0.0f;
  v.x = warp_sum(v.x);
  v.y = warp_sum(v.y);
  return v;
}

}  // namespace trainsim::kernels::detail
