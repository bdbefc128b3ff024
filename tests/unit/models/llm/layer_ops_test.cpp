#include "models/llm/layer_ops.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::llm {
namespace {

using compute::GemmShape;

double fwd_flops(const LayerCosts& c) { return c.attn.main_fwd.flops.count() + c.mlp.main_fwd.flops.count(); }
double bwd_flops(const LayerCosts& c) {
  return c.attn.main_dgrad.flops.count() + c.attn.main_wgrad.flops.count() + c.mlp.main_dgrad.flops.count() +
         c.mlp.main_wgrad.flops.count();
}
// Norms, residuals and dropout are memory-bound: they never carry FLOPs.
double pre_flops(const LayerCosts& c) {
  return c.attn.pre_fwd.flops.count() + c.attn.pre_bwd.flops.count() + c.mlp.pre_fwd.flops.count() +
         c.mlp.pre_bwd.flops.count();
}

class LayerOps : public ::testing::Test {
 protected:
  compute::ComputeModel a100{testing::gpu("a100-sxm-80gb"), compute::Precision::kBf16};
  compute::ComputeModel h100{testing::gpu("h100-sxm-80gb"), compute::Precision::kBf16};
};

TEST_F(LayerOps, ForwardModelFlopsIsMegatronFormula) {
  // 24 s l h^2 (1 + s/(6h) + V/(12 l h)) per sequence: Narayanan et al. Eq. 3 / Appendix without
  // the recompute term and the factor 3 for backward. Checked on two GPT shapes.
  for (const auto& [name, s] : {std::pair{"megatron-145.6b", 2048}, std::pair{"megatron-1.7b", 1024}}) {
    const ModelSpec m = testing::model(name);
    const double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
    const double V = static_cast<double>(m.vocab), sd = s;
    const double expected = 24 * sd * l * h * h * (1 + sd / (6 * h) + V / (12 * l * h));
    EXPECT_NEAR(forward_model_flops_per_sequence(m, s) / expected, 1.0, 1e-12) << name;
  }
  const ModelSpec g = parse_model(testing::gpt(4, 512, 8, 1000, 256), "m");
  EXPECT_NEAR(forward_model_flops_per_sequence(g, 256),
              24.0 * 256 * 4 * 512 * 512 * (1 + 256.0 / (6 * 512) + 1000.0 / (12 * 4 * 512)), 1.0);
}

TEST_F(LayerOps, ForwardModelFlopsWithGqaAndSwiGlu) {
  // Llama 3 8B per token and layer: 2(h(h + 2 kvd) + h^2 + 3 h f) matmuls + 4 s h attention;
  // plus the LM head 2 h V per token. h 4096, kvd 1024, f 14336, V 128256, l 32.
  const ModelSpec m = testing::model("llama3-8b");
  const double h = 4096, kvd = 1024, f = 14336, V = 128256, s = 8192;
  const double per_token = 32 * (2 * (h * (h + 2 * kvd) + h * h + 3 * h * f) + 4 * s * h) + 2 * h * V;
  EXPECT_NEAR(forward_model_flops_per_sequence(m, 8192) / (s * per_token), 1.0, 1e-12);
}

TEST_F(LayerOps, LayerGemmFlopsAre24bsh2OverT) {
  // MHA-GeLU forward GEMMs per TP rank: QKV 6bsh^2, out-proj 2bsh^2, MLP 16bsh^2 = 24 b s h^2 / t.
  // Attention over the scores adds 4 b s^2 h / t unfused (QK^T and PV, full s x s) and half of
  // that with causal FlashAttention. Sequence parallelism moves no FLOPs.
  const ModelSpec m = testing::model("megatron-1.7b");  // h 2304, 24 heads
  const double h = 2304;
  for (const int64_t t : {1, 2, 4, 8})
    for (const bool sp : {false, true})
      for (const bool flash : {false, true}) {
        const int64_t b = 2, s = 2048;
        const LayerCosts c = layer_costs(m, LayerShape{b, s, t, sp, flash}, a100);
        const double gemms = 24.0 * b * s * h * h / static_cast<double>(t);
        const double attention = (flash ? 2.0 : 4.0) * b * s * s * h / static_cast<double>(t);
        EXPECT_NEAR((fwd_flops(c) - attention) / gemms, 1.0, 1e-12) << "t" << t << " sp" << sp << " flash" << flash;
        EXPECT_EQ(pre_flops(c), 0.0);
        // The TP collective moves the full b*s*h activation in 2-byte elements.
        EXPECT_EQ(c.tp_comm_bytes.count(), b * s * 2304 * 2);
      }
}

TEST_F(LayerOps, BackwardIsTwiceTheForward) {
  const ModelSpec m = testing::model("megatron-1.7b");
  const double b = 2, s = 2048, h = 2304, t = 2;
  // Unfused: every forward GEMM has an input-gradient and a weight-gradient GEMM of the same
  // size (attention's dP, dV, dQ, dK included): exactly 2x.
  const LayerCosts unfused = layer_costs(m, LayerShape{2, 2048, 2, false, false}, a100);
  EXPECT_NEAR(bwd_flops(unfused) / fwd_flops(unfused), 2.0, 1e-12);
  // Flash: GEMMs 2x, the attention kernel 2.5x (it recomputes S and P).
  const LayerCosts flash = layer_costs(m, LayerShape{2, 2048, 2, false, true}, a100);
  const double gemms = 24 * b * s * h * h / t, attention = 2 * b * s * s * h / t;
  EXPECT_NEAR(bwd_flops(flash) / (2 * gemms + 2.5 * attention), 1.0, 1e-12);
  // Weight gradients are half of the GEMM backward; flash attention has none.
  const double wgrad = flash.attn.main_wgrad.flops.count() + flash.mlp.main_wgrad.flops.count();
  EXPECT_NEAR(wgrad / gemms, 1.0, 1e-12);
}

TEST_F(LayerOps, FlashAttentionSkipsTheMaskedHalf) {
  const ModelSpec m = testing::model("llama3-8b");
  const LayerCosts flash = layer_costs(m, LayerShape{1, 8192, 1, false, true}, h100);
  const LayerCosts unfused = layer_costs(m, LayerShape{1, 8192, 1, false, false}, h100);
  const double diff = unfused.attn.main_fwd.flops.count() - flash.attn.main_fwd.flops.count();
  // Unfused computes 4 s^2 h; causal flash 2 s^2 h.
  EXPECT_NEAR(diff, 2.0 * 8192.0 * 8192.0 * 4096.0, 1.0);
  // Unfused attention keeps a selective-recompute cost (its core forward: 4 s^2 h FLOPs);
  // flash recomputes inside its own backward.
  EXPECT_GT(unfused.attn.selective_recompute.time, sim::Time::zero());
  EXPECT_NEAR(unfused.attn.selective_recompute.flops.count(), 4.0 * 8192.0 * 8192.0 * 4096.0, 1.0);
  EXPECT_EQ(flash.attn.selective_recompute.kernels, 0);
  EXPECT_EQ(unfused.mlp.selective_recompute.kernels, 0);
  // The MLP does not depend on the attention kernel.
  EXPECT_EQ(flash.mlp.main_fwd.time, unfused.mlp.main_fwd.time);
}

TEST_F(LayerOps, SwiGluGqaFlops) {
  // Llama 3 8B at t = 2, b = 1, s = 4096 (T = 4096 tokens): QKV 2 T h (h + 2 kvd)/t, out-proj
  // 2 T h^2 / t, SwiGLU 2 T (2f) h / t + 2 T f h / t = 6 T h f / t; flash attention 2 T s h / t.
  const ModelSpec m = testing::model("llama3-8b");
  const double T = 4096, h = 4096, kvd = 1024, f = 14336, t = 2;
  const LayerCosts c = layer_costs(m, LayerShape{1, 4096, 2, true, true}, h100);
  EXPECT_NEAR(c.attn.main_fwd.flops.count() / (2 * T * h * (h + 2 * kvd) / t + 2 * T * h * h / t + 2 * T * T * h / t),
              1.0, 1e-12);
  EXPECT_NEAR(c.mlp.main_fwd.flops.count() / (6 * T * h * f / t), 1.0, 1e-12);
}

TEST_F(LayerOps, TaskTimesAreTheirKernelsTimes) {
  // GPT (learned positions: no RoPE kernel), flash: the attention block's main forward is the
  // QKV GEMM [T, 3h/t, h], the flash kernel, and the output projection [T, h, h/t].
  const ModelSpec m = testing::model("megatron-1.7b");
  const int64_t b = 2, s = 2048, t = 2, h = 2304, T = b * s;
  const LayerCosts c = layer_costs(m, LayerShape{b, s, t, true, true}, a100);
  const double attn = 2.0 * b * s * s * h / t;
  const sim::Time expected = a100.gemm(GemmShape{T, 3 * h / t, h, 1}) + a100.flash_attention(sim::Flops(attn)) +
                             a100.gemm(GemmShape{T, h, h / t, 1});
  EXPECT_EQ(c.attn.main_fwd.time, expected);
  EXPECT_EQ(c.attn.main_fwd.kernels, 3);
  // Weight gradients of QKV and out-proj: dW = X^T dY, [h, 3h/t] over T and [h/t, h] over T.
  EXPECT_EQ(c.attn.main_wgrad.time, a100.gemm(GemmShape{h, 3 * h / t, T, 1}) + a100.gemm(GemmShape{h / t, h, T, 1}));
  // MLP forward: fc1 [T, 4h/t, h], GeLU reading and writing T x 4h/t bf16 elements, fc2 [T, h, 4h/t].
  const sim::Time mlp = a100.gemm(GemmShape{T, 4 * h / t, h, 1}) +
                        a100.memory_bound(sim::Bytes(T * (4 * h / t) * 2 * 2), 1) +
                        a100.gemm(GemmShape{T, h, 4 * h / t, 1});
  EXPECT_EQ(c.mlp.main_fwd.time, mlp);
  // With sequence parallelism the norms see T/t tokens: residual+dropout (3 x 2 B + 1 B mask) and
  // the norm (2 x 2 B) per element of T/t x h, in two kernels.
  EXPECT_EQ(c.attn.pre_fwd.time, a100.memory_bound(sim::Bytes(T / t * h * (3 * 2 + 1 + 2 * 2)), 2));
}

TEST_F(LayerOps, HostDispatchBoundsShortKernelGroups) {
  Cost c{sim::Time::us(10), sim::Flops(), 5};
  EXPECT_EQ(c.with_dispatch(sim::Time::us(1)), sim::Time::us(10));  // GPU-bound
  EXPECT_EQ(c.with_dispatch(sim::Time::us(3)), sim::Time::us(15));  // 5 kernels x 3 us of host time
  c += Cost{sim::Time::us(2), sim::Flops(7), 1};
  EXPECT_EQ(c.time, sim::Time::us(12));
  EXPECT_EQ(c.kernels, 6);
  EXPECT_EQ(c.flops.count(), 7.0);
}

TEST_F(LayerOps, EdgeCostsAreTheLmHeadGemms) {
  // LM head [T, V/t, h] forward, input gradient and weight gradient: 2 T h ceil(V/t) each. V =
  // 128256 splits evenly over t = 4; the embedding lookup is a gather without FLOPs.
  const ModelSpec m = testing::model("llama3-8b");
  const double T = 2 * 4096, h = 4096, Vt = 128256 / 4;
  const EdgeCosts e = edge_costs(m, LayerShape{2, 4096, 4, true, true}, h100);
  EXPECT_DOUBLE_EQ(e.head_fwd.flops.count(), 2 * T * h * Vt);
  EXPECT_DOUBLE_EQ(e.head_dgrad.flops.count(), 2 * T * h * Vt);
  EXPECT_DOUBLE_EQ(e.head_wgrad.flops.count(), 2 * T * h * Vt);
  EXPECT_EQ(e.embed_fwd.flops.count(), 0.0);
  EXPECT_GT(e.embed_fwd.time, sim::Time::zero());
  // A vocabulary that does not split evenly is padded up: ceil(51200 / 3) = 17067 columns.
  const ModelSpec g = parse_model(testing::gpt(2, 768, 12, 51200, 1024), "m");
  EXPECT_DOUBLE_EQ(edge_costs(g, LayerShape{1, 1024, 3, false, true}, h100).head_wgrad.flops.count(),
                   2.0 * 1024 * 768 * 17067);
}

}  // namespace
}  // namespace trainsim::models::llm
