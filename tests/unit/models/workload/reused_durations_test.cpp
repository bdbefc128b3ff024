// Reused collective durations on the flow network (network_runner.hpp): a collective that starts
// with nothing else on its links reuses the duration its communication measured alone, and one
// that starts beside a reused collective turns that one into flows. Each case runs with reuse
// and without (every collective as flows, as recorders run) and must predict the same time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "../test_support.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;

// Reuse is exact while a collective stays alone; a reused one that turns into flows resumes its
// bytes and steps' latencies at an even pace (1e-7 relative on the NVL72 case).
constexpr double kTolerance = 1e-5;

struct Pair {
  SimulationResult reused, flows;
  double error() const { return reused.iteration.seconds() / flows.iteration.seconds() - 1.0; }
};

Pair both(const Json& j) {
  const Job job = testing::job(j);
  SimulateOptions on, off;
  off.reuse_durations = false;
  Pair p{simulate(job, on), simulate(job, off)};
  EXPECT_TRUE(p.reused.simulated && p.flows.simulated && p.reused.network && p.flows.network) << j.dump();
  if (p.reused.network && p.flows.network) {
    std::printf("reused vs flows: %+.6f%%, %llu reused, %llu overlapped; flows %llu vs %llu  %s\n", 100 * p.error(),
                static_cast<unsigned long long>(p.reused.network->memoized),
                static_cast<unsigned long long>(p.reused.network->memo_overlaps),
                static_cast<unsigned long long>(p.reused.network->flows),
                static_cast<unsigned long long>(p.flows.network->flows), j.dump().c_str());
    EXPECT_EQ(p.flows.network->memoized, 0u);
  }
  return p;
}

// TP 2 and PP 2 inside one DGX H100: the TP group shares the GPUs' NVLink ports with the
// pipeline's sends, so no group is private; its collectives reuse their durations between sends.
TEST(ReusedDurations, SharedNvlinkInsideAServer) {
  const Pair p = both(Json{{"model", "llama3-8b"},
                           {"stack", "research"},
                           {"cluster", "dgx-h100"},
                           {"gpus", 8},
                           {"tp", 2},
                           {"pp", 2},
                           {"global_batch", 8},
                           {"seq_len", 1024},
                           {"network", "flow"}});
  EXPECT_GT(p.reused.network->memoized, 0u);
  EXPECT_LT(p.reused.network->flows, p.flows.network->flows);
  EXPECT_LT(std::abs(p.error()), kTolerance);
}

// Two GB200 NVL72 racks: TP 8 groups share each GPU's NVLink port with the data-parallel ring
// through the rack, which only runs at the end of the iteration.
TEST(ReusedDurations, TensorParallelInsideAnNvl72Rack) {
  const Pair p = both(Json{{"model", testing::gpt(4, 4096, 32, 32000, 2048)},
                           {"cluster", "gb200-nvl72"},
                           {"gpus", 144},
                           {"tp", 8},
                           {"pp", 2},
                           {"global_batch", 72},
                           {"network", "flow"}});
  EXPECT_GT(p.reused.network->memoized, p.reused.network->memo_overlaps);
  EXPECT_LT(std::abs(p.error()), kTolerance);
}

// A100 servers with TP 2 and a data-parallel ring of 16 through four servers (vTrain's 39B
// shape): each stage's gradient all-reduce starts while the pipeline send into the stage before
// it is reusing its duration. The send turns into flows and is slowed by the all-reduce, as
// when every collective runs as flows; left reused, it was not, and each stage's last backward
// started early: 0.6% optimistic over 15 stages.
TEST(ReusedDurations, ACollectiveStartingBesideAReusedOneSlowsIt) {
  const Pair p = both(Json{{"model", testing::gpt(48, 8192, 64, 50257, 2048)},
                           {"stack", "deepspeed"},
                           {"cluster", "vtrain-a100"},
                           {"gpus", 512},
                           {"tp", 2},
                           {"pp", 16},
                           {"micro_batch", 6},
                           {"global_batch", 1536},
                           {"schedule", "1f1b"},
                           {"recompute", "full"},
                           {"precision", "fp16"},
                           {"attention", "unfused"},
                           {"sp", false},
                           {"overlap_grad_reduce", false},
                           {"zero", 0},
                           {"bucket_size", "160MB"},
                           {"network", "flow"}});
  EXPECT_GT(p.reused.network->memo_overlaps, 0u);
  EXPECT_LT(std::abs(p.error()), kTolerance);
}

}  // namespace
}  // namespace trainsim::models::workload
