// Softmax cross-entropy over a large vocabulary, forward and backward fused (formulas in
// kernels.hpp). One block per row. Pass 1 reads the row once (16-byte vectors, cached in
// registers) and keeps an online (max, sum of exp) pair per thread, merged across the block;
// pass 2 writes dlogits = grad_scale * (softmax - onehot) from the cached values. The probability
// matrix never exists. Rows beyond the register cache (vocab > kSlots * 8 * 1024) re-read the
// rest from L2.

#include <cmath>

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"

namespace trainsim::kernels {
namespace {

using detail::load_f;
using detail::load_pack;
using detail::Pack;
using detail::read_row;
using detail::revisit_row;
using detail::store_f;
using detail::unpack;

// Two shapes (version 5). A row of at most kSmallThreads * kSmallSlots vectors (vocab <= 16384,
// the tensor-parallel shards the validator replays) takes a 256-thread block with 8 vectors per
// thread, 4 blocks per SM: 4 rows in flight per SM, so one block's reduction and exp work overlaps
// the others' loads (version 4 ran 2 rows of 512 threads per SM, and HBM idled while both
// reduced). Longer rows keep up to 1024 threads x 4 vectors, so that a row stays mostly in
// registers instead of streaming through an L2 that all the resident rows would overflow.
constexpr int kSmallSlots = 8;
constexpr int kSmallThreads = 256;
constexpr int kSlots = 4;
constexpr int kMaxThreads = 1024;

// Online softmax state: m = running max, s = sum of exp(x - m).
struct MaxSum {
  float m;
  float s;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return MaxSum{m, 0.0f};
  return MaxSum{m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}

template <int VEC>
__device__ __forceinline__ MaxSum update(MaxSum st, const float (&f)[VEC]) {
  float vm = f[0];
#pragma unroll
  for (int j = 1; j < VEC; ++j) vm = fmaxf(vm, f[j]);
  const float m = fmaxf(st.m, vm);
  float s = st.s * __expf(st.m - m);  // st.m = -inf, m finite: exp(-inf) = 0
#pragma unroll
  for (int j = 0; j < VEC; ++j) s += __expf(f[j] - m);
  return MaxSum{m, s};
}

template <int VEC, int kCacheSlots, int kThreads, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    cross_entropy_kernel(const bf16* __restrict__ logits, const int32_t* __restrict__ targets, float* __restrict__ loss,
                         bf16* __restrict__ dlogits, int vocab, float grad_scale) {
  __shared__ float sm_m[32];
  __shared__ float sm_s[32];
  const int64_t row = blockIdx.x;
  const int nvec = vocab / VEC;
  const bf16* lr = logits + row * vocab;
  bf16* dr = dlogits + row * vocab;
  const int target = targets[row];
  const bool ignored = target < 0 || target >= vocab;

  Pack<VEC> cache[kCacheSlots];
  MaxSum st{-INFINITY, 0.0f};
  if (nvec <= kCacheSlots * static_cast<int>(blockDim.x)) {
    // The whole row is in registers: the thread's maximum first, then one exp per element (no
    // running rescale, no exp chained behind each load; version 5).
#pragma unroll
    for (int s = 0; s < kCacheSlots; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) cache[s] = load_pack<VEC>(lr + static_cast<int64_t>(i) * VEC);
    }
    float m = -INFINITY;
#pragma unroll
    for (int s = 0; s < kCacheSlots; ++s) {
      if (threadIdx.x + s * blockDim.x < nvec) {
        float f[VEC];
        unpack<VEC>(cache[s], f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) m = fmaxf(m, f[j]);
      }
    }
    float sum = 0.0f;
    if (m != -INFINITY) {
#pragma unroll
      for (int s = 0; s < kCacheSlots; ++s) {
        if (threadIdx.x + s * blockDim.x < nvec) {
          float f[VEC];
          unpack<VEC>(cache[s], f);
#pragma unroll
          for (int j = 0; j < VEC; ++j) sum += __expf(f[j] - m);
        }
      }
    }
    st = MaxSum{m, sum};
  } else {
    read_row<VEC, kCacheSlots>(lr, nvec, cache, [&](int, const float(&f)[VEC]) { st = update<VEC>(st, f); });
  }
  // Merge across the warp, then across warps.
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const MaxSum other{__shfl_xor_sync(0xffffffffu, st.m, o), __shfl_xor_sync(0xffffffffu, st.s, o)};
    st = merge(st, other);
  }
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) {
    sm_m[warp] = st.m;
    sm_s[warp] = st.s;
  }
  __syncthreads();
  const int nwarps = blockDim.x / 32;
  st = lane < nwarps ? MaxSum{sm_m[lane], sm_s[lane]} : MaxSum{-INFINITY, 0.0f};
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const MaxSum other{__shfl_xor_sync(0xffffffffu, st.m, o), __shfl_xor_sync(0xffffffffu, st.s, o)};
    st = merge(st, other);
  }
  const float lse = st.m + logf(st.s);
  if (ignored && threadIdx.x == 0) loss[row] = 0.0f;

  // The thread that holds logits[target] writes the loss: no dependent load after the reduction.
  const float scale = ignored ? 0.0f : grad_scale;
  auto emit = [&](int i, float(&f)[VEC]) {
    const int c0 = i * VEC;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      if (c0 + j == target) loss[row] = lse - f[j];
      f[j] = scale * (__expf(f[j] - lse) - (c0 + j == target ? 1.0f : 0.0f));
    }
    store_f<VEC>(dr + c0, f);
  };
  revisit_row<VEC, kCacheSlots>(lr, nvec, cache, emit);
}

}  // namespace

cudaError_t cross_entropy_fwd_bwd(const bf16* logits, const int32_t* targets, float* loss, bf16* dlogits, int64_t rows,
                                  int vocab, float grad_scale, cudaStream_t stream) {
  if (rows < 0 || rows > 0x7fffffff || vocab <= 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  const unsigned grid = static_cast<unsigned>(rows);
  if (vocab % 8 == 0 && detail::aligned16(logits) && detail::aligned16(dlogits)) {
    if (vocab / 8 <= kSmallThreads * kSmallSlots) {
      cross_entropy_kernel<8, kSmallSlots, kSmallThreads, 4>
          <<<grid, kSmallThreads, 0, stream>>>(logits, targets, loss, dlogits, vocab, grad_scale);
    } else {
      const int threads = detail::row_block_threads(vocab / 8, kSlots, 128, kMaxThreads);
      cross_entropy_kernel<8, kSlots, kMaxThreads, 1>
          <<<grid, threads, 0, stream>>>(logits, targets, loss, dlogits, vocab, grad_scale);
    }
  } else {
    const int threads = detail::row_block_threads(vocab, kSlots, 128, kMaxThreads);
    cross_entropy_kernel<1, kSlots, kMaxThreads, 1>
        <<<grid, threads, 0, stream>>>(logits, targets, loss, dlogits, vocab, grad_scale);
  }
  return cudaGetLastError();
}

}  // namespace trainsim::kernels
