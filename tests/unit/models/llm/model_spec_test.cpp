#include "models/llm/model_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../test_support.hpp"
#include "models/llm/layer_ops.hpp"
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
            "dimension, or give head_dim)");
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

// ---- Mixture of Experts ----

// A small SwiGLU/RMSNorm model (no biases, untied, RoPE) with a `moe` object.
sim::config::Json moe_model(const sim::config::Json& moe) {
  return testing::with(testing::gpt(6, 256, 4, 1000, 128), {{"activation", "swiglu"},
                                                            {"norm", "rmsnorm"},
                                                            {"position", "rope"},
                                                            {"bias", false},
                                                            {"dropout", false},
                                                            {"ffn_hidden", 1024},
                                                            {"moe", moe}});
}

TEST(ModelSpec, MoeDefaultsAndNull) {
  EXPECT_FALSE(testing::model("llama3-8b").moe.has_value());
  EXPECT_FALSE(parse_model(testing::with(testing::gpt(2, 128, 8, 1000, 128), {{"moe", nullptr}}), "m").moe);
  const ModelSpec m = parse_model(moe_model({{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 512}}), "m");
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->shared_experts, 0);
  EXPECT_FALSE(m.moe->capacity_factor.has_value());
  EXPECT_EQ(m.moe->layer_freq, 1);
  EXPECT_EQ(m.moe->first_dense_layers, 0);
  EXPECT_EQ(m.moe->router_skew, 0.0);
  const ModelSpec c = parse_model(
      moe_model({{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 512}, {"capacity_factor", 1.25}}), "m");
  EXPECT_EQ(c.moe->capacity_factor, 1.25);
}

TEST(ModelSpec, MoeSchemaErrorsNameTheFieldAndTheFix) {
  const auto err = [](const sim::config::Json& moe) {
    return testing::config_error([&] { parse_model(moe_model(moe), "model"); });
  };
  EXPECT_EQ(err({{"experts", 8}, {"top_k", 9}, {"expert_ffn_hidden", 512}}),
            "model.moe.top_k: top_k (9) must not exceed experts (8) (a token goes to top_k distinct experts: lower "
            "top_k or add experts)");
  EXPECT_EQ(err({{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 512}, {"first_dense_layers", 6}}),
            "model.moe.first_dense_layers: first_dense_layers (6) must be less than layers (6) (leave at least one MoE "
            "layer, or set \"moe\": null for a dense model)");
  EXPECT_EQ(
      err({{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 512}, {"first_dense_layers", 5}, {"layer_freq", 4}}),
      "model.moe.layer_freq: layer_freq (4) leaves no MoE layer among layers 5..5 (layer i is MoE when i >= "
      "first_dense_layers and i % layer_freq == 0: lower layer_freq or first_dense_layers)");
  EXPECT_EQ(err({{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 512}, {"capacity_factor", 0.5}}),
            "model.moe.capacity_factor: must be between 1.0 and 1000.0, got 0.5");
  EXPECT_EQ(err({{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 512}, {"router_skew", -1}}),
            "model.moe.router_skew: must be between 0.0 and 16.0, got -1");
  EXPECT_EQ(err({{"experts", 8}, {"top_k", 2}}).rfind("model.moe.expert_ffn_hidden: missing required key", 0), 0u);
  EXPECT_EQ(err({{"experts", 8}, {"topk", 2}, {"expert_ffn_hidden", 512}}),
            "model.moe.topk: unknown key in moe (did you mean \"top_k\"?)");
  EXPECT_EQ(err({{"experts", 0}, {"top_k", 1}, {"expert_ffn_hidden", 512}}).rfind("model.moe.experts: must be", 0), 0u);
  EXPECT_EQ(testing::config_error([] { parse_model(moe_model(8), "model"); }),
            "model.moe: expected a JSON object, got an integer");
}

