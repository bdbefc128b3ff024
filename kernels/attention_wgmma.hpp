#pragma once
// The wgmma (sm_90a) attention kernels, attention_wgmma.cu: reached through attention_fwd and
// attention_bwd with AttentionKernel::kWgmma. Internal to kernels/.

#include <cuda_runtime.h>

#include "kernels/kernels.hpp"

namespace trainsim::kernels::detail {

// True on a compute capability 9.0 device (H100, H200): the only GPUs the sm_90a code runs on.
bool attention_wgmma_supported();

// Arguments checked by attention_fwd; cudaErrorNotSupported off compute capability 9.0.
cudaError_t attention_fwd_wgmma(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                                const AttentionShape& shape, float scale, cudaStream_t stream);

// The backward's main kernel (attention.cu runs the rest: zeroing the fp32 accumulators, the
// delta = rowsum(dO * O) kernel before, the bf16 conversions after). dq_acc, dk_acc, dv_acc and
// delta as in attention.cu's workspace; cudaErrorNotSupported off compute capability 9.0.
cudaError_t attention_bwd_wgmma_main(const bf16* q, const bf16* k, const bf16* v, const bf16* dout, const float* lse,
                                     const float* delta, float* dq_acc, float* dk_acc, float* dv_acc,
                                     const AttentionShape& shape, float scale, cudaStream_t stream);

}  // namespace trainsim::kernels::detail
