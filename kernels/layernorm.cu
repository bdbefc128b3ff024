// LayerNorm forward and backward (formulas in kernels.hpp), with the structure of rmsnorm.cu:
// one block per row in the forward (mean and variance in one pass over the register-cached row,
// shifted by its first element);
// about one block per SM walking rows with a grid stride in the backward, dweight and dbias
// partials in registers, flushed with fp32 (float4) atomics.

#include <algorithm>

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/ptx.cuh"

namespace trainsim::kernels {
namespace {

using detail::atomic_add_vec;
using detail::block_sum;
using detail::block_sum2;
using detail::load_f;
using detail::load_pack;
using detail::Pack;
using detail::read_row;
using detail::revisit_row;
using detail::store_f;
using detail::unpack;

constexpr int kSlots = 4;
constexpr int kFwdMaxThreads = 1024;
constexpr int kBwdMaxThreads = 512;
constexpr int kBwdSlots = 2;
#ifndef TRAINSIM_NORM_BWD_DEPTH
#define TRAINSIM_NORM_BWD_DEPTH 2
#endif
constexpr int kBwdDepth = TRAINSIM_NORM_BWD_DEPTH;  // rows loaded ahead by each backward block

template <int VEC>
__global__ void __launch_bounds__(kFwdMaxThreads, 1)
    layernorm_fwd_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, const bf16* __restrict__ b,
                         bf16* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out, int hidden,
                         float eps) {
  __shared__ float scratch[64];
  const int64_t row = blockIdx.x;
  const int nvec = hidden / VEC;
  const bf16* xr = x + row * hidden;
  bf16* yr = y + row * hidden;
  const float inv_hidden = 1.0f / static_cast<float>(hidden);

  // One pass over the row for both moments, shifted by the row's first element k (the "shifted
  // data" variance: sum (x-k) and sum (x-k)^2 do not cancel catastrophically when |mean| >> std,
  // as long as k is a sample of the row): one block reduction instead of two.
  const float k = __bfloat162float(xr[0]);
  Pack<VEC> cache[kSlots];
  float2 sums = make_float2(0.0f, 0.0f);
  read_row<VEC, kSlots>(xr, nvec, cache, [&](int, const float(&f)[VEC]) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const float d = f[j] - k;
      sums.x += d;
      sums.y += d * d;
    }
  });
  sums = block_sum2(sums, scratch);
  const float dmean = sums.x * inv_hidden;
  const float mean = k + dmean;
  const float var = fmaxf(sums.y * inv_hidden - dmean * dmean, 0.0f);
  const float r = rsqrtf(var + eps);
  if (threadIdx.x == 0) {
    mean_out[row] = mean;
    rstd_out[row] = r;
  }

  auto emit = [&](int i, const float(&f)[VEC]) {
    float wv[VEC], bv[VEC], o[VEC];
    load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wv);
    load_f<VEC>(b + static_cast<int64_t>(i) * VEC, bv);
#pragma unroll
    for (int j = 0; j < VEC; ++j) o[j] = (f[j] - mean) * r * wv[j] + bv[j];
    store_f<VEC>(yr + static_cast<int64_t>(i) * VEC, o);
  };
  revisit_row<VEC, kSlots>(xr, nvec, cache, emit);
}

// Backward, with the structure of rmsnorm_bwd_kernel: about one block per SM, grid-stride rows,
// kBwdSlots vectors per thread cached in registers with the next kBwdDepth rows' loaded while the
// current one is reduced, dweight and dbias partials of those columns in registers (overflow
// columns: dynamic shared memory, 2 * nover * VEC floats, slot-major), float4 atomics at the end.
template <int VEC>
__global__ void __launch_bounds__(kBwdMaxThreads)
    layernorm_bwd_kernel(const bf16* __restrict__ dy, const bf16* __restrict__ x, const bf16* __restrict__ w,
                         const float* __restrict__ mean_in, const float* __restrict__ rstd_in, bf16* __restrict__ dx,
                         float* __restrict__ dw, float* __restrict__ db, int64_t rows, int hidden) {
  constexpr int S = kBwdSlots;
  __shared__ float scratch[64];
  const int nvec = hidden / VEC;
  const int covered = S * static_cast<int>(blockDim.x);
  const int nover = nvec > covered ? nvec - covered : 0;
  float* dw_over = reinterpret_cast<float*>(detail::dynamic_smem());
  float* db_over = dw_over + static_cast<int64_t>(nover) * VEC;
  for (int k = threadIdx.x; k < nover; k += blockDim.x) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      dw_over[j * nover + k] = 0.0f;
      db_over[j * nover + k] = 0.0f;
    }
  }
  const float inv_hidden = 1.0f / static_cast<float>(hidden);

  float wv[S][VEC];
  float dw_acc[S][VEC];
  float db_acc[S][VEC];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      wv[s][j] = 0.0f;
      dw_acc[s][j] = 0.0f;
      db_acc[s][j] = 0.0f;
    }
    if (i < nvec) load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wv[s]);
  }

  // Ring of D + 1 rows in registers: the current one and the next D, whose loads are in flight
  // while the current row is reduced and written.
  constexpr int D = kBwdDepth;
  Pack<VEC> bdy[D + 1][S] = {}, bx[D + 1][S] = {};
  float bmu[D + 1] = {};
  float br[D + 1] = {};
  auto load_row = [&](int64_t row, Pack<VEC>(&pdy)[S], Pack<VEC>(&px)[S]) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) {
        pdy[s] = load_pack<VEC>(dy + row * hidden + static_cast<int64_t>(i) * VEC);
        px[s] = load_pack<VEC>(x + row * hidden + static_cast<int64_t>(i) * VEC);
      }
    }
  };
  int64_t row = blockIdx.x;
