#include "models/llm/model_spec.hpp"

namespace trainsim::models::llm {

using sim::config::Json;

namespace {

// Normalisation weights of one norm layer: LayerNorm has a gain and a bias, RMSNorm a gain.
double norm_parameters(const ModelSpec& m) {
  return m.norm == "layernorm" ? 2 * static_cast<double>(m.hidden) : static_cast<double>(m.hidden);
}

// QKV and output projections with their biases (no norm), or MLA's projections and latent norms
// (no biases); plus the QK-norm weights (one RMSNorm gain per query and per key head width) and
// the attention sinks (one logit per head).
double attention_parameters(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden), q = static_cast<double>(m.q_width());
  const double kv = static_cast<double>(m.kv_heads_or_heads()) * static_cast<double>(m.head_dim());
  double p = m.mla ? mla_parameters(*m.mla, m.hidden, m.heads).total()
                   : h * (q + 2 * kv) + q * h + (m.bias ? (q + 2 * kv) + h : 0.0);
  if (m.qk_norm) p += 2 * static_cast<double>(m.qk_head_dim());
  if (m.attention_sinks) p += static_cast<double>(m.heads);
  return p;
}

// An MLP of width f with the model's activation (SwiGLU: gate and up projections) and biases.
double mlp_parameters(const ModelSpec& m, int64_t width) {
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(width);
  const bool swiglu = m.activation == "swiglu";
  const double in = swiglu ? 2 * h * f : h * f;
  return in + f * h + (m.bias ? (swiglu ? 2 * f : f) + h : 0.0);
}

// Embedding, position table, final norm and untied LM head: everything outside the layers.
double edge_parameters(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  double p = static_cast<double>(m.vocab) * h;                           // input embedding
  if (m.position == "learned") p += static_cast<double>(m.seq_len) * h;  // position table
  p += norm_parameters(m);                                               // final norm
  if (!m.tied_embeddings) p += static_cast<double>(m.vocab) * h;         // LM head
  return p;
}

}  // namespace

bool ModelSpec::is_moe_layer(int64_t layer) const {
  if (layer >= layers && layer < layers + mtp_layers) layer = layers - 1;  // MTP: like the last main layer
  return moe && layer >= moe->first_dense_layers && layer < layers && layer % moe->layer_freq == 0;
}

bool ModelSpec::is_local_layer(int64_t layer) const {
  if (layer >= layers) layer = layers - 1;  // MTP: like the last main layer
  return attention_window && attention_window->local(layer);
}

int64_t ModelSpec::moe_layers() const {
  int64_t n = 0;
  for (int64_t i = 0; i < layers; ++i) n += is_moe_layer(i) ? 1 : 0;
  return n;
}

// Every partial sum is a whole number below 2^53, so regrouping the dense layer's terms into
// attention and MLP halves (layer_split) leaves its count bit-identical.
double ModelSpec::layer_parameters() const {
  if (!moe) return layer_split(0).total();
  double sum = 0.0;
  for (int64_t i = 0; i < layers; ++i) sum += layer_parameters(i);
  return sum / static_cast<double>(layers);
}

LayerParameters ModelSpec::layer_split(int64_t layer) const {
  LayerParameters p;
  p.attention = attention_parameters(*this) + norm_parameters(*this);
  if (mla) p.tp_replicated = mla_parameters(*mla, hidden, heads).replicated;
  if (!is_moe_layer(layer)) {
    p.mlp = mlp_parameters(*this, ffn_hidden) + norm_parameters(*this);
    return p;
  }
  const double expert = mlp_parameters(*this, moe->expert_ffn_hidden);
  const double router = static_cast<double>(hidden) * static_cast<double>(moe->experts);
  p.mlp = router + static_cast<double>(moe->shared_experts) * expert + norm_parameters(*this);
  p.experts = static_cast<double>(moe->experts) * expert;
  return p;
}

double ModelSpec::parameters() const {
  if (!moe) return static_cast<double>(layers) * layer_parameters() + edge_parameters(*this);
  double p = edge_parameters(*this);
  for (int64_t i = 0; i < layers; ++i) p += layer_parameters(i);
  return p;
}

