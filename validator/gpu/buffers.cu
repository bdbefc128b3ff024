#include <cuda_bf16.h>

#include "validator/gpu/buffers.hpp"
#include "validator/gpu/check.hpp"

namespace trainsim::validator::gpu {

namespace {
__device__ __forceinline__ uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__device__ __forceinline__ float nonzero_uniform(uint64_t seed, size_t i, float scale) {
  const uint64_t r = mix(seed * 0x100000001b3ull + i);
  const float u = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  const float mag = scale * (0.0625f + 0.9375f * u);
  return (r & 1) ? mag : -mag;
}
__global__ void fill_bf16_kernel(__nv_bfloat16* p, size_t n, float scale, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(nonzero_uniform(seed, i, scale));
}
__global__ void fill_f32_kernel(float* p, size_t n, float scale, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = nonzero_uniform(seed, i, scale);
}
__global__ void fill_bytes_kernel(uint8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    // e4m3: sign | 4-bit exponent | 3-bit mantissa; exponents 1..7 keep values in [2^-6, 1.9]:
    // finite, non-zero, far from overflow in K-long dot products.
    const uint64_t r = mix(seed * 0x100000001b3ull + i);
    p[i] = static_cast<uint8_t>(((r & 1) << 7) | ((1 + (r >> 1) % 7) << 3) | ((r >> 8) & 7));
  }
}
__global__ void empty_kernel() {}

unsigned grid_for(size_t n) {
  const size_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks == 0 ? 1 : blocks) : 4096);
}
// Spins one thread until the device's global timer has advanced by `ns` nanoseconds.
__global__ void wait_kernel(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) TRAINSIM_CUDA(cudaMalloc(&p_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}

void fill_bf16(void* p, size_t count, float scale, uint64_t seed, cudaStream_t s) {
  fill_bf16_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), count, scale, seed);
  TRAINSIM_LAUNCHED();
}
void fill_f32(void* p, size_t count, float scale, uint64_t seed, cudaStream_t s) {
  fill_f32_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<float*>(p), count, scale, seed);
  TRAINSIM_LAUNCHED();
}
void fill_bytes(void* p, size_t bytes, uint64_t seed, cudaStream_t s) {
  fill_bytes_kernel<<<grid_for(bytes), 256, 0, s>>>(static_cast<uint8_t*>(p), bytes, seed);
  TRAINSIM_LAUNCHED();
}
void launch_wait(double seconds, cudaStream_t s) {
  if (!(seconds > 0)) return;
  wait_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(seconds * 1e9));
  TRAINSIM_LAUNCHED();
}
void launch_empty(cudaStream_t s) {
  empty_kernel<<<1, 32, 0, s>>>();
  TRAINSIM_LAUNCHED();
}

}  // namespace trainsim::validator::gpu
