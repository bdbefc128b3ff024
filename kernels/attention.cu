// Causal attention, FlashAttention-2 style, on bf16 tensor cores (mma.sync m16n8k16, fp32
// accumulate; operands loaded with ldmatrix from XOR-swizzled shared memory tiles filled by
// cp.async, two stages). Formulas and layouts in kernels.hpp; fragment layouts in ptx.cuh.
//
// Forward: a block owns kBr = kWarps * 16 * kMT query rows of one (batch, q head) and walks the
// key/value tiles (kBc rows) up to the diagonal, keeping the running max and sum of each row
// (online softmax, base-2 exponentials) and the output accumulator in registers. Each warp owns
// 16 * kMT query rows, so it needs no data from other warps. Blocks are issued heaviest first
// (the last query tiles see the most keys), except when the grid is a single wave that puts a
// second block on some SMs: then the second blocks come lightest first, so each SM pairs a heavy
// tile with a light one. The causal mask is applied only on tiles that cross the diagonal, and
// the accumulator is rescaled only when some row maximum of the warp grew.
//
// Backward: a block owns kBc = kWarps * 16 key/value rows of one (batch, q head) and walks the
// query tiles (kBr rows) from the diagonal on. Warp w owns kv rows 16w..16w+15 and computes the
// transposed tiles S^T = K Q^T and dP^T = V dO^T itself, so P^T and dS^T are already in its
// registers as A operands for dV += P^T dO and dK += dS^T Q: dK and dV stay in registers for the
// whole walk. dS^T goes through shared memory for dQ += dS K, which the warps split and add to an
// fp32 accumulator with float4 atomics (one per thread and 8-column tile). dK and dV of the q
// heads of a GQA group are summed with fp32 atomics too; a last kernel converts the three
// accumulators to bf16.
//
// attention_fwd and attention_bwd run attention_wgmma.cu's Hopper kernels instead when asked for
// AttentionKernel::kWgmma (the backward keeps this file's delta, zeroing and conversion steps).

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kernels/attention_common.cuh"
#include "kernels/attention_wgmma.hpp"
#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/ptx.cuh"

