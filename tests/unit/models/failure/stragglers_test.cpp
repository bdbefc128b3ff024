// Straggler slowdowns come from re-simulating the iteration with the component degraded.
#include "models/failure/stragglers.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::failure {
namespace {

using sim::config::Json;

TEST(Stragglers, SlowGpuAndDegradedLinkSlowTheIteration) {
  const workload::Job j = testing::job(Json{{"model", "llama3-8b"},
                                            {"cluster", "dgx-h100"},
                                            {"gpus", 32},
                                            {"tp", 4},
                                            {"pp", 2},
                                            {"global_batch", 64},
                                            {"seq_len", 2048},
                                            {"recompute", "full"}});
  const workload::SimulationResult base = workload::simulate(j);
  FailureProfile f = load_failure_profile("default", {}, 1.0);
  const StragglerSlowdowns s = straggler_slowdowns(j, base, f);
  EXPECT_GT(s.slow_gpu, 1.01);
  // No stage can lose more than its whole compute to a GPU at 70% of its speed.
  EXPECT_LT(s.slow_gpu, 1.0 / 0.7 + 1e-9);
  EXPECT_GT(s.slow_link, 1.0);
  f.slow_gpu.factor = 0.35;
  EXPECT_GT(straggler_slowdowns(j, base, f).slow_gpu, s.slow_gpu);
}

TEST(Stragglers, OneServerJobsDoNotUseTheFabric) {
  const workload::Job j = testing::job(Json{{"model", "llama3-8b"},
                                            {"cluster", "dgx-h100"},
                                            {"gpus", 8},
                                            {"tp", 8},
                                            {"global_batch", 8},
                                            {"seq_len", 2048},
                                            {"recompute", "full"}});
  const StragglerSlowdowns s = straggler_slowdowns(j, workload::simulate(j), load_failure_profile("default", {}, 1.0));
  EXPECT_EQ(s.slow_link, 1.0);
  // TP 8 all-reduces are a fifth of the iteration (NCCL's LL128/Simple rings on NVLink), the rest
  // slows with the GPU: 1.18 here.
  EXPECT_GT(s.slow_gpu, 1.15);
}

}  // namespace
}  // namespace trainsim::models::failure
