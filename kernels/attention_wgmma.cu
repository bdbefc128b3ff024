// Causal attention forward and backward on Hopper's warpgroup MMA (wgmma, sm_90a): the
// FlashAttention-3 data path without its warp specialization. Same formulas, layouts and results
// as attention.cu's mma.sync kernels (kernels.hpp); selected with AttentionKernel::kWgmma. The
// backward is described above its kernel below.
//
// Forward: a block of kWarpGroups warpgroups owns kBr = 64 * kWarpGroups query rows of one (batch, q
// head); warpgroup g owns rows 64g..64g+63 and needs no data from the other. Q, and two stages of
// K and V tiles (kBc keys), sit in shared memory in the 128-byte swizzled layout wgmma reads
// (wgmma.cuh), filled by cp.async with the swizzle applied to the destination address. Per key
// tile, each warpgroup:
//   1. S = Q K^T: D/16 wgmma m64n{kBc}k16, A (Q) and B (K) from shared memory, both K-major;
//   2. the causal mask (only on tiles that cross the warp's diagonal) and the online softmax in
//      base 2 on the S accumulators, which are laid out per 8-column block like mma.sync's, so
//      the code is the mma.sync kernel's (attention_common.cuh); the O accumulator is rescaled
//      only when a row maximum of the warp grew;
//   3. O += P V: kBc/16 wgmma m64n{D}k16 with A = P packed to bf16 straight from the S
//      accumulators (registers) and B = V from shared memory read N-major (transposed), so V
//      needs neither ldmatrix nor a transposed copy.
// No ldmatrix at all: the operands go from shared memory to the tensor cores, which is what
// limits the mma.sync kernels (docs/kernels.md, version 3). Blocks run heaviest first.

#include <cmath>

#include "kernels/attention_common.cuh"
#include "kernels/attention_wgmma.hpp"
#include "kernels/device_utils.cuh"
#include "kernels/ptx.cuh"
#include "kernels/sw128_layout.hpp"
#include "kernels/wgmma.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "attention_wgmma.cu is compiled for sm_90a only (kernels/CMakeLists.txt)"
#endif

namespace trainsim::kernels::detail {
namespace {

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
    cp_async_16(tile + sw128::chunk<ROWS>(r, c), base + static_cast<int64_t>(ok ? gr : 0) * ld + c * 8, ok);
  }
}

// S[64 x kBc] = Q[64 x D] K^T for one warpgroup: its Q rows from q_row0 of the Q tile sQ, K at sK.
template <int D, int kBr, int kBc>
__device__ __forceinline__ void gemm_qk(float (&s)[kBc / 2], const unsigned char* sQ, int q_row0,
                                        const unsigned char* sK) {
  static_assert(kBc == 64 || kBc == 128, "wgmma.cuh has n = 64 and 128");
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const uint64_t da = wgmma_desc(sQ + sw128::kmajor_start<kBr>(q_row0, kk), sw128::kKMajorLbo, sw128::kSbo);
    const uint64_t db = wgmma_desc(sK + sw128::kmajor_start<kBc>(0, kk), sw128::kKMajorLbo, sw128::kSbo);
    if constexpr (kBc == 128) {
      wgmma_ss_m64n128k16<0, 0>(s, da, db, kk > 0 ? 1 : 0);
    } else {
      wgmma_ss_m64n64k16<0, 0>(s, da, db, kk > 0 ? 1 : 0);
    }
  }
}

