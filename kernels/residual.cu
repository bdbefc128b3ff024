// Residual adds: y = a + b, the fused bias + dropout + residual add, and the dropout backward on
// the same Philox mask (formulas in kernels.hpp, mask in kernels/philox.cuh). 16-byte vectors
// where sizes and alignment allow; one Philox call yields the words of 4 consecutive elements.

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/philox.cuh"

namespace trainsim::kernels {
namespace {

using detail::load_f;
using detail::store_f;

constexpr int kThreads = 256;

// Keep flags of elements e0 .. e0+VEC-1 (e0 a multiple of VEC; VEC is 1 or 8).
template <int VEC>
__device__ __forceinline__ void keep_flags(uint64_t seed, uint64_t e0, uint32_t threshold, bool (&keep)[VEC]) {
  if constexpr (VEC == 8) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const Philox4 w = dropout_words(seed, (e0 >> 2) + half);
#pragma unroll
      for (int j = 0; j < 4; ++j) keep[half * 4 + j] = w.v[j] >= threshold;
    }
  } else {
    keep[0] = dropout_keep(seed, e0, threshold);
  }
}

// y may alias a or b (element i is read before it is written, by the same thread).
template <int VEC>
__global__ void __launch_bounds__(kThreads) residual_add_kernel(const bf16* a, const bf16* b, bf16* y, int64_t n) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t nvec = n / VEC;
  for (int64_t i = tid; i < nvec; i += stride) {
    float fa[VEC], fb[VEC];
    load_f<VEC>(a + i * VEC, fa);
    load_f<VEC>(b + i * VEC, fb);
#pragma unroll
    for (int j = 0; j < VEC; ++j) fa[j] += fb[j];
    store_f<VEC>(y + i * VEC, fa);
  }
  const int64_t e = nvec * VEC + tid;
  if (VEC > 1 && e < n) y[e] = __float2bfloat16(__bfloat162float(a[e]) + __bfloat162float(b[e]));
}

// 2-D grid: blockIdx.x = row, blockIdx.y * blockDim.x + threadIdx.x = vector within the row.
template <int VEC, bool kHasBias>
__global__ void __launch_bounds__(kThreads)
    bias_dropout_residual_kernel(const bf16* __restrict__ x, const bf16* __restrict__ bias,
                                 const bf16* __restrict__ residual, bf16* __restrict__ y, int hidden,
                                 uint32_t threshold, float scale, uint64_t seed) {
  const int i = blockIdx.y * blockDim.x + threadIdx.x;
  if (i >= hidden / VEC) return;
  const int64_t e0 = static_cast<int64_t>(blockIdx.x) * hidden + static_cast<int64_t>(i) * VEC;
  float fx[VEC], fr[VEC];
  load_f<VEC>(x + e0, fx);
  load_f<VEC>(residual + e0, fr);
  if constexpr (kHasBias) {
    float fb[VEC];
    load_f<VEC>(bias + static_cast<int64_t>(i) * VEC, fb);
#pragma unroll
    for (int j = 0; j < VEC; ++j) fx[j] += fb[j];
  }
  if (threshold != 0u) {
    bool keep[VEC];
    keep_flags<VEC>(seed, static_cast<uint64_t>(e0), threshold, keep);
#pragma unroll
    for (int j = 0; j < VEC; ++j) fr[j] += keep[j] ? fx[j] * scale : 0.0f;
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) fr[j] += fx[j];
  }
  store_f<VEC>(y + e0, fr);
}

template <int VEC>
__global__ void __launch_bounds__(kThreads)
    dropout_bwd_kernel(const bf16* __restrict__ dy, bf16* __restrict__ dx, int64_t n, uint32_t threshold, float scale,
                       uint64_t seed) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t nvec = n / VEC;
  for (int64_t i = tid; i < nvec; i += stride) {
    float f[VEC];
    bool keep[VEC];
    load_f<VEC>(dy + i * VEC, f);
    keep_flags<VEC>(seed, static_cast<uint64_t>(i * VEC), threshold, keep);
#pragma unroll
    for (int j = 0; j < VEC; ++j) f[j] = keep[j] ? f[j] * scale : 0.0f;
    store_f<VEC>(dx + i * VEC, f);
  }
  const int64_t e = nvec * VEC + tid;
  if (VEC > 1 && e < n) {
    const float f = __bfloat162float(dy[e]);
    dx[e] = __float2bfloat16(dropout_keep(seed, static_cast<uint64_t>(e), threshold) ? f * scale : 0.0f);
  }
}

template <int VEC>
cudaError_t launch_bias_dropout(const bf16* x, const bf16* bias, const bf16* residual, bf16* y, int64_t rows,
                                int hidden, uint32_t threshold, float scale, uint64_t seed, cudaStream_t stream) {
  const int nvec = hidden / VEC;
  const int64_t blocks = detail::ceil_div(nvec, kThreads);
  const int threads = static_cast<int>(detail::ceil_div(detail::ceil_div(nvec, blocks), 32) * 32);
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(blocks), 1);
  if (bias != nullptr) {
    bias_dropout_residual_kernel<VEC, true>
        <<<grid, threads, 0, stream>>>(x, bias, residual, y, hidden, threshold, scale, seed);
  } else {
    bias_dropout_residual_kernel<VEC, false>
        <<<grid, threads, 0, stream>>>(x, bias, residual, y, hidden, threshold, scale, seed);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t residual_add(const bf16* a, const bf16* b, bf16* y, int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (detail::aligned16(a) && detail::aligned16(b) && detail::aligned16(y)) {
    residual_add_kernel<8><<<detail::grid_for(detail::ceil_div(n, 8), kThreads), kThreads, 0, stream>>>(a, b, y, n);
  } else {
    residual_add_kernel<1><<<detail::grid_for(n, kThreads), kThreads, 0, stream>>>(a, b, y, n);
  }
  return cudaGetLastError();
}

cudaError_t bias_dropout_residual_fwd(const bf16* x, const bf16* bias, const bf16* residual, bf16* y, int64_t rows,
                                      int hidden, float p, uint64_t seed, cudaStream_t stream) {
  if (rows < 0 || rows > 0x7fffffff || hidden <= 0 || !(p >= 0.0f && p < 1.0f)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  const uint32_t threshold = dropout_threshold(p);
  const float scale = 1.0f / (1.0f - p);
  if (hidden % 8 == 0 && detail::aligned16(x) && detail::aligned16(residual) && detail::aligned16(y) &&
      (bias == nullptr || detail::aligned16(bias))) {
    return launch_bias_dropout<8>(x, bias, residual, y, rows, hidden, threshold, scale, seed, stream);
  }
  return launch_bias_dropout<1>(x, bias, residual, y, rows, hidden, threshold, scale, seed, stream);
}

cudaError_t dropout_bwd(const bf16* dy, bf16* dx, int64_t n, float p, uint64_t seed, cudaStream_t stream) {
  if (n < 0 || !(p >= 0.0f && p < 1.0f)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const uint32_t threshold = dropout_threshold(p);
  const float scale = 1.0f / (1.0f - p);
  if (detail::aligned16(dy) && detail::aligned16(dx)) {
    dropout_bwd_kernel<8><<<detail::grid_for(detail::ceil_div(n, 8), kThreads), kThreads, 0, stream>>>(
        dy, dx, n, threshold, scale, seed);
  } else {
    dropout_bwd_kernel<1><<<detail::grid_for(n, kThreads), kThreads, 0, stream>>>(dy, dx, n, threshold, scale, seed);
  }
  return cudaGetLastError();
}

}  // namespace trainsim::kernels