namespace trainsim::kernels {
namespace {

using detail::cp_async_16;
using detail::cp_async_4;
using detail::cp_async_commit;
using detail::cp_async_wait;
using detail::fast_exp2;
using detail::kLn2;
using detail::kLog2e;
using detail::ldmatrix_x4;
using detail::ldmatrix_x4_trans;
using detail::mma_bf16_16816;
using detail::pack_bf16x2;

// Shared memory tiles are row-major with rows padded by 16 bytes (kPad bf16): the 8 rows an
// ldmatrix reads at one column then fall in 8 distinct bank groups, and every operand address is a
// per-thread base plus a compile-time offset (no address registers per unrolled step).
constexpr int kPad = 8;

// Forward tiling: kWarps warps, each 16 * kMT query rows; kBc keys per step.
template <int D>
struct FwdCfg {
  static constexpr int kWarps = 4;
  static constexpr int kMT = 2;
  static constexpr int kBc = D == 128 ? 48 : 64;  // 64 at D = 128: 40 bytes of spills
  static constexpr int kBr = kWarps * 16 * kMT;
  static constexpr int kThreads = kWarps * 32;
  static constexpr size_t kSmem = static_cast<size_t>(kBr + 4 * kBc) * (D + kPad) * sizeof(bf16);  // Q, 2 x (K, V)
};

// Backward tiling: kWarps warps, each 16 kv rows (kBc = 16 * kWarps); kBr query rows per step.
template <int D>
struct BwdCfg {
  static constexpr int kWarps = 8;
  static constexpr int kBr = 64;
  static constexpr int kSub = D == 128 ? 32 : 64;  // query columns per S^T/dP^T pass (64 at D = 128 spills)
  static constexpr int kBc = 16 * kWarps;
  static constexpr int kThreads = kWarps * 32;
  // K, V, 2 x (Q, dO), dS^T (bf16), then 2 x (lse, D) (fp32).
  static constexpr size_t kSmem =
      static_cast<size_t>((2 * kBc + 4 * kBr) * (D + kPad) + kBc * (kBr + kPad)) * sizeof(bf16) +
      4 * kBr * sizeof(float);
};

template <int COLS>
__device__ __forceinline__ int tile_off(int row, int chunk) {
  return row * (COLS + kPad) + chunk * 8;
}

// cp.async of rows row0 .. row0+ROWS-1 of a tensor whose row r starts at base + r * ld into a
// padded [ROWS x COLS] tile; rows >= limit are zero-filled (and not read).
template <int COLS, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile(bf16* tile, const bf16* base, int64_t ld, int row0, int limit) {
  constexpr int kChunks = COLS / 8;
  constexpr int kTotal = ROWS * kChunks;
#pragma unroll
  for (int it = 0; it < (kTotal + THREADS - 1) / THREADS; ++it) {
    const int idx = it * THREADS + static_cast<int>(threadIdx.x);
    if (kTotal % THREADS == 0 || idx < kTotal) {
      const int r = idx / kChunks;
      const int c = idx % kChunks;
      const int gr = row0 + r;
      const bool ok = gr < limit;
      cp_async_16(tile + tile_off<COLS>(r, c), base + static_cast<int64_t>(ok ? gr : 0) * ld + c * 8, ok);
    }
  }
}

// A operand (16x16) from four fp32 accumulator tiles n = 2kk, 2kk+1 (C layout -> A layout).
__device__ __forceinline__ void acc_to_a(uint32_t (&a)[4], const float (&c0)[4], const float (&c1)[4]) {
  a[0] = pack_bf16x2(c0[0], c0[1]);
  a[1] = pack_bf16x2(c0[2], c0[3]);
  a[2] = pack_bf16x2(c1[0], c1[1]);
  a[3] = pack_bf16x2(c1[2], c1[3]);
}

// ---- forward -------------------------------------------------------------------------------

template <int D>
__global__ void __launch_bounds__(FwdCfg<D>::kThreads)
    attn_fwd_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                    bf16* __restrict__ o, float* __restrict__ lse, int batch, int S, int Hq, int Hkv, float scale_log2,
                    int fold) {
  using Cfg = FwdCfg<D>;
  constexpr int kMT = Cfg::kMT, kBc = Cfg::kBc, kBr = Cfg::kBr, kThreads = Cfg::kThreads;
  constexpr int kNT = kBc / 8;  // 8-column tiles of S
  constexpr int kDT = D / 8;    // 8-column tiles of O

  const int n_qt = (S + kBr - 1) / kBr;
  const int bh_count = batch * Hq;
  // Rank 0 is the heaviest tile. Blocks from `fold` on take the ranks in reverse, so that when the
  // grid is one wave of two blocks per SM (fold = SM count) the second block an SM receives is
  // the complement of its first and every SM gets about the same work; fold = grid: heaviest first.
  const int idx = static_cast<int>(blockIdx.x);
  const int rank = idx < fold ? idx : static_cast<int>(gridDim.x) - 1 - (idx - fold);
  const int qt = n_qt - 1 - rank / bh_count;
  const int bh = rank % bh_count;
  const int b = bh / Hq;
  const int h = bh % Hq;
  const int hk = h / (Hq / Hkv);
  const int q0 = qt * kBr;

  constexpr int kLd = D + kPad;
  bf16* sQ = reinterpret_cast<bf16*>(detail::dynamic_smem());
  bf16* sK = sQ + kBr * kLd;      // 2 stages
  bf16* sV = sK + 2 * kBc * kLd;  // 2 stages

  const int64_t q_ld = static_cast<int64_t>(Hq) * D;
  const int64_t kv_ld = static_cast<int64_t>(Hkv) * D;
  const bf16* qb = q + detail::head_offset(b, h, S, Hq, D);
  const bf16* kb = k + detail::head_offset(b, hk, S, Hkv, D);
  const bf16* vb = v + detail::head_offset(b, hk, S, Hkv, D);

  const int kv_end = min(S, q0 + kBr);
  const int n_kv = (kv_end + kBc - 1) / kBc;

  load_tile<D, kBr, kThreads>(sQ, qb, q_ld, q0, S);
  load_tile<D, kBc, kThreads>(sK, kb, kv_ld, 0, S);
  load_tile<D, kBc, kThreads>(sV, vb, kv_ld, 0, S);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int wrow = warp * 16 * kMT;  // first row of this warp in the tile

  float acc[kMT][kDT][4];
  float row_max[kMT][2], row_sum[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mt][dt][e] = 0.0f;
    }
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      row_max[mt][hf] = -INFINITY;
      row_sum[mt][hf] = 0.0f;
    }
  }

  for (int j = 0; j < n_kv; ++j) {
    __syncthreads();  // every warp is done with stage (j + 1) & 1
    if (j + 1 < n_kv) {
      const int st = (j + 1) & 1;
      load_tile<D, kBc, kThreads>(sK + st * kBc * kLd, kb, kv_ld, (j + 1) * kBc, S);
      load_tile<D, kBc, kThreads>(sV + st * kBc * kLd, vb, kv_ld, (j + 1) * kBc, S);
    }
    cp_async_commit();
    cp_async_wait<1>();  // tile j (and Q) landed for this thread ...
    __syncthreads();     // ... and for all threads
    const bf16* cK = sK + (j & 1) * kBc * kLd;
    const bf16* cV = sV + (j & 1) * kBc * kLd;

    // S = Q K^T for this warp's rows.
    float s[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.0f;
      }
    }
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        ldmatrix_x4(a[mt], sQ + tile_off<D>(wrow + mt * 16 + (lane & 15), kk * 2 + (lane >> 4)));
      }
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        uint32_t bm[4];
        ldmatrix_x4(bm, cK + tile_off<D>(np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)));
        const uint32_t b0[2] = {bm[0], bm[1]};
        const uint32_t b1[2] = {bm[2], bm[3]};
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma_bf16_16816(s[mt][2 * np], a[mt], b0);
          mma_bf16_16816(s[mt][2 * np + 1], a[mt], b1);
        }
      }
    }

    // Causal mask, online softmax (base 2), rescale of the accumulator.
    const bool need_mask = (j + 1) * kBc - 1 > q0 + wrow;
    float corr[kMT][2];
    bool rescale = false;
    if (need_mask) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
        for (int hf = 0; hf < 2; ++hf) {
          const int lim = q0 + wrow + mt * 16 + hf * 8 + (lane >> 2) - j * kBc - (lane & 3) * 2;
          detail::causal_mask_half<kNT>([&](int nt, int e) -> float& { return s[mt][nt][hf * 2 + e]; }, lim);
        }
      }
    }
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        corr[mt][hf] = detail::online_softmax_half<kNT>([&](int nt, int e) -> float& { return s[mt][nt][hf * 2 + e]; },
                                                        row_max[mt][hf], row_sum[mt][hf], scale_log2);
        rescale |= corr[mt][hf] != 1.0f;
      }
    }
    // The accumulator only needs rescaling when a row maximum grew (rare after the first tiles);
    // the test is warp-uniform, so the branch does not diverge.
    if (__any_sync(0xffffffffu, rescale)) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mt][dt][e] *= corr[mt][e >> 1];
        }
      }
    }

    // O += P V.
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) acc_to_a(a[mt], s[mt][2 * kk], s[mt][2 * kk + 1]);
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t bm[4];
        ldmatrix_x4_trans(bm, cV + tile_off<D>(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, dp * 2 + (lane >> 4)));
        const uint32_t b0[2] = {bm[0], bm[1]};
        const uint32_t b1[2] = {bm[2], bm[3]};
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma_bf16_16816(acc[mt][2 * dp], a[mt], b0);
          mma_bf16_16816(acc[mt][2 * dp + 1], a[mt], b1);
        }
      }
    }
  }

  // Normalize and store O and the log-sum-exp.
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int row = q0 + wrow + mt * 16 + hf * 8 + (lane >> 2);
      detail::store_output_half<kDT>([&](int dt, int e) -> float& { return acc[mt][dt][hf * 2 + e]; }, row_max[mt][hf],
                                     row_sum[mt][hf], row, S,
                                     o + detail::head_offset(b, h, S, Hq, D) + static_cast<int64_t>(row) * Hq * D,
                                     lse + detail::row_stats_offset(b, h, S, Hq) + row);
    }
  }
}

