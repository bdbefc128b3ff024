// Rotary position embedding, rotate-half convention, forward and backward (formulas in
// kernels.hpp). A thread owns (token, a chunk of VEC rotation pairs): it computes cos/sin for its
// pairs once and applies them to every head of the token. inv_freq = theta^(-2i/d) is tabulated
// per block in fp64; the angle pos * inv_freq and its reduction to [-pi, pi] are fp64 too (exact
// at positions of 10^5 and more), then __sincosf in fp32 on the reduced angle.

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/ptx.cuh"

namespace trainsim::kernels {
namespace {

using detail::store_f;

constexpr int kThreads = 256;

constexpr int kHeadsPerStep = 4;  // heads loaded before any is stored: more bytes in flight

// x and y may be the same tensor (in place): no __restrict__; every element is read by the thread
// that writes it, before it writes it. Dynamic shared memory: head_dim/2 doubles (inv_freq).
template <int VEC, bool kBackward>
__global__ void __launch_bounds__(kThreads)
    rope_kernel(const bf16* x, bf16* y, int64_t tokens, int seq, int heads, int head_dim, double log2_theta) {
  const int half = head_dim / 2;
  double* inv_freq = reinterpret_cast<double*>(detail::dynamic_smem());
  for (int i = threadIdx.x; i < half; i += blockDim.x) inv_freq[i] = exp2(-(2.0 * i / head_dim) * log2_theta);
  __syncthreads();

  const int chunks = half / VEC;
  const int64_t work = tokens * chunks;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < work; idx += stride) {
    const int64_t t = idx / chunks;
    const int c = static_cast<int>(idx - t * chunks);
    const double pos = static_cast<double>(t % seq);
    float cs[VEC], sn[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      constexpr double kTwoPi = 6.283185307179586476925286766559;
      double a = pos * inv_freq[c * VEC + j];
      a -= kTwoPi * rint(a * (1.0 / kTwoPi));
      __sincosf(static_cast<float>(a), &sn[j], &cs[j]);  // |a| <= pi: abs. error ~1e-6
      if (kBackward) sn[j] = -sn[j];                     // the transpose of a rotation is the rotation by -a
    }
    for (int h0 = 0; h0 < heads; h0 += kHeadsPerStep) {
      detail::Pack<VEC> x1[kHeadsPerStep], x2[kHeadsPerStep];
#pragma unroll
      for (int k = 0; k < kHeadsPerStep; ++k) {
        if (h0 + k < heads) {
          const int64_t base = (t * heads + h0 + k) * head_dim + static_cast<int64_t>(c) * VEC;
          x1[k] = detail::load_pack<VEC>(x + base);
          x2[k] = detail::load_pack<VEC>(x + base + half);
        }
      }
#pragma unroll
      for (int k = 0; k < kHeadsPerStep; ++k) {
        if (h0 + k < heads) {
          const int64_t base = (t * heads + h0 + k) * head_dim + static_cast<int64_t>(c) * VEC;
          float f1[VEC], f2[VEC], o1[VEC], o2[VEC];
          detail::unpack<VEC>(x1[k], f1);
          detail::unpack<VEC>(x2[k], f2);
#pragma unroll
          for (int j = 0; j < VEC; ++j) {
            o1[j] = f1[j] * cs[j] - f2[j] * sn[j];
            o2[j] = f2[j] * cs[j] + f1[j] * sn[j];
          }
          store_f<VEC>(y + base, o1);
          store_f<VEC>(y + base + half, o2);
        }
      }
    }
  }
}

template <bool kBackward>
cudaError_t launch(const bf16* x, bf16* y, int64_t tokens, int seq, int heads, int head_dim, float theta,
                   cudaStream_t stream) {
  if (tokens < 0 || seq <= 0 || heads <= 0 || head_dim <= 0 || head_dim % 2 != 0 || !(theta > 1.0f)) {
    return cudaErrorInvalidValue;
  }
  if (tokens == 0) return cudaSuccess;
  const double log2_theta = log2(static_cast<double>(theta));
  const int half = head_dim / 2;
  const size_t smem = static_cast<size_t>(half) * sizeof(double);
  if (smem > 48 * 1024) return cudaErrorInvalidValue;
  if (half % 8 == 0 && detail::aligned16(x) && detail::aligned16(y)) {
    const int64_t work = tokens * (half / 8);
    rope_kernel<8, kBackward>
        <<<detail::grid_for(work, kThreads), kThreads, smem, stream>>>(x, y, tokens, seq, heads, head_dim, log2_theta);
  } else {
    const int64_t work = tokens * half;
    rope_kernel<1, kBackward>
        <<<detail::grid_for(work, kThreads), kThreads, smem, stream>>>(x, y, tokens, seq, heads, head_dim, log2_theta);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t rope_fwd(const bf16* x, bf16* y, int64_t tokens, int seq, int heads, int head_dim, float theta,
                     cudaStream_t stream) {
  return launch<false>(x, y, tokens, seq, heads, head_dim, theta, stream);
}

cudaError_t rope_bwd(const bf16* dy, bf16* dx, int64_t tokens, int seq, int heads, int head_dim, float theta,
                     cudaStream_t stream) {
  return launch<true>(dy, dx, tokens, seq, heads, head_dim, theta, stream);
}

}  // namespace trainsim::kernels
