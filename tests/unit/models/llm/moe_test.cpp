#include "models/llm/moe.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "../test_support.hpp"
#include "models/llm/layer_ops.hpp"

namespace trainsim::models::llm {
namespace {

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
double flops(const Kernels& ks) {
  double f = 0.0;
  for (const KernelOp& k : ks) f += k.flops;
  return f;
}
double bytes(const Kernels& ks) {
  double b = 0.0;
  for (const KernelOp& k : ks) b += k.bytes;
  return b;
}
const KernelOp& find(const Kernels& ks, const std::string& name) {
  for (const KernelOp& k : ks)
    if (k.name == name) return k;
  ADD_FAILURE() << "no kernel " << name;
  static const KernelOp none;
  return none;
}

// ---- routing ----

TEST(Routing, UniformRoutingGivesEachExpertTTopKOverE) {
  // 64 experts, top-8, 8 EP ranks of 8 experts, 4096 tokens per rank: every expert computes
  // ep * T * k / E = 8 * 4096 * 8 / 64 = 4096 rows, every rank T * k = 32768.
  const Routing r = route_tokens(64, 8, 8, 4096, 0.0, std::nullopt, 1024);
  ASSERT_EQ(r.local_tokens.size(), 8u);
  for (double t : r.local_tokens) EXPECT_DOUBLE_EQ(t, 4096.0);
  for (double t : r.rank_tokens) EXPECT_DOUBLE_EQ(t, 32768.0);
  EXPECT_DOUBLE_EQ(r.received_tokens, 32768.0);
  EXPECT_DOUBLE_EQ(r.sent_tokens, 32768.0);
  EXPECT_DOUBLE_EQ(r.self_tokens, 4096.0);  // 1/ep of the rows stay on the rank
  EXPECT_DOUBLE_EQ(r.dropped_fraction, 0.0);
  EXPECT_DOUBLE_EQ(r.imbalance(), 1.0);
  EXPECT_EQ(r.bytes_per_token, sim::Bytes(2048));  // bf16 rows of h = 1024
  EXPECT_EQ(r.dispatch_send, sim::Bytes(32768 * 2048));
  EXPECT_EQ(r.dispatch_recv, sim::Bytes(32768 * 2048));
}

TEST(Routing, HandComputedZipfWithAndWithoutCapacity) {
  // 4 experts, top-1, s = 1: weights 1, 1/2, 1/3, 1/4 sum to 25/12, shares 12/25, 6/25, 4/25, 3/25;
  // of T = 100 tokens per rank, 48, 24, 16, 12 per expert. ep = 2, round-robin: rank 0 holds the
  // hottest and the third (48 + 16 from each of 2 ranks = 128), rank 1 the others (72).
  const Routing d = route_tokens(4, 1, 2, 100, 1.0, std::nullopt, 8);
  ASSERT_EQ(d.expert_tokens.size(), 4u);
  EXPECT_NEAR(d.expert_tokens[0], 96, 1e-9);
  EXPECT_NEAR(d.expert_tokens[1], 48, 1e-9);
  EXPECT_NEAR(d.expert_tokens[2], 32, 1e-9);
  EXPECT_NEAR(d.expert_tokens[3], 24, 1e-9);
  EXPECT_NEAR(d.local_tokens[0], 96, 1e-9);
  EXPECT_NEAR(d.local_tokens[1], 32, 1e-9);
  EXPECT_NEAR(d.rank_tokens[0], 128, 1e-9);
  EXPECT_NEAR(d.rank_tokens[1], 72, 1e-9);
  EXPECT_NEAR(d.received_tokens, 128, 1e-9);
  EXPECT_NEAR(d.self_tokens, 64, 1e-9);
  EXPECT_NEAR(d.imbalance(), 1.28, 1e-12);
  EXPECT_EQ(d.dropped_fraction, 0.0);
  EXPECT_EQ(d.dispatch_send, sim::Bytes(100 * 16));
  EXPECT_EQ(d.dispatch_recv, sim::Bytes(128 * 16));
  // Capacity factor 1: C = ceil(100 / 4) = 25 rows per expert from each rank: 25, 24, 16, 12 kept,
  // 23 of 100 dropped; rank 0 computes 2 * (25 + 16) = 82.
  const Routing c = route_tokens(4, 1, 2, 100, 1.0, 1.0, 8);
  EXPECT_NEAR(c.expert_tokens[0], 50, 1e-9);
  EXPECT_NEAR(c.expert_tokens[1], 48, 1e-9);
  EXPECT_NEAR(c.received_tokens, 82, 1e-9);
  EXPECT_NEAR(c.sent_tokens, 77, 1e-9);
  EXPECT_NEAR(c.dropped_fraction, 0.23, 1e-12);
  // Capacity factor 2: C = 50 rows, nothing is dropped.
  EXPECT_EQ(route_tokens(4, 1, 2, 100, 1.0, 2.0, 8).dropped_fraction, 0.0);
}

TEST(Routing, SkewRaisesTheMostLoadedRank) {
  // 64 experts, top-2, 8 ranks: below the 1/top_k cap the maximum rank load grows with the skew.
  double previous = 0.0;
  for (double s : {0.0, 0.25, 0.5, 1.0, 1.5, 2.0}) {
    const Routing r = route_tokens(64, 2, 8, 4096, s, std::nullopt, 1024);
    EXPECT_GT(r.received_tokens, previous) << s;
    previous = r.received_tokens;
    // Rank 0 is the most loaded, and its experts are sorted hottest first.
    for (double t : r.rank_tokens) EXPECT_LE(t, r.rank_tokens[0] * (1 + 1e-12)) << s;
    for (size_t j = 1; j < r.local_tokens.size(); ++j) EXPECT_LE(r.local_tokens[j], r.local_tokens[j - 1]) << s;
    // Skew moves load between ranks, not the number of rows sent.
    EXPECT_NEAR(r.sent_tokens, 4096.0 * 2, 1e-6) << s;
  }
  EXPECT_NEAR(route_tokens(64, 2, 8, 4096, 0.5, std::nullopt, 1024).imbalance(), 1.3047, 1e-4);
  // top-8: from s = 0.75 the hottest expert takes every token (the cap), and at s = 4 the six
  // hottest do; round-robin puts them on six different ranks, so the maximum rank load falls again
  // from 1.65 to 1.28 times the balanced load while rank 0's own experts stay very uneven.
  const Routing peak = route_tokens(64, 8, 8, 4096, 0.75, std::nullopt, 1024);
  const Routing hot = route_tokens(64, 8, 8, 4096, 4.0, std::nullopt, 1024);
  EXPECT_NEAR(peak.imbalance(), 1.6476, 1e-4);
  EXPECT_NEAR(hot.imbalance(), 1.2811, 1e-4);
  EXPECT_DOUBLE_EQ(peak.local_tokens[0], 8.0 * 4096);
  EXPECT_DOUBLE_EQ(hot.local_tokens[0], 8.0 * 4096);
  EXPECT_LT(hot.local_tokens[1], 0.3 * hot.local_tokens[0]);
  // One expert per rank: the hottest expert's rank takes its whole Zipf share.
  const Routing one = route_tokens(8, 1, 8, 1000, 1.0, std::nullopt, 64);
  double harmonic = 0.0;
  for (int i = 1; i <= 8; ++i) harmonic += 1.0 / i;
  EXPECT_NEAR(one.received_tokens, 8 * 1000 / harmonic, 1e-6);
}

TEST(Routing, NoExpertTakesMoreThanEveryToken) {
  // top-2 of 4 with s = 3: the hottest's Zipf share (0.85) exceeds 1/top_k, but a token's two
  // experts are distinct, so it takes every token once (T per source rank) and the other three
  // share the remaining T in proportion to 1/8, 1/27, 1/64.
  const Routing r = route_tokens(4, 2, 1, 100, 3.0, std::nullopt, 8);
  EXPECT_NEAR(r.expert_tokens[0], 100, 1e-9);
  const double w = 1.0 / 8 + 1.0 / 27 + 1.0 / 64;
  EXPECT_NEAR(r.expert_tokens[1], 100 * (1.0 / 8) / w, 1e-9);
  EXPECT_NEAR(r.expert_tokens[3], 100 * (1.0 / 64) / w, 1e-9);
  // top_k = experts: every expert gets every token whatever the skew.
  for (double t : route_tokens(4, 4, 2, 100, 5.0, std::nullopt, 8).expert_tokens) EXPECT_NEAR(t, 200, 1e-9);
}

TEST(Routing, TokensAreConservedAndDroplessNeverDrops) {
  for (double s : {0.0, 0.7, 1.5})
    for (std::optional<double> c : {std::optional<double>{}, std::optional<double>{1.0}, std::optional<double>{1.25}})
      for (int64_t ep : {1, 4, 16}) {
        const Routing r = route_tokens(32, 4, ep, 3000, s, c, 512);
        const double assigned = 3000.0 * 4;
        // Every kept row is computed by exactly one expert of one rank.
        EXPECT_NEAR(sum(r.expert_tokens), static_cast<double>(ep) * r.sent_tokens, 1e-6);
        EXPECT_NEAR(sum(r.rank_tokens), static_cast<double>(ep) * r.sent_tokens, 1e-6);
        EXPECT_NEAR(sum(r.local_tokens), r.received_tokens, 1e-6);
        EXPECT_NEAR(r.sent_tokens, assigned * (1 - r.dropped_fraction), 1e-6);
        if (!c) {
          EXPECT_EQ(r.dropped_fraction, 0.0);
        } else {
          // Nothing above the capacity: ceil(c * T * k / E) rows from each of the ep ranks.
          const double cap = std::ceil(*c * assigned / 32) * static_cast<double>(ep);
          for (double t : r.expert_tokens) EXPECT_LE(t, cap + 1e-9);
          EXPECT_EQ(r.dropped_fraction > 0.0, s > 0.0);  // only a skewed router overflows capacity
        }
      }
}

TEST(Routing, PaddedToCapacityEveryExpertComputesItsCapacity) {
  // Megatron's --moe-pad-expert-input-to-capacity: a skewed router drops above the capacity and
  // pads below it, so every expert computes exactly ceil(c * T * k / E) rows from each rank and the
  // all-to-all carries them all.
  const Routing r = route_tokens(32, 4, 4, 3000, 1.0, 1.0, 512, 2, true);
  const double cap = std::ceil(3000.0 * 4 / 32);
  for (double t : r.expert_tokens) EXPECT_DOUBLE_EQ(t, 4 * cap);
  EXPECT_DOUBLE_EQ(r.sent_tokens, 32 * cap);
  EXPECT_GT(r.dropped_fraction, 0.0);  // the hot experts still drop
  const Routing unpadded = route_tokens(32, 4, 4, 3000, 1.0, 1.0, 512);
  EXPECT_EQ(unpadded.dropped_fraction, r.dropped_fraction);
  EXPECT_LT(unpadded.sent_tokens, r.sent_tokens);
}

TEST(Routing, EpMustDivideTheExperts) {
  EXPECT_EQ(testing::config_error([] { route_tokens(8, 2, 3, 100, 0.0, std::nullopt, 64); }),
            "ep: ep (3) must divide the experts (8) (every EP rank holds experts/ep whole experts: use a divisor of "
            "the expert count)");
}

TEST(Routing, FromTheModel) {
  const ModelSpec m = testing::model("mixtral-8x7b");
  const Routing r = route_tokens(m, 4, 4096);
  EXPECT_EQ(r.experts, 8);
  EXPECT_EQ(r.top_k, 2);
  EXPECT_EQ(r.local_tokens.size(), 2u);
  EXPECT_DOUBLE_EQ(r.local_tokens[0], 4.0 * 4096 * 2 / 8);
  EXPECT_EQ(r.bytes_per_token, sim::Bytes(4096 * 2));
}

// ---- kernels ----

// h 256, 4 heads, SwiGLU, 8 experts of 512, top-2, one shared expert; 2 layers, the first dense.
ModelSpec small_moe(int64_t shared = 1) {
  return parse_model(testing::with(testing::gpt(2, 256, 4, 1000, 512), {{"activation", "swiglu"},
                                                                        {"norm", "rmsnorm"},
                                                                        {"position", "rope"},
                                                                        {"bias", false},
                                                                        {"dropout", false},
                                                                        {"ffn_hidden", 1024},
                                                                        {"moe",
                                                                         {{"experts", 8},
                                                                          {"top_k", 2},
                                                                          {"expert_ffn_hidden", 512},
                                                                          {"shared_experts", shared},
                                                                          {"first_dense_layers", 1}}}}),
                     "m");
}

TEST(MoeKernels, ExpertGemmFlopsAreSixTokensTopKHiddenFfnOverTheGroup) {
  const ModelSpec m = small_moe();
  const double h = 256, f = 512, k = 2;
  LayerShape s;
  s.seq_len = 512;  // T = 512 tokens per rank
  for (int64_t ep : {1, 2, 4, 8})
    for (int64_t etp : {1, 2}) {
      const Routing r = route_tokens(m, ep, 512);
      const MoeBlockKernels b = moe_block_kernels(m, s, ep, etp, r);
      // Uniform routing: every rank is the most loaded one, so the group's FLOPs are ep x etp x a rank's.
      // SwiGLU: fc1 is 2 f wide (gate and up), fc2 f: 2 * 3 * T * top_k * h * f per forward.
      const double group = 2.0 * 3.0 * (512.0 * static_cast<double>(ep)) * k * h * f;
      EXPECT_DOUBLE_EQ(flops(b.experts_fwd) * static_cast<double>(ep * etp), group) << ep << " " << etp;
      EXPECT_DOUBLE_EQ(flops(b.experts_dgrad), flops(b.experts_fwd));
      EXPECT_DOUBLE_EQ(flops(b.experts_wgrad), flops(b.experts_fwd));
      // One fc1 and one fc2 GEMM per local expert, with its own row count.
      const int64_t local = 8 / ep;
      int64_t gemms = 0;
      for (const KernelOp& op : b.experts_fwd) gemms += op.kind == KernelOp::Kind::kGemm ? 1 : 0;
      EXPECT_EQ(gemms, 2 * local);
      const KernelOp& fc1 = find(b.experts_fwd, "moe.expert0.fc1.fwd");
      EXPECT_EQ(fc1.gemm.m, 512 * 2 * ep / 8);
      EXPECT_EQ(fc1.gemm.n, 2 * 512 / etp);
      EXPECT_EQ(fc1.gemm.k, 256);
      EXPECT_EQ(fc1.layout, GemmLayout::kTN);
      const KernelOp& fc2 = find(b.experts_fwd, "moe.expert0.fc2.fwd");
      EXPECT_EQ(fc2.gemm.n, 256);
      EXPECT_EQ(fc2.gemm.k, 512 / etp);
      EXPECT_EQ(find(b.experts_dgrad, "moe.expert0.fc1.dgrad").layout, GemmLayout::kNN);
      EXPECT_EQ(find(b.experts_wgrad, "moe.expert0.fc1.wgrad").layout, GemmLayout::kNT);
      // Shared expert: a dense SwiGLU MLP of width 512 / etp on all T tokens.
      EXPECT_DOUBLE_EQ(flops(b.shared_fwd), 2.0 * 3.0 * 512 * h * f / static_cast<double>(etp));
      EXPECT_DOUBLE_EQ(flops(b.shared_dgrad) + flops(b.shared_wgrad), 2 * flops(b.shared_fwd));
      // Router: [T, E] logits, its input gradient and its weight gradient.
      EXPECT_DOUBLE_EQ(flops(b.router_fwd), 2.0 * 512 * 8 * h);
      EXPECT_DOUBLE_EQ(flops(b.router_dgrad), 2.0 * 512 * 8 * h);
      EXPECT_DOUBLE_EQ(flops(b.router_wgrad), 2.0 * 512 * 8 * h);
      // Memory-bound work only around the all-to-alls.
      EXPECT_EQ(flops(b.post_fwd) + flops(b.post_dgrad), 0.0);
      EXPECT_GT(bytes(b.post_fwd), 0.0);
      // All-to-all buffer: T * top_k rows of 2h bytes, none without expert parallelism.
      EXPECT_EQ(b.a2a_bytes, ep > 1 ? sim::Bytes(512 * 2 * 256 * 2) : sim::Bytes(0));
    }
}

TEST(MoeKernels, NormsComeFromTheDenseLayerAndSharedExpertsAreOptional) {
  const ModelSpec m = small_moe(0);
  LayerShape s;
  s.seq_len = 256;
  const MoeBlockKernels b = moe_block_kernels(m, s, 2, 1, route_tokens(m, 2, 256));
  const LayerKernels dense = layer_kernels(m, s);
  ASSERT_EQ(b.pre_fwd.size(), dense.mlp.pre_fwd.size());
  for (size_t i = 0; i < b.pre_fwd.size(); ++i) EXPECT_EQ(b.pre_fwd[i].name, dense.mlp.pre_fwd[i].name);
  EXPECT_EQ(b.pre_bwd.size(), dense.mlp.pre_bwd.size());
  EXPECT_TRUE(b.shared_fwd.empty());
  EXPECT_TRUE(b.shared_dgrad.empty());
  EXPECT_TRUE(b.shared_wgrad.empty());
}

TEST(MoeKernels, SkewSlowsTheMostLoadedRankAndUnevenExpertsHaveTheirOwnGemms) {
  ModelSpec m = testing::model("mixtral-8x7b");
  const compute::ComputeModel h100(testing::gpu("h100-sxm-80gb"), compute::Precision::kBf16);
  LayerShape s;
  s.seq_len = 4096;
  const MoeBlockKernels even = moe_block_kernels(m, s, 4, 1, route_tokens(m, 4, 4096));
  m.moe->router_skew = 1.0;
  const Routing skewed_routing = route_tokens(m, 4, 4096);
  const MoeBlockKernels skewed = moe_block_kernels(m, s, 4, 1, skewed_routing);
  // Experts 0 and 4 of popularity live on rank 0: uneven rows, one GEMM each.
  const int64_t m0 = find(skewed.experts_fwd, "moe.expert0.fc1.fwd").gemm.m;
  const int64_t m1 = find(skewed.experts_fwd, "moe.expert1.fc1.fwd").gemm.m;
  EXPECT_GT(m0, m1);
  EXPECT_EQ(m0, static_cast<int64_t>(std::ceil(skewed_routing.local_tokens[0])));
  EXPECT_GT(kernels_cost(skewed.experts_fwd, h100).time, kernels_cost(even.experts_fwd, h100).time);
  EXPECT_GT(skewed.a2a_bytes, even.a2a_bytes);  // the slowest rank receives more rows
  EXPECT_EQ(skewed.a2a_bytes, skewed_routing.dispatch_recv);
}

TEST(MoeKernels, ModelFlopsCountActiveParametersOnly) {
  // Dense models: the same count as layer_ops.
  for (const char* name : {"llama3-8b", "gpt3-175b"}) {
    const ModelSpec m = testing::model(name);
    EXPECT_EQ(moe_forward_model_flops_per_sequence(m, 2048), forward_model_flops_per_sequence(m, 2048)) << name;
  }
  // MoE, no biases: per token 2 x (active parameters but the input embedding and the norms) for the
  // matmuls, plus 2 s (q + v) per layer for attention over all s keys (q = v = heads x head_dim:
  // h, or 2h for Qwen3's 128-wide heads; DeepSeek-V3's MLA: 128 x 192 and 128 x 128). The norms
  // include QK-norm (Qwen3) and MLA's latent norms; the MTP module is left out here.
  for (const char* name : {"mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b"}) {
    ModelSpec m = testing::model(name);
    m.mtp_layers = 0;
    const double s = 4096, h = static_cast<double>(m.hidden), l = static_cast<double>(m.layers);
    double norms = h * (2 * l + 1);
    if (m.qk_norm) norms += l * 2 * static_cast<double>(m.qk_head_dim());
    if (m.mla) norms += l * static_cast<double>(m.mla->q_lora_rank.value_or(0) + m.mla->kv_lora_rank);
    const double matmul = 2 * (m.active_parameters() - static_cast<double>(m.vocab) * h - norms);
    const double qv = static_cast<double>(m.q_width() + m.v_width());
    EXPECT_NEAR(moe_forward_model_flops_per_sequence(m, 4096) / (s * (matmul + l * 2 * s * qv)), 1.0, 1e-12) << name;
    // Far below counting every expert.
    EXPECT_LT(moe_forward_model_flops_per_sequence(m, 4096), 2 * s * m.parameters()) << name;
  }
}

TEST(ClampedSwiglu, ClampsRunOutsideTheFusedGlu) {
  // GPT-OSS (activation_clamp 7.0): Megatron-Core 0.15 clamps the two halves of the fc1 output and
  // concatenates them before its fused GLU: 3 kernels and 8 x elems x 2 bytes forward, 3 kernels and
  // 10 x elems x 2 bytes backward, for elems GLU outputs (rows x expert width).
  const ModelSpec m = testing::model("gpt-oss-120b");
  ASSERT_TRUE(m.activation_clamp);
  LayerShape s;
  s.seq_len = 1024;
  const Routing r = route_tokens(m, 8, 1024);
  const MoeBlockKernels k = moe_block_kernels(m, s, 8, 1, r);
  double fwd = 0, bwd = 0;
  int nf = 0, nb = 0;
  for (const KernelOp& op : k.experts_fwd)
    if (op.name.starts_with("moe.experts.act_clamp_")) fwd += op.bytes, ++nf;
  for (const KernelOp& op : k.experts_dgrad)
    if (op.name.starts_with("moe.experts.act_clamp_")) bwd += op.bytes, ++nb;
  const double elems = r.received_tokens * static_cast<double>(m.moe->expert_ffn_hidden);
  EXPECT_EQ(nf, 3);
  EXPECT_EQ(nb, 3);
  EXPECT_NEAR(fwd, 8.0 * elems * 2.0, 1e-6 * fwd);
  EXPECT_NEAR(bwd, 10.0 * elems * 2.0, 1e-6 * bwd);
  // Without the clamp, none of them.
  ModelSpec plain = m;
  plain.activation_clamp.reset();
  for (const KernelOp& op : moe_block_kernels(plain, s, 8, 1, r).experts_fwd)
    EXPECT_FALSE(op.name.starts_with("moe.experts.act_clamp_")) << op.name;
  // A clamp needs a gated activation.
  sim::config::Json j = testing::model_json("gpt-oss-120b");
  j["activation"] = "gelu";
  EXPECT_NE(testing::config_error([&] { (void)parse_model(j, "model"); }).find("activation_clamp"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::models::llm
