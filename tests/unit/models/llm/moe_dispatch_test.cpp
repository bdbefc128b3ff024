#include "models/llm/moe_dispatch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../test_support.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/llm/moe.hpp"

namespace trainsim::models::llm {
namespace {

// ---- DeepEP's deduplication ----

TEST(FlexDedup, OneExpertPerRankCannotDeduplicate) {
  // Mixtral on 8 ranks of one node: a token's 2 experts are always on 2 different ranks.
  EXPECT_DOUBLE_EQ(flex_dedup_factor(8, 2, 8, 8), 1.0);
  EXPECT_DOUBLE_EQ(flex_dedup_factor(8, 2, 1, 8), 1.0);  // no expert parallelism
}

TEST(FlexDedup, InsideANodeOneCopyPerRank) {
  // 64 experts, top-8, 8 ranks of 8 experts in one node: a rank gets a token unless all 8 experts
  // miss its 8: P = 1 - C(56, 8) / C(64, 8); 7 peers against 8 x 7/8 = 7 rows.
  double miss = 1.0;
  for (int i = 0; i < 8; ++i) miss *= (56.0 - i) / (64.0 - i);
  EXPECT_NEAR(flex_dedup_factor(64, 8, 8, 8), 7.0 * (1.0 - miss) / 7.0, 1e-12);
  EXPECT_LT(flex_dedup_factor(64, 8, 8, 8), 0.7);
}

TEST(FlexDedup, AcrossNodesOneCopyPerNode) {
  // DeepSeek-V3 shape: 256 experts, top-8, EP 64 over 8 nodes of 8: a remote node gets a token
  // unless its 32 experts are all missed; 7 nodes against 8 x 56/64 = 7 rows off the node.
  double miss = 1.0;
  for (int i = 0; i < 8; ++i) miss *= (224.0 - i) / (256.0 - i);
  const double f = flex_dedup_factor(256, 8, 64, 8);
  EXPECT_NEAR(f, 7.0 * (1.0 - miss) / 7.0, 1e-12);
  EXPECT_GT(f, 0.6);
  EXPECT_LT(f, 0.7);
  // Fewer, larger nodes deduplicate more.
  EXPECT_LT(flex_dedup_factor(256, 8, 64, 32), f);
}

// ---- auxiliary-loss-free balancing ----

TEST(AuxFree, CutsTheHottestExpertsExcessByTheMeasuredRatio) {
  EXPECT_DOUBLE_EQ(aux_free_skew(0.0, 64, 8), 0.0);
  for (const double s : {0.3, 1.0, 2.0}) {
    const double f = aux_free_skew(s, 64, 2);
    EXPECT_GT(f, 0.0);
    EXPECT_LT(f, s);
    // MaxVio = E * p0 - 1 under Zipf shares, p0 capped at 1/top_k (skew 2: 0.61 -> 0.5).
    auto vio = [](double skew) {
      double norm = 0.0;
      for (int i = 1; i <= 64; ++i) norm += std::pow(i, -skew);
      return 64.0 * std::min(1.0 / norm, 0.5) - 1.0;
    };
    EXPECT_NEAR(vio(f), kAuxFreeMaxVioRatio * vio(s), 1e-9) << s;
  }
  MoeSpec moe;
  moe.experts = 64;
  moe.top_k = 2;
  moe.router_skew = 1.0;
  EXPECT_DOUBLE_EQ(routing_skew(moe, MoeBalance::kAuxLoss), 1.0);
  EXPECT_DOUBLE_EQ(routing_skew(moe, MoeBalance::kAuxFree), aux_free_skew(1.0, 64, 2));
}

// ---- the dispatchers' bytes and costs ----

struct MixtralBlock {
  ModelSpec m = testing::model("mixtral-8x7b");
  compute::ComputeModel cm{testing::gpu("h100-sxm-80gb"), compute::Precision::kBf16};
  LayerShape s;
  MixtralBlock() { s.seq_len = 4096; }
  MoeBlockCosts costs(MoeDispatcher d, int64_t ep, int64_t etp = 1, int64_t per_node = 8,
                      MoeBalance b = MoeBalance::kAuxLoss) const {
    return moe_block_costs(m, s, ep, etp, 4096, cm, MoeRun{d, b, per_node});
  }
};

TEST(MoeDispatchers, AllToAllMovesTopKRowsPerToken) {
  const MixtralBlock u;
  const MoeBlockCosts c = u.costs(MoeDispatcher::kAllToAll, 8);
  const int64_t row = 4096 * 2;
  EXPECT_EQ(c.a2a, sim::Bytes(4096 * 2 * row));  // T x top_k rows, own rows included
  EXPECT_EQ(c.a2a_dispatch, c.a2a);
  EXPECT_EQ(c.gather_ep, sim::Bytes(0));
  EXPECT_EQ(c.etp_rows, sim::Bytes(4096 * 2 * row));
}

TEST(MoeDispatchers, AllGatherMovesEveryTokenOfTheGroup) {
  const MixtralBlock u;
  const int64_t row = 4096 * 2, T = 4096, E = 8;
  const MoeBlockCosts g = u.costs(MoeDispatcher::kAllGather, 8);
  EXPECT_EQ(g.a2a, sim::Bytes(0));
  EXPECT_EQ(g.gather_ep, sim::Bytes(8 * T * row));                // ep x T rows gathered
  EXPECT_EQ(g.gather_ep_fwd, sim::Bytes(8 * T * (row + E * 5)));  // + fp32 probs and bool map
  EXPECT_EQ(g.gather_etp, sim::Bytes(0));
  // Bytes a rank receives: all-gather (ep - 1) T rows against the all-to-all's (ep - 1)/ep T top_k:
  // 4x more for top-2 over 8 ranks (ep / top_k).
  const MoeBlockCosts a = u.costs(MoeDispatcher::kAllToAll, 8);
  const double gathered = static_cast<double>(g.gather_ep.count()) * 7.0 / 8.0;
  const double exchanged = static_cast<double>(a.a2a.count()) * 7.0 / 8.0;
  EXPECT_NEAR(gathered / exchanged, 8.0 / 2.0, 1e-12);
  // With expert TP the gather continues over ETP: ep x etp x T rows.
  const MoeBlockCosts ge = u.costs(MoeDispatcher::kAllGather, 4, 2);
  EXPECT_EQ(ge.gather_etp, sim::Bytes(8 * T * row));
  // The unpermute writes a buffer of every gathered token: more memory traffic than alltoall's.
  EXPECT_GT(g.post_fwd.time, a.post_fwd.time);
  EXPECT_GT(g.router_dgrad.time, a.router_dgrad.time);
  EXPECT_EQ(g.experts_fwd.time, a.experts_fwd.time);  // the same rows reach the experts
}

TEST(MoeDispatchers, FlexSendsDeduplicatedRowsAndTheRoutingMetadata) {
  MixtralBlock u;
  // Mixtral over one node, one expert per rank: no deduplication, only the metadata.
  const MoeBlockCosts a = u.costs(MoeDispatcher::kAllToAll, 8);
  const MoeBlockCosts f = u.costs(MoeDispatcher::kFlex, 8);
  EXPECT_EQ(f.a2a, a.a2a);
  EXPECT_EQ(
      f.a2a_dispatch,
      sim::Bytes(static_cast<int64_t>(std::ceil(static_cast<double>(a.a2a.count()) * (1.0 + 2 * 12.0 / 8192.0)))));
  // 64 experts of a quarter width, top-8, EP 16 over 2 nodes of 8: fewer bytes than alltoall.
  u.m.moe->experts = 64;
  u.m.moe->top_k = 8;
  u.m.moe->expert_ffn_hidden = 14336 / 4;
  const MoeBlockCosts a2 = u.costs(MoeDispatcher::kAllToAll, 16);
  const MoeBlockCosts f2 = u.costs(MoeDispatcher::kFlex, 16);
  const double factor = flex_dedup_factor(64, 8, 16, 8);
  EXPECT_LT(factor, 1.0);
  EXPECT_NEAR(static_cast<double>(f2.a2a.count()), static_cast<double>(a2.a2a.count()) * factor, 1.0);
  // The same rows reach the experts; alltoall also sorts them by local expert (4 per rank here)
  // after the exchange and back before the combine (flex's backends lay them out themselves).
  // A rank receives T x top_k = 32768 rows of 4096 bf16 values and an fp32 probability each.
  const sim::Time sort = u.cm.memory_bound(sim::Bytes(int64_t{32768} * (4096 * 2 + 4) * 2));
  EXPECT_EQ(a2.experts_fwd.time - f2.experts_fwd.time, sort * 2);
  EXPECT_EQ(a2.experts_dgrad.time - f2.experts_dgrad.time, sort * 2);
}

TEST(MoeBalancing, AuxLossKernelsCostALittleAndAuxFreeBalancesTheLoad) {
  MixtralBlock u;
  const MoeBlockCosts loss = u.costs(MoeDispatcher::kAllToAll, 4, 1, 8, MoeBalance::kAuxLoss);
  const MoeBlockCosts free = u.costs(MoeDispatcher::kAllToAll, 4, 1, 8, MoeBalance::kAuxFree);
  // Two forward kernels and one backward against one counting kernel: a few launches.
  EXPECT_EQ(loss.router_fwd.kernels, free.router_fwd.kernels + 1);
  EXPECT_EQ(loss.router_dgrad.kernels, free.router_dgrad.kernels + 1);
  EXPECT_GT(loss.router_fwd.time + loss.router_dgrad.time, free.router_fwd.time + free.router_dgrad.time);
  EXPECT_LT((loss.router_fwd.time + loss.router_dgrad.time).seconds(), 0.05 * loss.experts_fwd.time.seconds());
  // Uniform routing: the same expert rows either way. Skewed: aux_free's rank is less loaded.
  EXPECT_EQ(loss.experts_fwd.time, free.experts_fwd.time);
  u.m.moe->router_skew = 1.0;
  const Routing skewed = route_tokens(u.m, 4, 4096, MoeBalance::kAuxLoss);
  const Routing balanced = route_tokens(u.m, 4, 4096, MoeBalance::kAuxFree);
  EXPECT_LT(balanced.imbalance(), skewed.imbalance());
  EXPECT_GT(balanced.imbalance(), 1.0);
  EXPECT_LT(u.costs(MoeDispatcher::kAllToAll, 4, 1, 8, MoeBalance::kAuxFree).experts_fwd.time,
            u.costs(MoeDispatcher::kAllToAll, 4, 1, 8, MoeBalance::kAuxLoss).experts_fwd.time);
}

}  // namespace
}  // namespace trainsim::models::llm
