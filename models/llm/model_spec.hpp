#pragma once
// A decoder-only transformer. The JSON contract: name, layers, hidden, heads, kv_heads
// (null = heads), ffn_hidden, vocab, seq_len, activation, norm; optional extras below.

#include <optional>
#include <string>

#include "sim/config/schema.hpp"

namespace trainsim::models::llm {

struct ModelSpec {
  std::string name;
  std::string description;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  std::optional<int64_t> kv_heads;  // null: multi-head attention (= heads)
  int64_t ffn_hidden = 0;
  int64_t vocab = 0;
  int64_t seq_len = 0;
  std::string activation = "gelu";   // gelu | swiglu
  std::string norm = "layernorm";    // layernorm | rmsnorm
  std::string position = "learned";  // learned | rope
  bool bias = true;                  // linear layers carry biases (GPT) or not (LLaMA)
  bool tied_embeddings = false;      // LM head shares the input embedding
  bool dropout = true;               // dropout layers present in training
  std::string source;

  int64_t kv_heads_or_heads() const { return kv_heads.value_or(heads); }
  int64_t head_dim() const { return hidden / heads; }
  // Total parameters (embedding, position table, layers, final norm, untied LM head).
  double parameters() const;
  // Parameters of one transformer layer.
  double layer_parameters() const;
};

const sim::config::Schema<ModelSpec>& model_schema();
// Parses and cross-checks (heads divide hidden, kv_heads divide heads, ...).
ModelSpec parse_model(const sim::config::Json& j, const std::string& path);

}  // namespace trainsim::models::llm
