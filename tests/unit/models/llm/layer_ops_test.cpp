#include "models/llm/layer_ops.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::llm {
namespace {

TEST(LayerOps, ForwardModelFlopsIsMegatronFormula) {
  // 24 s l h^2 (1 + s/(6h) + V/(12 l h)) per sequence: Narayanan et al. Eq. 3 / 4 / B.
  const ModelSpec m = testing::model("megatron-145.6b");
  const double s = 2048, l = 80, h = 12288, V = 51200;
  const double expected = 24 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(forward_model_flops_per_sequence(m, 2048) / expected, 1.0, 1e-12);
}

TEST(LayerOps, LayerGemmFlopsMatchClosedForm) {
  // MHA-GeLU forward GEMMs: QKV 6bsh^2, out-proj 2bsh^2, MLP 16bsh^2 = 24 b s h^2 / t per rank,
  // plus unfused attention 4 b s^2 h / t.
  const ModelSpec m = testing::model("megatron-1.7b");
  const compute::ComputeModel cm(testing::gpu("a100-sxm-80gb"), compute::Precision::kBf16);
  const int64_t b = 2, s = 2048, t = 2, h = 2304;
  const LayerCosts c = layer_costs(m, LayerShape{b, s, t, false, false}, cm);
  const double fwd = c.attn.main_fwd.flops.count() + c.mlp.main_fwd.flops.count();
  const double expected = 24.0 * b * s * h * h / t + 4.0 * b * s * s * h / t;
  EXPECT_NEAR(fwd / expected, 1.0, 1e-12);
  // Backward = input gradients + weight gradients = 2x the forward GEMMs (attention: 2x too).
  const double bwd = c.attn.main_dgrad.flops.count() + c.attn.main_wgrad.flops.count() +
                     c.mlp.main_dgrad.flops.count() + c.mlp.main_wgrad.flops.count();
  EXPECT_NEAR(bwd / fwd, 2.0, 1e-12);
  // The TP collective moves the full b*s*h activation in 2-byte elements.
  EXPECT_EQ(c.tp_comm_bytes.count(), b * s * h * 2);
}

TEST(LayerOps, FlashAttentionSkipsTheMaskedHalf) {
  const ModelSpec m = testing::model("llama3-8b");
  const compute::ComputeModel cm(testing::gpu("h100-sxm-80gb"), compute::Precision::kBf16);
  const LayerCosts flash = layer_costs(m, LayerShape{1, 8192, 1, false, true}, cm);
  const LayerCosts unfused = layer_costs(m, LayerShape{1, 8192, 1, false, false}, cm);
  const double diff = unfused.attn.main_fwd.flops.count() - flash.attn.main_fwd.flops.count();
  // Unfused computes 4 s^2 h; causal flash 2 s^2 h.
  EXPECT_NEAR(diff, 2.0 * 8192.0 * 8192.0 * 4096.0, 1.0);
  // Unfused attention keeps a selective-recompute cost; flash recomputes inside its backward.
  EXPECT_GT(unfused.attn.selective_recompute.time, sim::Time::zero());
  EXPECT_EQ(flash.attn.selective_recompute.kernels, 0);
}

}  // namespace
}  // namespace trainsim::models::llm
