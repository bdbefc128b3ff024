#pragma once
// The wgmma (sm_90a) attention forward, attention_wgmma.cu: reached through attention_fwd with
// AttentionKernel::kWgmma. Internal to kernels/.

#include <cuda_runtime.h>

#include "kernels/kernels.hpp"

namespace trainsim::kernels::detail {

// True on a compute capability 9.0 device (H100, H200): the only GPUs the sm_90a code runs on.
bool attention_wgmma_supported();

// Arguments checked by attention_fwd; cudaErrorNotSupported off compute capability 9.0.
cudaError_t attention_fwd_wgmma(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                                const AttentionShape& shape, float scale, cudaStream_t stream);

}  // namespace trainsim::kernels::detail
