// RMSNorm forward and backward (formulas in kernels.hpp). One block per row in the forward; in
// the backward each block walks rows with a grid stride, keeps its partial dweight in shared
// memory (fp32) and adds it to dweight with one fp32 atomic per column at the end.
// Each thread caches kSlots vectors of its row in registers, so x (and dy) are read from HBM once;
// rows longer than kSlots * blockDim vectors re-read the rest from L2.

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/ptx.cuh"

namespace trainsim::kernels {
namespace {

using detail::block_sum;
using detail::load_f;
using detail::load_pack;
using detail::Pack;
using detail::store_f;
using detail::unpack;

constexpr int kSlots = 4;
constexpr int kFwdMaxThreads = 1024;
constexpr int kBwdMaxThreads = 512;

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
#pragma unroll
  for (int s = 0; s < kSlots; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
    if (i < nvec) {
      cache[s] = load_pack<VEC>(xr + static_cast<int64_t>(i) * VEC);
      float f[VEC];
      unpack<VEC>(cache[s], f);
#pragma unroll
      for (int j = 0; j < VEC; ++j) ss += f[j] * f[j];
    }
  }
  for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
    float f[VEC];
    load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, f);
#pragma unroll
    for (int j = 0; j < VEC; ++j) ss += f[j] * f[j];
  }
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
#pragma unroll
  for (int s = 0; s < kSlots; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
    if (i < nvec) {
      float f[VEC];
      unpack<VEC>(cache[s], f);
      emit(i, f);
    }
  }
  for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
    float f[VEC];
    load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, f);
    emit(i, f);
  }
}

// Dynamic shared memory: hidden floats of partial dweight, stored slot-major (element j of vector
// i at [j * nvec + i]) so that a warp touches 32 consecutive words.
template <int VEC>
__global__ void __launch_bounds__(kBwdMaxThreads)
    rmsnorm_bwd_kernel(const bf16* __restrict__ dy, const bf16* __restrict__ x, const bf16* __restrict__ w,
                       const float* __restrict__ rstd, bf16* __restrict__ dx, float* __restrict__ dw, int64_t rows,
                       int hidden) {
  __shared__ float scratch[32];
  float* dw_acc = reinterpret_cast<float*>(detail::dynamic_smem());
  const int nvec = hidden / VEC;
  for (int i = threadIdx.x; i < nvec; i += blockDim.x) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) dw_acc[j * nvec + i] = 0.0f;
  }
  const float inv_hidden = 1.0f / static_cast<float>(hidden);

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float r = rstd[row];
    const bf16* dyr = dy + row * hidden;
    const bf16* xr = x + row * hidden;
    bf16* dxr = dx + row * hidden;

    // sum_c g * xh
    auto partial = [&](int i, const float(&fd)[VEC], const float(&fx)[VEC]) {
      float wv[VEC];
      load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wv);
      float acc = 0.0f;
#pragma unroll
      for (int j = 0; j < VEC; ++j) acc += fd[j] * wv[j] * fx[j] * r;
      return acc;
    };
    Pack<VEC> cdy[kSlots], cx[kSlots];
    float sum = 0.0f;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) {
        cdy[s] = load_pack<VEC>(dyr + static_cast<int64_t>(i) * VEC);
        cx[s] = load_pack<VEC>(xr + static_cast<int64_t>(i) * VEC);
        float fd[VEC], fx[VEC];
        unpack<VEC>(cdy[s], fd);
        unpack<VEC>(cx[s], fx);
        sum += partial(i, fd, fx);
      }
    }
    for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
      float fd[VEC], fx[VEC];
      load_f<VEC>(dyr + static_cast<int64_t>(i) * VEC, fd);
      load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, fx);
      sum += partial(i, fd, fx);
    }
    const float mean_gx = block_sum(sum, scratch) * inv_hidden;

    auto emit = [&](int i, const float(&fd)[VEC], const float(&fx)[VEC]) {
      float wv[VEC], o[VEC];
      load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wv);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float xh = fx[j] * r;
        o[j] = r * (fd[j] * wv[j] - xh * mean_gx);
        dw_acc[j * nvec + i] += fd[j] * xh;
      }
      store_f<VEC>(dxr + static_cast<int64_t>(i) * VEC, o);
    };
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) {
        float fd[VEC], fx[VEC];
        unpack<VEC>(cdy[s], fd);
        unpack<VEC>(cx[s], fx);
        emit(i, fd, fx);
      }
    }
    for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
      float fd[VEC], fx[VEC];
      load_f<VEC>(dyr + static_cast<int64_t>(i) * VEC, fd);
      load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, fx);
      emit(i, fd, fx);
    }
  }
  // Each thread only ever touched its own columns of dw_acc: no barrier needed before the flush.
  for (int i = threadIdx.x; i < nvec; i += blockDim.x) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) atomicAdd(&dw[static_cast<int64_t>(i) * VEC + j], dw_acc[j * nvec + i]);
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
  const int threads = detail::row_block_threads(hidden / VEC, kSlots, 32, kBwdMaxThreads);
  const size_t smem = static_cast<size_t>(hidden) * sizeof(float);
  cudaError_t err = cudaFuncSetAttribute(rmsnorm_bwd_kernel<VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  int per_sm = 0;
  err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rmsnorm_bwd_kernel<VEC>, threads, smem);
  if (err != cudaSuccess) return err;
  if (per_sm < 1) return cudaErrorInvalidValue;
  const int64_t cap = static_cast<int64_t>(detail::num_sms()) * per_sm;
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
      detail::aligned16(dx)) {
    return launch_bwd<8>(dy, x, weight, rstd, dx, dweight, rows, hidden, stream);
  }
  return launch_bwd<1>(dy, x, weight, rstd, dx, dweight, rows, hidden, stream);
}

}  // namespace trainsim::kernels
