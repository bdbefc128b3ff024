#pragma once
// The element-wise parts of a layer as eager PyTorch runs them when a model is written op by op
// (torchtitan's Llama without torch.compile) instead of the fused kernels Transformer Engine and
// Megatron-Core launch: each op reads its inputs and writes its output through HBM, in the dtype
// the code gives it, and is one kernel. Per element, against the fused kernel layer_kernels prices:
//
//   RMSNorm  torchtitan models/norms.py: _norm(x.float()).type_as(x) * weight, _norm = x *
//            rsqrt(x.pow(2).mean(-1) + eps): float (2 in, 4 out), pow (4, 4), mean (4), mul (4, 4),
//            type_as (4, 2), mul weight (2, 2) = 36 bytes in 8 kernels (fused: 4); its autograd
//            backward about 64 bytes in 11 kernels (fused: 8)
//   RoPE     models/llama/model.py apply_rotary_emb on q and k: float (2, 4), complex multiply
//            (4, 4), type_as (4, 2) = 20 bytes, 3 kernels each (fused: 4); the backward alike
//   SwiGLU   F.silu(w1(x)) * w3(x): silu (2, 2), mul (4, 2) = 10 bytes per element of the MLP
//            width in 2 kernels (fused: 6); backward 18 bytes in 3 kernels (fused: 10)
//   GQA      repeat_kv expands the keys and values to every query head (a copy) before SDPA, and
//            its backward sums them back
//   loss     torchtitan's cross_entropy(pred.flatten(0, 1).float(), labels), per logit: the cast
//            (2 in, 4 out), log-softmax (cunn_SoftMaxForward: max, sum-exp and output passes over
//            the input, 12, and 4 out), nll_loss (a gather per row) = 22 bytes in 3 kernels (fused:
//            12); backward: nll_loss's zero-filled fp32 gradient and scatter (4), log-softmax's
//            backward (reads the gradient twice and the output, writes 4: 16) and the cast back (4,
//            2) = 26 bytes in 4 kernels (fused: 6). Measured on an H200 with PyTorch 2.11
//            (docs/validator.md, "A PyTorch-native step"): 7.9 and 8.5 ms for the two soft-max
//            kernels over 16,384 x 128,256 logits, 16 bytes each at 4.2 TB/s.
//
// torch.compile fuses each group back into about one kernel (the fused prices).

#include "models/llm/layer_kernels.hpp"
#include "models/llm/model_spec.hpp"

namespace trainsim::models::llm {

// Rewrites the norm, RoPE and activation kernels of `k` (and adds repeat_kv's copies) as eager
// PyTorch runs them.
void expand_eager_ops(LayerKernels& k, const ModelSpec& m, const LayerShape& s);
// The same for the final norm before the LM head and for the loss, each when asked.
void expand_eager_ops(Kernels& ks, bool final_norm, bool loss);

}  // namespace trainsim::models::llm
