// The fast estimate against what it stands for: memory exactly equal to `trainsim simulate`'s fit
// check (for the layouts the planner searches: even, or lighter first / last stages), and
// iteration time close to the discrete-event simulation on the analytic network.
#include "planner/search/estimator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <utility>

#include "models/presets/catalog.hpp"
#include "models/workload/run/simulate.hpp"
#include "planner/search/search.hpp"
#include "planner/search/space.hpp"

namespace trainsim::planner::search {
namespace {

using models::workload::Job;
using models::workload::JobSpec;
using sim::config::Json;

struct Case {
  Json job;  // the base (model, cluster, gpus, batch, ...) and the parallel configuration
};

Candidate candidate_of(const Job& j) {
  Candidate c;
  c.tp = static_cast<int32_t>(j.tp);
  c.pp = static_cast<int32_t>(j.pp);
  c.dp = static_cast<int32_t>(j.dp);
  c.cp = static_cast<int32_t>(j.cp);
  c.ep = static_cast<int32_t>(j.ep);
  c.etp = static_cast<int32_t>(j.etp);
  c.vp = static_cast<int32_t>(j.vp);
  c.micro_batch = static_cast<int32_t>(j.micro_batch);
  c.zero = static_cast<int32_t>(j.zero);
  c.recompute = j.recompute;
  const auto& all = models::schedules::ScheduleRegistry::instance().all();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name == j.schedule) c.schedule = static_cast<uint8_t>(i);
  c.sp = j.sp;
  const auto& L = j.layers;
  c.uneven = std::adjacent_find(L.begin(), L.end(), std::not_equal_to<>()) != L.end();
  return c;
}

std::vector<Json> cases() {
  // The `research` stack runs every schedule (megatron-core-2025's kernels and memory).
  const Json h100_70b{{"model", "llama3-70b"}, {"stack", "research"}, {"cluster", "dgx-h100"},
                      {"gpus", 256},           {"global_batch", 256}, {"seq_len", 8192}};
  auto with = [](Json base, const Json& extra) {
    for (auto it = extra.begin(); it != extra.end(); ++it) base[it.key()] = it.value();
    return base;
  };
  return {
      with(h100_70b, {{"tp", 8}, {"pp", 4}, {"recompute", "selective"}, {"zero", 1}}),
      with(h100_70b, {{"tp", 8}, {"pp", 4}, {"vp", 5}, {"schedule", "interleaved"}, {"zero", 1}}),
      with(h100_70b, {{"tp", 4}, {"pp", 8}, {"recompute", "full"}, {"schedule", "zb-h1"}}),
      with(h100_70b, {{"tp", 8}, {"pp", 2}, {"vp", 2}, {"schedule", "zb-v"}, {"recompute", "full"}, {"zero", 1}}),
      with(h100_70b, {{"tp", 8}, {"pp", 8}, {"micro_batch", 2}, {"recompute", "full"}, {"schedule", "gpipe"}}),
      with(h100_70b, {{"tp", 8}, {"pp", 4}, {"cp", 2}, {"recompute", "selective"}, {"zero", 1}}),
      with(h100_70b, {{"tp", 8}, {"zero", 3}, {"recompute", "full"}}),
      with(h100_70b, {{"tp", 8}, {"pp", 4}, {"vp", 2}, {"schedule", "breadth-first"}, {"recompute", "full"}}),
      with(h100_70b,
           {{"gpus", 192}, {"tp", 8}, {"pp", 3}, {"pp_layout", Json::array({26, 27, 27})}, {"recompute", "full"}}),
      Json{{"model", "llama3-8b"},
           {"cluster", "dgx-h100"},
           {"gpus", 64},
           {"global_batch", 512},
           {"tp", 2},
           {"pp", 2},
           {"micro_batch", 2},
           {"recompute", "selective"},
           {"zero", 2}},
      Json{{"model", "gpt3-175b"},
           {"cluster", "dgx-a100"},
           {"gpus", 1024},
           {"global_batch", 1536},
           {"tp", 8},
           {"pp", 8},
           {"vp", 2},
           {"schedule", "interleaved"},
           {"recompute", "full"},
           {"precision", "fp16"}},
      with(h100_70b, {{"tp", 8}, {"pp", 4}, {"schedule", "zb-h2"}, {"recompute", "full"}, {"zero", 1}}),
      with(h100_70b, {{"tp", 8}, {"pp", 2}, {"zero", 3}, {"recompute", "full"}, {"micro_batch", 2}}),
      with(h100_70b, {{"tp", 8}, {"pp", 4}, {"tp_comm_overlap", true}, {"recompute", "selective"}, {"zero", 1}}),
      with(h100_70b,
           {{"tp", 8}, {"pp", 4}, {"overlap_grad_reduce", false}, {"overlap_p2p", false}, {"recompute", "full"}}),
      with(h100_70b,
           {{"tp", 4}, {"pp", 4}, {"cp", 2}, {"cp_algo", "ulysses"}, {"recompute", "selective"}, {"zero", 1}}),
      with(h100_70b, {{"tp", 8}, {"pp", 8}, {"zero", 1}, {"offload_optimizer", true}, {"recompute", "full"}}),
      Json{{"model", "megatron-1t"},
           {"cluster", "dgx-a100"},
           {"gpus", 3072},
           {"global_batch", 3072},
           {"tp", 8},
           {"pp", 64},
           {"recompute", "full"},
           {"precision", "fp16"},
           {"attention", "unfused"},
           {"sp", false}},
      Json{{"model", "llama3-405b"},
           {"stack", "research"},
           {"cluster", "dgx-h100"},
           {"gpus", 16384},
           {"global_batch", 2048},
           {"seq_len", 8192},
           {"tp", 4},
           {"pp", 64},
           {"cp", 4},
           {"zero", 2},
           {"schedule", "zb-h2"},
           {"pp_layout", Json(uneven_layout(126, 64))}},
      Json{{"model", "llama3-405b"},
           {"cluster", "dgx-h100"},
           {"gpus", 16384},
           {"global_batch", 2048},
           {"seq_len", 8192},
           {"tp", 8},
           {"pp", 16},
           {"cp", 2},
           {"zero", 1},
           {"pp_layout", Json(uneven_layout(126, 16))}},
      Json{{"model", "llama3-405b"},
           {"stack", "research"},
           {"cluster", "dgx-h100"},
           {"gpus", 16384},
           {"global_batch", 2048},
           {"seq_len", 8192},
           {"tp", 4},
           {"pp", 8},
           {"cp", 4},
           {"vp", 8},
           {"schedule", "interleaved"},
           {"zero", 2},
           {"pp_layout", Json(uneven_layout(126, 64))}},
      Json{{"model", "mixtral-8x7b"},
           {"cluster", "dgx-h100"},
           {"gpus", 64},
           {"global_batch", 256},
           {"seq_len", 4096},
           {"tp", 2},
           {"pp", 4},
           {"ep", 8},
           {"zero", 1},
           {"recompute", "selective"}},
  };
}

// Splits a merged job into the base (what plan keeps fixed) and resolves both.
struct Resolved {
  JobSpec spec;
  Job hardware, job;
};
Resolved resolve(const Json& j) {
  Resolved r;
  r.spec = models::workload::parse_job(j);
  r.hardware = models::workload::resolve_hardware(r.spec);
  r.job = models::workload::resolve_job(r.spec);
  return r;
}

TEST(Estimator, MemoryEqualsTheSimulatorsFitCheck) {
  for (const Json& j : cases()) {
    const Resolved r = resolve(j);
    Estimator est(r.hardware, r.spec, 1.0);
    Estimate e;
    est.estimate(candidate_of(r.job), e);
    double peak = 0;
    int32_t worst = 0;
    for (const auto& st : models::workload::stage_memory_reports(r.job))
      if (static_cast<double>(st.memory.total().count()) > peak) {
        peak = static_cast<double>(st.memory.total().count());
        worst = st.stage;
      }
    EXPECT_EQ(e.peak_memory_bytes, peak) << j.dump();
    EXPECT_EQ(e.worst_memory_stage, worst) << j.dump();
  }
}

// Every enumerated candidate (a sample of every `stride`-th) of a search: the estimate's peak
// memory equals the simulator's fit check to the byte. Dense and MoE models, dense first layers
// and MoE every other layer, uneven end stages, activation offload.
TEST(Estimator, MemoryEqualsTheFitCheckOverWholeSearchSpaces) {
  Json mixtral_dense_first = models::presets::find("models", "mixtral-8x7b", "model");
  mixtral_dense_first["moe"]["first_dense_layers"] = 1;
  Json mixtral_alternate = models::presets::find("models", "mixtral-8x7b", "model");
  mixtral_alternate["moe"]["layer_freq"] = 2;
  const std::vector<std::pair<Json, int>> spaces = {
      {Json{{"model", "llama3-70b"}, {"cluster", "dgx-h100"}, {"gpus", 192}, {"global_batch", 384}, {"seq_len", 8192}},
       7},
      {Json{{"model", "llama3-405b"},
            {"cluster", "dgx-h100"},
            {"gpus", 2048},
            {"global_batch", 1024},
            {"seq_len", 8192}},
       11},
      {Json{{"model", "gpt3-175b"},
            {"cluster", "dgx-a100"},
            {"gpus", 512},
            {"global_batch", 1536},
            {"offload_activations", true},
            {"attention", "unfused"}},
       13},
      {Json{{"model", "deepseek-v3"},
            {"cluster", "dgx-h100"},
            {"gpus", 1024},
            {"global_batch", 1024},
            {"seq_len", 4096}},
       29},
      {Json{{"model", mixtral_dense_first},
            {"cluster", "dgx-h100"},
            {"gpus", 64},
            {"global_batch", 256},
            {"seq_len", 4096}},
       5},
      {Json{{"model", mixtral_alternate},
            {"cluster", "dgx-h100"},
            {"gpus", 64},
            {"global_batch", 256},
            {"seq_len", 4096}},
       5},
  };
  for (const auto& [j, stride] : spaces) {
    const JobSpec spec = models::workload::parse_job(j);
    const Job hw = models::workload::resolve_hardware(spec);
    const Enumeration en = enumerate(make_space(spec, j, hw, SpaceOptions{}), hw, spec.gpus, spec.global_batch,
                                     spec.seq_len.value_or(hw.model.seq_len));
    Estimator est(hw, spec, 1.0);
    int checked = 0, mismatched = 0;
    for (size_t i = 0; i < en.candidates.size(); i += static_cast<size_t>(stride)) {
      Estimate e;
      if (est.estimate(en.candidates[i], e) == Verdict::kInvalid) continue;
      const Job job = plan_job(hw, spec, en.candidates[i]);
      double peak = 0;
      for (const auto& st : models::workload::stage_memory_reports(job))
        peak = std::max(peak, static_cast<double>(st.memory.total().count()));
      ++checked;
      if (e.peak_memory_bytes != peak) {
        ++mismatched;
        if (mismatched <= 3)
          ADD_FAILURE() << describe(en.candidates[i]) << ": estimate " << e.peak_memory_bytes << " B, simulator "
                        << peak << " B";
      }
    }
    EXPECT_GT(checked, 50) << j.dump();
    EXPECT_EQ(mismatched, 0) << "of " << checked << " in " << j.dump().substr(0, 120);
  }
}

// dgx-h100's figures with one NVLink domain of 72 GPUs (nine nodes on one NVSwitch fabric): the
// NVL72 shape without the Blackwell presets' other figures, so that only the domain differs.
Json nvl72_like() {
  Json c = models::presets::find("clusters", "dgx-h100", "cluster");
  c["name"] = "h100-nvl72-like";
  c["nvlink_domain"] = 72;
  return c;
}

// dgx-h100's figures in servers of `gpus` GPUs on one NVSwitch each (a NIC per GPU): what a
// group inside the domain should cost.
Json big_node(int64_t gpus) {
  Json c = models::presets::find("clusters", "dgx-h100", "cluster");
  c["name"] = "h100-big-node";
  c["gpus_per_node"] = gpus;
  c["nics_per_node"] = gpus;
  return c;
}

// Groups inside the NVLink domain are priced as NVLink traffic, not as the 8-GPU server's NICs:
// EP 64 and TP 16 in a 72-GPU domain cost what they cost inside one 64- or 16-GPU NVSwitch
// server; EP 64 across eight DGX H100 nodes goes through each GPU's NIC, several times slower.
// (TP 16 across two DGX H100 nodes is only a little slower: a ring's cross-node step has the
// node's eight NICs, about one GPU's NVLink bandwidth.)
TEST(Estimator, ParallelGroupsInsideTheNVLinkDomainAreNVLinkTraffic) {
  auto estimate = [](const Json& j, const Json& cluster) {
    Json job = j;
    job["cluster"] = cluster;
    const Resolved r = resolve(job);
    Estimator est(r.hardware, r.spec, 1.0);
    Estimate e;
    EXPECT_EQ(est.estimate(candidate_of(r.job), e), Verdict::kOk) << job.dump().substr(0, 200);
    return e;
  };
  const Json moe{{"model", "qwen3-30b-a3b"},
                 {"gpus", 128},
                 {"global_batch", 256},
                 {"seq_len", 4096},
                 {"tp", 1},
                 {"pp", 1},
                 {"cp", 1},
                 {"etp", 1},
                 {"zero", 1},
                 {"micro_batch", 1},
                 {"network", "analytic"}};
  Json ep8 = moe, ep64 = moe;
  ep8["ep"] = 8;
  ep64["ep"] = 64;
  const double h100_8 = estimate(ep8, "dgx-h100").ep_s, h100_64 = estimate(ep64, "dgx-h100").ep_s;
  const double nvl_8 = estimate(ep8, nvl72_like()).ep_s, nvl_64 = estimate(ep64, nvl72_like()).ep_s;
  const double node_64 = estimate(ep64, big_node(64)).ep_s;
  std::printf("EP s/iteration: dgx-h100 ep8 %.4f ep64 %.4f; 72-GPU domain ep8 %.4f ep64 %.4f; 64-GPU node %.4f\n",
              h100_8, h100_64, nvl_8, nvl_64, node_64);
  EXPECT_NEAR(nvl_8, h100_8, 0.01 * h100_8);  // inside one node on both
  EXPECT_NEAR(nvl_64, node_64, 0.01 * node_64);
  EXPECT_GT(h100_64, 3.0 * nvl_64);

  const Json dense{
      {"model", "gpt3-175b"}, {"gpus", 256},          {"global_batch", 256}, {"tp", 16}, {"pp", 8}, {"zero", 1},
      {"micro_batch", 1},     {"network", "analytic"}};
  const double tp_h100 = estimate(dense, "dgx-h100").tp_s, tp_nvl = estimate(dense, nvl72_like()).tp_s;
  const double tp_node = estimate(dense, big_node(16)).tp_s;
  std::printf("TP 16 s/iteration: dgx-h100 %.4f, 72-GPU domain %.4f, 16-GPU node %.4f\n", tp_h100, tp_nvl, tp_node);
  EXPECT_NEAR(tp_nvl, tp_node, 0.01 * tp_node);
  EXPECT_LT(tp_nvl, tp_h100);
}

// The same on the presets: on gb200-nvl72 EP 64 stays on the rack's NVLink (about what EP 8
// costs), on dgx-b200 (the same NVLink5 and 400G NICs, 8-GPU nodes) it crosses nodes.
TEST(Estimator, ExpertParallelismOnGb200Nvl72StaysInTheRack) {
  auto ep_s = [](const char* cluster, int ep) {
    const Resolved r = resolve(Json{{"model", "qwen3-30b-a3b"},
                                    {"cluster", cluster},
                                    {"gpus", 128},
                                    {"global_batch", 256},
                                    {"seq_len", 4096},
                                    {"tp", 1},
                                    {"pp", 1},
                                    {"cp", 1},
                                    {"ep", ep},
                                    {"etp", 1},
                                    {"zero", 1},
                                    {"micro_batch", 1},
                                    {"network", "analytic"}});
    Estimator est(r.hardware, r.spec, 1.0);
    Estimate e;
    EXPECT_EQ(est.estimate(candidate_of(r.job), e), Verdict::kOk) << cluster << " ep " << ep;
    return e.ep_s;
  };
  const double nvl_8 = ep_s("gb200-nvl72", 8), nvl_64 = ep_s("gb200-nvl72", 64);
  const double b200_8 = ep_s("dgx-b200", 8), b200_64 = ep_s("dgx-b200", 64);
  std::printf("EP s/iteration: gb200-nvl72 ep8 %.4f ep64 %.4f; dgx-b200 ep8 %.4f ep64 %.4f\n", nvl_8, nvl_64, b200_8,
              b200_64);
  EXPECT_LT(nvl_64, 1.5 * nvl_8);
  EXPECT_GT(b200_64, 3.0 * b200_8);
  EXPECT_GT(b200_64, 3.0 * nvl_64);
}

TEST(Estimator, IterationTimeIsCloseToTheDiscreteEventSimulation) {
  std::vector<double> errors;
  for (Json j : cases()) {
    j["network"] = "analytic";
    const Resolved r = resolve(j);
    Estimator est(r.hardware, r.spec, 1.0);
    Estimate e;
    ASSERT_EQ(est.estimate(candidate_of(r.job), e), Verdict::kOk) << j.dump();
    const auto sim = models::workload::simulate(r.job);
    ASSERT_TRUE(sim.simulated) << j.dump();
    const double err = (e.iteration_s - sim.iteration.seconds()) / sim.iteration.seconds();
    std::printf("%-110s est %8.3f s  des %8.3f s  %+6.1f%%\n", describe(candidate_of(r.job)).c_str(), e.iteration_s,
                sim.iteration.seconds(), 100 * err);
    errors.push_back(std::abs(err));
  }
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2], worst = errors.back();
  std::printf("median |error| %.1f%%, max %.1f%%\n", 100 * median, 100 * worst);
  EXPECT_LT(median, 0.02);
  EXPECT_LT(worst, 0.08);
}

