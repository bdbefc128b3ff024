// FSDP2 copies each gathered parameter set out of the all-gather's flat buffer on the compute
// stream (stack kernels.fsdp_copy_out, build/sharding.cpp): every gather of a layer, and of the
// embedding and LM head, is followed by a memory-bound kernel over twice the gathered bytes.
#include <gtest/gtest.h>

#include <cstdio>

#include "../test_support.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::with;

TEST(FsdpCopyOut, EveryGatherIsCopiedOutOnTheComputeStream) {
  Json flat = presets::find("stacks", "torchtitan", "stack");
  flat["kernels"]["fsdp_copy_out"] = false;
  const Json base{{"model", "llama3-8b"},
                  {"cluster", "dgx-h100"},
                  {"stack", "torchtitan"},
                  {"gpus", 8},
                  {"global_batch", 16},
                  {"seq_len", 2048},
                  {"zero", 3}};
  const Job per_param = testing::job(base), flat_job = testing::job(with(base, {{"stack", flat}}));
  ASSERT_TRUE(per_param.stack.kernels.fsdp_copy_out);
  ASSERT_FALSE(flat_job.stack.kernels.fsdp_copy_out);
  const SimulationResult a = simulate(per_param), b = simulate(flat_job);
  // Two micro-batches; each gathers the 32 layers forward and again backward
  // (reshard_after_forward), and the embedding and LM head three times.
  const compute::ComputeModel cm(per_param.gpu, per_param.precision);
  auto copy = [&](double params) {
    return llm::kernel_cost(llm::memory_kernel("copy", 2.0 * 2.0 * params), cm).time.seconds();
  };
  const double layer = per_param.rank_layer_params(0), edge = 128256.0 * 4096.0;
  const double expected = 2 * (2 * 32 * copy(layer) + 3 * copy(edge));
  const double added = (a.iteration - b.iteration).seconds();
  std::printf("copy-out added %.3f ms, expected %.3f ms\n", added * 1e3, expected * 1e3);
  EXPECT_GT(added, 0.8 * expected);
  EXPECT_LT(added, 1.05 * expected);
  // Without ZeRO-3 nothing is gathered, so nothing is copied out.
  const SimulationResult c = simulate(testing::job(with(base, {{"zero", 0}}))),
                         d = simulate(testing::job(with(base, {{"zero", 0}, {"stack", flat}})));
  EXPECT_EQ(c.iteration, d.iteration);
}

}  // namespace
}  // namespace trainsim::models::workload
