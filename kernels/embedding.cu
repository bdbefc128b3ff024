#include "kernels/embedding.hpp"

namespace trainsim::kernels {

namespace {
// One block per token row; 8 bf16 (16 bytes) per thread per step when the row allows it.
__global__ void embedding_fwd_kernel(const int32_t* ids, const __nv_bfloat16* table, __nv_bfloat16* out, int hidden) {
  const int64_t t = blockIdx.x;
  const __nv_bfloat16* src = table + static_cast<int64_t>(ids[t]) * hidden;
  __nv_bfloat16* dst = out + t * hidden;
  if (hidden % 8 == 0) {
    const int4* s = reinterpret_cast<const int4*>(src);
    int4* d = reinterpret_cast<int4*>(dst);
    for (int i = threadIdx.x; i < hidden / 8; i += blockDim.x) d[i] = s[i];
  } else {
    for (int i = threadIdx.x; i < hidden; i += blockDim.x) dst[i] = src[i];
  }
}
__global__ void embedding_bwd_kernel(const int32_t* ids, const __nv_bfloat16* dout, float* dtable, int hidden) {
  const int64_t t = blockIdx.x;
  float* dst = dtable + static_cast<int64_t>(ids[t]) * hidden;
  const __nv_bfloat16* src = dout + t * hidden;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) atomicAdd(dst + i, __bfloat162float(src[i]));
}
}  // namespace

cudaError_t embedding_fwd(const int32_t* ids, const __nv_bfloat16* table, __nv_bfloat16* out, int64_t tokens,
                          int hidden, cudaStream_t stream) {
  if (tokens <= 0 || hidden <= 0 || tokens > 0x7fffffff) return cudaErrorInvalidValue;
  embedding_fwd_kernel<<<static_cast<unsigned>(tokens), 128, 0, stream>>>(ids, table, out, hidden);
  return cudaGetLastError();
}

cudaError_t embedding_bwd(const int32_t* ids, const __nv_bfloat16* dout, float* dtable, int64_t tokens, int hidden,
                          cudaStream_t stream) {
  if (tokens <= 0 || hidden <= 0 || tokens > 0x7fffffff) return cudaErrorInvalidValue;
  embedding_bwd_kernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(ids, dout, dtable, hidden);
  return cudaGetLastError();
}

}  // namespace trainsim::kernels
