// Faults as events inside the simulation (models/workload/run/fault_injector.cpp): a dead link whose
// traffic reroutes, a link cut that leaves no route, a degraded uplink, a dead GPU, a slow GPU,
// and determinism.
#include "models/workload/run/fault_injector.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "../test_support.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::workload {
namespace {

using sim::Time;

Time part(Time t, int64_t k) { return Time::ns(t.count_ns() / k); }

// head + time in ns + tail (ostringstream: GCC 12 warns about long string + chains).
std::string text(const char* head, Time at, const char* tail = "") {
  std::ostringstream s;
  s << head << at.count_ns() << "ns" << tail;
  return s.str();
}
using sim::config::Json;
using testing::with;

SimulationResult run(const Json& j, std::vector<Fault> faults = {}, Fidelity f = Fidelity::kRepresentative) {
  SimulateOptions o;
  o.fidelity = f;
  o.faults = std::move(faults);
  return simulate(testing::job(j), o);
}

// Two single-GPU servers joined through leaf0 (50 GB/s, the one shortest routing takes) and
// leaf1 (25 GB/s); data parallelism over both.
Json pair_job() {
  const Json cluster = Json::parse(R"({"name": "pair", "gpu": "h100-sxm-80gb", "gpus_per_node": 1, "max_gpus": 2,
      "nvlink_bandwidth": "450GBps", "nvlink_efficiency": 0.8, "nvlink_latency": "2us",
      "nic_bandwidth": "400Gbps", "nic_efficiency": 0.9, "nic_latency": "5us", "collective_launch": "17us",
      "network": {"builder": "explicit", "routing": {"mode": "shortest"},
        "nodes": [{"name": "g0", "kind": "gpu", "server": 0}, {"name": "g1", "kind": "gpu", "server": 1},
                  {"name": "leaf0", "kind": "leaf"}, {"name": "leaf1", "kind": "leaf"}],
        "links": [{"a": "g0", "b": "leaf0", "bandwidth": "50GBps", "latency": "1us", "kind": "ib"},
                  {"a": "g1", "b": "leaf0", "bandwidth": "50GBps", "latency": "1us", "kind": "ib"},
                  {"a": "g0", "b": "leaf1", "bandwidth": "25GBps", "latency": "1us", "kind": "ib"},
                  {"a": "g1", "b": "leaf1", "bandwidth": "25GBps", "latency": "1us", "kind": "ib"}]}})");
  return Json{{"model", testing::gpt(4, 2048, 16, 32000, 1024)},
              {"cluster", cluster},
              {"gpus", 2},
              {"global_batch", 8},
              {"overlap_grad_reduce", false}};  // the gradient all-reduce after the last backward
}

TEST(FaultInjector, ADeadLinkStallsThenReroutesAndTheIterationCompletesLater) {
  const SimulationResult healthy = run(pair_job());
  // Dead from the start: every byte takes the 25 GB/s leaf.
  const SimulationResult around = run(pair_job(), {parse_fault("link:g0/leaf0@0")});
  EXPECT_GT(around.iteration, healthy.iteration);
  // Dies while the gradient all-reduce is on it (it starts after the last backward): its flows
  // stall for the 1 ms reroute delay, then finish their remaining bytes over leaf1.
  const Time at = healthy.iteration - part(healthy.iteration - healthy.stages[0].time.compute, 2);
  const SimulationResult mid = run(pair_job(), {parse_fault(text("link:g0/leaf0@", at, ",reroute=1ms"))});
  ASSERT_TRUE(mid.faults.has_value());
  EXPECT_TRUE(mid.completed());
  const FaultOutcome& o = mid.faults->faults[0];
  EXPECT_TRUE(o.struck);
  EXPECT_EQ(o.rerouted_at, at + Time::ms(1));
  EXPECT_GT(mid.iteration, healthy.iteration + Time::ms(1));
  EXPECT_GT(mid.iteration, o.rerouted_at);
  // Bytes before the fault went at 50 GB/s: faster than the detour all along, plus the stall.
  EXPECT_LT(mid.iteration, around.iteration + Time::ms(1));
  EXPECT_EQ(mid.faults->compute_tasks_done, mid.faults->compute_tasks);
}

TEST(FaultInjector, NoRouteLeftStopsTheJobAtTheReroute) {
  const SimulationResult healthy = run(pair_job());
  const Time at = part(healthy.iteration, 2);
  const SimulationResult cut =
      run(pair_job(), {parse_fault(text("link:g0/leaf0@", at)), parse_fault(text("link:g0/leaf1@", at))});
  ASSERT_FALSE(cut.completed());
  EXPECT_EQ(cut.faults->stopped_at, at + kDefaultRerouteDelay);
  EXPECT_EQ(cut.iteration, cut.faults->stopped_at);
  EXPECT_EQ(cut.faults->stop_reason, text("no working route between GPU 1 and GPU 0 (link:g0/leaf0@", at, ")"));
  // Cut from the start: it stops before anything runs.
  const SimulationResult never = run(pair_job(), {parse_fault("link:g0/leaf0@0"), parse_fault("link:g0/leaf1@0")});
  EXPECT_FALSE(never.completed());
  EXPECT_EQ(never.iteration, Time::zero());
  EXPECT_EQ(never.faults->tasks_done, 0u);
}

// Llama 3 8B on two DGX H100 servers, tp 8, dp 2: the gradient all-reduce crosses the NICs.
Json dgx_job() {
  return Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 16}, {"tp", 8},
              {"global_batch", 16},   {"seq_len", 1024}};
}