// ---- backward ------------------------------------------------------------------------------

// delta[b, h, s] = sum_d dout * o over the row (b, s, h); D/8 lanes per row, 16 bytes each.
template <int D>
__global__ void __launch_bounds__(256) attn_bwd_delta_kernel(const bf16* __restrict__ o, const bf16* __restrict__ dout,
                                                             float* __restrict__ delta, int64_t rows, int S, int Hq) {
  constexpr int kLanes = D / 8;
  constexpr int kRowsPerWarp = 32 / kLanes;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t warp0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t nwarps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  for (int64_t base = warp0 * kRowsPerWarp; base < rows; base += nwarps * kRowsPerWarp) {
    const int64_t r = base + lane / kLanes;
    float acc = 0.0f;
    if (r < rows) {
      float fo[8], fd[8];
      const int64_t off = r * D + (lane % kLanes) * 8;
      detail::load_f<8>(o + off, fo);
      detail::load_f<8>(dout + off, fd);
#pragma unroll
      for (int j = 0; j < 8; ++j) acc += fo[j] * fd[j];
    }
#pragma unroll
    for (int off = kLanes / 2; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (r < rows && lane % kLanes == 0) {
      const int h = static_cast<int>(r % Hq);
      const int64_t bs = r / Hq;
      const int s = static_cast<int>(bs % S);
      const int64_t b = bs / S;
      delta[(b * Hq + h) * S + s] = acc;
    }
  }
}

template <int D>
__global__ void __launch_bounds__(BwdCfg<D>::kThreads, 1)
    attn_bwd_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                    const bf16* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ delta,
                    float* __restrict__ dq_acc, float* __restrict__ dk_acc, float* __restrict__ dv_acc, int batch,
                    int S, int Hq, int Hkv, float scale_log2, float scale) {
  using Cfg = BwdCfg<D>;
  constexpr int kWarps = Cfg::kWarps, kBr = Cfg::kBr, kBc = Cfg::kBc, kThreads = Cfg::kThreads;
  constexpr int kSub = Cfg::kSub;
  constexpr int kNT = kSub / 8;  // 8-column tiles of S^T (query columns of one part)
  constexpr int kDT = D / 8;     // 8-column tiles of dK, dV
  constexpr int kMq = kBr / 16;  // 16-row tiles of dQ
  static_assert(kWarps % kMq == 0, "dQ tiles must split evenly over the warps");
  constexpr int kDqCols = D / (kWarps / kMq);  // dQ columns per warp
  constexpr int kDqT = kDqCols / 8;
  static_assert(kDqT % 2 == 0, "dQ columns per warp: a multiple of 16");

  const int bh_count = batch * Hq;
  const int kt = static_cast<int>(blockIdx.x / bh_count);  // kv tile 0 (most query tiles) first
  const int bh = static_cast<int>(blockIdx.x % bh_count);
  const int b = bh / Hq;
  const int h = bh % Hq;
  const int hk = h / (Hq / Hkv);
  const int kv0 = kt * kBc;

  constexpr int kLd = D + kPad;
  bf16* sK = reinterpret_cast<bf16*>(detail::dynamic_smem());
  bf16* sV = sK + kBc * kLd;
  bf16* sQ = sV + kBc * kLd;                                       // 2 stages
  bf16* sdO = sQ + 2 * kBr * kLd;                                  // 2 stages
  bf16* sdS = sdO + 2 * kBr * kLd;                                 // [kBc x kBr], dS^T
  float* sL = reinterpret_cast<float*>(sdS + kBc * (kBr + kPad));  // 2 stages of kBr lse
  float* sDl = sL + 2 * kBr;                                       // 2 stages of kBr delta

  const int64_t q_ld = static_cast<int64_t>(Hq) * D;
  const int64_t kv_ld = static_cast<int64_t>(Hkv) * D;
  const bf16* qb = q + detail::head_offset(b, h, S, Hq, D);
  const bf16* dob = dout + detail::head_offset(b, h, S, Hq, D);
  const bf16* kb = k + detail::head_offset(b, hk, S, Hkv, D);
  const bf16* vb = v + detail::head_offset(b, hk, S, Hkv, D);
  const float* lseb = lse + detail::row_stats_offset(b, h, S, Hq);
  const float* deltab = delta + detail::row_stats_offset(b, h, S, Hq);

  const int qt_begin = kv0 / kBr;
  const int n_qt = (S + kBr - 1) / kBr;

  auto load_q_tile = [&](int qt, int stage) {
    load_tile<D, kBr, kThreads>(sQ + stage * kBr * kLd, qb, q_ld, qt * kBr, S);
    load_tile<D, kBr, kThreads>(sdO + stage * kBr * kLd, dob, q_ld, qt * kBr, S);
    detail::load_row_stats<kBr>(sL + stage * kBr, sDl + stage * kBr, lseb, deltab, qt * kBr, S);
  };

  load_tile<D, kBc, kThreads>(sK, kb, kv_ld, kv0, S);
  load_tile<D, kBc, kThreads>(sV, vb, kv_ld, kv0, S);
  if (qt_begin < n_qt) load_q_tile(qt_begin, 0);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int wrow = warp * 16;  // this warp's kv rows in the tile
  const int mq = warp % kMq;   // this warp's dQ rows and columns
  const int nq0 = (warp / kMq) * kDqCols;

  float dk[kDT][4], dv[kDT][4];
#pragma unroll
  for (int dt = 0; dt < kDT; ++dt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      dk[dt][e] = 0.0f;
      dv[dt][e] = 0.0f;
    }
  }

  for (int qt = qt_begin; qt < n_qt; ++qt) {
    const int st = (qt - qt_begin) & 1;
    __syncthreads();  // all warps are done with stage st ^ 1 and with sdS
    if (qt + 1 < n_qt) load_q_tile(qt + 1, st ^ 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const bf16* cQ = sQ + st * kBr * kLd;
    const bf16* cdO = sdO + st * kBr * kLd;
    const float* cL = sL + st * kBr;
    const float* cDl = sDl + st * kBr;
    const int q0 = qt * kBr;

    // The query columns are processed kSub at a time, and in an order that keeps at most one
    // 16 x kSub fp32 tile live next to dK and dV: S^T, then P^T (packed to bf16, the A operand
    // of dV += P^T dO), then dP^T, then dS^T in its place (stored to shared memory for dQ).
#pragma unroll
    for (int sub = 0; sub < kBr / kSub; ++sub) {
      const int c0 = sub * kSub;  // first query column of this part, within the tile
      const bool need_mask = (kv0 + wrow + 15 > q0 + c0) || (q0 + c0 + kSub > S);
      uint32_t aP[kSub / 16][4];
      {
        // S^T = K_w Q^T (16 kv rows x kSub query columns).
        float sT[kNT][4];
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) sT[nt][e] = 0.0f;
        }
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          uint32_t aK[4];
          ldmatrix_x4(aK, sK + tile_off<D>(wrow + (lane & 15), kk * 2 + (lane >> 4)));
#pragma unroll
          for (int np = 0; np < kNT / 2; ++np) {
            uint32_t bq[4];
            ldmatrix_x4(bq,
                        cQ + tile_off<D>(c0 + np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)));
            const uint32_t bq0[2] = {bq[0], bq[1]}, bq1[2] = {bq[2], bq[3]};
            mma_bf16_16816(sT[2 * np], aK, bq0);
            mma_bf16_16816(sT[2 * np + 1], aK, bq1);
          }
        }
        // P^T = exp(S^T * scale - lse), causal mask.
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int kvr = kv0 + wrow + (lane >> 2) + (e >> 1) * 8;
            const int ql = c0 + nt * 8 + (lane & 3) * 2 + (e & 1);
            const int qr = q0 + ql;
            const float p = fast_exp2(sT[nt][e] * scale_log2 - cL[ql] * kLog2e);
            sT[nt][e] = (need_mask && (kvr > qr || qr >= S)) ? 0.0f : p;
          }
        }
