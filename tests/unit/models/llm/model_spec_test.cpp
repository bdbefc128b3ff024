#include "models/llm/model_spec.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../test_support.hpp"
#include "sim/error.hpp"

namespace trainsim::models::llm {
namespace {

// Narayanan et al. SC'21 Eq. 2: P = 12 l h^2 (1 + 13/(12 h) + (V + s)/(12 l h)).
double eq2(const ModelSpec& m) {
  const double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  const double V = static_cast<double>(m.vocab), s = static_cast<double>(m.seq_len);
  return 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
}

TEST(ModelSpec, MegatronSeriesMatchesEquation2) {
  // Eq. 2 counts a tied LM head, biases and 2 LayerNorms per layer: the presets' own count must
  // agree within rounding (the final LayerNorm is the only extra, 2h parameters).
  for (const char* name : {"megatron-1.7b", "megatron-18.4b", "megatron-145.6b", "megatron-1t", "gpt3-175b"}) {
    const ModelSpec m = testing::model(name);
    EXPECT_NEAR(m.parameters() / eq2(m), 1.0, 1e-4) << name;
  }
  EXPECT_NEAR(testing::model("megatron-1t").parameters() / 1e9, 1008.0, 0.5);
}

TEST(ModelSpec, LlamaSizesMatchPublishedCounts) {
  // Meta's released configs: 8.03B, 70.55B, 405.85B (untied head, GQA with 8 KV heads, SwiGLU).
  EXPECT_NEAR(testing::model("llama3-8b").parameters() / 1e9, 8.03, 0.01);
  EXPECT_NEAR(testing::model("llama3-70b").parameters() / 1e9, 70.55, 0.02);
  EXPECT_NEAR(testing::model("llama3-405b").parameters() / 1e9, 405.85, 0.1);
  EXPECT_NEAR(testing::model("llama2-7b").parameters() / 1e9, 6.74, 0.01);
}

TEST(ModelSpec, RejectsHeadsNotDividingHidden) {
  auto j = testing::gpt(2, 100, 3, 1000, 128);
  try {
    parse_model(j, "model");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "model.heads: heads (3) must divide hidden (100) (choose heads so that hidden/heads is a whole head "
              "dimension)");
  }
}

TEST(ModelSpec, RejectsKvHeadsNotDividingHeads) {
  auto j = testing::gpt(2, 128, 8, 1000, 128);
  j["kv_heads"] = 3;
  EXPECT_THROW(parse_model(j, "model"), ConfigError);
  j["kv_heads"] = 2;  // GQA with 4 query heads per KV head is fine
  EXPECT_EQ(parse_model(j, "model").kv_heads_or_heads(), 2);
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
