#pragma once
// A decoder layer (and the embedding / LM head) as the list of kernels one tensor-parallel rank
// launches, in launch order, grouped the way the workload builder splits tasks. Each kernel says
// what it is (GEMM shape and operand layout, bytes moved, attention FLOPs); layer_ops.cpp prices
// them with a ComputeModel, and the validator replays exactly these kernels on a real GPU.

#include <string>
#include <vector>

#include "models/compute/compute_model.hpp"
#include "models/llm/model_spec.hpp"
#include "sim/units.hpp"

namespace trainsim::models::llm {

// What shapes one layer's kernels have on one TP rank.
struct LayerShape {
  int64_t micro_batch = 1;
  int64_t seq_len = 0;  // tokens of a sequence on this rank: the sequence length / cp
  int64_t tp = 1;
  bool sp = false;    // norms/dropout on seq/tp tokens
  bool flash = true;  // fused attention vs batched GEMMs + softmax
  // Context-parallel degree: a rank's queries attend to keys of all cp shards (ring or Ulysses,
  // load-balanced), so its attention FLOPs are 1/cp of the whole sequence's, cp times the local
  // seq_len^2 term. Only the fused path supports cp > 1.
  int64_t cp = 1;
  // Under fp8, the LM head's GEMMs run in FP8 too (false: 16-bit, as Megatron-Core's output layer,
  // a plain ColumnParallelLinear outside Transformer Engine's autocast, and torchtitan's).
  bool fp8_head = false;
  // > 0: the layer is local (model.is_local_layer) and its queries attend to at most this many
  // keys (attention_window.hpp); 0: causal attention over the whole sequence. Only the fused path
  // skips the keys outside the window (the unfused path masks a full s x s score matrix).
  int64_t window = 0;
  // Modules recomputed before their backward beyond the attention core (recompute_modules.hpp):
  // their forward kernels are BlockKernels::module_recompute.
  uint32_t recompute_modules = 0;
  // The norms, RoPE and activation run as separate eager PyTorch ops (eager_ops.hpp): torchtitan
  // without torch.compile.
  bool eager_elementwise = false;
  // The fp32 loss and its backward run as eager ops (not compiled even when the blocks are:
  // torch_compile without compile_loss), and the final norm (torchtitan compiles the blocks, not
  // the norm after them).
  bool eager_loss = false, eager_final_norm = false;
};

// Operand layout of a GEMM in row-major terms, for Y[m,n] = X[m,k] W^T with Megatron's [out, in]
// weights: forward "TN" (Y = X W^T), input gradient "NN" (dX = dY W), weight gradient "NT"
// (dW = dY^T X). Batched attention GEMMs of the unfused path are "TN"/"NN"/"NT" alike.
enum class GemmLayout : uint8_t { kTN, kNN, kNT };
const char* to_string(GemmLayout l);

struct KernelOp {
  enum class Kind : uint8_t {
    kGemm,          // `gemm` shape, `layout`
    kMemory,        // streams `bytes` through HBM (norm, activation, residual, rope, softmax, loss)
    kAttentionFwd,  // fused causal attention forward of `flops`
    kAttentionBwd,  // its backward, `flops` = 2.5x the forward
  };
  Kind kind = Kind::kMemory;
  std::string name;  // "attn.qkv.fwd", "mlp.act.bwd", "attn.norm.fwd", ...
  compute::GemmShape gemm;
  GemmLayout layout = GemmLayout::kTN;
  double bytes = 0.0;
  double flops = 0.0;        // GEMM and attention FLOPs
  bool sixteen_bit = false;  // a GEMM that runs in 16-bit even when the job's precision is fp8
};
using Kernels = std::vector<KernelOp>;

// `s` for layer `layer` of `m`: the window set when the layer is local.
LayerShape layer_shape(const ModelSpec& m, LayerShape s, int64_t layer);

// The attention block's input projections up to the attention core, in launch order: forward
// (GEMMs, norms, RoPE), input gradients in backward order, weight gradients.
struct AttentionInput {
  Kernels fwd, dgrad, wgrad;
};

// Kernel constructors shared by the layer, edge and MoE kernel lists. Forward Y[m,n] = X[m,k] W^T
// ("TN"); its input gradient dX = dY W is [m,k] over n ("NN"); its weight gradient dW = dY^T X is
// [n,k] over m ("NT", counted as C[k,n] over m: the same FLOPs and tiles).
KernelOp gemm_kernel(std::string name, GemmLayout layout, int64_t m, int64_t n, int64_t k, int64_t batch = 1);
KernelOp forward_gemm(const std::string& name, int64_t m, int64_t n, int64_t k, int64_t batch = 1);
KernelOp dgrad_gemm(const std::string& name, int64_t m, int64_t n, int64_t k, int64_t batch = 1);
KernelOp wgrad_gemm(const std::string& name, int64_t m, int64_t n, int64_t k, int64_t batch = 1);
// A memory-bound kernel streaming `bytes` through HBM.
KernelOp memory_kernel(std::string name, double bytes);
// A clamped SwiGLU's clamp (ModelSpec::activation_clamp) as Megatron-Core 0.15 runs it outside its
// fused GLU kernel (fusions/fused_bias_geglu.py weighted_bias_quick_geglu_impl, moe/experts.py),
// for `elems` GLU outputs (an fc1 output of 2 x elems): forward, the gate's and the linear half's
// clamps (each reads and writes one half) and their concatenation (reads and writes both);
// backward, each clamp's gradient (reads the gradient and its input, writes the gradient) and the
// concatenation of the two (reads and writes both). `prefix` names them ("mlp" -> mlp.act_clamp.*).
void append_glu_clamp(Kernels& fwd, Kernels& bwd, const std::string& prefix, double elems);

// One block (attention or MLP), split the way tasks are.
struct BlockKernels {
  Kernels pre_fwd;              // residual add of the previous block + norm (before the TP input comm)
  Kernels main_fwd;             // GEMMs, attention core / activation
  Kernels pre_bwd;              // norm + residual backward (after the TP input-gradient comm)
  Kernels main_dgrad;           // input-gradient GEMMs and elementwise backward
  Kernels main_wgrad;           // weight-gradient GEMMs
  Kernels selective_recompute;  // extra forward work redone before backward under selective recompute
  Kernels module_recompute;     // forward kernels redone for LayerShape::recompute_modules (norm, MLP, MLA up-proj)
};

struct LayerKernels {
  BlockKernels attn, mlp;
  sim::Bytes tp_comm_bytes;  // per-rank buffer of each TP collective (b*s*h activations)
};
LayerKernels layer_kernels(const ModelSpec& m, const LayerShape& s);

struct EdgeKernels {
  Kernels embed_fwd, embed_bwd;
  Kernels head_fwd, head_dgrad, head_wgrad;  // final norm + LM head GEMM + cross-entropy
  // One MTP module's input (empty without MTP): the shifted tokens' embedding lookup, the RMSNorms
  // of the previous hidden state and of that embedding, and the column-parallel 2h -> h
  // projection of their concatenation (Megatron-Core's eh_proj; its output is all-gathered over TP
  // before the module's transformer layer). Its layer and LM head + loss are the model's.
  Kernels mtp_fwd, mtp_dgrad, mtp_wgrad;
};
EdgeKernels edge_kernels(const ModelSpec& m, const LayerShape& s);

// A layer's kernels in the order one rank runs them for one micro-batch without recompute:
// attention block forward, MLP block forward, MLP backward, attention backward (input gradients
// before weight gradients within a block, as Megatron-LM issues them).
Kernels layer_sequence(const LayerKernels& k);

}  // namespace trainsim::models::llm