#pragma unroll
        for (int kk = 0; kk < kSub / 16; ++kk) acc_to_a(aP[kk], sT[2 * kk], sT[2 * kk + 1]);
      }

      // dV += P^T dO (k = the query rows of this part).
#pragma unroll
      for (int kk = 0; kk < kSub / 16; ++kk) {
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          uint32_t bo[4];
          ldmatrix_x4_trans(bo,
                            cdO + tile_off<D>(c0 + kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, dp * 2 + (lane >> 4)));
          const uint32_t bo0[2] = {bo[0], bo[1]}, bo1[2] = {bo[2], bo[3]};
          mma_bf16_16816(dv[2 * dp], aP[kk], bo0);
          mma_bf16_16816(dv[2 * dp + 1], aP[kk], bo1);
        }
      }

      // dP^T = V_w dO^T, then dS^T = scale * P^T * (dP^T - delta) in place.
      float dsT[kNT][4];
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) dsT[nt][e] = 0.0f;
      }
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t aV[4];
        ldmatrix_x4(aV, sV + tile_off<D>(wrow + (lane & 15), kk * 2 + (lane >> 4)));
#pragma unroll
        for (int np = 0; np < kNT / 2; ++np) {
          uint32_t bo[4];
          ldmatrix_x4(bo,
                      cdO + tile_off<D>(c0 + np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)));
          const uint32_t bo0[2] = {bo[0], bo[1]}, bo1[2] = {bo[2], bo[3]};
          mma_bf16_16816(dsT[2 * np], aV, bo0);
          mma_bf16_16816(dsT[2 * np + 1], aV, bo1);
        }
      }
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int ql = c0 + nt * 8 + (lane & 3) * 2 + (e & 1);
          // P^T element (nt, e) is half (e & 1) of register (e >> 1) + 2 * (nt & 1) of aP[nt / 2].
          const uint32_t word = aP[nt / 2][(e >> 1) + 2 * (nt & 1)];
          const float p = __uint_as_float((e & 1) ? (word & 0xffff0000u) : (word << 16));
          dsT[nt][e] = scale * p * (dsT[nt][e] - cDl[ql]);
        }
      }

      // dK += dS^T Q.
