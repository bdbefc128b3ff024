#include "models/llm/model_spec.hpp"

namespace trainsim::models::llm {

using sim::config::Json;

double ModelSpec::layer_parameters() const {
  const double h = static_cast<double>(hidden);
  const double kv = static_cast<double>(kv_heads_or_heads()) * static_cast<double>(head_dim());
  const double f = static_cast<double>(ffn_hidden);
  const double attn = h * (h + 2 * kv) + h * h + (bias ? (h + 2 * kv) + h : 0.0);
  const double mlp_in = activation == "swiglu" ? 2 * h * f : h * f;
  const double mlp = mlp_in + f * h + (bias ? (activation == "swiglu" ? 2 * f : f) + h : 0.0);
  const double norms = norm == "layernorm" ? 4 * h : 2 * h;
  return attn + mlp + norms;
}

double ModelSpec::parameters() const {
  const double h = static_cast<double>(hidden);
  double p = static_cast<double>(layers) * layer_parameters();
  p += static_cast<double>(vocab) * h;                               // input embedding
  if (position == "learned") p += static_cast<double>(seq_len) * h;  // position table
  p += norm == "layernorm" ? 2 * h : h;                              // final norm
  if (!tied_embeddings) p += static_cast<double>(vocab) * h;         // LM head
  return p;
}

const sim::config::Schema<ModelSpec>& model_schema() {
  static const sim::config::Schema<ModelSpec> schema = [] {
    sim::config::Schema<ModelSpec> s("model", "A decoder-only transformer.");
    constexpr int64_t kBig = sim::config::kUnboundedInt;
    s.string("name", &ModelSpec::name, std::nullopt, "Model name.")
        .string("description", &ModelSpec::description, "", "One line shown by `trainsim list models`.")
        .integer("layers", &ModelSpec::layers, 1, 100000, std::nullopt, "Transformer layers.")
        .integer("hidden", &ModelSpec::hidden, 1, kBig, std::nullopt, "Hidden size h.")
        .integer("heads", &ModelSpec::heads, 1, 1000000, std::nullopt, "Attention (query) heads.")
        .nullable_integer("kv_heads", &ModelSpec::kv_heads, 1, 1000000,
                          "Key/value heads: null or = heads for MHA, fewer for GQA, 1 for MQA.")
        .integer("ffn_hidden", &ModelSpec::ffn_hidden, 1, kBig, std::nullopt, "MLP inner size.")
        .integer("vocab", &ModelSpec::vocab, 1, kBig, std::nullopt, "Vocabulary size.")
        .integer("seq_len", &ModelSpec::seq_len, 1, kBig, std::nullopt, "Default training sequence length.")
        .enumeration("activation", &ModelSpec::activation, {"gelu", "swiglu"}, std::nullopt,
                     "MLP activation: GeLU (2 matrices) or SwiGLU (3 matrices).")
        .enumeration("norm", &ModelSpec::norm, {"layernorm", "rmsnorm"}, std::nullopt, "Normalisation layer.")
        .enumeration("position", &ModelSpec::position, {"learned", "rope"}, std::string("learned"),
                     "Position encoding: learned table (GPT) or rotary (LLaMA).")
        .boolean("bias", &ModelSpec::bias, true, "Linear layers carry biases.")
        .boolean("tied_embeddings", &ModelSpec::tied_embeddings, false, "LM head shares the input embedding.")
        .boolean("dropout", &ModelSpec::dropout, true, "Dropout layers run in training.")
        .string("source", &ModelSpec::source, "", "Where the shape comes from.");
    return s;
  }();
  return schema;
}

ModelSpec parse_model(const Json& j, const std::string& path) {
  ModelSpec m;
  model_schema().parse(j, path, m);
  const auto at = [&](const char* k) { return path.empty() ? std::string(k) : path + "." + k; };
  if (m.hidden % m.heads != 0)
    throw ConfigError(at("heads"),
                      "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) + ")",
                      "choose heads so that hidden/heads is a whole head dimension");
  if (m.heads % m.kv_heads_or_heads() != 0)
    throw ConfigError(
        at("kv_heads"),
        "kv_heads (" + std::to_string(*m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")",
        "use a divisor of heads, or null for multi-head attention");
  return m;
}

}  // namespace trainsim::models::llm
