#include "models/llm/model_spec.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../test_support.hpp"
#include "models/presets/catalog.hpp"
#include "sim/error.hpp"

namespace trainsim::models::llm {
namespace {

// Narayanan et al. SC'21 Eq. 2: P = 12 l h^2 (1 + 13/(12 h) + (V + s)/(12 l h)).
double eq2(const ModelSpec& m) {
  const double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  const double V = static_cast<double>(m.vocab), s = static_cast<double>(m.seq_len);
  return 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
}

// Eq. 2 multiplied out: 12 l h^2 + 13 l h + (V + s) h. Per layer 12 h^2 weights (QKV 3h^2, out
// 1h^2, MLP 8h^2) and 13 h biases and norms (QKV 3h, out h, fc1 4h, fc2 h, 2 LayerNorms 4h); a
// tied V x h embedding and an s x h position table. Exact in doubles (< 2^53).
double eq2_expanded(const ModelSpec& m) {
  const double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  const double V = static_cast<double>(m.vocab), s = static_cast<double>(m.seq_len);
  return 12 * l * h * h + 13 * l * h + (V + s) * h;
}

std::vector<std::string> megatron_presets() {
  std::vector<std::string> out;
  for (const auto& p : presets::list("models"))
    if (p.name.rfind("megatron-", 0) == 0) out.push_back(p.name);
  return out;
}

TEST(ModelSpec, EveryMegatronPresetMatchesEquation2) {
  const auto names = megatron_presets();
  ASSERT_EQ(names.size(), 10u);  // Narayanan et al. Table 1: 1.7B ... 1T
  for (const std::string& name : names) {
    const ModelSpec m = testing::model(name);
    // Within 0.5% of Eq. 2 ...
    EXPECT_NEAR(m.parameters() / eq2(m), 1.0, 0.005) << name;
    // ... and in fact exact but for the final LayerNorm (2h), which Eq. 2 leaves out.
    EXPECT_DOUBLE_EQ(m.parameters(), eq2_expanded(m) + 2.0 * static_cast<double>(m.hidden)) << name;
  }
  // GPT-3 175B (Brown et al.: 96 layers, h 12288) has the same structure.
  const ModelSpec g = testing::model("gpt3-175b");
  EXPECT_DOUBLE_EQ(g.parameters(), eq2_expanded(g) + 2.0 * 12288);
  EXPECT_NEAR(g.parameters() / 1e9, 174.6, 0.05);
}

TEST(ModelSpec, MegatronPresetsMatchTheirPublishedSizes) {
  // Narayanan et al. Table 1 names each model by its size in billions; from 7.5B up the name is
  // Eq. 2 to within 0.5% (the two smallest are rounded more loosely: 1.65 -> "1.7", 3.56 -> "3.6").
  const std::vector<std::pair<std::string, double>> table = {
      {"megatron-7.5b", 7.5},     {"megatron-18.4b", 18.4},   {"megatron-39.1b", 39.1},   {"megatron-76.1b", 76.1},
      {"megatron-145.6b", 145.6}, {"megatron-310.1b", 310.1}, {"megatron-529.6b", 529.6}, {"megatron-1t", 1008.0}};
  for (const auto& [name, billions] : table)
    EXPECT_NEAR(testing::model(name).parameters() / 1e9 / billions, 1.0, 0.005) << name;
  EXPECT_NEAR(testing::model("megatron-1.7b").parameters() / 1e9, 1.65, 0.01);
  EXPECT_NEAR(testing::model("megatron-3.6b").parameters() / 1e9, 3.56, 0.01);
}

TEST(ModelSpec, LlamaSizesMatchPublishedCounts) {
  // Meta's released configs: 8.03B, 70.55B, 405.85B (untied head, GQA with 8 KV heads, SwiGLU).
  EXPECT_NEAR(testing::model("llama3-8b").parameters() / 1e9, 8.03, 0.01);
  EXPECT_NEAR(testing::model("llama3-70b").parameters() / 1e9, 70.55, 0.02);
  EXPECT_NEAR(testing::model("llama3-405b").parameters() / 1e9, 405.85, 0.1);
  EXPECT_NEAR(testing::model("llama2-7b").parameters() / 1e9, 6.74, 0.01);
  EXPECT_NEAR(testing::model("llama2-13b").parameters() / 1e9, 13.02, 0.01);
  EXPECT_NEAR(testing::model("llama2-70b").parameters() / 1e9, 68.98, 0.02);
}

TEST(ModelSpec, LlamaCountIsTheClosedForm) {
  // Llama 3 8B: l 32, h 4096, 32 heads of 128, 8 KV heads (kv dim 1024), f 14336, V 128256.
  // Layer: Q and out h^2 each, K and V h x 1024 each, SwiGLU 3 h f, two RMSNorms h each, no biases.
  // Model: l layers + embedding V h + untied head V h + final RMSNorm h (RoPE: no table).
  const double h = 4096, kv = 1024, f = 14336, V = 128256, l = 32;
  const double layer = 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h;
  const ModelSpec m = testing::model("llama3-8b");
  EXPECT_DOUBLE_EQ(m.layer_parameters(), layer);
  EXPECT_DOUBLE_EQ(m.parameters(), l * layer + 2 * V * h + h);
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.kv_heads_or_heads(), 8);
}

TEST(ModelSpec, TiedEmbeddingsAndLearnedPositionsCountOnce) {
  auto j = testing::gpt(2, 256, 4, 1000, 128);
  const double untied = parse_model(j, "m").parameters();
  j["tied_embeddings"] = true;
  EXPECT_DOUBLE_EQ(untied - parse_model(j, "m").parameters(), 1000.0 * 256);  // the LM head
  j["position"] = "rope";
  const double rope = parse_model(j, "m").parameters();
  j["position"] = "learned";
  EXPECT_DOUBLE_EQ(parse_model(j, "m").parameters() - rope, 128.0 * 256);  // the s x h table
}

TEST(ModelSpec, MultiHeadAttentionWhenKvHeadsIsNull) {
  const ModelSpec m = testing::model("gpt3-175b");
  EXPECT_FALSE(m.kv_heads.has_value());
  EXPECT_EQ(m.kv_heads_or_heads(), 96);
  EXPECT_EQ(m.head_dim(), 128);
}

TEST(ModelSpec, RejectsHeadsNotDividingHidden) {
  const auto j = testing::gpt(2, 100, 3, 1000, 128);
  EXPECT_EQ(testing::config_error([&] { parse_model(j, "model"); }),
            "model.heads: heads (3) must divide hidden (100) (choose heads so that hidden/heads is a whole head "
            "dimension)");
  // Without a path prefix the field name stands alone.
  EXPECT_EQ(testing::config_error([&] { parse_model(j, ""); }).rfind("heads: heads (3)", 0), 0u);
}

TEST(ModelSpec, RejectsKvHeadsNotDividingHeads) {
  auto j = testing::gpt(2, 128, 8, 1000, 128);
  j["kv_heads"] = 3;
  EXPECT_EQ(testing::config_error([&] { parse_model(j, "model"); }),
            "model.kv_heads: kv_heads (3) must divide heads (8) (use a divisor of heads, or null for multi-head "
            "attention)");
  j["kv_heads"] = 2;  // GQA with 4 query heads per KV head is fine
  EXPECT_EQ(parse_model(j, "model").kv_heads_or_heads(), 2);
  j["kv_heads"] = 1;  // MQA
  EXPECT_EQ(parse_model(j, "model").kv_heads_or_heads(), 1);
}

TEST(ModelSpec, SchemaIsClosedAndTyped) {
  auto j = testing::gpt(2, 128, 8, 1000, 128);
  j["hiden"] = 3;
  EXPECT_EQ(testing::config_error([&] { parse_model(j, "model"); }),
            "model.hiden: unknown key in model (did you mean \"hidden\"?)");
  j = testing::gpt(2, 128, 8, 1000, 128);
  j["activation"] = "relu";
  EXPECT_EQ(
      testing::config_error([&] { parse_model(j, "model"); }).rfind("model.activation: unknown value \"relu\"", 0), 0u);
  j = testing::gpt(2, 128, 8, 1000, 128);
  j.erase("vocab");
  EXPECT_EQ(testing::config_error([&] { parse_model(j, "model"); }).rfind("model.vocab: missing required key", 0), 0u);
}

TEST(ModelSpec, GqaShrinksAttentionParameters) {
  auto j = testing::gpt(1, 1024, 16, 1000, 128);
  const double mha = parse_model(j, "m").layer_parameters();
  j["kv_heads"] = 4;
  const double gqa = parse_model(j, "m").layer_parameters();
  // K and V projections shrink from h x h to h x h/4 each (plus their biases).
  EXPECT_DOUBLE_EQ(mha - gqa, 2.0 * (1024.0 * 1024.0 - 1024.0 * 256.0) + 2.0 * (1024.0 - 256.0));
}

}  // namespace
}  // namespace trainsim::models::llm
