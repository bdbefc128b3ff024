// CUDA graphs (job/cuda_graphs.hpp): what each scope captures, what a dropless MoE layer leaves
// eager, and what a captured region saves on a host-bound job.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/workload/job/cuda_graphs.hpp"
#include "models/workload/run/simulate.hpp"
#include "sim/error.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::with;

// Qwen3 30B-A3B at micro-batch 1 on one B200 server: short kernels, a dropless dispatcher that
// synchronizes with the host every layer (megatron-bridge-2025), so the host's dispatch binds.
Json graphed_qwen(const Json& extra) {
  return with(Json{{"model", "qwen3-30b-a3b"},
                   {"cluster", "dgx-b200"},
                   {"stack", "megatron-bridge-2025"},
                   {"gpus", 8},
                   {"ep", 8},
                   {"global_batch", 16},
                   {"seq_len", 2048}},
              extra);
}

Json graphed_llama(const Json& extra) {
  return with(Json{{"model", "llama3-8b"},
                   {"cluster", "gb200-nvl72"},
                   {"stack", "megatron-bridge-2025"},
                   {"gpus", 4},
                   {"global_batch", 8},
                   {"seq_len", 1024}},
              extra);
}

TEST(CudaGraphs, ScopesParseInMegatronSpelling) {
  EXPECT_EQ(parse_cuda_graph_scope(Json{"attn", "moe_router"}, "s"), kGraphAttn | kGraphMoeRouter);
  EXPECT_EQ(parse_cuda_graph_scope(Json("full_iteration"), "s"), kGraphFullIteration);
  EXPECT_EQ(cuda_graph_scope_string(kGraphMoePreprocess | kGraphFull), "full,moe_preprocess");
  EXPECT_THROW(parse_cuda_graph_scope(Json("moe-router"), "s"), ConfigError);
  EXPECT_EQ(testing::job(graphed_qwen({})).cuda_graphs, 0u);  // no graphs unless asked
}

TEST(CudaGraphs, ADroplessMoeLayerIsNotCapturedWhole) {
  // full: the dense layers' blocks; a MoE layer with dynamic shapes runs eager (Megatron-Core
  // 0.14 moe/README.md), attention included.
  const GraphedParts full = graphed_parts(testing::job(graphed_qwen({{"cuda_graph_scope", "full"}})));
  EXPECT_TRUE(full.attention);
  EXPECT_TRUE(full.mlp);
  EXPECT_FALSE(full.moe_attention);
  EXPECT_FALSE(full.moe_router);
  EXPECT_FALSE(full.moe_rest);
  // The 25.11 recipes' scopes graph the static parts.
  const GraphedParts parts =
      graphed_parts(testing::job(graphed_qwen({{"cuda_graph_scope", Json{"attn", "moe_router", "moe_preprocess"}}})));
  EXPECT_TRUE(parts.moe_attention);
  EXPECT_TRUE(parts.moe_router);
  EXPECT_FALSE(parts.moe_rest);
  EXPECT_FALSE(parts.iteration);
}

TEST(CudaGraphs, CapturedRegionsSaveTheHostBoundTime) {
  const SimulationResult eager = simulate(testing::job(graphed_qwen({})));
  const SimulationResult router = simulate(testing::job(graphed_qwen({{"cuda_graph_scope", Json{"moe_router"}}})));
  const SimulationResult both =
      simulate(testing::job(graphed_qwen({{"cuda_graph_scope", Json{"attn", "moe_router"}}})));
  const SimulationResult full = simulate(testing::job(graphed_qwen({{"cuda_graph_scope", "full"}})));
  EXPECT_LT(router.iteration, eager.iteration);
  EXPECT_LT(both.iteration, router.iteration);
  EXPECT_EQ(full.iteration, eager.iteration);  // every layer is a dropless MoE layer: nothing captured
}

TEST(CudaGraphs, AWholeIterationGraphIssuesNothingButTheOptimizer) {
  // On Grace (2.75x the x86 dispatch) with a host-bound kernel dispatch, full_iteration is the
  // eager job without dispatch except the optimizer step, which stays eager (4 kernels).
  const Json slow{{"kernel_dispatch", "200us"}};
  const SimulationResult eager = simulate(testing::job(graphed_llama(slow)));
  const SimulationResult graphed =
      simulate(testing::job(graphed_llama(with(slow, {{"cuda_graph_scope", "full_iteration"}}))));
  const SimulationResult free = simulate(testing::job(graphed_llama({{"kernel_dispatch", "0us"}})));
  EXPECT_LT(graphed.iteration, eager.iteration);
  EXPECT_GE(graphed.iteration, free.iteration);
  EXPECT_LE(graphed.iteration, free.iteration + sim::Time::us(4 * 550));
  // Layer graphs (full) pay one launch per block and pass: between the two.
  const SimulationResult layers = simulate(testing::job(graphed_llama(with(slow, {{"cuda_graph_scope", "full"}}))));
  EXPECT_LT(layers.iteration, eager.iteration);
  EXPECT_GT(layers.iteration, graphed.iteration);
}

TEST(CudaGraphs, ExpertsPaddedToCapacityAreCapturedWhole) {
  // Token drop padded to capacity (Megatron-Bridge 25.09's Qwen3 recipes): static shapes, so no
  // host synchronization and `full` graphs the MoE layer too.
  Json padded = graphed_qwen({{"cuda_graph_scope", "full"}});
  padded["model"] = testing::model_json("qwen3-30b-a3b");
  padded["model"]["moe"]["capacity_factor"] = 1.0;
  padded["model"]["moe"]["pad_to_capacity"] = true;
  const Job j = testing::job(padded);
  const GraphedParts p = graphed_parts(j);
  EXPECT_TRUE(p.moe_attention);
  EXPECT_TRUE(p.moe_router);
  EXPECT_TRUE(p.moe_rest);
  const SimulationResult graphed = simulate(j);
  EXPECT_EQ(graphed.stages[0].time.host_sync, sim::Time::zero());
  EXPECT_GT(simulate(testing::job(graphed_qwen({}))).stages[0].time.host_sync, sim::Time::zero());
  // pad_to_capacity needs a capacity.
  padded["model"]["moe"]["capacity_factor"] = nullptr;
  EXPECT_THROW((void)testing::job(padded), ConfigError);
}

TEST(CudaGraphs, WhatMegatronRefusesIsRefused) {
  auto refused = [](const Json& j) {
    try {
      (void)testing::job(j);
    } catch (const ConfigError& e) {
      return std::string(e.what()).find("cuda_graph_scope") != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(refused(graphed_qwen({{"cuda_graph_scope", "full_iteration"}})));  // the dropless dispatcher's sync
  EXPECT_TRUE(refused(graphed_llama({{"cuda_graph_scope", "full,full_iteration"}})));
  EXPECT_TRUE(refused(graphed_llama({{"cuda_graph_scope", "moe_router"}})));  // a dense model
  EXPECT_TRUE(refused(graphed_llama({{"cuda_graph_scope", "full"}, {"recompute", "full"}})));
  EXPECT_TRUE(refused(graphed_llama({{"cuda_graph_scope", "attn"}, {"offload_activation_layers", 4}})));
  EXPECT_TRUE(refused(graphed_llama({{"cuda_graph_scope", "attn"}, {"stack", "torchtitan"}})));
  EXPECT_FALSE(refused(graphed_llama({{"cuda_graph_scope", "attn"}, {"recompute", "selective"}})));
}

}  // namespace
}  // namespace trainsim::models::workload
