// Fused AdamW step over fp32 master weights and moments with bf16 gradients and a bf16 weight
// copy (formula in kernels.hpp; the PyTorch AdamW update). Grid-stride loop over groups of 4
// elements: 16-byte fp32 accesses, 8-byte bf16 accesses; the last n % 4 elements by the first
// threads. Bias corrections are computed once on the host in fp64.

#include <cmath>

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"

namespace trainsim::kernels {
namespace {

constexpr int kThreads = 256;

struct AdamConsts {
  float beta1, beta2, one_minus_beta1, one_minus_beta2;
  float eps;
  float decay;         // 1 - lr * weight_decay
  float step_size;     // lr / (1 - beta1^step)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^step)
};

__device__ __forceinline__ void adam_one(float& p, float& m, float& v, float g, const AdamConsts& c) {
  m = c.beta1 * m + c.one_minus_beta1 * g;
  v = c.beta2 * v + c.one_minus_beta2 * g * g;
  const float denom = sqrtf(v) * c.inv_sqrt_bc2 + c.eps;
  p = p * c.decay - c.step_size * (m / denom);
}

template <int VEC>
__global__ void __launch_bounds__(kThreads)
    adamw_kernel(float* __restrict__ master, float* __restrict__ m, float* __restrict__ v,
                 const bf16* __restrict__ grad, bf16* __restrict__ weight, int64_t n, AdamConsts c) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t nvec = n / VEC;
  for (int64_t i = tid; i < nvec; i += stride) {
    float p[VEC], mm[VEC], vv[VEC], g[VEC];
    detail::load_f32<VEC>(master + i * VEC, p);
    detail::load_f32<VEC>(m + i * VEC, mm);
    detail::load_f32<VEC>(v + i * VEC, vv);
    if constexpr (VEC == 4) {
      const uint2 raw = *reinterpret_cast<const uint2*>(grad + i * VEC);
      g[0] = detail::bf16_lo(raw.x);
      g[1] = detail::bf16_hi(raw.x);
      g[2] = detail::bf16_lo(raw.y);
      g[3] = detail::bf16_hi(raw.y);
    } else {
      g[0] = __bfloat162float(grad[i]);
    }
#pragma unroll
    for (int j = 0; j < VEC; ++j) adam_one(p[j], mm[j], vv[j], g[j], c);
    detail::store_f32<VEC>(master + i * VEC, p);
    detail::store_f32<VEC>(m + i * VEC, mm);
    detail::store_f32<VEC>(v + i * VEC, vv);
    if constexpr (VEC == 4) {
      *reinterpret_cast<uint2*>(weight + i * VEC) =
          make_uint2(detail::pack_bf16x2(p[0], p[1]), detail::pack_bf16x2(p[2], p[3]));
    } else {
      weight[i] = __float2bfloat16(p[0]);
    }
  }
  const int64_t e = nvec * VEC + tid;
  if (VEC > 1 && e < n) {
    float p = master[e], mm = m[e], vv = v[e];
    adam_one(p, mm, vv, __bfloat162float(grad[e]), c);
    master[e] = p;
    m[e] = mm;
    v[e] = vv;
    weight[e] = __float2bfloat16(p);
  }
}

bool aligned8(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 7u) == 0; }

}  // namespace

cudaError_t adamw_step(float* master, float* m, float* v, const bf16* grad, bf16* weight, int64_t n,
                       const AdamParams& params, cudaStream_t stream) {
  if (n < 0 || params.step < 1) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const double bc1 = 1.0 - std::pow(static_cast<double>(params.beta1), params.step);
  const double bc2 = 1.0 - std::pow(static_cast<double>(params.beta2), params.step);
  AdamConsts c{};
  c.beta1 = params.beta1;
  c.beta2 = params.beta2;
  c.one_minus_beta1 = static_cast<float>(1.0 - static_cast<double>(params.beta1));
  c.one_minus_beta2 = static_cast<float>(1.0 - static_cast<double>(params.beta2));
  c.eps = params.eps;
  c.decay = static_cast<float>(1.0 - static_cast<double>(params.lr) * params.weight_decay);
  c.step_size = static_cast<float>(params.lr / bc1);
  c.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  if (detail::aligned16(master) && detail::aligned16(m) && detail::aligned16(v) && aligned8(grad) && aligned8(weight)) {
    adamw_kernel<4>
        <<<detail::grid_for(detail::ceil_div(n, 4), kThreads), kThreads, 0, stream>>>(master, m, v, grad, weight, n, c);
  } else {
    adamw_kernel<1><<<detail::grid_for(n, kThreads), kThreads, 0, stream>>>(master, m, v, grad, weight, n, c);
  }
  return cudaGetLastError();
}

}  // namespace trainsim::kernels
