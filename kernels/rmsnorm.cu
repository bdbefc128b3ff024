// RMSNorm forward and backward (formulas in kernels.hpp). One block per row in the forward; in
// the backward about one block per SM walks rows with a grid stride, keeps its partial dweight in
// registers and adds it to dweight with one fp32 atomic per column at the end (details above
// rmsnorm_bwd_kernel). Each thread caches a few vectors of its row in registers, so x (and dy)
// are read from HBM once; rows longer than that cache re-read the rest from L2.

#include <algorithm>

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/ptx.cuh"

namespace trainsim::kernels {
namespace {

using detail::atomic_add_vec;
using detail::block_sum;
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
    rmsnorm_fwd_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y,
                       float* __restrict__ rstd, int hidden, float eps) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const int nvec = hidden / VEC;
  const bf16* xr = x + row * hidden;
  bf16* yr = y + row * hidden;

  Pack<VEC> cache[kSlots];
  float ss = 0.0f;
  read_row<VEC, kSlots>(xr, nvec, cache, [&](int, const float(&f)[VEC]) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) ss += f[j] * f[j];
  });
  ss = block_sum(ss, scratch);
  const float r = rsqrtf(ss / static_cast<float>(hidden) + eps);
  if (threadIdx.x == 0) rstd[row] = r;

  auto emit = [&](int i, const float(&f)[VEC]) {
    float wv[VEC], o[VEC];
    load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wv);
#pragma unroll
    for (int j = 0; j < VEC; ++j) o[j] = f[j] * r * wv[j];
    store_f<VEC>(yr + static_cast<int64_t>(i) * VEC, o);
  };
  revisit_row<VEC, kSlots>(xr, nvec, cache, emit);
}

// Backward. Each block walks rows with a grid stride (grid: about one block per SM, see
// launch_bwd). Thread t owns the vectors i = t + s * blockDim (s < kBwdSlots) of every row: their
// dy and x stay in registers, the next kBwdDepth rows' are loaded while the current one is
// reduced and written (software pipelining), and the partial dweight of those columns is kept in registers.
// Vectors beyond kBwdSlots * blockDim (rows longer than the register cache) are re-read from L2
// and their partial dweight kept in dynamic shared memory, slot-major (element j of overflow
// vector k at [j * nover + k]). At the end each block adds its partials to dweight with one fp32
// atomic per column (float4 atomics on sm_90): grid * hidden atomics in all, not rows * hidden.
template <int VEC>
__global__ void __launch_bounds__(kBwdMaxThreads)
    rmsnorm_bwd_kernel(const bf16* __restrict__ dy, const bf16* __restrict__ x, const bf16* __restrict__ w,
                       const float* __restrict__ rstd, bf16* __restrict__ dx, float* __restrict__ dw, int64_t rows,
                       int hidden) {
  constexpr int S = kBwdSlots;
  __shared__ float scratch[32];
  float* over_acc = reinterpret_cast<float*>(detail::dynamic_smem());
  const int nvec = hidden / VEC;
  const int covered = S * static_cast<int>(blockDim.x);
  const int nover = nvec > covered ? nvec - covered : 0;
  for (int k = threadIdx.x; k < nover; k += blockDim.x) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) over_acc[j * nover + k] = 0.0f;
  }
  const float inv_hidden = 1.0f / static_cast<float>(hidden);

  float wv[S][VEC];
  float acc[S][VEC];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      wv[s][j] = 0.0f;
      acc[s][j] = 0.0f;
    }
    if (i < nvec) load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wv[s]);
  }

  // Ring of D + 1 rows in registers: the current one and the next D, whose loads are in flight
  // while the current row is reduced and written.
  constexpr int D = kBwdDepth;
  Pack<VEC> bdy[D + 1][S] = {}, bx[D + 1][S] = {};
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
      br[d] = rstd[rr];
    }
  }
  for (; row < rows; row += gridDim.x) {
    const int64_t ahead = row + static_cast<int64_t>(D) * gridDim.x;
    if (ahead < rows) {
      load_row(ahead, bdy[D], bx[D]);
      br[D] = rstd[ahead];
    }
    const float r = br[0];
    const Pack<VEC>(&cdy)[S] = bdy[0];
    const Pack<VEC>(&cx)[S] = bx[0];
    const bf16* dyr = dy + row * hidden;
    const bf16* xr = x + row * hidden;
    bf16* dxr = dx + row * hidden;

    // sum_c g * xh
    float sum = 0.0f;
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) {
        float fd[VEC], fx[VEC];
        unpack<VEC>(cdy[s], fd);
        unpack<VEC>(cx[s], fx);
#pragma unroll
        for (int j = 0; j < VEC; ++j) sum += fd[j] * wv[s][j] * fx[j];
      }
    }
    for (int i = threadIdx.x + covered; i < nvec; i += blockDim.x) {
      float fd[VEC], fx[VEC], wo[VEC];
      load_f<VEC>(dyr + static_cast<int64_t>(i) * VEC, fd);
      load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, fx);
      load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wo);
