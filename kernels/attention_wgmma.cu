// Causal attention forward on Hopper's warpgroup MMA (wgmma, sm_90a): the FlashAttention-3 data
// path without its warp specialization. Same formulas, layouts and results as attention.cu's
// mma.sync forward (kernels.hpp); selected with AttentionKernel::kWgmma.
//
// A block of kWarpGroups warpgroups owns kBr = 64 * kWarpGroups query rows of one (batch, q
// head); warpgroup g owns rows 64g..64g+63 and needs no data from the other. Q, and two stages of
// K and V tiles (kBc keys), sit in shared memory in the 128-byte swizzled layout wgmma reads
// (wgmma.cuh), filled by cp.async with the swizzle applied to the destination address. Per key
// tile, each warpgroup:
//   1. S = Q K^T: D/16 wgmma m64n{kBc}k16, A (Q) and B (K) from shared memory, both K-major;
//   2. the causal mask (only on tiles that cross the warp's diagonal) and the online softmax in
//      base 2 on the S accumulators, which are laid out per 8-column block like mma.sync's, so
//      this is the mma.sync kernel's code; the O accumulator is rescaled only when a row
//      maximum of the warp grew;
//   3. O += P V: kBc/16 wgmma m64n{D}k16 with A = P packed to bf16 straight from the S
//      accumulators (registers) and B = V from shared memory read N-major (transposed), so V
//      needs neither ldmatrix nor a transposed copy.
// No ldmatrix at all: the operands go from shared memory to the tensor cores, which is what
// limits the mma.sync kernels (docs/kernels.md, version 3). Blocks run heaviest first.

#include <cmath>

#include "kernels/attention_wgmma.hpp"
#include "kernels/device_utils.cuh"
#include "kernels/ptx.cuh"
#include "kernels/wgmma.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "attention_wgmma.cu is compiled for sm_90a only (kernels/CMakeLists.txt)"
#endif