double ModelSpec::active_parameters() const {
  if (!moe) return parameters();
  double p = edge_parameters(*this);
  const double expert = mlp_parameters(*this, moe->expert_ffn_hidden);
  for (int64_t i = 0; i < layers; ++i) {
    const LayerParameters s = layer_split(i);
    p += s.non_expert() + (is_moe_layer(i) ? static_cast<double>(moe->top_k) * expert : 0.0);
  }
  return p;
}

double ModelSpec::mtp_projection_parameters() const {
  const double h = static_cast<double>(hidden);
  return 2 * norm_parameters(*this) + 2 * h * h;  // RMSNorms of the hidden state and the embedding; 2h -> h
}

double ModelSpec::mtp_parameters() const {
  double p = 0.0;
  for (int64_t j = 0; j < mtp_layers; ++j) p += mtp_projection_parameters() + layer_parameters(layers + j);
  return p;
}

const sim::config::Schema<MoeSpec>& moe_schema() {
  static const sim::config::Schema<MoeSpec> schema = [] {
    sim::config::Schema<MoeSpec> s("moe", "Mixture-of-Experts MLPs (the `moe` object of a model).");
    s.integer("experts", &MoeSpec::experts, 1, 1000000, std::nullopt, "Routed experts per MoE layer.")
        .integer("top_k", &MoeSpec::top_k, 1, 1000000, std::nullopt, "Routed experts each token is sent to.")
        .integer("expert_ffn_hidden", &MoeSpec::expert_ffn_hidden, 1, kMaxFfnHidden, std::nullopt,
                 "MLP width of each expert (routed and shared); fine-grained experts are many narrow ones.")
        .integer("shared_experts", &MoeSpec::shared_experts, 0, 1000000, 0,
                 "Experts of width expert_ffn_hidden that every token passes through (DeepSeekMoE).")
        .custom("capacity_factor", "number >= 1 or null", std::string("null"),
                "null: dropless. c: each expert takes at most ceil(c * T * top_k / experts) of the T tokens of a "
                "rank and drops the rest (Switch Transformer, GShard).",
                [](MoeSpec& m, const Json& j, const std::string& p) {
                  if (j.is_null())
                    m.capacity_factor = std::nullopt;
                  else
                    m.capacity_factor = sim::config::read_number(j, p, 1.0, 1000.0);
                })
        .boolean("pad_to_capacity", &MoeSpec::pad_to_capacity, false,
                 "With capacity_factor: every expert computes exactly its capacity, short ones padded "
                 "(Megatron --moe-pad-expert-input-to-capacity; Megatron-Bridge's token-drop recipes): static "
                 "shapes, so no host synchronization in the dispatcher and whole-layer CUDA graphs.")
        .integer("layer_freq", &MoeSpec::layer_freq, 1, 100000, 1,
                 "Layer i (0-based) is MoE when i % layer_freq == 0 (and i >= first_dense_layers); 2 = every other "
                 "layer.")
        .integer("first_dense_layers", &MoeSpec::first_dense_layers, 0, 100000, 0,
                 "The first layers keep a dense MLP of width ffn_hidden (DeepSeek-V3: 3).")
        .number("router_skew", &MoeSpec::router_skew, 0.0, 16.0, 0.0,
                "Residual routing imbalance: Zipf exponent s, the i-th most popular expert gets a share "
                "proportional to 1/i^s; 0 = uniform. Hot experts are spread over the EP ranks round-robin.");
    return s;
  }();
  return schema;
}

