#pragma once
// Per-module activation recomputation, as Megatron-Core's selective recompute names the modules
// of a decoder layer (--recompute-granularity selective --recompute-modules ...; TransformerConfig
// recompute_modules, Megatron-Core 0.12+): a module's forward is redone just before its backward,
// and the tensors only it needed are not kept from the forward to the backward.
//
//   core_attn       the attention core (softmax/scores of the unfused path; Megatron's default)
//   layernorm       the input and pre-MLP norms: their outputs (the QKV and fc1/router inputs)
//   mlp             a dense layer's MLP: its fc1 input, fc1 output(s) and activation output
//   moe_act         a MoE layer's expert activation: the activation output (fc2 input) of each row
//   moe             a MoE layer's whole MoE block (router, dispatch, experts, combine)
//   shared_experts  a MoE layer's shared experts: their fc1 and activation outputs
//   mla_up_proj     MLA's up-projections: the materialised per-head queries, keys and values
//   ops             PyTorch's op-level selective checkpointing (torchtitan selective_ac_option
//                   "op"): each layer keeps its input, the outputs of every other matmul (the
//                   1st, 3rd, ... in forward order: wq, wv, w1, w2 of a SwiGLU layer) and of the
//                   attention kernel, and recomputes everything else (norms, RoPE, the other
//                   matmuls, the activation) before its backward
//
// What each saves and what it costs is modelled in memory/footprint.cpp (activations),
// workload/dag/stage_memory.cpp (the MoE block's extra) and layer_kernels / moe (the kernels
// redone).

#include <cstdint>
#include <string>

#include "models/llm/layer_kernels.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::llm {

enum RecomputeModule : uint32_t {
  kRecomputeCoreAttn = 1u << 0,
  kRecomputeLayernorm = 1u << 1,
  kRecomputeMlp = 1u << 2,
  kRecomputeMoeAct = 1u << 3,
  kRecomputeMoe = 1u << 4,
  kRecomputeSharedExperts = 1u << 5,
  kRecomputeMlaUpProj = 1u << 6,
  kRecomputeOps = 1u << 7,
};

// The names in Megatron's order and spelling.
const std::vector<std::string>& recompute_module_names();

// A list of names, or one string "a,b,...", as a set; an unknown name throws ConfigError at `path`.
uint32_t parse_recompute_modules(const sim::config::Json& v, const std::string& path);
// The set as "core_attn,moe_act" (empty: "").
std::string recompute_modules_string(uint32_t modules);

// The forward kernels of a dense block redone before its backward for `modules` beyond core_attn
// (whose kernels are BlockKernels::selective_recompute): the norm under layernorm, MLA's
// up-projections under mla_up_proj (attention block), the whole MLP under mlp (MLP block).
Kernels module_recompute_kernels(const BlockKernels& block, bool attention_block, uint32_t modules);

// The forward kernels op-level selective checkpointing (`ops`) redoes for one block of `m` under
// `s`: the block's residual add and norm, RoPE / QK-norm, the activation, and the matmuls it does
// not keep (wk and wo; w3 of a gated MLP, else w2).
Kernels op_checkpoint_kernels(const ModelSpec& m, const LayerShape& s, const BlockKernels& block, bool attention_block);

}  // namespace trainsim::models::llm