namespace trainsim::kernels::detail {
namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <int D>
struct WgFwdCfg {
  static constexpr int kWarpGroups = 2;
  static constexpr int kBr = 64 * kWarpGroups;  // query rows per block
  static constexpr int kBc = 128;               // keys per step
  static constexpr int kThreads = 128 * kWarpGroups;
  static constexpr size_t kTileQ = static_cast<size_t>(kBr) * D * sizeof(bf16);
  static constexpr size_t kTileKV = static_cast<size_t>(kBc) * D * sizeof(bf16);
  // Q, 2 stages of K, 2 of V, and slack to align the base to 1024 bytes.
  static constexpr size_t kSmem = kTileQ + 4 * kTileKV + 1024;
  static_assert(kTileQ % 1024 == 0 && kTileKV % 1024 == 0, "tiles keep every swizzle block 1024-byte aligned");
};

// Byte offset of 16-byte chunk c (of D/8) of row r in a [ROWS x D] tile stored as D/64 spans of
// ROWS x 128 bytes, 128-byte swizzled.
template <int ROWS>
__device__ __forceinline__ uint32_t sw128_offset(int r, int c) {
  return static_cast<uint32_t>((c >> 3) * ROWS * 128 + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}

// cp.async of rows row0 .. row0+ROWS-1 (row r at base + r * ld) into a swizzled tile; rows >=
// limit are zero-filled and not read.
template <int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile_sw128(unsigned char* tile, const bf16* base, int64_t ld, int row0,
                                                int limit) {
  constexpr int kChunks = D / 8;
  constexpr int kTotal = ROWS * kChunks;
  static_assert(kTotal % THREADS == 0, "whole chunks per thread");
#pragma unroll
  for (int it = 0; it < kTotal / THREADS; ++it) {
    const int idx = it * THREADS + static_cast<int>(threadIdx.x);
    const int r = idx / kChunks;
    const int c = idx % kChunks;
    const int gr = row0 + r;
    const bool ok = gr < limit;
    cp_async_16(tile + sw128_offset<ROWS>(r, c), base + static_cast<int64_t>(ok ? gr : 0) * ld + c * 8, ok);
  }
}

// S[64 x kBc] = Q[64 x D] K^T for one warpgroup: Q rows at sQ (its first row), K at sK.
template <int D, int kBr, int kBc>
__device__ __forceinline__ void gemm_qk(float (&s)[kBc / 2], const unsigned char* sQ, const unsigned char* sK) {
  static_assert(kBc == 64 || kBc == 128, "wgmma.cuh has n = 64 and 128");
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    // Span kk / 4 of the tile, 32 bytes per 16 columns inside it.
    const uint64_t da = wgmma_desc(sQ + (kk / 4) * kBr * 128 + (kk % 4) * 32, 16, 1024);
    const uint64_t db = wgmma_desc(sK + (kk / 4) * kBc * 128 + (kk % 4) * 32, 16, 1024);
    if constexpr (kBc == 128) {
      wgmma_ss_m64n128k16(s, da, db, kk > 0 ? 1 : 0);
    } else {
      wgmma_ss_m64n64k16(s, da, db, kk > 0 ? 1 : 0);
    }
  }
}

// O[64 x D] += P[64 x kBc] V[kBc x D]; P as A fragments, V read N-major from sV.
template <int D, int kBc>
__device__ __forceinline__ void gemm_pv(float (&o)[D / 2], const uint32_t (&p)[kBc / 16][4], const unsigned char* sV) {
  static_assert(D == 64 || D == 128, "wgmma.cuh has n = 64 and 128");
#pragma unroll
  for (int kk = 0; kk < kBc / 16; ++kk) {
    // 16 key rows of 128 bytes per step; the next 64 columns of V are kBc rows further on.
    const uint64_t db = wgmma_desc(sV + kk * 16 * 128, kBc * 128, 1024);
    if constexpr (D == 128) {
      wgmma_rs_m64n128k16_tb(o, p[kk], db, 1);
    } else {
      wgmma_rs_m64n64k16_tb(o, p[kk], db, 1);
    }
  }
}

template <int D>
__global__ void __launch_bounds__(WgFwdCfg<D>::kThreads, 1)
    attn_fwd_wgmma_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                          bf16* __restrict__ o, float* __restrict__ lse, int batch, int S, int Hq, int Hkv,
                          float scale_log2) {
  using Cfg = WgFwdCfg<D>;
  constexpr int kBr = Cfg::kBr, kBc = Cfg::kBc, kThreads = Cfg::kThreads;
  constexpr int kNT = kBc / 8;  // 8-column blocks of S
  constexpr int kDT = D / 8;    // 8-column blocks of O

  const int n_qt = (S + kBr - 1) / kBr;
  const int bh_count = batch * Hq;
  const int rank = static_cast<int>(blockIdx.x);  // rank 0 is the heaviest tile
  const int qt = n_qt - 1 - rank / bh_count;
  const int bh = rank % bh_count;
  const int b = bh / Hq;
  const int h = bh % Hq;
  const int hk = h / (Hq / Hkv);
  const int q0 = qt * kBr;

  unsigned char* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(dynamic_smem()) + 1023) &
                                                         ~static_cast<uintptr_t>(1023));
  unsigned char* sQ = base;
  unsigned char* sK = sQ + Cfg::kTileQ;       // 2 stages
  unsigned char* sV = sK + 2 * Cfg::kTileKV;  // 2 stages

  const int64_t q_ld = static_cast<int64_t>(Hq) * D;
  const int64_t kv_ld = static_cast<int64_t>(Hkv) * D;
  const bf16* qb = q + (static_cast<int64_t>(b) * S * Hq + h) * D;
  const bf16* kb = k + (static_cast<int64_t>(b) * S * Hkv + hk) * D;
  const bf16* vb = v + (static_cast<int64_t>(b) * S * Hkv + hk) * D;

  const int kv_end = min(S, q0 + kBr);
  const int n_kv = (kv_end + kBc - 1) / kBc;

  load_tile_sw128<D, kBr, kThreads>(sQ, qb, q_ld, q0, S);
  load_tile_sw128<D, kBc, kThreads>(sK, kb, kv_ld, 0, S);
  load_tile_sw128<D, kBc, kThreads>(sV, vb, kv_ld, 0, S);
  cp_async_commit();

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  const int lane = tid % 32;
  const int wrow = wg * 64 + ((tid / 32) % 4) * 16;  // first row of this warp in the block's tile
  const unsigned char* sQ_wg = sQ + wg * 64 * 128;   // 64 rows of 128 bytes into each span

  float acc[D / 2];
  float s[kBc / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) acc[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < kBc / 2; ++i) s[i] = 0.0f;
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};

  for (int j = 0; j < n_kv; ++j) {
    __syncthreads();  // every warpgroup is done with stage (j + 1) & 1
    if (j + 1 < n_kv) {
      const int st = (j + 1) & 1;
      load_tile_sw128<D, kBc, kThreads>(sK + st * Cfg::kTileKV, kb, kv_ld, (j + 1) * kBc, S);
      load_tile_sw128<D, kBc, kThreads>(sV + st * Cfg::kTileKV, vb, kv_ld, (j + 1) * kBc, S);
    }
    cp_async_commit();
    cp_async_wait<1>();        // tile j (and Q) landed for this thread ...
    fence_proxy_async_smem();  // ... is visible to the tensor cores ...
    __syncthreads();           // ... and to every thread's wgmma
    const unsigned char* cK = sK + (j & 1) * Cfg::kTileKV;
    const unsigned char* cV = sV + (j & 1) * Cfg::kTileKV;

    // 1. S = Q K^T.
    fence_registers(s);
    wgmma_fence();
    gemm_qk<D, kBr, kBc>(s, sQ_wg, cK);
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(s);

    // 2. Causal mask, online softmax (base 2), rescale of O. s[4 nt + hf * 2 + e] is row
    // wrow + hf * 8 + lane / 4, column nt * 8 + 2 (lane % 4) + e of the tile.
    if ((j + 1) * kBc - 1 > q0 + wrow) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int lim = q0 + wrow + hf * 8 + (lane >> 2) - j * kBc - (lane & 3) * 2;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            if (nt * 8 + e > lim) s[nt * 4 + hf * 2 + e] = -INFINITY;
          }
        }
      }
    }
    float corr[2];
    bool rescale = false;
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      float mx = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = s[nt * 4 + hf * 2 + e];
          x *= scale_log2;
          mx = fmaxf(mx, x);
        }
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(row_max[hf], mx);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;
      corr[hf] = fast_exp2(row_max[hf] - m_use);
      rescale |= corr[hf] != 1.0f;
      row_max[hf] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = s[nt * 4 + hf * 2 + e];
          x = fast_exp2(x - m_use);
          sum += x;
        }
      }
      row_sum[hf] = row_sum[hf] * corr[hf] + sum;  // per-thread partial; reduced at the end
    }
    if (__any_sync(0xffffffffu, rescale)) {
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[dt * 4 + e] *= corr[e >> 1];
      }
    }

    // 3. O += P V, P packed from the S accumulators (C layout -> A layout, per 16 columns).
    uint32_t p[kBc / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      p[kk][0] = pack_bf16x2(s[kk * 8 + 0], s[kk * 8 + 1]);
      p[kk][1] = pack_bf16x2(s[kk * 8 + 2], s[kk * 8 + 3]);
      p[kk][2] = pack_bf16x2(s[kk * 8 + 4], s[kk * 8 + 5]);
      p[kk][3] = pack_bf16x2(s[kk * 8 + 6], s[kk * 8 + 7]);
    }
    fence_registers(acc);
    wgmma_fence();
    gemm_pv<D, kBc>(acc, p, cV);
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(acc);
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) fence_registers(p[kk]);  // read by the tensor cores until the wait
  }

  // Normalize and store O and the log-sum-exp.
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    float l = row_sum[hf];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const int row = q0 + wrow + hf * 8 + (lane >> 2);
    if (row < S) {
      const float inv = l > 0.0f ? 1.0f / l : 0.0f;
      bf16* orow = o + ((static_cast<int64_t>(b) * S + row) * Hq + h) * D + (lane & 3) * 2;
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        *reinterpret_cast<uint32_t*>(orow + dt * 8) =
            pack_bf16x2(acc[dt * 4 + hf * 2] * inv, acc[dt * 4 + hf * 2 + 1] * inv);
      }
      if ((lane & 3) == 0) lse[(static_cast<int64_t>(b) * Hq + h) * S + row] = (row_max[hf] + log2f(l)) * kLn2;
    }
  }
}