#pragma unroll
      for (int kk = 0; kk < kSub / 16; ++kk) {
        uint32_t aS[4];
        acc_to_a(aS, dsT[2 * kk], dsT[2 * kk + 1]);
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          uint32_t bq[4];
          ldmatrix_x4_trans(bq,
                            cQ + tile_off<D>(c0 + kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, dp * 2 + (lane >> 4)));
          const uint32_t bq0[2] = {bq[0], bq[1]}, bq1[2] = {bq[2], bq[3]};
          mma_bf16_16816(dk[2 * dp], aS, bq0);
          mma_bf16_16816(dk[2 * dp + 1], aS, bq1);
        }
      }

      // dS^T to shared memory for dQ.
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
        for (int hf = 0; hf < 2; ++hf) {
          const int r = wrow + (lane >> 2) + hf * 8;
          *reinterpret_cast<uint32_t*>(sdS + tile_off<kBr>(r, (c0 >> 3) + nt) + (lane & 3) * 2) =
              pack_bf16x2(dsT[nt][hf * 2], dsT[nt][hf * 2 + 1]);
        }
      }
    }

    // dQ[kBr x D] += dS K, split over the warps.
    __syncthreads();
    float dqa[kDqT][4];
#pragma unroll
    for (int dt = 0; dt < kDqT; ++dt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) dqa[dt][e] = 0.0f;
    }
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t aS[4];
      ldmatrix_x4_trans(aS, sdS + tile_off<kBr>(kk * 16 + (lane & 7) + ((lane >> 4) << 3), mq * 2 + ((lane >> 3) & 1)));
