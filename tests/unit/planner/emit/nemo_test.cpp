// --emit nemo: recipe choice and the attribute overrides of the plan.
#include <gtest/gtest.h>

#include "emit_test_support.hpp"

namespace trainsim::planner::emit {
namespace {

using testing::contains;
using testing::Json;
using testing::with;

std::string recipe(const Json& j) { return testing::file("nemo", testing::job(j), "nemo_recipe.py"); }

TEST(NemoEmitter, PublishedRecipeWithParallelismOverrides) {
  const std::string r = recipe(testing::llama70b());
  EXPECT_TRUE(contains(r,
                       "recipe = llm.llama3_70b.pretrain_recipe(name=name, dir=log_dir, num_nodes=NUM_NODES, "
                       "num_gpus_per_node=GPUS_PER_NODE)"));
  EXPECT_TRUE(contains(r, "NUM_NODES = 32\nGPUS_PER_NODE = 8\n"));
  EXPECT_TRUE(contains(r, "    strategy.tensor_model_parallel_size = 8\n"));
  EXPECT_TRUE(contains(r, "    strategy.pipeline_model_parallel_size = 4\n"));
  EXPECT_TRUE(contains(r, "    strategy.virtual_pipeline_model_parallel_size = 5\n"));
  EXPECT_TRUE(contains(r, "    strategy.sequence_parallel = True\n"));
  EXPECT_TRUE(contains(r, "        use_distributed_optimizer=True,\n"));
  EXPECT_TRUE(contains(r, "    recipe.optim.config.use_distributed_optimizer = True\n"));
  EXPECT_TRUE(contains(r, "    recipe.data.global_batch_size = 512\n"));
  EXPECT_TRUE(contains(r, "    recipe.model.config.recompute_granularity = \"selective\""));
  EXPECT_TRUE(contains(r, "    recipe.trainer.plugins = bf16_mixed()\n"));
  EXPECT_FALSE(contains(r, "GPTConfig"));
}

TEST(NemoEmitter, ModelsWithoutARecipeGetAGptConfig) {
  const std::string r =
      recipe(Json{{"model", "megatron-1.7b"}, {"cluster", "dgx-a100"}, {"gpus", 8}, {"tp", 2}, {"global_batch", 64}});
  EXPECT_TRUE(contains(r, "from nemo.collections.llm.gpt.model.base import GPTConfig, GPTModel"));
  EXPECT_TRUE(contains(r, "            activation_func=F.gelu,\n"));
  EXPECT_TRUE(contains(r, "NeMo has no recipe for megatron-1.7b"));
}

// ZeRO-2: NeMo runs Megatron-Core's distributed optimizer, whose gradient memory is ZeRO-1's.
TEST(NemoEmitter, RefusesZero2) {
  const auto j = testing::job(with(testing::llama70b(), Json{{"zero", 2}}));
  EXPECT_EQ(testing::config_error([&] { emit("nemo", j); }),
            "zero: ZeRO-2 is not expressible in NeMo: Megatron-Core's distributed optimizer shards only optimizer "
            "states (ZeRO-1) and keeps a full gradient buffer per rank (use --zero 1, or --emit deepspeed)");
}

TEST(NemoEmitter, FsdpUnevenPipelineAndMoe) {
  const std::string z3 =
      recipe(Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 32}, {"zero", 3}, {"global_batch", 256}});
  EXPECT_TRUE(contains(z3, "    strategy.fsdp = \"megatron\""));
  EXPECT_TRUE(contains(z3, "        data_parallel_sharding_strategy=\"optim_grads_params\",\n"));
  const std::string fl = recipe(
      with(testing::llama70b(),
           Json{{"gpus", 128}, {"vp", 1}, {"schedule", "1f1b"}, {"global_batch", 64}, {"pp_layout", "18,21,21,20"}}));
  EXPECT_TRUE(contains(fl, "    recipe.model.config.num_layers_in_first_pipeline_stage = 18\n"));
  EXPECT_TRUE(contains(fl, "    recipe.model.config.num_layers_in_last_pipeline_stage = 20\n"));
  const std::string moe = recipe(Json{{"model", "mixtral-8x7b"},
                                      {"cluster", "dgx-h100"},
                                      {"gpus", 64},
                                      {"tp", 2},
                                      {"pp", 4},
                                      {"ep", 8},
                                      {"global_batch", 256}});
  EXPECT_TRUE(contains(moe, "llm.mixtral_8x7b.pretrain_recipe("));
  EXPECT_TRUE(contains(moe, "    strategy.expert_model_parallel_size = 8\n"));
  EXPECT_TRUE(contains(moe, "    strategy.expert_tensor_parallel_size = 2\n"));
}

}  // namespace
}  // namespace trainsim::planner::emit
