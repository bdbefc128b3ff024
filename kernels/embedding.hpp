#pragma once
// Token embedding lookup and its backward, for the validator's iteration replay. Device pointers,
// enqueued on `stream`, returning the launch error (as kernels.hpp).

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace trainsim::kernels {

// ids: [tokens] int32 in [0, vocab); table: [vocab, hidden] bf16; out: [tokens, hidden] bf16.
//   out[t, c] = table[ids[t], c].
cudaError_t embedding_fwd(const int32_t* ids, const __nv_bfloat16* table, __nv_bfloat16* out, int64_t tokens,
                          int hidden, cudaStream_t stream);
// dtable: [vocab, hidden] fp32, accumulated (not zeroed): dtable[ids[t], c] += dout[t, c] (fp32
// atomics: rows of repeated tokens sum in any order).
cudaError_t embedding_bwd(const int32_t* ids, const __nv_bfloat16* dout, float* dtable, int64_t tokens, int hidden,
                          cudaStream_t stream);

}  // namespace trainsim::kernels
