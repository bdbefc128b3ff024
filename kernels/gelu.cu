// Tanh-approximation GeLU forward and backward over a flat array (formulas in kernels.hpp).
// Grid-stride loop over 16-byte vectors, the last n % 8 elements by the first threads.

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"

namespace trainsim::kernels {
namespace {

using detail::load_f;
using detail::store_f;

constexpr int kThreads = 256;
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCoeff = 0.044715f;

__device__ __forceinline__ float gelu(float x) {
  const float t = tanhf(kSqrt2OverPi * (x + kCoeff * x * x * x));
  return 0.5f * x * (1.0f + t);
}

__device__ __forceinline__ float gelu_grad(float x) {
  const float t = tanhf(kSqrt2OverPi * (x + kCoeff * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kCoeff * x * x);
}

template <int VEC>
__global__ void __launch_bounds__(kThreads)
    gelu_fwd_kernel(const bf16* __restrict__ x, bf16* __restrict__ y, int64_t n) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t nvec = n / VEC;
  for (int64_t i = tid; i < nvec; i += stride) {
    float f[VEC];
    load_f<VEC>(x + i * VEC, f);
#pragma unroll
    for (int j = 0; j < VEC; ++j) f[j] = gelu(f[j]);
    store_f<VEC>(y + i * VEC, f);
  }
  const int64_t e = nvec * VEC + tid;
  if (VEC > 1 && e < n) y[e] = __float2bfloat16(gelu(__bfloat162float(x[e])));
}

template <int VEC>
__global__ void __launch_bounds__(kThreads)
    gelu_bwd_kernel(const bf16* __restrict__ dy, const bf16* __restrict__ x, bf16* __restrict__ dx, int64_t n) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t nvec = n / VEC;
  for (int64_t i = tid; i < nvec; i += stride) {
    float fd[VEC], fx[VEC];
    load_f<VEC>(dy + i * VEC, fd);
    load_f<VEC>(x + i * VEC, fx);
#pragma unroll
    for (int j = 0; j < VEC; ++j) fd[j] *= gelu_grad(fx[j]);
    store_f<VEC>(dx + i * VEC, fd);
  }
  const int64_t e = nvec * VEC + tid;
  if (VEC > 1 && e < n) dx[e] = __float2bfloat16(__bfloat162float(dy[e]) * gelu_grad(__bfloat162float(x[e])));
}

}  // namespace

cudaError_t gelu_fwd(const bf16* x, bf16* y, int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (detail::aligned16(x) && detail::aligned16(y)) {
    gelu_fwd_kernel<8><<<detail::grid_for(detail::ceil_div(n, 8), kThreads), kThreads, 0, stream>>>(x, y, n);
  } else {
    gelu_fwd_kernel<1><<<detail::grid_for(n, kThreads), kThreads, 0, stream>>>(x, y, n);
  }
  return cudaGetLastError();
}

cudaError_t gelu_bwd(const bf16* dy, const bf16* x, bf16* dx, int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (detail::aligned16(dy) && detail::aligned16(x) && detail::aligned16(dx)) {
    gelu_bwd_kernel<8><<<detail::grid_for(detail::ceil_div(n, 8), kThreads), kThreads, 0, stream>>>(dy, x, dx, n);
  } else {
    gelu_bwd_kernel<1><<<detail::grid_for(n, kThreads), kThreads, 0, stream>>>(dy, x, dx, n);
  }
  return cudaGetLastError();
}

}  // namespace trainsim::kernels