#pragma unroll
      for (int dp = 0; dp < kDqT / 2; ++dp) {
        uint32_t bk[4];
        ldmatrix_x4_trans(
            bk, sK + tile_off<D>(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, nq0 / 8 + dp * 2 + (lane >> 4)));
        const uint32_t bk0[2] = {bk[0], bk[1]}, bk1[2] = {bk[2], bk[3]};
        mma_bf16_16816(dqa[2 * dp], aS, bk0);
        mma_bf16_16816(dqa[2 * dp + 1], aS, bk1);
      }
    }
    {
      // One float4 atomic per thread and 8-column block (attention_common.cuh).
      const bool odd = (lane & 1) != 0;
      const int qr = q0 + mq * 16 + (lane >> 2) + (odd ? 8 : 0);
      float* dst = dq_acc + ((static_cast<int64_t>(b) * S + qr) * Hq + h) * D + nq0 + ((lane & 3) >> 1) * 4;
#pragma unroll
      for (int dt = 0; dt < kDqT; ++dt) {
        detail::atomic_add_block_swapped(dst + dt * 8, dqa[dt][0], dqa[dt][1], dqa[dt][2], dqa[dt][3], odd, qr < S);
      }
    }
  }

  // dK, dV of this block's kv rows, summed over the q heads of the group.
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int kvr = kv0 + wrow + (lane >> 2) + hf * 8;
    if (kvr < S) {
      detail::atomic_add_kv_half<kDT>(
          dk_acc, dv_acc, ((static_cast<int64_t>(b) * S + kvr) * Hkv + hk) * D + (lane & 3) * 2,
          [&](int dt, int e) { return dk[dt][hf * 2 + e]; }, [&](int dt, int e) { return dv[dt][hf * 2 + e]; });
    }
  }
}

// y = bf16(x) over n elements, n % 8 == 0, 16-byte aligned.
__global__ void __launch_bounds__(256)
    f32_to_bf16_kernel(const float* __restrict__ x, bf16* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n / 8; i += stride) {
    float f[8], g[4];
    detail::load_f32<4>(x + i * 8, g);
    f[0] = g[0];
    f[1] = g[1];
    f[2] = g[2];
    f[3] = g[3];
    detail::load_f32<4>(x + i * 8 + 4, g);
    f[4] = g[0];
    f[5] = g[1];
    f[6] = g[2];
    f[7] = g[3];
    detail::store_f<8>(y + i * 8, f);
  }
}

// ---- host side -----------------------------------------------------------------------------

bool shape_ok(const AttentionShape& s) {
  return s.batch > 0 && s.seq > 0 && s.q_heads > 0 && s.kv_heads > 0 && s.q_heads % s.kv_heads == 0 &&
         (s.head_dim == 64 || s.head_dim == 128);
}

