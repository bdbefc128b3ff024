// The attention variants (MLA, sliding windows, sinks, QK-norm), multi-token prediction, and the
// presets built on them against their published parameter counts.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/llm/model_spec.hpp"

namespace trainsim::models::llm {
namespace {

double attention_core_flops(const LayerKernels& k) {
  for (const KernelOp& op : k.attn.main_fwd)
    if (op.kind == KernelOp::Kind::kAttentionFwd) return op.flops;
  return 0.0;
}

bool has_kernel(const Kernels& ks, const std::string& name) {
  for (const KernelOp& op : ks)
    if (op.name == name) return true;
  return false;
}

// Published totals and active counts (billions), each within 1% unless the publisher rounds more
// coarsely than 1%, where the tolerance is half a unit of the last published digit:
//   deepseek-v3  671B / 37B: DeepSeek-V3 Technical Report (arXiv:2412.19437) abstract; MTP excluded.
//                37B is rounded to whole billions (+-0.5B) and leaves out the input embedding.
//   qwen3-*      30.5B / 3.3B and 235B / 22B: the Qwen/Qwen3-30B-A3B and -235B-A22B model cards.
//                3.3B is given to 0.1B and truncated, not rounded (ours is 3.353B), so the
//                tolerance is one unit of its last digit (0.1B, 3%); 22B is given to 1B (+-0.5B).
//   gpt-oss-*    116.83B / 5.13B and 20.91B / 3.61B: OpenAI gpt-oss model card (Aug 2025) Table 1;
//                the active counts leave out the input embedding.
//   llama4-scout 109B / 17B: Meta's Llama-4-Scout-17B-16E model card, whole billions (+-0.5B); 109B
//                counts the vision encoder and projector (about 0.8B), which are not modelled, so
//                the text decoder is compared with 109B - 0.5B rounding - 0.8B: tolerance 1.2%.
//   gemma3-27b   27.016B = 1,416M embedding + 25,600M non-embedding: Gemma 3 Technical Report
//                (arXiv:2503.19786) Table 1 (the 417M vision encoder apart).
TEST(AttentionVariants, PresetsMatchPublishedParameterCounts) {
  struct Row {
    const char* name;
    double total, active;          // billions, published
    double total_tol, active_tol;  // relative
    bool active_without_input_embedding;
  };
  for (const Row& r :
       {Row{"deepseek-v3", 671, 37, 0.01, 0.5 / 37, true}, Row{"qwen3-30b-a3b", 30.5, 3.3, 0.01, 0.1 / 3.3, false},
        Row{"qwen3-235b-a22b", 235, 22, 0.01, 0.5 / 22, false}, Row{"gpt-oss-120b", 116.83, 5.13, 0.01, 0.01, true},
        Row{"gpt-oss-20b", 20.91, 3.61, 0.01, 0.01, true}, Row{"llama4-scout", 109, 17, 0.012, 0.5 / 17, false},
        Row{"gemma3-27b", 27.016, 27.016, 0.01, 0.01, false}}) {
    const ModelSpec m = testing::model(r.name);
    const double embedding = static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
    const double active = m.active_parameters() - (r.active_without_input_embedding ? embedding : 0.0);
    EXPECT_NEAR(m.parameters() / 1e9 / r.total, 1.0, r.total_tol) << r.name << " total " << m.parameters() / 1e9;
    EXPECT_NEAR(active / 1e9 / r.active, 1.0, r.active_tol) << r.name << " active " << active / 1e9;
  }
}

TEST(AttentionVariants, MlaParametersAreTheClosedForm) {
  const ModelSpec m = testing::model("deepseek-v3");
  ASSERT_TRUE(m.mla.has_value());
  // q: 7168 x 1536 + 1536 + 1536 x 128 x 192; kv: 7168 x 576 + 512 + 512 x 128 x 256; out 128 x 128 x 7168.
  const double q = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192, kv = 7168.0 * 576 + 512 + 512.0 * 128 * 256;
  const double out = 128.0 * 128 * 7168;
  EXPECT_DOUBLE_EQ(m.layer_split(0).attention, q + kv + out + 7168);  // + the attention RMSNorm
  EXPECT_DOUBLE_EQ(m.layer_split(0).tp_replicated, 7168.0 * 1536 + 1536 + 7168.0 * 576 + 512);
  // TP splits all but the down-projections and latent norms.
  const LayerParameters s = m.layer_split(0);
  EXPECT_DOUBLE_EQ(s.non_expert_per_rank(8), (s.non_expert() - s.tp_replicated) / 8 + s.tp_replicated);
  // Widths: queries/keys 128 x (128 + 64), values 128 x 128; materialised keys and values per head.
  EXPECT_EQ(m.q_width(), 128 * 192);
  EXPECT_EQ(m.v_width(), 128 * 128);
  EXPECT_EQ(m.kv_width(), 128 * (192 + 128));
}

TEST(AttentionVariants, MlaKernelsAndAttentionFlops) {
  const ModelSpec m = testing::model("deepseek-v3");
  const LayerShape s{1, 4096, 8, true, true};
  const LayerKernels k = layer_kernels(m, s);
  for (const char* name : {"attn.q_down.fwd", "attn.q_norm.fwd", "attn.q_up.fwd", "attn.kv_down.fwd",
                           "attn.kv_norm.fwd", "attn.kv_up.fwd", "attn.rope.fwd", "attn.proj.fwd"})
    EXPECT_TRUE(has_kernel(k.attn.main_fwd, name)) << name;
  // QK^T at 16 local heads x 192, PV at 16 x 128, over the causal half of 4096^2.
  EXPECT_DOUBLE_EQ(attention_core_flops(k), 2.0 * 4096.0 * 4096.0 * (16 * 192 + 16 * 128) / 2);
  // The down-projection is whole on each rank and runs on its 4096/8 sequence-parallel tokens.
  for (const KernelOp& op : k.attn.main_fwd)
    if (op.name == "attn.q_down.fwd") {
      EXPECT_EQ(op.gemm.m, 512);
      EXPECT_EQ(op.gemm.n, 1536);
    }
}

TEST(AttentionVariants, LocalLayersAttendOverTheirWindow) {
  EXPECT_DOUBLE_EQ(windowed_causal_pairs(8, 8), 36);         // 1 + 2 + ... + 8
  EXPECT_DOUBLE_EQ(windowed_causal_pairs(8, 3), 6 + 5 * 3);  // 1 + 2 + 3, then 3 per query
  const ModelSpec m = testing::model("gpt-oss-120b");
  EXPECT_TRUE(m.is_local_layer(0));
  EXPECT_FALSE(m.is_local_layer(1));
  EXPECT_TRUE(m.is_local_layer(34));
  const LayerShape global{1, 4096, 1, false, true};
  const LayerShape local = layer_shape(m, global, 0);
  EXPECT_EQ(local.window, 128);
  EXPECT_EQ(layer_shape(m, global, 1).window, 0);
  const double g = attention_core_flops(layer_kernels(m, global));
  const double l = attention_core_flops(layer_kernels(m, local));
  EXPECT_DOUBLE_EQ(g, 2.0 * 4096 * 4096 * 4096);  // 64 heads x 64 = 4096 wide
  EXPECT_DOUBLE_EQ(l, 4.0 * windowed_causal_pairs(4096, 128) * 4096);
  // Gemma 3: five local layers, then a global one.
  const ModelSpec gemma = testing::model("gemma3-27b");
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(gemma.is_local_layer(i), i % 6 != 5) << i;
}

TEST(AttentionVariants, SinksAndQkNormAddTheirParametersAndKernels) {
  ModelSpec m = testing::model("qwen3-30b-a3b");
  ASSERT_TRUE(m.qk_norm);
  const double with = m.layer_split(0).attention;
  m.qk_norm = false;
  EXPECT_DOUBLE_EQ(with - m.layer_split(0).attention, 2 * 128);
  m.attention_sinks = true;
  EXPECT_DOUBLE_EQ(m.layer_split(0).attention - (with - 256), 32);  // one logit per head
  const ModelSpec q = testing::model("qwen3-30b-a3b");
  const LayerKernels k = layer_kernels(q, LayerShape{1, 4096, 1, false, true});
  EXPECT_TRUE(has_kernel(k.attn.main_fwd, "attn.qk_norm.fwd"));
  EXPECT_TRUE(has_kernel(k.attn.main_dgrad, "attn.qk_norm.bwd"));
}

TEST(AttentionVariants, MtpIsCountedApartAndShapedLikeTheLastLayer) {
  const ModelSpec m = testing::model("deepseek-v3");
  ASSERT_EQ(m.mtp_layers, 1);
  EXPECT_TRUE(m.is_moe_layer(61));  // the MTP layer is a MoE layer like layer 60
  const double h = 7168;
  EXPECT_DOUBLE_EQ(m.mtp_projection_parameters(), 2 * h + 2 * h * h);
  EXPECT_DOUBLE_EQ(m.mtp_parameters(), m.mtp_projection_parameters() + m.layer_parameters(60));
  // 11.61B beyond the shared embedding and head (the report's 14B counts their copies too).
  EXPECT_NEAR(m.mtp_parameters() / 1e9, 11.61, 0.01);
  const EdgeKernels e = edge_kernels(m, LayerShape{1, 4096, 8, true, true});
  EXPECT_TRUE(has_kernel(e.mtp_fwd, "mtp.proj.fwd"));
  ModelSpec plain = m;
  plain.mtp_layers = 0;
  EXPECT_EQ(plain.parameters(), m.parameters());  // published totals leave MTP out
  EXPECT_GT(forward_model_flops_per_sequence(m, 4096), forward_model_flops_per_sequence(plain, 4096));
}

TEST(AttentionVariants, BadInputNamesTheFieldAndTheFix) {
  const auto err = [](const sim::config::Json& extra) {
    return testing::config_error(
        [&] { parse_model(testing::with(testing::model_json("deepseek-v3"), extra), "model"); });
  };
  EXPECT_EQ(err({{"head_dim", 128}}).rfind("model.head_dim: head_dim (128) cannot be given with mla", 0), 0u);
  EXPECT_EQ(err({{"kv_heads", 8}}).rfind("model.kv_heads: kv_heads (8) must equal heads (128) with mla", 0), 0u);
  EXPECT_EQ(err({{"mla",
                  {{"q_lora_rank", 8192},
                   {"kv_lora_rank", 512},
                   {"qk_nope_head_dim", 128},
                   {"qk_rope_head_dim", 64},
                   {"v_head_dim", 128}}}})
                .rfind("model.mla.q_lora_rank: q_lora_rank (8192) must not exceed hidden (7168)", 0),
            0u);
  EXPECT_EQ(err({{"attention_window", {{"size", 8192}}}}).rfind("model.attention_window.size: window size (8192)", 0),
            0u);
  EXPECT_EQ(err({{"attention_window", {{"size", 0}}}}).rfind("model.attention_window.size: must be", 0), 0u);
  EXPECT_EQ(err({{"attention_window", {{"size", 128}, {"pattern", {"local", "globl"}}}}}),
            "model.attention_window.pattern[1]: unknown value \"globl\" (did you mean \"global\"?)");
}

}  // namespace
}  // namespace trainsim::models::llm