const sim::config::Schema<ModelSpec>& model_schema() {
  static const sim::config::Schema<ModelSpec> schema = [] {
    sim::config::Schema<ModelSpec> s("model", "A decoder-only transformer.");
    s.string("name", &ModelSpec::name, std::nullopt, "Model name.")
        .string("description", &ModelSpec::description, "", "One line shown by `trainsim list models`.")
        .integer("layers", &ModelSpec::layers, 1, 100000, std::nullopt, "Transformer layers.")
        .integer("hidden", &ModelSpec::hidden, 1, kMaxHidden, std::nullopt, "Hidden size h.")
        .integer("heads", &ModelSpec::heads, 1, 1000000, std::nullopt, "Attention (query) heads.")
        .nullable_integer("kv_heads", &ModelSpec::kv_heads, 1, 1000000,
                          "Key/value heads: null or = heads for MHA, fewer for GQA, 1 for MQA.")
        .nullable_integer("head_dim", &ModelSpec::head_dim_field, 1, 100000,
                          "Width of one attention head; null = hidden/heads. Set it where the queries are wider "
                          "or narrower than hidden (Qwen3: 128 at hidden 2048 and 32 heads), which changes the "
                          "QKV and output projections, the attention FLOPs and the KV sizes.")
        .integer("ffn_hidden", &ModelSpec::ffn_hidden, 1, kMaxFfnHidden, std::nullopt, "MLP inner size.")
        .integer("vocab", &ModelSpec::vocab, 1, kMaxVocab, std::nullopt, "Vocabulary size.")
        .integer("seq_len", &ModelSpec::seq_len, 1, kMaxSeqLen, std::nullopt, "Default training sequence length.")
        .enumeration("activation", &ModelSpec::activation, {"gelu", "swiglu"}, std::nullopt,
                     "MLP activation: GeLU (2 matrices) or SwiGLU (3 matrices).")
        .enumeration("norm", &ModelSpec::norm, {"layernorm", "rmsnorm"}, std::nullopt, "Normalisation layer.")
        .enumeration("position", &ModelSpec::position, {"learned", "rope"}, std::string("learned"),
                     "Position encoding: learned table (GPT) or rotary (LLaMA).")
        .boolean("bias", &ModelSpec::bias, true, "Linear layers carry biases.")
        .boolean("tied_embeddings", &ModelSpec::tied_embeddings, false, "LM head shares the input embedding.")
        .boolean("dropout", &ModelSpec::dropout, true, "Dropout layers run in training.")
        .custom("moe", "moe object or null", std::string("null"),
                "Mixture-of-Experts MLPs (see the moe table); null = every MLP is dense.",
                [](ModelSpec& m, const Json& j, const std::string& p) {
                  if (j.is_null()) {
                    m.moe = std::nullopt;
                    return;
                  }
                  MoeSpec spec;
                  moe_schema().parse(j, p, spec);
                  m.moe = spec;
                });
    add_variant_fields(s);
    s.string("source", &ModelSpec::source, "", "Where the shape comes from.");
    return s;
  }();
  return schema;
}

ModelSpec parse_model(const Json& j, const std::string& path) {
  ModelSpec m;
  model_schema().parse(j, path, m);
  const auto at = [&](const char* k) { return path.empty() ? std::string(k) : path + "." + k; };
  if (!m.head_dim_field && !m.mla && m.hidden % m.heads != 0)
    throw ConfigError(at("heads"),
                      "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) + ")",
                      "choose heads so that hidden/heads is a whole head dimension, or give head_dim");
  if (m.heads % m.kv_heads_or_heads() != 0)
    throw ConfigError(
        at("kv_heads"),
        "kv_heads (" + std::to_string(*m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")",
        "use a divisor of heads, or null for multi-head attention");
  check_variants(m, path);
  if (m.moe) {
    const MoeSpec& e = *m.moe;
    if (e.top_k > e.experts)
      throw ConfigError(
          at("moe.top_k"),
          "top_k (" + std::to_string(e.top_k) + ") must not exceed experts (" + std::to_string(e.experts) + ")",
          "a token goes to top_k distinct experts: lower top_k or add experts");
    if (e.pad_to_capacity && !e.capacity_factor)
      throw ConfigError(at("moe.pad_to_capacity"), "pads each expert to its capacity, but capacity_factor is null",
                        "set moe.capacity_factor (Megatron-Bridge's token drop uses 1.0), or drop pad_to_capacity");
    if (e.first_dense_layers >= m.layers)
      throw ConfigError(at("moe.first_dense_layers"),
                        "first_dense_layers (" + std::to_string(e.first_dense_layers) + ") must be less than layers (" +
                            std::to_string(m.layers) + ")",
                        "leave at least one MoE layer, or set \"moe\": null for a dense model");
    if (m.moe_layers() == 0)
      throw ConfigError(at("moe.layer_freq"),
                        "layer_freq (" + std::to_string(e.layer_freq) + ") leaves no MoE layer among layers " +
                            std::to_string(e.first_dense_layers) + ".." + std::to_string(m.layers - 1),
                        "layer i is MoE when i >= first_dense_layers and i % layer_freq == 0: lower layer_freq or "
                        "first_dense_layers");
  }
  return m;
}

}  // namespace trainsim::models::llm