size_t round256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Workspace layout: dq, dk, dv fp32 accumulators (contiguous, zeroed together), then delta.
struct WorkspaceSizes {
  size_t dq, dkv, delta;
  size_t acc() const { return dq + 2 * dkv; }
  size_t total() const { return dq + 2 * dkv + delta; }
};

WorkspaceSizes workspace_sizes(const AttentionShape& s) {
  const size_t rows_q = static_cast<size_t>(s.batch) * s.seq * s.q_heads;
  const size_t rows_kv = static_cast<size_t>(s.batch) * s.seq * s.kv_heads;
  return WorkspaceSizes{round256(rows_q * s.head_dim * sizeof(float)), round256(rows_kv * s.head_dim * sizeof(float)),
                        round256(rows_q * sizeof(float))};
}

struct Workspace {
  float* dq;
  float* dk;
  float* dv;
  float* delta;
  size_t acc_bytes;  // dq + dk + dv, contiguous
};

Workspace carve(void* base, const AttentionShape& s) {
  const WorkspaceSizes z = workspace_sizes(s);
  auto* p = static_cast<unsigned char*>(base);
  return Workspace{reinterpret_cast<float*>(p), reinterpret_cast<float*>(p + z.dq),
                   reinterpret_cast<float*>(p + z.dq + z.dkv), reinterpret_cast<float*>(p + z.dq + 2 * z.dkv), z.acc()};
}

template <int D>
cudaError_t launch_fwd(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, const AttentionShape& s,
                       float scale, cudaStream_t stream) {
  using Cfg = FwdCfg<D>;
  cudaError_t err = cudaFuncSetAttribute(attn_fwd_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(Cfg::kSmem));
  if (err != cudaSuccess) return err;
  const int64_t n_qt = detail::ceil_div(s.seq, Cfg::kBr);
  const int64_t blocks = n_qt * s.batch * s.q_heads;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  // One wave that puts a second block on (some) SMs: pair heavy and light tiles (see the kernel).
  int fold = static_cast<int>(blocks);
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attn_fwd_kernel<D>, Cfg::kThreads, Cfg::kSmem) ==
          cudaSuccess &&
      per_sm >= 2 && blocks > sms && blocks <= 2 * static_cast<int64_t>(sms)) {
    fold = sms;
  }
  attn_fwd_kernel<D><<<static_cast<unsigned>(blocks), Cfg::kThreads, Cfg::kSmem, stream>>>(
      q, k, v, o, lse, s.batch, s.seq, s.q_heads, s.kv_heads, scale * kLog2e, fold);
  return cudaGetLastError();
}

template <int D>
cudaError_t launch_bwd(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const bf16* dout, const float* lse,
                       bf16* dq, bf16* dk, bf16* dv, const Workspace& w, const AttentionShape& s, float scale,
                       cudaStream_t stream, AttentionKernel kernel) {
  using Cfg = BwdCfg<D>;
  const int64_t rows_q = static_cast<int64_t>(s.batch) * s.seq * s.q_heads;
  const int64_t rows_kv = static_cast<int64_t>(s.batch) * s.seq * s.kv_heads;

  cudaError_t err = cudaMemsetAsync(w.dq, 0, w.acc_bytes, stream);
  if (err != cudaSuccess) return err;
  constexpr int kRowsPerBlock = 256 / 32 * (32 / (D / 8));
  attn_bwd_delta_kernel<D><<<detail::grid_for(detail::ceil_div(rows_q, kRowsPerBlock) * 256, 256), 256, 0, stream>>>(
      o, dout, w.delta, rows_q, s.seq, s.q_heads);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;

  if (kernel == AttentionKernel::kWgmma) {
    err = detail::attention_bwd_wgmma_main(q, k, v, dout, lse, w.delta, w.dq, w.dk, w.dv, s, scale, stream);
  } else {
    err = cudaFuncSetAttribute(attn_bwd_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(Cfg::kSmem));
    if (err != cudaSuccess) return err;
    const int64_t n_kt = detail::ceil_div(s.seq, Cfg::kBc);
    const int64_t blocks = n_kt * s.batch * s.q_heads;
    if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
    attn_bwd_kernel<D><<<static_cast<unsigned>(blocks), Cfg::kThreads, Cfg::kSmem, stream>>>(
        q, k, v, dout, lse, w.delta, w.dq, w.dk, w.dv, s.batch, s.seq, s.q_heads, s.kv_heads, scale * kLog2e, scale);
    err = cudaGetLastError();
  }
  if (err != cudaSuccess) return err;

  const int64_t nq = rows_q * D;
  const int64_t nkv = rows_kv * D;
  f32_to_bf16_kernel<<<detail::grid_for(nq / 8, 256), 256, 0, stream>>>(w.dq, dq, nq);
  f32_to_bf16_kernel<<<detail::grid_for(nkv / 8, 256), 256, 0, stream>>>(w.dk, dk, nkv);
  f32_to_bf16_kernel<<<detail::grid_for(nkv / 8, 256), 256, 0, stream>>>(w.dv, dv, nkv);
  return cudaGetLastError();
}

