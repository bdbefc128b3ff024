// LayerNorm forward and backward (formulas in kernels.hpp), with the structure of rmsnorm.cu:
// one block per row in the forward (two-pass mean and variance over the register-cached row);
// grid-stride rows in the backward with dweight and dbias partials in shared memory, flushed with
// fp32 atomics.

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"
#include "kernels/ptx.cuh"

namespace trainsim::kernels {
namespace {

using detail::block_sum;
using detail::block_sum2;
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
    layernorm_fwd_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, const bf16* __restrict__ b,
                         bf16* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out, int hidden,
                         float eps) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const int nvec = hidden / VEC;
  const bf16* xr = x + row * hidden;
  bf16* yr = y + row * hidden;
  const float inv_hidden = 1.0f / static_cast<float>(hidden);

  Pack<VEC> cache[kSlots];
  float sum = 0.0f;
#pragma unroll
  for (int s = 0; s < kSlots; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
    if (i < nvec) {
      cache[s] = load_pack<VEC>(xr + static_cast<int64_t>(i) * VEC);
      float f[VEC];
      unpack<VEC>(cache[s], f);
#pragma unroll
      for (int j = 0; j < VEC; ++j) sum += f[j];
    }
  }
  for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
    float f[VEC];
    load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, f);
#pragma unroll
    for (int j = 0; j < VEC; ++j) sum += f[j];
  }
  const float mean = block_sum(sum, scratch) * inv_hidden;

  float var = 0.0f;
#pragma unroll
  for (int s = 0; s < kSlots; ++s) {
    const int i = threadIdx.x + s * blockDim.x;
    if (i < nvec) {
      float f[VEC];
      unpack<VEC>(cache[s], f);
#pragma unroll
      for (int j = 0; j < VEC; ++j) var += (f[j] - mean) * (f[j] - mean);
    }
  }
  for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
    float f[VEC];
    load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, f);
#pragma unroll
    for (int j = 0; j < VEC; ++j) var += (f[j] - mean) * (f[j] - mean);
  }
  const float r = rsqrtf(block_sum(var, scratch) * inv_hidden + eps);
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

// Dynamic shared memory: 2 * hidden floats, the partial dweight then the partial dbias, each
// slot-major (element j of vector i at [j * nvec + i]).
template <int VEC>
__global__ void __launch_bounds__(kBwdMaxThreads)
    layernorm_bwd_kernel(const bf16* __restrict__ dy, const bf16* __restrict__ x, const bf16* __restrict__ w,
                         const float* __restrict__ mean_in, const float* __restrict__ rstd_in, bf16* __restrict__ dx,
                         float* __restrict__ dw, float* __restrict__ db, int64_t rows, int hidden) {
  __shared__ float scratch[64];
  float* dw_acc = reinterpret_cast<float*>(detail::dynamic_smem());
  float* db_acc = dw_acc + hidden;
  const int nvec = hidden / VEC;
  for (int i = threadIdx.x; i < nvec; i += blockDim.x) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      dw_acc[j * nvec + i] = 0.0f;
      db_acc[j * nvec + i] = 0.0f;
    }
  }
  const float inv_hidden = 1.0f / static_cast<float>(hidden);

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float mu = mean_in[row];
    const float r = rstd_in[row];
    const bf16* dyr = dy + row * hidden;
    const bf16* xr = x + row * hidden;
    bf16* dxr = dx + row * hidden;

    // (sum_c g, sum_c g * xh)
    auto partial = [&](int i, const float(&fd)[VEC], const float(&fx)[VEC]) {
      float wv[VEC];
      load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wv);
      float2 acc = make_float2(0.0f, 0.0f);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float g = fd[j] * wv[j];
        acc.x += g;
        acc.y += g * (fx[j] - mu) * r;
      }
      return acc;
    };
    Pack<VEC> cdy[kSlots], cx[kSlots];
    float2 sums = make_float2(0.0f, 0.0f);
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const int i = threadIdx.x + s * blockDim.x;
      if (i < nvec) {
        cdy[s] = load_pack<VEC>(dyr + static_cast<int64_t>(i) * VEC);
        cx[s] = load_pack<VEC>(xr + static_cast<int64_t>(i) * VEC);
        float fd[VEC], fx[VEC];
        unpack<VEC>(cdy[s], fd);
        unpack<VEC>(cx[s], fx);
        const float2 p = partial(i, fd, fx);
        sums.x += p.x;
        sums.y += p.y;
      }
    }
    for (int i = threadIdx.x + kSlots * blockDim.x; i < nvec; i += blockDim.x) {
      float fd[VEC], fx[VEC];
      load_f<VEC>(dyr + static_cast<int64_t>(i) * VEC, fd);
      load_f<VEC>(xr + static_cast<int64_t>(i) * VEC, fx);
      const float2 p = partial(i, fd, fx);
      sums.x += p.x;
      sums.y += p.y;
    }
    sums = block_sum2(sums, scratch);
    const float mean_g = sums.x * inv_hidden;
    const float mean_gx = sums.y * inv_hidden;

    auto emit = [&](int i, const float(&fd)[VEC], const float(&fx)[VEC]) {
      float wv[VEC], o[VEC];
      load_f<VEC>(w + static_cast<int64_t>(i) * VEC, wv);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float xh = (fx[j] - mu) * r;
        o[j] = r * (fd[j] * wv[j] - mean_g - xh * mean_gx);
        dw_acc[j * nvec + i] += fd[j] * xh;
        db_acc[j * nvec + i] += fd[j];
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
  for (int i = threadIdx.x; i < nvec; i += blockDim.x) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      atomicAdd(&dw[static_cast<int64_t>(i) * VEC + j], dw_acc[j * nvec + i]);
      atomicAdd(&db[static_cast<int64_t>(i) * VEC + j], db_acc[j * nvec + i]);
    }
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
  const int threads = detail::row_block_threads(hidden / VEC, kSlots, 32, kBwdMaxThreads);
  const size_t smem = 2 * static_cast<size_t>(hidden) * sizeof(float);
  cudaError_t err = cudaFuncSetAttribute(layernorm_bwd_kernel<VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  int per_sm = 0;
  err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layernorm_bwd_kernel<VEC>, threads, smem);
  if (err != cudaSuccess) return err;
  if (per_sm < 1) return cudaErrorInvalidValue;
  const int64_t cap = static_cast<int64_t>(detail::num_sms()) * per_sm;
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
      detail::aligned16(dx)) {
    return launch_bwd<8>(dy, x, weight, mean, rstd, dx, dweight, dbias, rows, hidden, stream);
  }
  return launch_bwd<1>(dy, x, weight, mean, rstd, dx, dweight, dbias, rows, hidden, stream);
}

}  // namespace trainsim::kernels
