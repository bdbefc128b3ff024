#include "models/llm/recompute_modules.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace trainsim::models::llm {

const std::vector<std::string>& recompute_module_names() {
  static const std::vector<std::string> names{"core_attn", "layernorm",      "mlp",         "moe_act",
                                              "moe",       "shared_experts", "mla_up_proj", "ops"};
  return names;
}

uint32_t parse_recompute_modules(const sim::config::Json& v, const std::string& path) {
  return sim::config::read_name_set(v, path, recompute_module_names(), "module", "[\"layernorm\", \"moe_act\"]");
}

std::string recompute_modules_string(uint32_t modules) {
  return sim::config::name_set_string(modules, recompute_module_names());
}

Kernels module_recompute_kernels(const BlockKernels& block, bool attention_block, uint32_t modules) {
  Kernels out;
  if (modules & kRecomputeLayernorm)
    for (const KernelOp& k : block.pre_fwd)
      if (k.name.ends_with(".norm.fwd")) out.push_back(k);
  if (attention_block && (modules & kRecomputeMlaUpProj))
    for (const KernelOp& k : block.main_fwd)
      if (k.name == "attn.q_up.fwd" || k.name == "attn.kv_up.fwd") out.push_back(k);
  if (!attention_block && (modules & kRecomputeMlp))
    out.insert(out.end(), block.main_fwd.begin(), block.main_fwd.end());
  return out;
}

Kernels op_checkpoint_kernels(const ModelSpec& m, const LayerShape& s, const BlockKernels& block,
                              bool attention_block) {
  Kernels out(block.pre_fwd.begin(), block.pre_fwd.end());
  const int64_t T = s.micro_batch * s.seq_len, t = s.tp, h = m.hidden;
  if (attention_block) {
    for (const KernelOp& k : block.main_fwd)
      if (k.name == "attn.rope.fwd" || k.name == "attn.qk_norm.fwd") out.push_back(k);
    out.push_back(forward_gemm("attn.k", T, m.kv_width() / 2 / t, h));
    out.push_back(forward_gemm("attn.proj", T, h, m.v_width() / t));
    return out;
  }
  for (const KernelOp& k : block.main_fwd)
    if (k.name == "mlp.act.fwd" || k.name.starts_with("mlp.act_clamp_")) out.push_back(k);
  if (m.activation == "swiglu")
    out.push_back(forward_gemm("mlp.up", T, m.ffn_hidden / t, h));
  else
    out.push_back(forward_gemm("mlp.fc2", T, h, m.ffn_hidden / t));
  return out;
}

}  // namespace trainsim::models::llm