TEST(ModelSpec, MoeLayersFollowLayerFreqAfterTheDenseLayers) {
  const auto layers = [](int64_t freq, int64_t first_dense) {
    const ModelSpec m = parse_model(moe_model({{"experts", 4},
                                               {"top_k", 1},
                                               {"expert_ffn_hidden", 64},
                                               {"layer_freq", freq},
                                               {"first_dense_layers", first_dense}}),
                                    "m");
    std::string out;
    for (int64_t i = 0; i < m.layers; ++i) out += m.is_moe_layer(i) ? 'M' : 'd';
    EXPECT_EQ(m.moe_layers(), static_cast<int64_t>(std::count(out.begin(), out.end(), 'M')));
    return out;
  };
  EXPECT_EQ(layers(1, 0), "MMMMMM");
  EXPECT_EQ(layers(2, 0), "MdMdMd");  // Megatron-LM's --moe-layer-freq 2, GShard's every other layer
  EXPECT_EQ(layers(3, 0), "MddMdd");
  EXPECT_EQ(layers(1, 3), "dddMMM");  // DeepSeek-V3's first_k_dense_replace
  EXPECT_EQ(layers(2, 3), "ddddMd");  // i % layer_freq counts from layer 0, as DeepSeek's code does
  const ModelSpec dense = testing::model("llama3-8b");
  EXPECT_FALSE(dense.is_moe_layer(0));
  EXPECT_EQ(dense.moe_layers(), 0);
}

TEST(ModelSpec, MoeParametersCountEveryExpertAndActiveOnlyTopK) {
  // h 256, 4 heads (MHA), SwiGLU, RMSNorm, no biases; 6 layers, the first dense (f 1024), MoE every
  // layer after it: 8 experts of 512, top-2, 1 shared expert.
  const ModelSpec m = parse_model(
      moe_model(
          {{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 512}, {"shared_experts", 1}, {"first_dense_layers", 1}}),
      "m");
  const double h = 256, V = 1000;
  const double attn = 4 * h * h + h, expert = 3 * h * 512;
  const double dense_mlp = 3 * h * 1024 + h, moe_replicated = 8 * h + expert + h;
  const LayerParameters d = m.layer_split(0), e = m.layer_split(1);
  EXPECT_DOUBLE_EQ(d.attention, attn);
  EXPECT_DOUBLE_EQ(d.mlp, dense_mlp);
  EXPECT_DOUBLE_EQ(d.experts, 0.0);
  EXPECT_DOUBLE_EQ(e.attention, attn);
  EXPECT_DOUBLE_EQ(e.mlp, moe_replicated);  // router h x 8, the shared expert, the MLP norm
  EXPECT_DOUBLE_EQ(e.experts, 8 * expert);
  EXPECT_DOUBLE_EQ(e.non_expert(), attn + moe_replicated);
  EXPECT_DOUBLE_EQ(m.layer_parameters(1), attn + moe_replicated + 8 * expert);
  const double edges = 2 * V * h + h;  // embedding, untied head, final norm
  const double layers = (attn + dense_mlp) + 5 * (attn + moe_replicated + 8 * expert);
  EXPECT_DOUBLE_EQ(m.parameters(), edges + layers);
  EXPECT_DOUBLE_EQ(m.layer_parameters(), layers / 6);  // the mean, so layers x it is still the total
  EXPECT_DOUBLE_EQ(m.active_parameters(), edges + (attn + dense_mlp) + 5 * (attn + moe_replicated + 2 * expert));
}

TEST(ModelSpec, DenseModelsKeepTheirCountsAndSplitIntoAttentionAndMlp) {
  for (const auto& p : presets::list("models")) {
    const ModelSpec m = testing::model(p.name);
    if (m.moe) continue;
    for (int64_t i : {int64_t{0}, m.layers - 1}) EXPECT_EQ(m.layer_split(i).experts, 0.0) << p.name;
    EXPECT_EQ(m.active_parameters(), m.parameters()) << p.name;
  }
  // GPT-style: attention 4h^2 + 4h (weights and biases) + LayerNorm 2h; MLP 8h^2 + 5h + LayerNorm 2h.
  const ModelSpec g = testing::model("gpt3-175b");
  const double h = 12288;
  EXPECT_DOUBLE_EQ(g.layer_split(0).attention, 4 * h * h + 4 * h + 2 * h);
  EXPECT_DOUBLE_EQ(g.layer_split(0).mlp, 8 * h * h + 5 * h + 2 * h);
}