// O[64 x D] += P[64 x kBc] V[kBc x D]; P as A fragments, V read N-major from sV.
template <int D, int kBc>
__device__ __forceinline__ void gemm_pv(float (&o)[D / 2], const uint32_t (&p)[kBc / 16][4], const unsigned char* sV) {
  static_assert(D == 64 || D == 128, "wgmma.cuh has n = 64 and 128");
#pragma unroll
  for (int kk = 0; kk < kBc / 16; ++kk) {
    const uint64_t db = wgmma_desc(sV + sw128::mnmajor_start<kBc>(kk * 16, 0), sw128::mnmajor_lbo<kBc>(), sw128::kSbo);
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
  const bf16* qb = q + head_offset(b, h, S, Hq, D);
  const bf16* kb = k + head_offset(b, hk, S, Hkv, D);
  const bf16* vb = v + head_offset(b, hk, S, Hkv, D);

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
    gemm_qk<D, kBr, kBc>(s, sQ, wg * 64, cK);
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(s);

    // 2. Causal mask, online softmax (base 2), rescale of O. s[4 nt + hf * 2 + e] is row
    // wrow + hf * 8 + lane / 4, column nt * 8 + 2 (lane % 4) + e of the tile.
    if ((j + 1) * kBc - 1 > q0 + wrow) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int lim = q0 + wrow + hf * 8 + (lane >> 2) - j * kBc - (lane & 3) * 2;
        causal_mask_half<kNT>([&](int nt, int e) -> float& { return s[nt * 4 + hf * 2 + e]; }, lim);
      }
    }
    float corr[2];
    bool rescale = false;
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      corr[hf] = online_softmax_half<kNT>([&](int nt, int e) -> float& { return s[nt * 4 + hf * 2 + e]; }, row_max[hf],
                                          row_sum[hf], scale_log2);
      rescale |= corr[hf] != 1.0f;
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
    const int row = q0 + wrow + hf * 8 + (lane >> 2);
    store_output_half<kDT>([&](int dt, int e) -> float& { return acc[dt * 4 + hf * 2 + e]; }, row_max[hf], row_sum[hf],
                           row, S, o + head_offset(b, h, S, Hq, D) + static_cast<int64_t>(row) * Hq * D,
                           lse + row_stats_offset(b, h, S, Hq) + row);
  }
}

// ---- backward ------------------------------------------------------------------------------

template <int D>
struct WgBwdCfg {
  static constexpr int kWarpGroups = 2;
  static constexpr int kBc = 64 * kWarpGroups;  // kv rows per block
  static constexpr int kBr = 64;                // query rows per step
  static constexpr int kThreads = 128 * kWarpGroups;
  static constexpr size_t kTileKV = static_cast<size_t>(kBc) * D * sizeof(bf16);
  static constexpr size_t kTileQ = static_cast<size_t>(kBr) * D * sizeof(bf16);
  static constexpr size_t kTileDS = static_cast<size_t>(kBc) * kBr * sizeof(bf16);  // dS^T, one 128-byte span
  // K, V, 2 stages of Q and dO, dS^T, 2 stages of lse and delta, and the alignment slack.
  static constexpr size_t kSmem = 2 * kTileKV + 4 * kTileQ + kTileDS + 4 * kBr * sizeof(float) + 1024;
  static_assert(kTileKV % 1024 == 0 && kTileQ % 1024 == 0 && kTileDS % 1024 == 0, "1024-byte aligned tiles");
  static_assert(kBr * sizeof(bf16) == 128, "dS^T rows are one swizzle span");
};

// Accumulator fragment (64 x 64 fp32, 8-column blocks) to the four bf16 A fragments of its 16-column steps.
__device__ __forceinline__ void acc_to_a4(uint32_t (&a)[4][4], const float (&c)[32]) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    a[kk][0] = pack_bf16x2(c[kk * 8 + 0], c[kk * 8 + 1]);
    a[kk][1] = pack_bf16x2(c[kk * 8 + 2], c[kk * 8 + 3]);
    a[kk][2] = pack_bf16x2(c[kk * 8 + 4], c[kk * 8 + 5]);
    a[kk][3] = pack_bf16x2(c[kk * 8 + 6], c[kk * 8 + 7]);
  }
}

template <int D>
__device__ __forceinline__ void wgmma_rs_d(float (&acc)[D / 2], const uint32_t (&a)[4], uint64_t desc_b) {
  if constexpr (D == 128) {
    wgmma_rs_m64n128k16_tb(acc, a, desc_b, 1);
  } else {
    wgmma_rs_m64n64k16_tb(acc, a, desc_b, 1);
  }
}

