// SwiGLU forward and backward (formulas in kernels.hpp). Rows of the [rows, 2*ffn] input are
// gate | up halves, so the kernels run on a 2-D grid (blockIdx.x = row, blockIdx.y = column
// block): one 16-byte vector (8 bf16) per thread when ffn % 8 == 0, one element otherwise.

#include "kernels/device_utils.cuh"
#include "kernels/kernels.hpp"

namespace trainsim::kernels {
namespace {

using detail::load_f;
using detail::store_f;

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }

template <int VEC>
__global__ void __launch_bounds__(256) swiglu_fwd_kernel(const bf16* __restrict__ in, bf16* __restrict__ out, int ffn) {
  const int i = blockIdx.y * blockDim.x + threadIdx.x;
  if (i >= ffn / VEC) return;
  const int64_t row = blockIdx.x;
  const bf16* g = in + row * 2 * ffn + static_cast<int64_t>(i) * VEC;
  float fg[VEC], fu[VEC], o[VEC];
  load_f<VEC>(g, fg);
  load_f<VEC>(g + ffn, fu);
#pragma unroll
  for (int j = 0; j < VEC; ++j) o[j] = fg[j] * sigmoid(fg[j]) * fu[j];
  store_f<VEC>(out + row * ffn + static_cast<int64_t>(i) * VEC, o);
}

template <int VEC>
__global__ void __launch_bounds__(256)
    swiglu_bwd_kernel(const bf16* __restrict__ dout, const bf16* __restrict__ in, bf16* __restrict__ din, int ffn) {
  const int i = blockIdx.y * blockDim.x + threadIdx.x;
  if (i >= ffn / VEC) return;
  const int64_t row = blockIdx.x;
  const int64_t off = row * 2 * ffn + static_cast<int64_t>(i) * VEC;
  float fd[VEC], fg[VEC], fu[VEC], dg[VEC], du[VEC];
  load_f<VEC>(dout + row * ffn + static_cast<int64_t>(i) * VEC, fd);
  load_f<VEC>(in + off, fg);
  load_f<VEC>(in + off + ffn, fu);
#pragma unroll
  for (int j = 0; j < VEC; ++j) {
    const float s = sigmoid(fg[j]);
    du[j] = fd[j] * fg[j] * s;
    dg[j] = fd[j] * fu[j] * s * (1.0f + fg[j] * (1.0f - s));
  }
  store_f<VEC>(din + off, dg);
  store_f<VEC>(din + off + ffn, du);
}

// Threads per block and column blocks for nvec vectors per row: the fewest blocks of <= 256
// threads, spread evenly so that few threads idle.
dim3 row_grid(int64_t rows, int nvec, int* threads) {
  const int64_t blocks = detail::ceil_div(nvec, 256);
  *threads = static_cast<int>(detail::ceil_div(detail::ceil_div(nvec, blocks), 32) * 32);
  return dim3(static_cast<unsigned>(rows), static_cast<unsigned>(blocks), 1);
}

bool valid(int64_t rows, int ffn) { return rows >= 0 && rows <= 0x7fffffff && ffn > 0; }

}  // namespace

cudaError_t swiglu_fwd(const bf16* in, bf16* out, int64_t rows, int ffn, cudaStream_t stream) {
  if (!valid(rows, ffn)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  int threads = 0;
  if (ffn % 8 == 0 && detail::aligned16(in) && detail::aligned16(out)) {
    const dim3 grid = row_grid(rows, ffn / 8, &threads);
    swiglu_fwd_kernel<8><<<grid, threads, 0, stream>>>(in, out, ffn);
  } else {
    const dim3 grid = row_grid(rows, ffn, &threads);
    swiglu_fwd_kernel<1><<<grid, threads, 0, stream>>>(in, out, ffn);
  }
  return cudaGetLastError();
}

cudaError_t swiglu_bwd(const bf16* dout, const bf16* in, bf16* din, int64_t rows, int ffn, cudaStream_t stream) {
  if (!valid(rows, ffn)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  int threads = 0;
  if (ffn % 8 == 0 && detail::aligned16(dout) && detail::aligned16(in) && detail::aligned16(din)) {
    const dim3 grid = row_grid(rows, ffn / 8, &threads);
    swiglu_bwd_kernel<8><<<grid, threads, 0, stream>>>(dout, in, din, ffn);
  } else {
    const dim3 grid = row_grid(rows, ffn, &threads);
    swiglu_bwd_kernel<1><<<grid, threads, 0, stream>>>(dout, in, din, ffn);
  }
  return cudaGetLastError();
}

}  // namespace trainsim::kernels