#pragma unroll
  for (int d = 0; d < D; ++d) {
    const int64_t rr = row + static_cast<int64_t>(d) * gridDim.x;
    if (rr < rows) {
      load_row(rr, bdy[d], bx[d]);
      bmu[d] = mean_in[rr];
      br[d] = rstd_in[rr];
    }
  }
  for (; row < rows; row += gridDim.x) {
    const int64_t ahead = row + static_cast<int64_t>(D) * gridDim.x;
    if (ahead < rows) {
      load_row(ahead, bdy[D], bx[D]);
      bmu[D] = mean_in[ahead];
      br[D] = rstd_in[ahead];
    }
    const float mu = bmu[0];
    const float r = br[0];
    const Pack<VEC>(&cdy)[S] = bdy[0];
    const Pack<VEC>(&cx)[S] = bx[0];
    const bf16* dyr = dy + row * hidden;
    const bf16* xr = x + row * hidden;
    bf16* dxr = dx + row * hidden;

    // (sum_c g, sum_c g * (x - mean)); the second times rstd is sum_c g * xh.
    float2 sums = make_float2(0.0f, 0.0f);
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) {
        float fd[VEC], fx[VEC];
        unpack<VEC>(cdy[s], fd);
        unpack<VEC>(cx[s], fx);
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          const float g = fd[j] * wv[s][j];
          sums.x += g;
          sums.y += g * (fx[j] - mu);
        }
      }
    }
    for (int i = threadIdx.x + covered; i < nvec; i += blockDim.x) {
      float fd[VEC], fx[VEC], wo[VEC];
      load_f<VEC>(dyr + static_cast<int64_t>(i) * VEC, fd);
      load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, fx);
      load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wo);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float g = fd[j] * wo[j];
        sums.x += g;
        sums.y += g * (fx[j] - mu);
      }
    }
    sums.y *= r;
    sums = block_sum2(sums, scratch);
    const float mean_g = sums.x * inv_hidden;
    const float mean_gx = sums.y * inv_hidden;

#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) {
        float fd[VEC], fx[VEC], o[VEC];
        unpack<VEC>(cdy[s], fd);
        unpack<VEC>(cx[s], fx);
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          const float xh = (fx[j] - mu) * r;
          o[j] = r * (fd[j] * wv[s][j] - mean_g - xh * mean_gx);
          dw_acc[s][j] += fd[j] * xh;
          db_acc[s][j] += fd[j];
        }
        store_f<VEC>(dxr + static_cast<int64_t>(i) * VEC, o);
      }
    }
    for (int i = threadIdx.x + covered; i < nvec; i += blockDim.x) {
      float fd[VEC], fx[VEC], wo[VEC], o[VEC];
      load_f<VEC>(dyr + static_cast<int64_t>(i) * VEC, fd);
      load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, fx);
      load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wo);
      const int k = i - covered;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float xh = (fx[j] - mu) * r;
        o[j] = r * (fd[j] * wo[j] - mean_g - xh * mean_gx);
        dw_over[j * nover + k] += fd[j] * xh;
        db_over[j * nover + k] += fd[j];
      }
      store_f<VEC>(dxr + static_cast<int64_t>(i) * VEC, o);
    }