// What kAuto runs (docs/kernels.md, version 5), per direction, on a compute capability 9.0 GPU;
// elsewhere kAuto is always kMmaSync. TRAINSIM_ATTENTION_KERNEL=mma|wgmma in the environment
// overrides kAuto (the validator's replays measure one against the other with it); an explicit
// kernel argument is never overridden.
constexpr AttentionKernel kAutoForward = AttentionKernel::kWgmma;
constexpr AttentionKernel kAutoBackward = AttentionKernel::kWgmma;

AttentionKernel resolve_kernel(AttentionKernel kernel, AttentionKernel auto_choice) {
  if (kernel != AttentionKernel::kAuto) return kernel;
  if (!detail::attention_wgmma_supported()) return AttentionKernel::kMmaSync;
  if (const char* env = std::getenv("TRAINSIM_ATTENTION_KERNEL")) {
    if (std::strcmp(env, "wgmma") == 0) return AttentionKernel::kWgmma;
    if (std::strcmp(env, "mma") == 0) return AttentionKernel::kMmaSync;
  }
  return auto_choice;
}

}  // namespace

cudaError_t attention_fwd(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, const AttentionShape& shape,
                          float scale, cudaStream_t stream, AttentionKernel kernel) {
  if (!shape_ok(shape) || !detail::aligned16(q) || !detail::aligned16(k) || !detail::aligned16(v) ||
      !detail::aligned16(o)) {
    return cudaErrorInvalidValue;
  }
  kernel = resolve_kernel(kernel, kAutoForward);
  if (kernel == AttentionKernel::kWgmma) return detail::attention_fwd_wgmma(q, k, v, o, lse, shape, scale, stream);
  if (shape.head_dim == 64) return launch_fwd<64>(q, k, v, o, lse, shape, scale, stream);
  return launch_fwd<128>(q, k, v, o, lse, shape, scale, stream);
}

bool attention_wgmma_supported() { return detail::attention_wgmma_supported(); }

AttentionKernel attention_auto_choice(bool backward) {
  return resolve_kernel(AttentionKernel::kAuto, backward ? kAutoBackward : kAutoForward);
}

const char* attention_kernel_name(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kMmaSync: return "mma.sync";
    case AttentionKernel::kWgmma: return "wgmma";
    case AttentionKernel::kAuto: break;
  }
  return "auto";
}

size_t attention_bwd_workspace_bytes(const AttentionShape& shape) {
  if (!shape_ok(shape)) return 0;
  return workspace_sizes(shape).total();
}

cudaError_t attention_bwd(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const bf16* dout,
                          const float* lse, bf16* dq, bf16* dk, bf16* dv, void* workspace, size_t workspace_bytes,
                          const AttentionShape& shape, float scale, cudaStream_t stream, AttentionKernel kernel) {
  if (!shape_ok(shape) || workspace == nullptr || (reinterpret_cast<uintptr_t>(workspace) & 255u) != 0 ||
      workspace_bytes < attention_bwd_workspace_bytes(shape)) {
    return cudaErrorInvalidValue;
  }
  for (const void* p : {static_cast<const void*>(q), static_cast<const void*>(k), static_cast<const void*>(v),
                        static_cast<const void*>(o), static_cast<const void*>(dout), static_cast<const void*>(dq),
                        static_cast<const void*>(dk), static_cast<const void*>(dv)}) {
    if (!detail::aligned16(p)) return cudaErrorInvalidValue;
  }
  const Workspace w = carve(workspace, shape);
  kernel = resolve_kernel(kernel, kAutoBackward);
  if (kernel == AttentionKernel::kWgmma && !detail::attention_wgmma_supported()) return cudaErrorNotSupported;
  if (shape.head_dim == 64) return launch_bwd<64>(q, k, v, o, dout, lse, dq, dk, dv, w, shape, scale, stream, kernel);
  return launch_bwd<128>(q, k, v, o, dout, lse, dq, dk, dv, w, shape, scale, stream, kernel);
}

}  // namespace trainsim::kernels
