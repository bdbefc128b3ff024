// BF16 first and last layers of a quantized job (job/bf16_layers.hpp): each BF16 layer is priced
// as the BF16 job's layer, in time and memory; what Megatron-Core refuses is refused.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/bf16_layers.hpp"
#include "models/workload/run/simulate.hpp"
#include "sim/error.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::with;

Json nvfp4_llama(const Json& extra) {
  return with(Json{{"model", "llama3-8b"},
                   {"cluster", "dgx-b200"},
                   {"stack", "megatron-core-2025"},
                   {"gpus", 8},
                   {"global_batch", 16},
                   {"seq_len", 4096},
                   {"precision", "nvfp4"}},
              extra);
}

TEST(Bf16Layers, EveryLayerInBf16IsTheBf16Job) {
  const SimulationResult all =
      simulate(testing::job(nvfp4_llama({{"bf16_first_layers", 16}, {"bf16_last_layers", 16}})));
  const SimulationResult bf16 = simulate(testing::job(nvfp4_llama({{"precision", "bf16"}})));
  EXPECT_EQ(all.iteration, bf16.iteration);
  EXPECT_EQ(all.stages[0].memory.fp8_state, sim::Bytes(0));
  EXPECT_EQ(all.stages[0].memory.activation_per_chunk, bf16.stages[0].memory.activation_per_chunk);
}

TEST(Bf16Layers, EdgeLayersCostBetweenTheTwoPrecisions) {
  const SimulationResult q = simulate(testing::job(nvfp4_llama({})));
  const SimulationResult edges =
      simulate(testing::job(nvfp4_llama({{"bf16_first_layers", 2}, {"bf16_last_layers", 2}})));
  const SimulationResult more =
      simulate(testing::job(nvfp4_llama({{"bf16_first_layers", 4}, {"bf16_last_layers", 4}})));
  const SimulationResult bf16 = simulate(testing::job(nvfp4_llama({{"precision", "bf16"}})));
  EXPECT_LT(q.iteration, edges.iteration);
  EXPECT_LT(edges.iteration, more.iteration);
  EXPECT_LT(more.iteration, bf16.iteration);
  // The compute is linear in the BF16 layers: 4 of 32 add 1/8 of the difference (the iteration
  // less, as more of the data-parallel reduction hides behind the longer backward).
  const auto compute = [](const SimulationResult& r) { return r.stages[0].time.compute.seconds(); };
  EXPECT_NEAR((compute(edges) - compute(q)) / (compute(bf16) - compute(q)), 4.0 / 32.0, 0.01);
  // Memory: the quantized weights cache shrinks by 4/32, the 16-bit saved inputs grow.
  const auto& mq = q.stages[0].memory;
  const auto& me = edges.stages[0].memory;
  EXPECT_NEAR(static_cast<double>(me.fp8_state.count()) / static_cast<double>(mq.fp8_state.count()), 28.0 / 32.0, 0.01);
  EXPECT_GT(me.activation_per_chunk, mq.activation_per_chunk);
}

TEST(Bf16Layers, PipelineStagesHoldTheirOwn) {
  // pp 4: layers 0-7, 8-15, 16-23, 24-31; BF16 0-1 and 30-31 sit on the first and last stages.
  const Job j = testing::job(nvfp4_llama({{"pp", 4}, {"bf16_first_layers", 2}, {"bf16_last_layers", 2}}));
  EXPECT_TRUE(bf16_layer(j, 1));
  EXPECT_FALSE(bf16_layer(j, 2));
  EXPECT_TRUE(bf16_layer(j, 30));
  EXPECT_EQ(bf16_layers_in(j, 0, 8), 2);
  EXPECT_EQ(bf16_layers_in(j, 8, 16), 0);
  const SimulationResult r = simulate(j);
  const SimulationResult q = simulate(testing::job(nvfp4_llama({{"pp", 4}})));
  EXPECT_LT(r.stages[0].memory.fp8_state, q.stages[0].memory.fp8_state);
  EXPECT_EQ(r.stages[1].memory.fp8_state, q.stages[1].memory.fp8_state);
}

TEST(Bf16Layers, RecomputedLayersStoreOnlyTheirInput) {
  // Full recompute of each chunk's first 2 layers: the 2 BF16 first layers are those, so the stored
  // layers are all quantized and the activations are the all-quantized job's.
  const Json full{{"recompute", "full"}, {"recompute_layers", 2}};
  const SimulationResult q = simulate(testing::job(nvfp4_llama(full)));
  const SimulationResult first = simulate(testing::job(nvfp4_llama(with(full, {{"bf16_first_layers", 2}}))));
  const SimulationResult last = simulate(testing::job(nvfp4_llama(with(full, {{"bf16_last_layers", 2}}))));
  EXPECT_EQ(first.stages[0].memory.activation_per_chunk, q.stages[0].memory.activation_per_chunk);
  EXPECT_GT(last.stages[0].memory.activation_per_chunk, q.stages[0].memory.activation_per_chunk);
}

TEST(Bf16Layers, WhatMegatronRefusesIsRefused) {
  auto refused = [](const Json& j) { return testing::config_error([&] { (void)testing::job(j); }); };
  EXPECT_NE(refused(nvfp4_llama({{"precision", "bf16"}, {"bf16_first_layers", 1}})).find("bf16_first_layers"),
            std::string::npos);
  EXPECT_NE(refused(nvfp4_llama({{"bf16_first_layers", 20}, {"bf16_last_layers", 20}})).find("exceed"),
            std::string::npos);
  EXPECT_NE(refused(nvfp4_llama({{"stack", "nemo-24.07"}, {"precision", "fp8"}, {"bf16_last_layers", 1}}))
                .find("bf16_last_layers: stack \"nemo-24.07\""),
            std::string::npos);
  Json delayed = models::presets::find("stacks", "megatron-core-2025", "stack");
  delayed["name"] = "delayed-scaling";
  delayed["kernels"]["fp8_recipe"] = "delayed";
  EXPECT_NE(
      refused(nvfp4_llama({{"precision", "fp8"}, {"stack", delayed}, {"bf16_last_layers", 1}})).find("Delayed scaling"),
      std::string::npos);
  EXPECT_EQ(refused(nvfp4_llama({{"bf16_first_layers", 1}, {"bf16_last_layers", 1}})), "");
  // FP8 / MXFP8: at most a pipeline stage's layers at each end (NVFP4 is not checked by Megatron).
  EXPECT_NE(refused(nvfp4_llama({{"precision", "fp8"}, {"pp", 8}, {"bf16_first_layers", 5}})).find("pipeline stage"),
            std::string::npos);
  EXPECT_EQ(refused(nvfp4_llama({{"pp", 8}, {"bf16_first_layers", 5}})), "");
  // torchtitan cannot keep a MoE layer's experts in BF16.
  const Json moe{{"model", "qwen3-30b-a3b"}, {"cluster", "dgx-b200"}, {"gpus", 8}, {"ep", 8},
                 {"global_batch", 16},       {"seq_len", 2048},       {"zero", 3}, {"precision", "mxfp8"},
                 {"bf16_first_layers", 1}};
  EXPECT_NE(refused(with(moe, {{"stack", "torchtitan"}})).find("routed experts"), std::string::npos);
  EXPECT_EQ(refused(with(moe, {{"stack", "megatron-core-2025"}, {"zero", 1}})), "");
}

}  // namespace
}  // namespace trainsim::models::workload
