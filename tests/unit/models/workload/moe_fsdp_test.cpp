// FSDP (ZeRO-3) with expert parallelism, as torchtitan, NeMo AutoModel and Megatron FSDP train MoE
// models: routed experts shard over the ranks holding the same experts (the expert data-parallel
// group), the rest of the model over every data-parallel rank; each part is gathered and its
// gradient reduce-scattered over its own group (build/sharding.cpp).
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::with;

Json qwen(const Json& extra) {
  return with(Json{{"model", "qwen3-30b-a3b"},
                   {"cluster", "dgx-h100"},
                   {"stack", "torchtitan"},
                   {"gpus", 16},
                   {"ep", 4},
                   {"global_batch", 16},
                   {"seq_len", 2048}},
              extra);
}

TEST(MoeFsdp, ExpertsShardOverTheirOwnDataParallelGroup) {
  const Job z3 = testing::job(qwen({{"zero", 3}})), z0 = testing::job(qwen({{"zero", 0}}));
  EXPECT_EQ(z3.expert_dp(), 4);  // 16 ranks, EP 4
  const auto m3 = stage_memory_reports(z3)[0].memory, m0 = stage_memory_reports(z0)[0].memory;
  // Dense parts shard 16 ways, experts 4 ways: the 16-bit weights shrink by about 4x, not 16x,
  // since the experts are almost all of Qwen3 30B-A3B.
  const double ratio = static_cast<double>(m0.weights.count()) / static_cast<double>(m3.weights.count());
  EXPECT_GT(ratio, 3.5);
  EXPECT_LT(ratio, 5.0);
  // It runs, and the gathers and reduce-scatters cost time ZeRO-0 does not spend on every layer.
  const SimulationResult r3 = simulate(z3), r0 = simulate(z0);
  ASSERT_TRUE(r3.fits);
  EXPECT_GT(r3.iteration, sim::Time::zero());
  EXPECT_LT(r3.peak_memory(), r0.peak_memory());
  // With EP over all 16 ranks there is no expert data parallelism: the experts stay whole.
  const Job all = testing::job(qwen({{"zero", 3}, {"ep", 16}}));
  EXPECT_EQ(all.expert_dp(), 1);
  EXPECT_TRUE(simulate(all).simulated || !simulate(all).fits);
}

}  // namespace
}  // namespace trainsim::models::workload
