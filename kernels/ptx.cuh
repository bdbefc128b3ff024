#pragma once
// The few PTX instructions the attention kernels use, each behind a small inline function so that
// the rest of the code is plain CUDA C++: bf16 tensor-core MMA (mma.sync m16n8k16, fp32
// accumulate), ldmatrix (plain and transposed), cp.async 16-byte copies global -> shared with
// zero fill, and the dynamic shared memory base. sm_80 or newer. Internal to kernels/.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"), with
// g = lane / 4 and t = lane % 4; each 32-bit register holds two bf16, the lower column first:
//   A (16x16, row-major): a[0] = (g, 2t..2t+1)    a[1] = (g+8, 2t..2t+1)
//                         a[2] = (g, 2t+8..2t+9)  a[3] = (g+8, 2t+8..2t+9)
//   B (16x8, "col"):      b[0] = (k = 2t..2t+1, n = g)   b[1] = (k = 2t+8..2t+9, n = g)
//   C/D (16x8 fp32):      c[0..1] = (g, 2t..2t+1)        c[2..3] = (g+8, 2t..2t+1)
// ldmatrix .x4: lanes 8i..8i+7 give the row addresses (16 bytes each) of 8x8 matrix i; register i
// of lane l receives row l/4, columns 2(l%4)..2(l%4)+1 of matrix i (.trans: the transposed matrix).

#include <cstdint>

#include <cuda_runtime.h>

namespace trainsim::kernels::detail {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// d = a * b + c for one 16x8x16 tile.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(row_addr)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(row_addr)));
}

// Copies 16 bytes from global src to shared dst when `valid`, else writes 16 zero bytes (src is
// not read then, but must still be a valid address).
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}

// Copies 4 bytes (valid) or writes 4 zero bytes.
__device__ __forceinline__ void cp_async_4(void* dst, const void* src, bool valid) {
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Base of the block's dynamic shared memory (128-byte aligned).
__device__ __forceinline__ unsigned char* dynamic_smem() {
  extern __shared__ __align__(128) unsigned char trainsim_dynamic_smem[];
  return trainsim_dynamic_smem;
}

}  // namespace trainsim::kernels::detail