template <int D>
cudaError_t launch(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, const AttentionShape& s,
                   float scale, cudaStream_t stream) {
  using Cfg = WgFwdCfg<D>;
  cudaError_t err = cudaFuncSetAttribute(attn_fwd_wgmma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(Cfg::kSmem));
  if (err != cudaSuccess) return err;
  const int64_t blocks = ceil_div(s.seq, Cfg::kBr) * s.batch * s.q_heads;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  attn_fwd_wgmma_kernel<D><<<static_cast<unsigned>(blocks), Cfg::kThreads, Cfg::kSmem, stream>>>(
      q, k, v, o, lse, s.batch, s.seq, s.q_heads, s.kv_heads, scale * kLog2e);
  return cudaGetLastError();
}

}  // namespace

bool attention_wgmma_supported() {
  int device = 0, major = 0, minor = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
         minor == 0;
}

cudaError_t attention_fwd_wgmma(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                                const AttentionShape& shape, float scale, cudaStream_t stream) {
  if (!attention_wgmma_supported()) return cudaErrorNotSupported;
  if (shape.head_dim == 64) return launch<64>(q, k, v, o, lse, shape, scale, stream);
  return launch<128>(q, k, v, o, lse, shape, scale, stream);
}

}  // namespace trainsim::kernels::detail