// A block of two warpgroups owns kBc = 128 kv rows of one (batch, q head), warpgroup g rows
// 64g..64g+63, and walks the query tiles of kBr = 64 rows from the diagonal on. Per tile, each
// warpgroup computes S^T = K_g Q^T and dP^T = V_g dO^T (wgmma m64n64k16, all four operands
// K-major in shared memory), P^T and dS^T = scale P^T (dP^T - delta) in registers, then
// dV += P^T dO and dK += dS^T Q (A from registers, B = dO and Q read N-major), dK and dV staying
// in registers for the whole walk. dS^T goes to shared memory (one 128-byte swizzled span per kv
// row), and dQ = dS K is computed by both warpgroups with A = dS^T read M-major: at d 128 each
// takes 64 of the columns over all 128 kv rows, at d 64 each takes all columns over its own 64 kv
// rows; the partial dQ is added to the fp32 accumulator with float4 atomics.
template <int D>
__global__ void __launch_bounds__(WgBwdCfg<D>::kThreads, 1)
    attn_bwd_wgmma_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                          const bf16* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ delta,
                          float* __restrict__ dq_acc, float* __restrict__ dk_acc, float* __restrict__ dv_acc, int batch,
                          int S, int Hq, int Hkv, float scale_log2, float scale) {
  using Cfg = WgBwdCfg<D>;
  constexpr int kBc = Cfg::kBc, kBr = Cfg::kBr, kThreads = Cfg::kThreads;
  constexpr int kDT = D / 8;

  const int bh_count = batch * Hq;
  const int kt = static_cast<int>(blockIdx.x / bh_count);  // kv tile 0 (most query tiles) first
  const int bh = static_cast<int>(blockIdx.x % bh_count);
  const int b = bh / Hq;
  const int h = bh % Hq;
  const int hk = h / (Hq / Hkv);
  const int kv0 = kt * kBc;

  unsigned char* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(dynamic_smem()) + 1023) &
                                                         ~static_cast<uintptr_t>(1023));
  unsigned char* sK = base;
  unsigned char* sV = sK + Cfg::kTileKV;
  unsigned char* sQ = sV + Cfg::kTileKV;      // 2 stages
  unsigned char* sdO = sQ + 2 * Cfg::kTileQ;  // 2 stages
  unsigned char* sdS = sdO + 2 * Cfg::kTileQ;
  float* sL = reinterpret_cast<float*>(sdS + Cfg::kTileDS);  // 2 stages of kBr lse
  float* sDl = sL + 2 * kBr;                                 // 2 stages of kBr delta

  const int64_t q_ld = static_cast<int64_t>(Hq) * D;
  const int64_t kv_ld = static_cast<int64_t>(Hkv) * D;
  const bf16* qb = q + head_offset(b, h, S, Hq, D);
  const bf16* dob = dout + head_offset(b, h, S, Hq, D);
  const bf16* kb = k + head_offset(b, hk, S, Hkv, D);
  const bf16* vb = v + head_offset(b, hk, S, Hkv, D);
  const float* lseb = lse + row_stats_offset(b, h, S, Hq);
  const float* deltab = delta + row_stats_offset(b, h, S, Hq);

  const int qt_begin = kv0 / kBr;
  const int n_qt = (S + kBr - 1) / kBr;

  auto load_q_tile = [&](int qt, int stage) {
    load_tile_sw128<D, kBr, kThreads>(sQ + stage * Cfg::kTileQ, qb, q_ld, qt * kBr, S);
    load_tile_sw128<D, kBr, kThreads>(sdO + stage * Cfg::kTileQ, dob, q_ld, qt * kBr, S);
    load_row_stats<kBr>(sL + stage * kBr, sDl + stage * kBr, lseb, deltab, qt * kBr, S);
  };

  load_tile_sw128<D, kBc, kThreads>(sK, kb, kv_ld, kv0, S);
  load_tile_sw128<D, kBc, kThreads>(sV, vb, kv_ld, kv0, S);
  if (qt_begin < n_qt) load_q_tile(qt_begin, 0);
  cp_async_commit();

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  const int w4 = (tid / 32) % 4;
  const int lane = tid % 32;
  const int kvw = wg * 64 + w4 * 16;  // first kv row of this warp in the block's tile

  float dk[D / 2], dv[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) {
    dk[i] = 0.0f;
    dv[i] = 0.0f;
  }
  float sT[32], dpT[32], dq[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    sT[i] = 0.0f;
    dpT[i] = 0.0f;
    dq[i] = 0.0f;
  }

  for (int qt = qt_begin; qt < n_qt; ++qt) {
    const int st = (qt - qt_begin) & 1;
    __syncthreads();  // both warpgroups are done with stage st ^ 1 and with sdS
    if (qt + 1 < n_qt) load_q_tile(qt + 1, st ^ 1);
    cp_async_commit();
    cp_async_wait<1>();
    fence_proxy_async_smem();
    __syncthreads();
    const unsigned char* cQ = sQ + st * Cfg::kTileQ;
    const unsigned char* cdO = sdO + st * Cfg::kTileQ;
    const float* cL = sL + st * kBr;
    const float* cDl = sDl + st * kBr;
    const int q0 = qt * kBr;

    // 1. S^T = K_g Q^T and dP^T = V_g dO^T (64 kv rows x 64 query columns each).
    fence_registers(sT);
    fence_registers(dpT);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const uint32_t a_off = sw128::kmajor_start<kBc>(wg * 64, kk), b_off = sw128::kmajor_start<kBr>(0, kk);
      wgmma_ss_m64n64k16<0, 0>(sT, wgmma_desc(sK + a_off, sw128::kKMajorLbo, sw128::kSbo),
                               wgmma_desc(cQ + b_off, sw128::kKMajorLbo, sw128::kSbo), kk > 0);
    }
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const uint32_t a_off = sw128::kmajor_start<kBc>(wg * 64, kk), b_off = sw128::kmajor_start<kBr>(0, kk);
      wgmma_ss_m64n64k16<0, 0>(dpT, wgmma_desc(sV + a_off, sw128::kKMajorLbo, sw128::kSbo),
                               wgmma_desc(cdO + b_off, sw128::kKMajorLbo, sw128::kSbo), kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(sT);
    fence_registers(dpT);

    // 2. P^T = exp(S^T scale - lse) with the causal mask, dS^T = scale P^T (dP^T - delta).
    // Element 4i + e is kv row kvw + lane / 4 + (e / 2) 8, query column 8i + 2 (lane % 4) + e % 2.
    const bool need_mask = (kv0 + kvw + 15 > q0) || (q0 + kBr > S);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int ql = i * 8 + (lane & 3) * 2 + (e & 1);
        const int kvr = kv0 + kvw + (lane >> 2) + (e >> 1) * 8;
        const int qr = q0 + ql;
        float p = fast_exp2(sT[i * 4 + e] * scale_log2 - cL[ql] * kLog2e);
        if (need_mask && (kvr > qr || qr >= S)) p = 0.0f;
        sT[i * 4 + e] = p;
        dpT[i * 4 + e] = scale * p * (dpT[i * 4 + e] - cDl[ql]);
      }
    }
    uint32_t pA[4][4], dsA[4][4];
    acc_to_a4(pA, sT);
    acc_to_a4(dsA, dpT);

    // 4. dV += P^T dO and dK += dS^T Q (k = the 64 query rows, 16 per step).
    fence_registers(dv);
    fence_registers(dk);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      wgmma_rs_d<D>(dv, pA[kk],
                    wgmma_desc(cdO + sw128::mnmajor_start<kBr>(kk * 16, 0), sw128::mnmajor_lbo<kBr>(), sw128::kSbo));
    }
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      wgmma_rs_d<D>(dk, dsA[kk],
                    wgmma_desc(cQ + sw128::mnmajor_start<kBr>(kk * 16, 0), sw128::mnmajor_lbo<kBr>(), sw128::kSbo));
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(dv);
    fence_registers(dk);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      fence_registers(pA[kk]);
      fence_registers(dsA[kk]);
    }
    // 4b. dS^T to shared memory (row = kv row of the tile, 128-byte swizzled) for the dQ GEMM, once
    // the wgmmas above are done: their A registers (dsA) may not be read before.