// The fast estimate and the discrete-event simulation of one job (seconds per iteration).
std::pair<double, double> estimate_and_simulate(const Json& j) {
  const Resolved r = resolve(j);
  Estimator e(r.hardware, r.spec, 1.0);
  Estimate out;
  EXPECT_EQ(e.estimate(candidate_of(r.job), out), Verdict::kOk) << j.dump();
  return {out.iteration_s, models::workload::simulate(r.job).iteration.seconds()};
}

// Under `full` CUDA graphs a MoE model's dense layers are captured and its dropless MoE layers,
// attention included, run eager (BuildContext::graphed): Qwen3 30B-A3B with its first half dense,
// host-bound (100 us a kernel). The estimator prices each layer's attention as the simulator does:
// the graphs' saving and the iteration agree with the discrete-event simulation.
TEST(Estimator, CudaGraphsOfAMoeModelFollowEachLayer) {
  Json model = models::presets::find("models", "qwen3-30b-a3b", "model");
  model["moe"]["first_dense_layers"] = 24;
  const Json base{{"model", model},
                  {"cluster", "dgx-b200"},
                  {"stack", "megatron-bridge-2025"},
                  {"gpus", 8},
                  {"ep", 8},
                  {"global_batch", 16},
                  {"seq_len", 2048},
                  {"network", "analytic"},
                  {"kernel_dispatch", "100us"}};
  double est[2], des[2];
  for (const bool graphs : {false, true}) {
    Json j = base;
    if (graphs) j["cuda_graph_scope"] = "full";
    std::tie(est[graphs], des[graphs]) = estimate_and_simulate(j);
    std::printf("graphs %-5s est %.4f s  des %.4f s  %+.1f%%\n", graphs ? "full" : "none", est[graphs], des[graphs],
                100 * (est[graphs] / des[graphs] - 1));
    EXPECT_NEAR(est[graphs] / des[graphs], 1.0, 0.03);
  }
  // The saving is the dense layers' attention and MLP launches (when the estimator priced every
  // layer's attention as a MoE layer's, eager, it saved a third of what the simulation does and the
  // graphed estimate was +5.7%).
  EXPECT_GT(des[0], des[1]);
  EXPECT_NEAR((est[0] - est[1]) / (des[0] - des[1]), 1.0, 0.15);
}

// BF16 first/last layers: the estimate blends the two precisions' layers by their share, which on
// one stage is what the simulation adds for them (with pp > 1 they sit on the end stages: the
// simulator's rerank prices that).
TEST(Estimator, Bf16EdgeLayersCostWhatTheSimulationAdds) {
  double est[3], des[3];
  const int64_t edges[3] = {0, 2, 8};
  for (int i = 0; i < 3; ++i) {
    const Json j{{"model", "llama3-8b"},
                 {"cluster", "dgx-b200"},
                 {"stack", "megatron-core-2025"},
                 {"gpus", 8},
                 {"global_batch", 16},
                 {"seq_len", 4096},
                 {"precision", "nvfp4"},
                 {"network", "analytic"},
                 {"bf16_first_layers", edges[i]},
                 {"bf16_last_layers", edges[i]}};
    std::tie(est[i], des[i]) = estimate_and_simulate(j);
  }
  for (int i = 1; i < 3; ++i) {
    EXPECT_GT(est[i], est[i - 1]);
    EXPECT_NEAR((est[i] - est[0]) / (des[i] - des[0]), 1.0, 0.10) << edges[i] << " BF16 layers at each end";
  }
}

}  // namespace
}  // namespace trainsim::planner::search