#pragma unroll
    for (int d = 0; d < D; ++d) {
#pragma unroll
      for (int s = 0; s < S; ++s) {
        bdy[d][s] = bdy[d + 1][s];
        bx[d][s] = bx[d + 1][s];
      }
      bmu[d] = bmu[d + 1];
      br[d] = br[d + 1];
    }
  }
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
    if (i < nvec) {
      atomic_add_vec<VEC>(dw + static_cast<int64_t>(i) * VEC, dw_acc[s]);
      atomic_add_vec<VEC>(db + static_cast<int64_t>(i) * VEC, db_acc[s]);
    }
  }
  // Each thread only ever touched its own entries of the overflow partials: no barrier needed.
  for (int k = threadIdx.x; k < nover; k += blockDim.x) {
    float vw[VEC], vb[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      vw[j] = dw_over[j * nover + k];
      vb[j] = db_over[j * nover + k];
    }
    atomic_add_vec<VEC>(dw + static_cast<int64_t>(covered + k) * VEC, vw);
    atomic_add_vec<VEC>(db + static_cast<int64_t>(covered + k) * VEC, vb);
  }
}

template <int VEC>
cudaError_t launch_fwd(const bf16* x, const bf16* w, const bf16* b, bf16* y, float* mean, float* rstd, int64_t rows,
                       int hidden, float eps, cudaStream_t stream) {
  const int threads = detail::row_block_threads(hidden / VEC, kSlots, 32, kFwdMaxThreads);
  layernorm_fwd_kernel<VEC><<<static_cast<unsigned>(rows), threads, 0, stream>>>(x, w, b, y, mean, rstd, hidden, eps);
  return cudaGetLastError();
}

template <int VEC>
cudaError_t launch_bwd(const bf16* dy, const bf16* x, const bf16* w, const float* mean, const float* rstd, bf16* dx,
                       float* dw, float* db, int64_t rows, int hidden, cudaStream_t stream) {
  const int nvec = hidden / VEC;
  const int threads = detail::row_block_threads(nvec, kBwdSlots, 64, kBwdMaxThreads);
  const int covered = kBwdSlots * threads;
  const int nover = nvec > covered ? nvec - covered : 0;
  const size_t smem = 2 * static_cast<size_t>(nover) * VEC * sizeof(float);
  cudaError_t err = cudaFuncSetAttribute(layernorm_bwd_kernel<VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  int per_sm = 0;
  err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layernorm_bwd_kernel<VEC>, threads, smem);
  if (err != cudaSuccess) return err;
  if (per_sm < 1) return cudaErrorInvalidValue;
  const int blocks_per_sm = std::min(per_sm, detail::norm_bwd_blocks_per_sm(hidden, kBwdDepth));
  const int64_t cap = static_cast<int64_t>(detail::num_sms()) * blocks_per_sm;
  const unsigned grid = static_cast<unsigned>(rows < cap ? rows : cap);
  layernorm_bwd_kernel<VEC><<<grid, threads, smem, stream>>>(dy, x, w, mean, rstd, dx, dw, db, rows, hidden);
  return cudaGetLastError();
}

}  // namespace

cudaError_t layernorm_fwd(const bf16* x, const bf16* weight, const bf16* bias, bf16* y, float* mean, float* rstd,
                          int64_t rows, int hidden, float eps, cudaStream_t stream) {
  if (rows < 0 || hidden <= 0 || rows > 0x7fffffff) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (hidden % 8 == 0 && detail::aligned16(x) && detail::aligned16(weight) && detail::aligned16(bias) &&
      detail::aligned16(y)) {
    return launch_fwd<8>(x, weight, bias, y, mean, rstd, rows, hidden, eps, stream);
  }
  return launch_fwd<1>(x, weight, bias, y, mean, rstd, rows, hidden, eps, stream);
}

cudaError_t layernorm_bwd(const bf16* dy, const bf16* x, const bf16* weight, const float* mean, const float* rstd,
                          bf16* dx, float* dweight, float* dbias, int64_t rows, int hidden, cudaStream_t stream) {
  if (rows < 0 || hidden <= 0 || 2 * static_cast<size_t>(hidden) * sizeof(float) > 200 * 1024) {
    return cudaErrorInvalidValue;
  }
  const size_t bytes = static_cast<size_t>(hidden) * sizeof(float);
  cudaError_t err = cudaMemsetAsync(dweight, 0, bytes, stream);
  if (err == cudaSuccess) err = cudaMemsetAsync(dbias, 0, bytes, stream);
  if (err != cudaSuccess || rows == 0) return err;
  if (hidden % 8 == 0 && detail::aligned16(dy) && detail::aligned16(x) && detail::aligned16(weight) &&
      detail::aligned16(dx) && detail::aligned16(dweight) && detail::aligned16(dbias)) {
    return launch_bwd<8>(dy, x, weight, mean, rstd, dx, dweight, dbias, rows, hidden, stream);
  }
  return launch_bwd<1>(dy, x, weight, mean, rstd, dx, dweight, dbias, rows, hidden, stream);
}

}  // namespace trainsim::kernels
