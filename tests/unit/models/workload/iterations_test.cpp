// Several iterations with faults (models/workload/run/iterations.cpp).
#include "models/workload/run/iterations.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::workload {
namespace {

using sim::Time;

Time part(Time t, int64_t k) { return Time::ns(t.count_ns() / k); }
using sim::config::Json;

Job small() {
  return testing::job(Json{{"model", "llama3-8b"},
                           {"cluster", "dgx-h100"},
                           {"gpus", 16},
                           {"tp", 8},
                           {"global_batch", 16},
                           {"seq_len", 1024}});
}

TEST(Iterations, WithoutFaultsNTimesOne) {
  const IterationsResult r = simulate_iterations(small(), {}, 5);
  ASSERT_EQ(r.iterations.size(), 5u);
  EXPECT_EQ(r.total(), r.fault_free * 5);
  EXPECT_TRUE(r.iterations[0].simulated);
  EXPECT_FALSE(r.iterations[4].simulated);
}

TEST(Iterations, BeforeTheFaultBaselineThenInjectedThenStatic) {
  const Job job = small();
  const Time one = simulate(job).iteration;
  SimulateOptions opt;
  // Dies half-way through the third iteration.
  opt.faults = {Fault::dead_uplink(0, one * 2 + part(one, 2))};
  const IterationsResult r = simulate_iterations(job, opt, 5);
  ASSERT_EQ(r.iterations.size(), 5u);
  EXPECT_EQ(r.iterations[0].time, one);
  EXPECT_EQ(r.iterations[1].time, one);
  EXPECT_EQ(r.detail_index, 2);
  SimulateOptions injected;
  injected.faults = {Fault::dead_uplink(0, part(one, 2))};
  EXPECT_EQ(r.iterations[2].time, simulate(job, injected).iteration);
  SimulateOptions from_start;
  from_start.faults = {Fault::dead_uplink(0, Time::zero())};
  const Time steady = simulate(job, from_start).iteration;
  EXPECT_GT(steady, one);
  EXPECT_EQ(r.iterations[3].time, steady);
  EXPECT_EQ(r.iterations[4].time, steady);
  EXPECT_EQ(r.total(), one * 2 + r.iterations[2].time + steady * 2);
  EXPECT_TRUE(r.completed);
}

TEST(Iterations, ADeadGpuEndsTheSequence) {
  const Job job = small();
  const Time one = simulate(job).iteration;
  SimulateOptions opt;
  opt.faults = {Fault::dead_gpu(4, one + part(one, 4))};
  const IterationsResult r = simulate_iterations(job, opt, 8);
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_FALSE(r.completed);
  EXPECT_FALSE(r.iterations[1].completed);
  EXPECT_EQ(r.total(), one + part(one, 4));
  const Json j = r.to_json();
  EXPECT_EQ(j["run"], 2);
  EXPECT_EQ(j["requested"], 8);
}

TEST(Iterations, CountIsChecked) {
  EXPECT_EQ(testing::config_error([] { simulate_iterations(small(), {}, 65); }),
            "--iterations: expected 1 to 64 iterations, got 65 (pass --iterations N with 1 <= N <= 64)");
}

}  // namespace
}  // namespace trainsim::models::workload