TEST(FaultInjector, ADegradedUplinkSlowsTheIterationOnAnyCopy) {
  const SimulationResult healthy = run(dgx_job());
  const SimulationResult slow = run(dgx_job(), {Fault::degraded_uplink(0, 0.25)});
  EXPECT_GT(slow.iteration, healthy.iteration);
  EXPECT_GT(slow.stages[0].time.dp_exposed, healthy.stages[0].time.dp_exposed * 2);
  // GPU 3 is a TP copy the representative does not run: as slow, and full fidelity agrees.
  const SimulationResult other = run(dgx_job(), {Fault::degraded_uplink(3, 0.25)});
  EXPECT_EQ(other.iteration, slow.iteration);
  const SimulationResult full = run(dgx_job(), {Fault::degraded_uplink(3, 0.25)}, Fidelity::kFullRanks);
  EXPECT_NEAR(full.iteration.seconds() / other.iteration.seconds(), 1.0, 0.005);
}

TEST(FaultInjector, AnUplinkDyingMidIterationReroutesThroughNvlinkAlike) {
  const SimulationResult healthy = run(dgx_job());
  const Time at = healthy.iteration - healthy.stages[0].time.dp_exposed;
  const Fault f = Fault::dead_uplink(3, at);
  const SimulationResult rep = run(dgx_job(), {f});
  const SimulationResult full = run(dgx_job(), {f}, Fidelity::kFullRanks);
  EXPECT_TRUE(rep.completed());
  EXPECT_GT(rep.iteration, healthy.iteration);
  // The fast mode's usual agreement (simulate_test: within 2%); measured 0.6%.
  EXPECT_NEAR(full.iteration.seconds() / rep.iteration.seconds(), 1.0, 0.01);
  // Its NVLink into the switch: the GPU is lost.
  const SimulationResult lost = run(dgx_job(), {parse_fault("link:gpu3/nvswitch0@1ms")});
  EXPECT_FALSE(lost.completed());
  EXPECT_EQ(lost.iteration, Time::ms(1));
}

TEST(FaultInjector, ADeadGpuStopsTheJobThere) {
  const SimulationResult healthy = run(dgx_job());
  const Time at = part(healthy.iteration, 2);
  const SimulationResult r = run(dgx_job(), {Fault::dead_gpu(11, at)});
  ASSERT_FALSE(r.completed());
  EXPECT_EQ(r.iteration, at);
  EXPECT_EQ(r.faults->stopped_at, at);
  EXPECT_GT(r.faults->compute_tasks_done, 0u);
  EXPECT_LT(r.faults->compute_tasks_done, r.faults->compute_tasks);
  EXPECT_NE(r.faults->stop_reason.find("GPU 11 failed"), std::string::npos);
  const Json j = r.to_json();
  EXPECT_TRUE(j["iteration_time_s"].is_null());
  EXPECT_FALSE(j["faults"]["completed"].get<bool>());
  EXPECT_DOUBLE_EQ(j["faults"]["stopped_at_s"].get<double>(), at.seconds());
}

TEST(FaultInjector, ASlowGpuStretchesAComputeBoundIterationByOneOverItsSpeed) {
  // A free network: the iteration is compute only.
  const Json j{{"model", testing::gpt(4, 2048, 16, 128, 2048)},
               {"cluster", testing::ideal_cluster()},
               {"gpus", 2},
               {"global_batch", 8},
               {"kernel_dispatch", "0us"},
               {"network", "analytic"}};
  const SimulationResult healthy = run(j);
  ASSERT_TRUE(healthy.fits) << healthy.peak_memory().gib();
  ASSERT_GT(healthy.iteration, Time::zero());
  const SimulationResult half = run(j, {Fault::slow_gpu(1, 0.5)});
  EXPECT_NEAR(half.iteration.seconds() / healthy.iteration.seconds(), 2.0, 0.01);
  // Slow from the middle: the second half takes twice as long.
  const SimulationResult late = run(j, {Fault::slow_gpu(0, 0.5, part(healthy.iteration, 2))});
  EXPECT_NEAR(late.iteration.seconds() / healthy.iteration.seconds(), 1.5, 0.01);
  // With a pipeline, the slow stage's compute doubles.
  const Json pp = with(j, {{"pp", 2}});
  const SimulationResult pp_healthy = run(pp);
  const SimulationResult pp_slow = run(pp, {Fault::slow_gpu(1, 0.5)});
  EXPECT_NEAR(pp_slow.stages[1].time.compute.seconds() / pp_healthy.stages[1].time.compute.seconds(), 2.0, 0.01);
  EXPECT_EQ(pp_slow.stages[0].time.compute, pp_healthy.stages[0].time.compute);
}

TEST(FaultInjector, FaultsPastTheEndChangeNothingAndRunsAreDeterministic) {
  const SimulationResult healthy = run(dgx_job());
  const std::vector<Fault> late = {Fault::dead_gpu(2, Time::s(100)), Fault::dead_uplink(0, Time::s(100))};
  const SimulationResult r = run(dgx_job(), late);
  EXPECT_EQ(r.iteration, healthy.iteration);
  EXPECT_FALSE(r.faults->faults[0].struck);
  EXPECT_EQ(r.faults->faults[0].effect.rfind("not reached", 0), 0u);
  const std::vector<Fault> some = {Fault::dead_uplink(5, part(healthy.iteration, 2)), Fault::slow_gpu(9, 0.7)};
  EXPECT_EQ(run(dgx_job(), some).to_json().dump(), run(dgx_job(), some).to_json().dump());
}

}  // namespace
}  // namespace trainsim::models::workload