#pragma unroll
      for (int j = 0; j < VEC; ++j) sum += fd[j] * wo[j] * fx[j];
    }
    const float mean_gx = block_sum(sum * r, scratch) * inv_hidden;

#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) {
        float fd[VEC], fx[VEC], o[VEC];
        unpack<VEC>(cdy[s], fd);
        unpack<VEC>(cx[s], fx);
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          const float xh = fx[j] * r;
          o[j] = r * (fd[j] * wv[s][j] - xh * mean_gx);
          acc[s][j] += fd[j] * xh;
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
        const float xh = fx[j] * r;
        o[j] = r * (fd[j] * wo[j] - xh * mean_gx);
        over_acc[j * nover + k] += fd[j] * xh;
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
      br[d] = br[d + 1];
    }
  }
  if (blockIdx.x >= rows) return;
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
    if (i < nvec) atomic_add_vec<VEC>(dw + static_cast<int64_t>(i) * VEC, acc[s]);
  }
  // Each thread only ever touched its own entries of over_acc: no barrier needed before the flush.
  for (int k = threadIdx.x; k < nover; k += blockDim.x) {
    float v[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) v[j] = over_acc[j * nover + k];
    atomic_add_vec<VEC>(dw + static_cast<int64_t>(covered + k) * VEC, v);
  }
}

template <int VEC>
cudaError_t launch_fwd(const bf16* x, const bf16* w, bf16* y, float* rstd, int64_t rows, int hidden, float eps,
                       cudaStream_t stream) {
  const int threads = detail::row_block_threads(hidden / VEC, kSlots, 32, kFwdMaxThreads);
  rmsnorm_fwd_kernel<VEC><<<static_cast<unsigned>(rows), threads, 0, stream>>>(x, w, y, rstd, hidden, eps);
  return cudaGetLastError();
}

template <int VEC>
cudaError_t launch_bwd(const bf16* dy, const bf16* x, const bf16* w, const float* rstd, bf16* dx, float* dw,
                       int64_t rows, int hidden, cudaStream_t stream) {
  const int nvec = hidden / VEC;
  const int threads = detail::row_block_threads(nvec, kBwdSlots, 64, kBwdMaxThreads);
  const int covered = kBwdSlots * threads;
  const int nover = nvec > covered ? nvec - covered : 0;
  const size_t smem = static_cast<size_t>(nover) * VEC * sizeof(float);
  cudaError_t err = cudaFuncSetAttribute(rmsnorm_bwd_kernel<VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  int per_sm = 0;
  err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rmsnorm_bwd_kernel<VEC>, threads, smem);
  if (err != cudaSuccess) return err;
  if (per_sm < 1) return cudaErrorInvalidValue;
  const int blocks_per_sm = std::min(per_sm, detail::norm_bwd_blocks_per_sm(hidden, kBwdDepth));
  const int64_t cap = static_cast<int64_t>(detail::num_sms()) * blocks_per_sm;
  const unsigned grid = static_cast<unsigned>(rows < cap ? rows : cap);
  rmsnorm_bwd_kernel<VEC><<<grid, threads, smem, stream>>>(dy, x, w, rstd, dx, dw, rows, hidden);
  return cudaGetLastError();
}

}  // namespace

cudaError_t rmsnorm_fwd(const bf16* x, const bf16* weight, bf16* y, float* rstd, int64_t rows, int hidden, float eps,
                        cudaStream_t stream) {
  if (rows < 0 || hidden <= 0 || rows > 0x7fffffff) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (hidden % 8 == 0 && detail::aligned16(x) && detail::aligned16(weight) && detail::aligned16(y)) {
    return launch_fwd<8>(x, weight, y, rstd, rows, hidden, eps, stream);
  }
  return launch_fwd<1>(x, weight, y, rstd, rows, hidden, eps, stream);
}

cudaError_t rmsnorm_bwd(const bf16* dy, const bf16* x, const bf16* weight, const float* rstd, bf16* dx, float* dweight,
                        int64_t rows, int hidden, cudaStream_t stream) {
  if (rows < 0 || hidden <= 0 || static_cast<size_t>(hidden) * sizeof(float) > 200 * 1024) {
    return cudaErrorInvalidValue;
  }
  cudaError_t err = cudaMemsetAsync(dweight, 0, static_cast<size_t>(hidden) * sizeof(float), stream);
  if (err != cudaSuccess || rows == 0) return err;
  if (hidden % 8 == 0 && detail::aligned16(dy) && detail::aligned16(x) && detail::aligned16(weight) &&
      detail::aligned16(dx) && detail::aligned16(dweight)) {
    return launch_bwd<8>(dy, x, weight, rstd, dx, dweight, rows, hidden, stream);
  }
  return launch_bwd<1>(dy, x, weight, rstd, dx, dweight, rows, hidden, stream);
}

}  // namespace trainsim::kernels
