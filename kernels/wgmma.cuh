#pragma once
// Hopper warpgroup MMA (wgmma, sm_90a) for the attention kernels: shared-memory matrix
// descriptors, the fences and group waits, and the wgmma forms attention_wgmma.cu issues (n 64
// and 128; A from shared memory or registers). Only
// sources compiled for sm_90a may include this (kernels/CMakeLists.txt). Internal to kernels/.
//
// From the PTX ISA ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate"):
// - A warpgroup is 4 consecutive warps starting at a warp index divisible by 4; all 128 threads
//   issue each wgmma. D is 64 x N fp32: warp w of the group holds rows 16w..16w+15, and with
//   g = lane / 4, t = lane % 4, registers d[4i .. 4i+3] are (16w+g, 8i+2t), (16w+g, 8i+2t+1),
//   (16w+g+8, 8i+2t), (16w+g+8, 8i+2t+1): per 8-column block, the mma.m16n8k16 C layout.
// - A from registers (64 x 16 bf16): warp w holds rows 16w..16w+15 in the mma.m16n8k16 A layout
//   (ptx.cuh), so an fp32 D fragment packs into A operands as in the mma.sync kernels.
// - Operands in shared memory are described by a 64-bit descriptor (start address, leading and
//   stride byte offsets, each >> 4; bits 62-63 the swizzle mode). This file uses the 128-byte
//   swizzle only: a tile is stored as blocks of 8 rows x 128 bytes (64 bf16), and the 16-byte
//   chunk c of row r sits at chunk c ^ (r % 8) (address bits 4-6 XOR bits 7-9); every block
//   starts on a 1024-byte boundary (base offset 0).
//     K-major (rows are M or N, the 128 bytes run along K): LBO unused (1), SBO = the stride
//     between 8-row blocks. Stepping K by 16 elements inside the 64-element span adds 32 bytes to
//     the start address (the hardware swizzles the final address).
//     MN-major (A with imm-trans-a = 1 or B with imm-trans-b = 1: rows are K, the 128 bytes run
//     along M or N): LBO = the stride between 64-element spans of M or N, SBO = the stride
//     between 8-row blocks of K. Stepping K by 16 adds 16 rows (2048 bytes) to the start.
// - Order: registers written by ordinary instructions before a wgmma reads them (accumulators, A
//   fragments) need wgmma.fence first; shared memory written by the generic proxy (st.shared,
//   cp.async) needs fence.proxy.async before the barrier that precedes the wgmma; accumulators
//   are not to be touched until wgmma.wait_group says their group is done.

#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/ptx.cuh"

namespace trainsim::kernels::detail {

constexpr uint64_t kSwizzle128B = 1;  // descriptor bits 62-63

// Descriptor for a 128-byte-swizzled operand at shared address `smem` (1024-byte aligned block
// base plus a K offset of a multiple of 32 bytes), with the leading and stride byte offsets.
__device__ __forceinline__ uint64_t wgmma_desc(const void* smem, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  const uint64_t addr = smem_u32(smem);
  return ((addr & 0x3FFFFu) >> 4) | (static_cast<uint64_t>((lbo_bytes & 0x3FFFFu) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFFu) >> 4) << 32) | (kSwizzle128B << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from moving reads or writes of these registers across a wgmma fence or
// wait (the asm statements above do not name the accumulators).
template <int N>
__device__ __forceinline__ void fence_registers(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_registers(uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Makes this thread's generic-proxy shared-memory writes (st.shared, cp.async) visible to the
// async proxy (wgmma operands), ahead of a barrier.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// The accumulator operands of the asm statements below: "+f"(d[0]) ... "+f"(d[N - 1]).
#define TRAINSIM_WGMMA_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define TRAINSIM_WGMMA_D16(i) \
  TRAINSIM_WGMMA_D4(i), TRAINSIM_WGMMA_D4(i + 4), TRAINSIM_WGMMA_D4(i + 8), TRAINSIM_WGMMA_D4(i + 12)
#define TRAINSIM_WGMMA_D32 TRAINSIM_WGMMA_D16(0), TRAINSIM_WGMMA_D16(16)
#define TRAINSIM_WGMMA_D64 TRAINSIM_WGMMA_D32, TRAINSIM_WGMMA_D16(32), TRAINSIM_WGMMA_D16(48)

// clang-format off
// D[64 x 64] (+)= A[64 x 16] B[16 x 64], A and B in shared memory; TRANS_A / TRANS_B 0 for
// K-major, 1 for M-major A / N-major B. scale_d = 0 overwrites D, 1 accumulates.
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void wgmma_ss_m64n64k16(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, %35, %36;\n}\n"
      :
        TRAINSIM_WGMMA_D32
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B));
}

// D[64 x 64] (+)= A[64 x 16] B[16 x 64]; A in registers (the mma.m16n8k16 A layout, one 16-row slice
// per warp), B in shared memory, MN-major (transposed: N contiguous).
__device__ __forceinline__ void wgmma_rs_m64n64k16_tb(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
      :
        TRAINSIM_WGMMA_D32
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// D[64 x 128] (+)= A[64 x 16] B[16 x 128], A and B in shared memory; TRANS_A / TRANS_B 0 for
// K-major, 1 for M-major A / N-major B. scale_d = 0 overwrites D, 1 accumulates.
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void wgmma_ss_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, %67, %68;\n}\n"
      :
        TRAINSIM_WGMMA_D64
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B));
}

// D[64 x 128] (+)= A[64 x 16] B[16 x 128]; A in registers (the mma.m16n8k16 A layout, one 16-row slice
// per warp), B in shared memory, MN-major (transposed: N contiguous).
__device__ __forceinline__ void wgmma_rs_m64n128k16_tb(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
      :
        TRAINSIM_WGMMA_D64
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// clang-format on

#undef TRAINSIM_WGMMA_D64
#undef TRAINSIM_WGMMA_D32
#undef TRAINSIM_WGMMA_D16
#undef TRAINSIM_WGMMA_D4

}  // namespace trainsim::kernels::detail
