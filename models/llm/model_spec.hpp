#pragma once
// A decoder-only transformer. The JSON contract: name, layers, hidden, heads, kv_heads
// (null = heads), ffn_hidden, vocab, seq_len, activation, norm; optional extras below, among them
// `moe`, which turns some MLPs into Mixture-of-Experts blocks, the attention variants (`mla`,
// `attention_window`, `attention_sinks`, `qk_norm`) and DeepSeek-V3's multi-token prediction
// (`mtp_layers`).

#include <optional>
#include <string>

#include "models/llm/attention_window.hpp"
#include "models/llm/mla.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::llm {

// Model dimensions are bounded so that products of them (h^2, tokens x h, tokens x vocab) stay far
// inside int64 and double's exact integers: 16-64x past the largest released models (h 18,432,
// ffn 73,728, vocab 262,144) and 1 G tokens per sequence (docs/robustness.md).
inline constexpr int64_t kMaxHidden = int64_t{1} << 20;
inline constexpr int64_t kMaxFfnHidden = int64_t{1} << 22;
inline constexpr int64_t kMaxVocab = int64_t{1} << 24;
inline constexpr int64_t kMaxSeqLen = int64_t{1} << 30;

// The Mixture-of-Experts MLPs of a model. A MoE layer replaces the dense MLP by a router (an
// h x experts linear layer, no bias), `experts` routed experts of which each token uses `top_k`,
// and `shared_experts` experts that every token uses; every expert is an MLP of width
// expert_ffn_hidden with the model's activation and bias setting. Fine-grained experts
// (DeepSeekMoE) are many narrow experts.
struct MoeSpec {
  int64_t experts = 0;            // routed experts E
  int64_t top_k = 0;              // routed experts per token
  int64_t expert_ffn_hidden = 0;  // MLP width of each (routed or shared) expert
  int64_t shared_experts = 0;     // always-on experts (DeepSeekMoE), 0 for none
  // null: dropless (every routed token is computed); c >= 1: each expert takes at most
  // ceil(c * T * top_k / E) of the T tokens of each rank, the rest are dropped (Switch, GShard).
  std::optional<double> capacity_factor;
  // With a capacity: every expert computes exactly its capacity of rows, short ones padded
  // (Megatron --moe-pad-expert-input-to-capacity). Its shapes are then static: the dispatcher
  // needs no host synchronization and CUDA graphs can capture the whole layer.
  bool pad_to_capacity = false;
  int64_t layer_freq = 1;          // layer i (0-based) is MoE when i >= first_dense_layers and i % layer_freq == 0
  int64_t first_dense_layers = 0;  // the first layers keep a dense MLP of width ffn_hidden (DeepSeek-V3: 3)
  // Residual routing imbalance after load balancing: the exponent s of a Zipf law, expert popularity
  // proportional to 1 / rank^s (moe.hpp). 0 = perfectly uniform routing.
  double router_skew = 0.0;
};

// Parameters of one layer, split by how they are sharded: routed experts are divided over the
// expert-parallel ranks, everything else is replicated over data parallelism.
struct LayerParameters {
  double attention = 0.0;  // QKV and output projections with their biases, and the attention norm
  double mlp = 0.0;        // dense MLP, or the MoE router and shared experts; and the MLP norm
  double experts = 0.0;    // routed experts (0 in a dense layer)
  // Part of `attention` that every TP rank holds whole instead of 1/tp of it: MLA's
  // down-projections and latent norms (mla.hpp). Norms, QK-norm and sinks are counted as split,
  // as the dense formula always has (they are a few thousand parameters per layer).
  double tp_replicated = 0.0;
  double total() const { return attention + mlp + experts; }
  double non_expert() const { return attention + mlp; }
  // Non-expert parameters one of `tp` tensor-parallel ranks holds.
  double non_expert_per_rank(int64_t tp) const {
    return (non_expert() - tp_replicated) / static_cast<double>(tp) + tp_replicated;
  }
};

