// --emit deepspeed: ds_config.json batch arithmetic, ZeRO mapping, and the Megatron-DeepSpeed line.
#include <gtest/gtest.h>

#include "emit_test_support.hpp"

namespace trainsim::planner::emit {
namespace {

using testing::Json;
using testing::with;

Json config(const Json& j) { return Json::parse(testing::file("deepspeed", testing::job(j), "ds_config.json")); }
std::string launcher(const Json& j) { return testing::file("deepspeed", testing::job(j), "megatron_deepspeed.sh"); }

TEST(DeepSpeedEmitter, GradientAccumulationTimesMicroBatchTimesDpIsTheGlobalBatch) {
  const std::vector<Json> jobs = {
      testing::llama70b(),
      with(testing::llama70b(), Json{{"micro_batch", 2}, {"global_batch", 1024}}),
      Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"micro_batch", 4}, {"global_batch", 512}},
      Json{{"model", "llama3-8b"},
           {"cluster", "dgx-h100"},
           {"gpus", 64},
           {"tp", 2},
           {"cp", 4},
           {"cp_algo", "ulysses"},
           {"seq_len", 131072},
           {"global_batch", 16}},
  };
  for (const auto& j : jobs) {
    const auto job = testing::job(j);
    const Json c = config(j);
    EXPECT_EQ(c["train_batch_size"].get<int64_t>(), job.global_batch);
    EXPECT_EQ(c["train_micro_batch_size_per_gpu"].get<int64_t>(), job.micro_batch);
    EXPECT_EQ(
        c["gradient_accumulation_steps"].get<int64_t>() * c["train_micro_batch_size_per_gpu"].get<int64_t>() * job.dp,
        c["train_batch_size"].get<int64_t>())
        << j.dump();
  }
}

TEST(DeepSpeedEmitter, ZeroStageOffloadAndPrecision) {
  const Json base = {{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 32}, {"global_batch", 256}};
  for (const int zero : {0, 1, 2, 3})
    EXPECT_EQ(config(with(base, Json{{"zero", zero}}))["zero_optimization"]["stage"].get<int>(), zero);
  const Json z3 = config(with(base, Json{{"zero", 3}, {"dp_shard", 8}, {"offload_optimizer", true}}));
  EXPECT_EQ(z3["zero_optimization"]["mics_shard_size"].get<int>(), 8);
  EXPECT_EQ(z3["zero_optimization"]["offload_optimizer"]["device"].get<std::string>(), "cpu");
  EXPECT_GT(z3["zero_optimization"]["stage3_prefetch_bucket_size"].get<int64_t>(), 0);
  EXPECT_TRUE(config(base)["bf16"]["enabled"].get<bool>());
  const Json fp16 = config(with(base, Json{{"precision", "fp16"}}));
  EXPECT_TRUE(fp16["fp16"]["enabled"].get<bool>());
  EXPECT_FALSE(fp16.contains("bf16"));
  EXPECT_TRUE(config(with(base, Json{{"recompute", "full"}})).contains("activation_checkpointing"));
  EXPECT_FALSE(config(base).contains("activation_checkpointing"));
}

TEST(DeepSpeedEmitter, PipelineEngineTakesZeroOneOnly) {
  const Json j = with(testing::llama70b(), Json{{"zero", 2}, {"vp", 1}, {"schedule", "1f1b"}});
  EXPECT_EQ(config(j)["zero_optimization"]["stage"].get<int>(), 1);
  const std::string l = launcher(j);
  EXPECT_TRUE(testing::contains(l, "DeepSpeed's pipeline engine supports only ZeRO stages 0 and 1")) << l;
  EXPECT_EQ(testing::flag_value(l, "--zero-stage"), "1");
  EXPECT_FALSE(testing::has_flag(l, "--no-pipeline-parallel"));
}

TEST(DeepSpeedEmitter, MegatronDeepSpeedCarriesTpPpSpAndEp) {
  const std::string l = launcher(testing::llama70b());
  EXPECT_EQ(testing::flag_value(l, "--tensor-model-parallel-size"), "8");
  EXPECT_EQ(testing::flag_value(l, "--pipeline-model-parallel-size"), "4");
  EXPECT_EQ(testing::flag_value(l, "--deepspeed_config"), "\"${DS_CONFIG:-ds_config.json}\"");
  EXPECT_TRUE(testing::has_flag(l, "--deepspeed"));
  EXPECT_EQ(testing::flag_value(l, "--num-key-value-heads"), "8");
  EXPECT_TRUE(testing::contains(l, "no interleaved (virtual) stages")) << l;
  const std::string ulysses = launcher(Json{{"model", "llama3-8b"},
                                            {"cluster", "dgx-h100"},
                                            {"gpus", 64},
                                            {"tp", 2},
                                            {"cp", 4},
                                            {"cp_algo", "ulysses"},
                                            {"seq_len", 131072},
                                            {"global_batch", 16}});
  EXPECT_EQ(testing::flag_value(ulysses, "--ds-sequence-parallel-size"), "4");
  EXPECT_FALSE(testing::has_flag(ulysses, "--sequence-parallel"));
  const std::string moe = launcher(Json{{"model", "mixtral-8x7b"},
                                        {"cluster", "dgx-h100"},
                                        {"gpus", 64},
                                        {"tp", 2},
                                        {"pp", 4},
                                        {"ep", 8},
                                        {"global_batch", 256},
                                        {"schedule", "zb-h1"},
                                        {"stack", "research"}});
  EXPECT_EQ(testing::flag_value(moe, "--num-experts"), "8");
  EXPECT_EQ(testing::flag_value(moe, "--topk"), "2");
  EXPECT_EQ(testing::flag_value(moe, "--moe-expert-parallel-size"), "8");
  EXPECT_TRUE(testing::has_flag(moe, "--enable-expert-tensor-parallelism"));
  EXPECT_TRUE(testing::has_flag(moe, "--enable-zbh1-pipeline"));
  EXPECT_TRUE(testing::has_flag(moe, "--disable-moe-token-dropping"));
}

}  // namespace
}  // namespace trainsim::planner::emit
