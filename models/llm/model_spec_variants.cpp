// The attention variants and multi-token prediction of a model (model_spec.hpp): their schema
// fields and their cross-checks, kept apart from the base transformer's.

#include "models/llm/model_spec.hpp"

namespace trainsim::models::llm {

using sim::config::Json;

void add_variant_fields(sim::config::Schema<ModelSpec>& s) {
  s.custom("mla", "mla object or null", std::string("null"),
           "Multi-head Latent Attention (see the mla table; DeepSeek-V2/V3); null = multi-head or grouped-query "
           "attention of head_dim-wide heads. Excludes head_dim and kv_heads.",
           [](ModelSpec& m, const Json& j, const std::string& p) {
             if (j.is_null()) {
               m.mla = std::nullopt;
               return;
             }
             MlaSpec spec;
             mla_schema().parse(j, p, spec);
             m.mla = spec;
           })
      .custom("attention_window", "attention_window object or null", std::string("null"),
              "Sliding-window attention on a per-layer pattern (see the attention_window table; GPT-OSS, Gemma 3, "
              "Llama 4's chunked attention as a window); null = every layer attends to the whole causal prefix.",
              [](ModelSpec& m, const Json& j, const std::string& p) {
                if (j.is_null()) {
                  m.attention_window = std::nullopt;
                  return;
                }
                AttentionWindow w;
                attention_window_schema().parse(j, p, w);
                m.attention_window = w;
              })
      .boolean("attention_sinks", &ModelSpec::attention_sinks, false,
               "A learned logit per head in the softmax denominator (GPT-OSS): heads parameters per layer, "
               "negligible FLOPs (fused into the attention kernel).")
      .boolean("qk_norm", &ModelSpec::qk_norm, false,
               "RMSNorm over each query and key head before RoPE (Qwen3, Gemma 3, OLMo 2): 2 x head_dim parameters "
               "per layer, one memory-bound kernel forward and backward, its inputs kept for backward.")
      .custom("activation_clamp", "number > 0 or null", std::string("null"),
              "SwiGLU with clamped inputs (GPT-OSS: swiglu_limit 7.0): the gate clamped above, the linear input "
              "both ways. Megatron-Core 0.15 clamps outside its fused GLU kernel (two clamps and a concatenation "
              "forward, their gradients and a concatenation backward), and its autograd keeps the unclamped fc1 "
              "output beside the clamped copy the GLU saves. null = no clamp.",
              [](ModelSpec& m, const Json& j, const std::string& p) {
                if (j.is_null())
                  m.activation_clamp = std::nullopt;
                else
                  m.activation_clamp = sim::config::read_number(j, p, 1e-6, 1e6);
              })
      .integer("mtp_layers", &ModelSpec::mtp_layers, 0, 64, 0,
               "Multi-token prediction modules (DeepSeek-V3: 1), each two RMSNorms, a 2h -> h projection and one "
               "transformer layer shaped like the last one, sharing the embedding and LM head; run on the last "
               "pipeline stage with one more LM head and loss each. Not counted in the published totals.");
}

void check_variants(const ModelSpec& m, const std::string& path) {
  const auto at = [&](const char* k) { return path.empty() ? std::string(k) : path + "." + k; };
  if (m.activation_clamp && m.activation != "swiglu")
    throw ConfigError(at("activation_clamp"), "clamps a gated (SwiGLU) activation, but activation is " + m.activation,
                      "set activation to swiglu, or drop activation_clamp");
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    if (m.head_dim_field)
      throw ConfigError(at("head_dim"),
                        "head_dim (" + std::to_string(*m.head_dim_field) +
                            ") cannot be given with mla, whose heads are qk_nope_head_dim + qk_rope_head_dim wide "
                            "(queries, keys) and v_head_dim wide (values)",
                        "drop head_dim (or set it to null), or drop mla");
    if (m.kv_heads && *m.kv_heads != m.heads)
      throw ConfigError(at("kv_heads"),
                        "kv_heads (" + std::to_string(*m.kv_heads) + ") must equal heads (" + std::to_string(m.heads) +
                            ") with mla, which materialises a key and a value per query head",
                        "set kv_heads to null");
    if (a.q_lora_rank && *a.q_lora_rank > m.hidden)
      throw ConfigError(at("mla.q_lora_rank"),
                        "q_lora_rank (" + std::to_string(*a.q_lora_rank) + ") must not exceed hidden (" +
                            std::to_string(m.hidden) + ")",
                        "the latent compresses the hidden state: use a rank below hidden (DeepSeek-V3: 1536 at 7168), "
                        "or null for no query compression");
    if (a.kv_lora_rank > m.hidden)
      throw ConfigError(at("mla.kv_lora_rank"),
                        "kv_lora_rank (" + std::to_string(a.kv_lora_rank) + ") must not exceed hidden (" +
                            std::to_string(m.hidden) + ")",
                        "the latent compresses the hidden state: use a rank below hidden (DeepSeek-V3: 512 at 7168)");
  }
  if (m.attention_window && m.attention_window->size > m.seq_len)
    throw ConfigError(at("attention_window.size"),
                      "window size (" + std::to_string(m.attention_window->size) + ") exceeds seq_len (" +
                          std::to_string(m.seq_len) + ")",
                      "a window as long as the sequence is global attention: use a size below seq_len, or mark the "
                      "layers \"global\" in the pattern");
}

}  // namespace trainsim::models::llm
