// Rotary position embedding, rotate-half convention, forward and backward (formulas in
// kernels.hpp). A thread owns (token, a chunk of VEC rotation pairs): it computes cos/sin for its
// pairs once and applies them to every head of the token. inv_freq = theta^(-2i/d) is tabulated
// on the host in fp64 and passed as a kernel parameter; the angle pos * inv_freq and its
// reduction to [-pi, pi] are fp64 too (exact at positions of 10^5 and more), then __sincosf in
// fp32 on the reduced angle.

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/ptx.cuh"

namespace trainsim::kernels {
namespace {

using detail::store_f;

constexpr int kThreads = 256;

constexpr int kHeadsPerStep = 8;  // heads loaded before any is stored: more bytes in flight
constexpr int kMaxHalf = 256;     // head_dim <= 512: the inverse-frequency table is a kernel parameter

// inv_freq[i] = theta^(-2i/d) in fp64, tabulated on the host and passed by value, so no block
// computes it (fp64 exp2) or waits at a barrier before its first loads (version 5).
struct InvFreq {
  double v[kMaxHalf];
};

// Up to two tensors rotated by the same angles in one launch (q and k: rope_qk_*): heads
// [0, heads1) of a token are tensor 1's, [heads1, heads1 + heads2) tensor 2's.
struct Tensors {
  const bf16* x1;
  bf16* y1;
  int heads1;
  const bf16* x2;
  bf16* y2;
  int heads2;
};

// x and y may be the same tensor (in place): no __restrict__; every element is read by the thread
// that writes it, before it writes it. Each step's loads are issued before the angles are
// computed, so the fp64 angle reduction overlaps the first loads' latency.
template <int VEC, bool kBackward>
__global__ void __launch_bounds__(kThreads)
    rope_kernel(Tensors ts, int64_t tokens, int seq, int head_dim, const __grid_constant__ InvFreq inv_freq) {
  const int half = head_dim / 2;
  const int chunks = half / VEC;
  const int heads = ts.heads1 + ts.heads2;
  const int64_t work = tokens * chunks;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < work; idx += stride) {
    const int64_t t = idx / chunks;
    const int c = static_cast<int>(idx - t * chunks);
    const int64_t col = static_cast<int64_t>(c) * VEC;
    // Element offset of head h of this token and chunk, in its own tensor.
    auto offset = [&](int h) {
      const bool first = h < ts.heads1;
      const int hh = first ? h : h - ts.heads1;
      const int nh = first ? ts.heads1 : ts.heads2;
      return (t * nh + hh) * head_dim + col;
    };
    detail::Pack<VEC> x1[kHeadsPerStep], x2[kHeadsPerStep];
    auto load_step = [&](int h0) {
#pragma unroll
      for (int k = 0; k < kHeadsPerStep; ++k) {
        if (h0 + k < heads) {
          const bf16* src = (h0 + k < ts.heads1 ? ts.x1 : ts.x2) + offset(h0 + k);
          x1[k] = detail::load_pack<VEC>(src);
          x2[k] = detail::load_pack<VEC>(src + half);
        }
      }
    };
    load_step(0);
    const double pos = static_cast<double>(t % seq);
    float cs[VEC], sn[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      constexpr double kTwoPi = 6.283185307179586476925286766559;
      double a = pos * inv_freq.v[c * VEC + j];
      a -= kTwoPi * rint(a * (1.0 / kTwoPi));
      __sincosf(static_cast<float>(a), &sn[j], &cs[j]);  // |a| <= pi: abs. error ~1e-6
      if (kBackward) sn[j] = -sn[j];                     // the transpose of a rotation is the rotation by -a
    }
    for (int h0 = 0;;) {
#pragma unroll
      for (int k = 0; k < kHeadsPerStep; ++k) {
        if (h0 + k < heads) {
          bf16* dst = (h0 + k < ts.heads1 ? ts.y1 : ts.y2) + offset(h0 + k);
          float f1[VEC], f2[VEC], o1[VEC], o2[VEC];
          detail::unpack<VEC>(x1[k], f1);
          detail::unpack<VEC>(x2[k], f2);
#pragma unroll
          for (int j = 0; j < VEC; ++j) {
            o1[j] = f1[j] * cs[j] - f2[j] * sn[j];
            o2[j] = f2[j] * cs[j] + f1[j] * sn[j];
          }
          store_f<VEC>(dst, o1);
          store_f<VEC>(dst + half, o2);
        }
      }
      h0 += kHeadsPerStep;
      if (h0 >= heads) break;
      load_step(h0);
    }
  }
}

template <bool kBackward>
cudaError_t launch(const Tensors& ts, int64_t tokens, int seq, int head_dim, float theta, cudaStream_t stream) {
  if (tokens < 0 || seq <= 0 || ts.heads1 <= 0 || ts.heads2 < 0 || head_dim <= 0 || head_dim % 2 != 0 ||
      !(theta > 1.0f)) {
    return cudaErrorInvalidValue;
  }
  if (tokens == 0) return cudaSuccess;
  const int half = head_dim / 2;
  if (half > kMaxHalf) return cudaErrorInvalidValue;
  const double log2_theta = log2(static_cast<double>(theta));
  InvFreq inv_freq{};
  for (int i = 0; i < half; ++i) inv_freq.v[i] = exp2(-(2.0 * i / head_dim) * log2_theta);
  const bool aligned = detail::aligned16(ts.x1) && detail::aligned16(ts.y1) &&
                       (ts.heads2 == 0 || (detail::aligned16(ts.x2) && detail::aligned16(ts.y2)));
  if (half % 8 == 0 && aligned) {
    const int64_t work = tokens * (half / 8);
    rope_kernel<8, kBackward>
        <<<detail::grid_for(work, kThreads), kThreads, 0, stream>>>(ts, tokens, seq, head_dim, inv_freq);
  } else {
    const int64_t work = tokens * half;
    rope_kernel<1, kBackward>
        <<<detail::grid_for(work, kThreads), kThreads, 0, stream>>>(ts, tokens, seq, head_dim, inv_freq);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t rope_fwd(const bf16* x, bf16* y, int64_t tokens, int seq, int heads, int head_dim, float theta,
                     cudaStream_t stream) {
  return launch<false>(Tensors{x, y, heads, nullptr, nullptr, 0}, tokens, seq, head_dim, theta, stream);
}

cudaError_t rope_bwd(const bf16* dy, bf16* dx, int64_t tokens, int seq, int heads, int head_dim, float theta,
                     cudaStream_t stream) {
  return launch<true>(Tensors{dy, dx, heads, nullptr, nullptr, 0}, tokens, seq, head_dim, theta, stream);
}

cudaError_t rope_qk_fwd(const bf16* q, bf16* yq, const bf16* k, bf16* yk, int64_t tokens, int seq, int q_heads,
                        int kv_heads, int head_dim, float theta, cudaStream_t stream) {
  if (kv_heads <= 0) return cudaErrorInvalidValue;
  return launch<false>(Tensors{q, yq, q_heads, k, yk, kv_heads}, tokens, seq, head_dim, theta, stream);
}

cudaError_t rope_qk_bwd(const bf16* dyq, bf16* dq, const bf16* dyk, bf16* dk, int64_t tokens, int seq, int q_heads,
                        int kv_heads, int head_dim, float theta, cudaStream_t stream) {
  if (kv_heads <= 0) return cudaErrorInvalidValue;
  return launch<true>(Tensors{dyq, dq, q_heads, dyk, dk, kv_heads}, tokens, seq, head_dim, theta, stream);
}

}  // namespace trainsim::kernels
