// The attention variants and MTP in a built and simulated job: local layers priced apart from
// global ones, and the MTP modules on the last pipeline stage (docs/models.md).
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::with;

// A DeepSeek-V3-shaped miniature at 2K tokens (test_support).
Json mini_deepseek(int64_t mtp_layers) { return testing::mini_deepseek(2048, mtp_layers); }

Json job(const Json& model, const Json& extra = Json::object()) {
  return with(Json{{"model", model},
                   {"stack", "research"},
                   {"cluster", "dgx-h100"},
                   {"gpus", 8},
                   {"tp", 2},
                   {"pp", 2},
                   {"ep", 2},
                   {"zero", 1},
                   {"global_batch", 8},
                   {"seq_len", 2048}},
              extra);
}

TEST(AttentionVariantsBuild, LocalLayersCostLessThanGlobalOnes) {
  Json windowed = testing::model_json("gpt-oss-20b");
  Json global = windowed;
  global["attention_window"] = nullptr;
  const Json extra = {{"seq_len", 4096}, {"tp", 1}, {"ep", 4}, {"global_batch", 16}};
  const SimulationResult w = simulate(testing::job(job(windowed, extra)));
  const SimulationResult g = simulate(testing::job(job(global, extra)));
  ASSERT_TRUE(w.simulated && g.simulated);
  EXPECT_LT(w.iteration, g.iteration);
  EXPECT_LT(w.model_flops, g.model_flops);
  // The window does not change what is stored.
  EXPECT_EQ(w.stages[0].memory.activation_per_chunk, g.stages[0].memory.activation_per_chunk);
}

TEST(AttentionVariantsBuild, MtpRunsAndIsHeldOnTheLastStage) {
  const SimulationResult with_mtp = simulate(testing::job(job(mini_deepseek(1))));
  const SimulationResult without = simulate(testing::job(job(mini_deepseek(0))));
  ASSERT_TRUE(with_mtp.simulated && without.simulated);
  EXPECT_GT(with_mtp.iteration, without.iteration);
  // The first stage is unchanged; the last holds the module's parameters and activations.
  EXPECT_EQ(with_mtp.stages[0].memory.weights, without.stages[0].memory.weights);
  EXPECT_GT(with_mtp.stages[1].memory.weights, without.stages[1].memory.weights);
  EXPECT_GT(with_mtp.stages[1].memory.activation_per_chunk, without.stages[1].memory.activation_per_chunk);
  // Its parameters on a rank: its layer (a MoE layer, like the last one) and the column-parallel projection.
  const Job j = testing::job(job(mini_deepseek(1)));
  EXPECT_DOUBLE_EQ(j.rank_mtp_params(), j.rank_layer_params(4) + j.model.mtp_projection_parameters() / 2);
  EXPECT_TRUE(j.model.is_moe_layer(4));
}

TEST(AttentionVariantsBuild, MlaDownProjectionsAreWholeOnEveryTpRank) {
  const Job j = testing::job(job(mini_deepseek(0)));
  const llm::LayerParameters p = j.model.layer_split(0);
  EXPECT_GT(p.tp_replicated, 0.0);
  EXPECT_DOUBLE_EQ(j.rank_layer_params(0), (p.non_expert() - p.tp_replicated) / 2 + p.tp_replicated);
}

}  // namespace
}  // namespace trainsim::models::workload