struct ModelSpec {
  std::string name;
  std::string description;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  std::optional<int64_t> kv_heads;        // null: multi-head attention (= heads)
  std::optional<int64_t> head_dim_field;  // `head_dim`; null: hidden / heads
  int64_t ffn_hidden = 0;                 // MLP width of the dense layers
  int64_t vocab = 0;
  int64_t seq_len = 0;
  std::string activation = "gelu";   // gelu | swiglu
  std::string norm = "layernorm";    // layernorm | rmsnorm
  std::string position = "learned";  // learned | rope
  bool bias = true;                  // linear layers carry biases (GPT) or not (LLaMA)
  bool tied_embeddings = false;      // LM head shares the input embedding
  bool dropout = true;               // dropout layers present in training
  std::optional<MoeSpec> moe;        // null: every layer has a dense MLP
  std::optional<MlaSpec> mla;        // null: multi-head / grouped-query attention
  // null: every layer attends to the whole causal prefix.
  std::optional<AttentionWindow> attention_window;
  bool attention_sinks = false;  // GPT-OSS: a learned logit per head in the softmax denominator
  bool qk_norm = false;          // RMSNorm over each query and key head (Qwen3, Gemma 3, OLMo 2)
  // GPT-OSS: the SwiGLU's gate and linear inputs are clamped (|x| <= limit); null: no clamp.
  std::optional<double> activation_clamp;
  // DeepSeek-V3 multi-token prediction modules, each one more transformer layer (shaped like the
  // last main layer: a MoE layer for DeepSeek-V3) with two RMSNorms and a 2h -> h projection,
  // sharing the embedding and the LM head; they run on the last pipeline stage. MTP layer j is
  // layer `layers + j` for is_moe_layer, layer_split and the builder.
  int64_t mtp_layers = 0;
  std::string source;

  int64_t kv_heads_or_heads() const { return kv_heads.value_or(heads); }
  int64_t head_dim() const { return head_dim_field.value_or(hidden / heads); }
  // Per-head widths of queries/keys and of values: head_dim, or MLA's nope + rope and v_head_dim.
  int64_t qk_head_dim() const { return mla ? mla->qk_head_dim() : head_dim(); }
  int64_t v_head_dim() const { return mla ? mla->v_head_dim : head_dim(); }
  // Width of the queries: heads x qk head dim, which is hidden unless head_dim is set apart
  // (Qwen3, GPT-OSS: wider or narrower than hidden) or MLA sets its own.
  int64_t q_width() const { return heads * qk_head_dim(); }
  // Width of the attention output the output projection reads: heads x v head dim.
  int64_t v_width() const { return heads * v_head_dim(); }
  // Width of one token's keys and values as attention reads them: 2 x kv_heads x head_dim, or
  // with MLA (unabsorbed) every head's materialised key (nope + rope) and value.
  int64_t kv_width() const {
    return mla ? heads * (mla->qk_head_dim() + mla->v_head_dim) : 2 * kv_heads_or_heads() * head_dim();
  }
  // Whether layer `layer` (0-based; MTP layers follow the main ones) attends through the window.
  bool is_local_layer(int64_t layer) const;
  // Whether layer `layer` (0-based) has a MoE block; always false for a dense model. MTP layer
  // `layers + j` is shaped like the last main layer.
  bool is_moe_layer(int64_t layer) const;
  // Number of MoE layers (0 for a dense model).
  int64_t moe_layers() const;
  // Total parameters (embedding, position table, layers with all experts, final norm, untied LM head).
  // MTP modules are not counted, as published totals leave them out (DeepSeek-V3's 671B excludes
  // its 14B MTP module): see mtp_parameters().
  double parameters() const;
  // Parameters one token uses: all but the routed experts it is not sent to (top_k of them); no MTP.
  double active_parameters() const;
  // Parameters of the MTP modules beyond the shared embedding and LM head: per module two RMSNorms,
  // the 2h -> h projection and its transformer layer (all experts). 0 without MTP.
  double mtp_parameters() const;
  // Parameters of one MTP module's two norms and projection (without its transformer layer).
  double mtp_projection_parameters() const;
  // Parameters of one transformer layer. For a MoE model, the mean over its layers (all experts
  // counted), so that layers * layer_parameters() is still the transformer's total.
  double layer_parameters() const;
  // Parameters of layer `layer` (0-based), dense or MoE, with all experts.
  double layer_parameters(int64_t layer) const { return layer_split(layer).total(); }
  // The same, split into attention, replicated MLP parameters and routed experts.
  LayerParameters layer_split(int64_t layer) const;
};

const sim::config::Schema<MoeSpec>& moe_schema();
// Adds the attention-variant and MTP fields to the model schema (model_spec_variants.cpp).
void add_variant_fields(sim::config::Schema<ModelSpec>& s);
// Cross-checks the attention variants and MTP against the rest of the model (model_spec_variants.cpp).
void check_variants(const ModelSpec& m, const std::string& path);
const sim::config::Schema<ModelSpec>& model_schema();
// Parses and cross-checks (heads divide hidden, kv_heads divide heads, top_k <= experts, ...).
ModelSpec parse_model(const sim::config::Json& j, const std::string& path);

}  // namespace trainsim::models::llm