// Published totals: Mixtral (Mistral AI: 46.7B / 12.9B active; 141B / 39B), DeepSeek-V3 (report
// abstract: 671B / 37B), Qwen3 (model cards: 30.5B / 3.3B; 235B / 22B).
TEST(ModelSpec, MoePresetsMatchPublishedTotals) {
  struct Row {
    const char* name;
    double total, active;     // billions, published
    double active_tolerance;  // relative
  };
  // DeepSeek-V3 has MLA's own 187.1M attention parameters per layer; its 37B active count leaves
  // out the input embedding (36.6B without it, +1.5% with it). Qwen3 sets head_dim 128 (queries
  // wider than hidden) and QK-norm. attention_variants_test.cpp holds these to 1% or the published
  // rounding.
  for (const Row& r :
       {Row{"mixtral-8x7b", 46.7, 12.9, 0.03}, Row{"mixtral-8x22b", 141, 39, 0.03}, Row{"deepseek-v3", 671, 37, 0.05},
        Row{"qwen3-30b-a3b", 30.5, 3.3, 0.02}, Row{"qwen3-235b-a22b", 235, 22, 0.02}}) {
    const ModelSpec m = testing::model(r.name);
    ASSERT_TRUE(m.moe.has_value()) << r.name;
    EXPECT_NEAR(m.parameters() / 1e9 / r.total, 1.0, 0.03) << r.name;
    EXPECT_NEAR(m.active_parameters() / 1e9 / r.active, 1.0, r.active_tolerance) << r.name;
    EXPECT_GT(m.parameters(), m.active_parameters()) << r.name;
  }
  // Exact closed form for Mixtral 8x7B: per layer Q, O 4096^2, K, V 4096 x 1024, router 4096 x 8,
  // 8 experts of 3 x 4096 x 14336, two RMSNorms; embedding and head 32000 x 4096; final norm.
  const double h = 4096, expert = 3 * h * 14336, attn = 2 * h * h + 2 * h * 1024 + 8 * h + 2 * h;
  const ModelSpec mx = testing::model("mixtral-8x7b");
  EXPECT_DOUBLE_EQ(mx.parameters(), 32 * (attn + 8 * expert) + 2 * 32000 * h + h);
  EXPECT_DOUBLE_EQ(mx.active_parameters(), 32 * (attn + 2 * expert) + 2 * 32000 * h + h);
  // Qwen3 with head_dim 128: totals within 1% of the model cards (30.5B, 235B).
  for (const auto& [name, total] : {std::pair{"qwen3-30b-a3b", 30.5}, std::pair{"qwen3-235b-a22b", 235.0}}) {
    const ModelSpec m = testing::model(name);
    EXPECT_EQ(m.head_dim(), 128) << name;
    EXPECT_EQ(m.q_width(), 2 * m.hidden) << name;
    EXPECT_NEAR(m.parameters() / 1e9 / total, 1.0, 0.01) << name;
  }
  // DeepSeek-V3: 3 dense layers, 58 MoE layers.
  const ModelSpec ds = testing::model("deepseek-v3");
  EXPECT_EQ(ds.moe_layers(), 58);
  EXPECT_FALSE(ds.is_moe_layer(2));
  EXPECT_TRUE(ds.is_moe_layer(3));
}

}  // namespace
}  // namespace trainsim::models::llm

namespace trainsim::models::llm {
namespace {
TEST(ModelSpec, HeadDimApartFromHidden) {
  // 32 query heads of 128 over a 2048-wide residual stream (Qwen3-30B-A3B's attention): the
  // projections are 2048 x 4096 (Q), 2048 x 512 (K, V) and 4096 x 2048 (O).
  sim::config::Json j = testing::gpt(2, 2048, 32, 1000, 512);
  j["head_dim"] = 128;
  j["kv_heads"] = 4;
  j["bias"] = false;
  const ModelSpec m = parse_model(j, "model");
  EXPECT_EQ(m.q_width(), 4096);
  const double h = 2048, attn = h * (4096 + 2 * 512) + 4096 * h;
  sim::config::Json narrow = j;
  narrow.erase("head_dim");
  const ModelSpec n = parse_model(narrow, "model");
  EXPECT_DOUBLE_EQ(m.layer_parameters() - n.layer_parameters(), attn - (h * (2048 + 2 * 256) + 2048 * h));
  // The attention FLOPs follow the query width too.
  EXPECT_DOUBLE_EQ(forward_model_flops_per_sequence(m, 512) - forward_model_flops_per_sequence(n, 512),
                   512.0 * 2 * (2.0 * (attn - (h * (2048 + 2 * 256) + 2048 * h)) + 4.0 * 512 * (4096 - 2048)));
  // Without head_dim, heads must divide hidden.
  sim::config::Json odd = narrow;
  odd["heads"] = 30;
  odd["kv_heads"] = nullptr;
  EXPECT_THROW(parse_model(odd, "model"), ConfigError);
  odd["head_dim"] = 64;
  EXPECT_NO_THROW(parse_model(odd, "model"));
}
}  // namespace
}  // namespace trainsim::models::llm