#pragma unroll
    for (int i = 0; i < 8; ++i) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int r = kvw + (lane >> 2) + hf * 8;
        const int c = i * 8 + (lane & 3) * 2;
        *reinterpret_cast<uint32_t*>(sdS + sw128::element<kBc>(r, c)) = dsA[i / 2][hf + 2 * (i & 1)];
      }
    }
    fence_proxy_async_smem();
    __syncthreads();  // dS^T of both warpgroups is in shared memory

    // 5. dQ (+)= dS K: A = dS^T (M-major), B = K (N-major).
    fence_registers(dq);
    wgmma_fence();
    int col0 = 0;
    if constexpr (D == 128) {
      col0 = wg * 64;
#pragma unroll
      for (int kk = 0; kk < kBc / 16; ++kk) {
        wgmma_ss_m64n64k16<1, 1>(
            dq, wgmma_desc(sdS + sw128::mnmajor_start<kBc>(kk * 16, 0), sw128::mnmajor_lbo<kBc>(), sw128::kSbo),
            wgmma_desc(sK + sw128::mnmajor_start<kBc>(kk * 16, wg), sw128::mnmajor_lbo<kBc>(), sw128::kSbo), kk > 0);
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const int k_row0 = wg * 64 + kk * 16;
        wgmma_ss_m64n64k16<1, 1>(
            dq, wgmma_desc(sdS + sw128::mnmajor_start<kBc>(k_row0, 0), sw128::mnmajor_lbo<kBc>(), sw128::kSbo),
            wgmma_desc(sK + sw128::mnmajor_start<kBc>(k_row0, 0), sw128::mnmajor_lbo<kBc>(), sw128::kSbo), kk > 0);
      }
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(dq);
    {
      // dq[4i + e]: query row q0 + 16 w4 + lane / 4 + (e / 2) 8, column col0 + 8i + 2 (lane % 4) + e % 2;
      // one float4 atomic per thread and 8-column block (attention_common.cuh).
      const bool odd = (lane & 1) != 0;
      const int qr = q0 + w4 * 16 + (lane >> 2) + (odd ? 8 : 0);
      float* dst = dq_acc + ((static_cast<int64_t>(b) * S + qr) * Hq + h) * D + col0 + ((lane & 3) >> 1) * 4;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        atomic_add_block_swapped(dst + i * 8, dq[i * 4 + 0], dq[i * 4 + 1], dq[i * 4 + 2], dq[i * 4 + 3], odd, qr < S);
      }
    }
  }

  // dK, dV of this block's kv rows, summed over the q heads of the group.
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int kvr = kv0 + kvw + (lane >> 2) + hf * 8;
    if (kvr < S) {
      atomic_add_kv_half<kDT>(
          dk_acc, dv_acc, ((static_cast<int64_t>(b) * S + kvr) * Hkv + hk) * D + (lane & 3) * 2,
          [&](int dt, int e) { return dk[dt * 4 + hf * 2 + e]; },
          [&](int dt, int e) { return dv[dt * 4 + hf * 2 + e]; });
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

template <int D>
cudaError_t launch_bwd(const bf16* q, const bf16* k, const bf16* v, const bf16* dout, const float* lse,
                       const float* delta, float* dq_acc, float* dk_acc, float* dv_acc, const AttentionShape& s,
                       float scale, cudaStream_t stream) {
  using Cfg = WgBwdCfg<D>;
  cudaError_t err = cudaFuncSetAttribute(attn_bwd_wgmma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(Cfg::kSmem));
  if (err != cudaSuccess) return err;
  const int64_t blocks = ceil_div(s.seq, Cfg::kBc) * s.batch * s.q_heads;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  attn_bwd_wgmma_kernel<D><<<static_cast<unsigned>(blocks), Cfg::kThreads, Cfg::kSmem, stream>>>(
      q, k, v, dout, lse, delta, dq_acc, dk_acc, dv_acc, s.batch, s.seq, s.q_heads, s.kv_heads, scale * kLog2e, scale);
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

cudaError_t attention_bwd_wgmma_main(const bf16* q, const bf16* k, const bf16* v, const bf16* dout, const float* lse,
                                     const float* delta, float* dq_acc, float* dk_acc, float* dv_acc,
                                     const AttentionShape& shape, float scale, cudaStream_t stream) {
  if (!attention_wgmma_supported()) return cudaErrorNotSupported;
  if (shape.head_dim == 64)
    return launch_bwd<64>(q, k, v, dout, lse, delta, dq_acc, dk_acc, dv_acc, shape, scale, stream);
  return launch_bwd<128>(q, k, v, dout, lse, delta, dq_acc, dk_acc, dv_acc, shape, scale, stream);
}

}  // namespace trainsim::kernels::detail
