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
  std::vector<std::string> items;
  if (v.is_array()) {
    for (const auto& e : v) {
      if (!e.is_string())
        throw ConfigError(path, "expected module names (strings), got " + e.dump(),
                          "e.g. [\"layernorm\", \"moe_act\"]");
      items.push_back(e.get<std::string>());
    }
  } else if (v.is_string()) {
    const std::string text = v.get<std::string>();
    size_t start = 0;
    while (start < text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      items.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
  } else {
    throw ConfigError(path, "expected a list of module names or \"a,b,...\", got " + v.dump(),
                      "e.g. \"layernorm,moe_act\"");
  }
  const auto& names = recompute_module_names();
  uint32_t out = 0;
  for (const std::string& item : items) {
    const auto it = std::find(names.begin(), names.end(), item);
    if (it == names.end()) {
      const std::string near = sim::config::did_you_mean(item, names);
      throw ConfigError(
          path, "unknown module \"" + item + "\"",
          near.empty() ? "expected some of " + sim::config::join(names, "|") : "did you mean \"" + near + "\"?");
    }
    out |= 1u << static_cast<uint32_t>(it - names.begin());
  }
  return out;
}

std::string recompute_modules_string(uint32_t modules) {
  std::string out;
  const auto& names = recompute_module_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (modules & (1u << i)) out += (out.empty() ? "" : ",") + names[i];
  return out;
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
    if (k.name == "mlp.act.fwd") out.push_back(k);
  if (m.activation == "swiglu")
    out.push_back(forward_gemm("mlp.up", T, m.ffn_hidden / t, h));
  else
    out.push_back(forward_gemm("mlp.fc2", T, h, m.ffn_hidden / t));
  return out;
}

}  // namespace trainsim::models::llm
