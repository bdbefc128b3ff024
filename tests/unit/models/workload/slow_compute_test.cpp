// SlowComputeRunner (models/workload/run/slow_compute.cpp): compute stretched by 1 / speed from the
// moment a GPU slows, exact durations elsewhere, and which rank slots stand for a GPU.
#include "models/workload/run/slow_compute.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/collectives/alpha_beta.hpp"
#include "models/workload/dag/builder.hpp"

namespace trainsim::models::workload {
namespace {

using sim::Time;

Workload two_slots() {
  Workload w;
  w.ranks.resize(2);
  return w;
}

TEST(SlowCompute, ATaskStraddlingTheSlowdownRunsItsRestSlower) {
  const Workload w = two_slots();
  SlowComputeRunner r(w);
  r.slow_down(0, 0.5, Time::ns(400));
  // 400 ns at full speed, then the other 600 ns of work at half speed: 1200 ns.
  EXPECT_EQ(r.end_time(0, Time::zero(), Time::ns(1000)), Time::ns(1600));
  // Entirely after: twice as long; entirely before: untouched.
  EXPECT_EQ(r.end_time(0, Time::ns(500), Time::ns(1000)), Time::ns(2500));
  EXPECT_EQ(r.end_time(0, Time::zero(), Time::ns(400)), Time::ns(400));
  // Another slot is untouched.
  EXPECT_EQ(r.end_time(1, Time::zero(), Time::ns(1000)), Time::ns(1000));
}

TEST(SlowCompute, TheSlowestSlowdownInForceApplies) {
  const Workload w = two_slots();
  SlowComputeRunner r(w);
  r.slow_down(0, 0.5, Time::ns(100));
  r.slow_down(0, 0.8, Time::ns(200));  // milder: changes nothing
  r.slow_down(0, 0.25, Time::ns(300));
  // 100 ns full, 200 ns at 0.5 (100 ns of work), then 800 ns of work at 0.25: 3200 ns.
  EXPECT_EQ(r.end_time(0, Time::zero(), Time::ns(1000)), Time::ns(3500));
  // Rounded up once to whole nanoseconds: 10 ns of work at 0.3 is 33.3 ns.
  SlowComputeRunner third(w);
  third.slow_down(1, 0.3, Time::zero());
  EXPECT_EQ(third.end_time(1, Time::zero(), Time::ns(10)), Time::ns(34));
}

TEST(SlowCompute, ARankIsItsStagesRepresentativeUnlessSimulatedItself) {
  const Job job = testing::job(sim::config::Json{{"model", "llama3-8b"},
                                                 {"cluster", "dgx-h100"},
                                                 {"gpus", 16},
                                                 {"tp", 2},
                                                 {"pp", 2},
                                                 {"global_batch", 8},
                                                 {"seq_len", 512}});
  const compute::ComputeModel cm(job.gpu, job.precision);
  const collectives::AlphaBetaModel comm(job.cluster);
  const Workload rep = build_workload(job, cm, comm, Fidelity::kRepresentative);
  // tp 2 x dp 4 = 8 GPUs per stage: rank 13 is in stage 1.
  EXPECT_EQ(SlowComputeRunner::slots_of(rep, job, 13), std::vector<uint32_t>{1});
  EXPECT_EQ(SlowComputeRunner::slots_of(rep, job, 0), std::vector<uint32_t>{0});
  const Workload full = build_workload(job, cm, comm, Fidelity::kFullRanks);
  const auto slots = SlowComputeRunner::slots_of(full, job, 13);
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(full.ranks[slots[0]].rank, 13);
}

}  // namespace
}  // namespace trainsim::models::workload
