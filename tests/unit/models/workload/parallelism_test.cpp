// Mechanism tests of the parallelism strategies (docs/parallelism.md): each one changes the task
// DAG the way it should, and its time and memory move in the expected direction by the expected
// amount where a closed form exists. Representative vs full fidelity for all of them is in
// simulate_test (RepresentativeRanksAgreeWithFullRanks).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "../test_support.hpp"
#include "models/collectives/alpha_beta.hpp"
#include "models/workload/dag/builder.hpp"
#include "models/workload/dag/communicators.hpp"
#include "models/workload/dag/stage_memory.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::with;

// The `research` stack: megatron-core-2025's kernels and memory with every schedule.
Json base(const Json& extra = Json::object()) {
  return with(Json{{"model", "llama3-8b"},
                   {"stack", "research"},
                   {"cluster", "dgx-h100"},
                   {"gpus", 8},
                   {"tp", 2},
                   {"pp", 2},
                   {"global_batch", 8},
                   {"seq_len", 2048}},
              extra);
}

SimulationResult run(const Json& j) { return simulate(testing::job(j)); }

// Tasks per label in a built workload.
std::map<std::string, int> labels(const Json& j) {
  const Job job = testing::job(j);
  const compute::ComputeModel cm(job.gpu, job.precision);
  const collectives::AlphaBetaModel comm(job.cluster);
  const Workload w = build_workload(job, cm, comm, Fidelity::kRepresentative);
  std::map<std::string, int> out;
  for (sim::TaskIndex i = 0; i < w.graph.size(); ++i) ++out[w.graph.label(w.graph.task(i).spec.label)];
  return out;
}

TEST(ContextParallel, RingPassesKvBlocksAndHalvesActivations) {
  const Json one = base({{"seq_len", 16384}, {"gpus", 8}});
  const Json two = base({{"seq_len", 16384}, {"gpus", 16}, {"cp", 2}});
  const auto l = labels(two);
  // Per layer and micro-batch, ring of 2: one K/V block arrives ahead of the second step in the
  // forward and again in the backward; the backward's partial dK/dV follow each of the 2 steps
  // (the last hop returns them to their owner).
  const int layers_x_mb = 16 * 4 * 2;  // 16 layers per stage x 4 micro-batches x 2 stages
  EXPECT_EQ(l.at("cp_ring_kv_send"), 2 * layers_x_mb);
  EXPECT_EQ(l.at("cp_ring_dkv_send"), 2 * layers_x_mb);
  EXPECT_EQ(l.count("cp_ulysses_all_to_all_qkv"), 0u);
  const SimulationResult a = run(one), b = run(two);
  ASSERT_TRUE(a.simulated && b.simulated);
  // Half the tokens per rank: activations per chunk halve exactly.
  EXPECT_EQ(chunk_activation_bytes(testing::job(one), 1), 2 * chunk_activation_bytes(testing::job(two), 1));
  // The same work on twice the GPUs, with the K/V transfers hidden behind attention: faster.
  EXPECT_LT(b.iteration, a.iteration);
  EXPECT_GT(b.iteration.seconds(), 0.5 * a.iteration.seconds());
}

TEST(ContextParallel, UlyssesAllToAllsAroundAttention) {
  const Json j = base({{"seq_len", 16384}, {"gpus", 16}, {"cp", 2}, {"cp_algo", "ulysses"}});
  const auto l = labels(j);
  const int layers_x_mb = 16 * 4 * 2;  // layers per stage x micro-batches x 2 stages
  for (const char* k : {"cp_ulysses_all_to_all_qkv", "cp_ulysses_all_to_all_out", "cp_ulysses_all_to_all_grad_out",
                        "cp_ulysses_all_to_all_grad_qkv"})
    EXPECT_EQ(l.at(k), layers_x_mb) << k;
  EXPECT_EQ(l.count("cp_ring_kv_send"), 0u);
  const SimulationResult r = run(j);
  EXPECT_GT(r.stages[0].time.cp_exposed, sim::Time::zero());  // all-to-alls block attention
}

TEST(ContextParallel, HybridSplitsTheDegree) {
  const Job j = testing::job(base({{"tp", 1}, {"gpus", 16}, {"cp", 4}, {"cp_algo", "hybrid"}}));
  EXPECT_EQ(j.cp_ulysses, 4);  // kv_heads 8: the largest divisor of cp that divides it
  const Job k = testing::job(base({{"tp", 2}, {"gpus", 32}, {"cp", 8}, {"cp_algo", "hybrid"}}));
  EXPECT_EQ(k.cp_ulysses, 4);  // kv_heads/tp = 4
  const auto l = labels(base({{"tp", 2}, {"gpus", 32}, {"cp", 8}, {"cp_algo", "hybrid"}, {"seq_len", 16384}}));
  EXPECT_GT(l.at("cp_ulysses_all_to_all_qkv"), 0);
  EXPECT_GT(l.at("cp_ring_kv_send"), 0);
}

TEST(Communicators, GroupsFollowMegatronOrder) {
  // tp 2, cp 2, dp 4, pp 2: rank = t + 2 (c + 2 (d + 4 s)).
  const Job j =
      testing::job(with(base({{"gpus", 32}, {"cp", 2}, {"zero", 1}, {"dp_shard", 2}}), {{"model", "mixtral-8x7b"}}));
  Workload w;
  const collectives::AlphaBetaModel comm(j.cluster);
  Communicators c(w, comm, j);
  RankInfo r;
  r.stage = 1;
  r.dp_index = 1;
  r.cp_index = 1;
  r.tp_index = 1;
  EXPECT_EQ(c.global_rank(1, 1, 1, 1), 1 + 2 * (1 + 2 * (1 + 4)));
  using V = std::vector<int32_t>;
  EXPECT_EQ(c.members(r, GroupKind::kTp), (V{22, 23}));
  EXPECT_EQ(c.members(r, GroupKind::kCp), (V{21, 23}));
  EXPECT_EQ(c.members(r, GroupKind::kGrad), (V{17, 19, 21, 23, 25, 27, 29, 31}));
  EXPECT_EQ(c.members(r, GroupKind::kShard), (V{21, 23}));  // j = c + cp d = 3: shard {2, 3}
  EXPECT_EQ(c.members(r, GroupKind::kReplica), (V{19, 23, 27, 31}));
}

TEST(ExpertParallel, AllToAllsAndExpertGradientGroup) {
  const Json j = with(base({{"gpus", 16}, {"ep", 4}, {"zero", 1}}), {{"model", "mixtral-8x7b"}});
  const auto l = labels(j);
  const int layers_x_mb = 16 * 2 * 2;                          // 16 layers per stage x 2 micro-batches x 2 stages
  EXPECT_EQ(l.at("ep_dispatch_all_to_all"), 2 * layers_x_mb);  // forward dispatch + backward of the combine
  EXPECT_EQ(l.at("ep_combine_all_to_all"), 2 * layers_x_mb);
  EXPECT_EQ(l.at("moe_experts_fwd"), layers_x_mb);
  EXPECT_EQ(l.count("mlp_fwd"), 0u);
  const SimulationResult r = run(j);
  ASSERT_TRUE(r.simulated);
  EXPECT_GT(r.stages[0].time.ep_exposed, sim::Time::zero());
  // Skewed routing makes the most loaded rank slower.
  Json skewed = j;
  skewed["model"] = testing::model_json("mixtral-8x7b");
  skewed["model"]["moe"]["router_skew"] = 1.0;
  EXPECT_GT(run(skewed).iteration, r.iteration);
  // A capacity factor of 1 caps the hot experts: faster than dropless under skew.
  skewed["model"]["moe"]["capacity_factor"] = 1.0;
  Json dropless = skewed;
  dropless["model"]["moe"]["capacity_factor"] = nullptr;
  EXPECT_LT(run(skewed).iteration, run(dropless).iteration);
}

TEST(ExpertParallel, ExpertWeightsAreShardedByEp) {
  const Json j = with(base({{"gpus", 16}, {"zero", 1}}), {{"model", "mixtral-8x7b"}});
  const auto one = stage_memory_reports(testing::job(with(j, {{"ep", 1}})));
  const auto four = stage_memory_reports(testing::job(with(j, {{"ep", 4}})));
  // Experts are most of Mixtral: four-way expert parallelism cuts weights by more than half.
  EXPECT_LT(four[0].memory.weights.count() * 2, one[0].memory.weights.count());
}

TEST(Schedules, ZeroBubbleSplitsWeightGradientsIntoWOps) {
  const auto l1 = labels(base());
  const auto lz = labels(base({{"schedule", "zb-h1"}}));
  EXPECT_EQ(l1.at("mlp_wgrad"), lz.at("mlp_wgrad"));
  // Without tensor parallelism (with it, deferring W also takes away what the backward TP
  // all-reduce overlapped with, Megatron's dgrad all-reduce under the wgrad GEMM, and on 8 H100
  // with TP 2 that costs more than the bubble saves).
  const SimulationResult a = run(base({{"global_batch", 16}, {"tp", 1}, {"gpus", 2}}));
  const SimulationResult z = run(base({{"global_batch", 16}, {"tp", 1}, {"gpus", 2}, {"schedule", "zb-h1"}}));
  // W fills the drain: less bubble, shorter iteration.
  EXPECT_LT(z.stages[0].time.bubble, a.stages[0].time.bubble);
  EXPECT_LT(z.iteration, a.iteration);
}

TEST(Schedules, ZbvPutsTheLossOnStageZero) {
  const Job j = testing::job(base({{"schedule", "zb-v"}, {"vp", 2}}));
  EXPECT_EQ(embedding_stage(j), 0);
  EXPECT_EQ(head_stage(j), 0);
  const auto reports = stage_memory_reports(j);
  EXPECT_GT(reports[0].memory.weights, reports[1].memory.weights);  // embedding and LM head
  EXPECT_TRUE(run(base({{"schedule", "zb-v"}, {"vp", 2}})).simulated);
}

TEST(PipelineLayout, UnevenStagesMoveLayers) {
  const Job j = testing::job(base({{"pp_layout", "14,18"}}));
  EXPECT_EQ(j.layers, (std::vector<int64_t>{14, 18}));
  EXPECT_EQ(j.stage_layers(0), 14);
  EXPECT_EQ(j.first_layer(1), 14);
  const auto l = labels(base({{"pp_layout", {14, 18}}}));
  EXPECT_EQ(l.at("mlp_fwd"), 32 * 4);
  // The first stage holds fewer layers: fewer activations per chunk than the last.
  EXPECT_LT(chunk_activation_bytes(j, 0), chunk_activation_bytes(j, 1));
  // Virtual stages: pp*vp entries, chunk c of stage s is virtual stage c*p + s.
  const Job v = testing::job(base({{"schedule", "interleaved"}, {"vp", 2}, {"pp_layout", "7,9,7,9"}}));
  EXPECT_EQ(v.stage_layers(0), 14);
  EXPECT_EQ(v.stage_layers(1), 18);
}

TEST(Recompute, PartialFullRecomputeScales) {
  const SimulationResult none = run(base({{"global_batch", 4}}));
  const SimulationResult all = run(base({{"global_batch", 4}, {"recompute", "full"}}));
  const SimulationResult half = run(base({{"global_batch", 4}, {"recompute", "full"}, {"recompute_layers", 8}}));
  EXPECT_EQ(none.stages[0].time.recompute, sim::Time::zero());
  // Half the layers of each 16-layer chunk: half the recompute time (same kernels per layer).
  EXPECT_NEAR(half.stages[0].time.recompute.seconds(), 0.5 * all.stages[0].time.recompute.seconds(),
              1e-6 + 0.01 * all.stages[0].time.recompute.seconds());
  const Job jn = testing::job(base()), jh = testing::job(base({{"recompute", "full"}, {"recompute_layers", 8}}));
  const Job ja = testing::job(base({{"recompute", "full"}}));
  EXPECT_LT(chunk_activation_bytes(ja, 0), chunk_activation_bytes(jh, 0));
  EXPECT_LT(chunk_activation_bytes(jh, 0), chunk_activation_bytes(jn, 0));
}

TEST(Sharding, HsdpReducesInsideShardsAndAcrossReplicas) {
  const Json j = base({{"gpus", 16}, {"zero", 1}, {"dp_shard", 2}});
  const auto l = labels(j);
  EXPECT_GT(l.at("dp_grad_replica_all_reduce"), 0);
  const auto full = stage_memory_reports(testing::job(base({{"gpus", 16}, {"zero", 1}})));
  const auto hsdp = stage_memory_reports(testing::job(j));
  // Optimizer states over 2 instead of 4 ranks: twice the bytes.
  EXPECT_NEAR(static_cast<double>(hsdp[0].memory.optimizer.count()),
              2.0 * static_cast<double>(full[0].memory.optimizer.count()), 2.0);
}

TEST(Sharding, BreadthFirstGathersOncePerChunkPass) {
  const Json j = base({{"gpus", 8}, {"zero", 3}, {"vp", 2}, {"global_batch", 16}});
  const auto bfs = labels(with(j, {{"schedule", "breadth-first"}}));
  const auto dfs = labels(with(j, {{"schedule", "interleaved"}}));
  // Interleaved gathers per op; breadth-first once per chunk per direction.
  // Per stage, chunks of 8 layers: forward chunk 0, forward chunk 1 (kept for its backward),
  // backward chunk 0: three passes that gather, on 2 stages.
  EXPECT_EQ(bfs.at("zero3_param_all_gather"), 3 * 8 * 2);
  EXPECT_GT(dfs.at("zero3_param_all_gather"), 4 * bfs.at("zero3_param_all_gather"));
  EXPECT_LT(bfs.at("zero3_grad_reduce_scatter"), dfs.at("zero3_grad_reduce_scatter"));
}

TEST(Sharding, ReshardAfterForwardOffSkipsTheBackwardGather) {
  const Json j = base({{"pp", 1}, {"zero", 3}, {"global_batch", 8}});
  const auto on = labels(j);
  const auto off = labels(with(j, {{"reshard_after_forward", false}}));
  EXPECT_EQ(on.at("zero3_param_all_gather"), 2 * off.at("zero3_param_all_gather"));
}

TEST(Offload, OptimizerStatesLeaveTheDevice) {
  const Json j = base({{"offload_optimizer", true}});
  const auto r = stage_memory_reports(testing::job(j));
  EXPECT_EQ(r[0].memory.optimizer.count(), 0);
  const auto l = labels(j);
  EXPECT_EQ(l.at("cpu_optimizer_step"), 2);
  EXPECT_EQ(l.count("optimizer_step"), 0u);
  const SimulationResult s = run(j);
  EXPECT_GT(s.stages[0].time.offload_exposed, sim::Time::zero());
}

TEST(Overlap, TpCommOverlapHidesTpCommunication) {
  const SimulationResult off = run(base());
  const SimulationResult on = run(base({{"tp_comm_overlap", true}}));
  EXPECT_LT(on.stages[0].time.tp_exposed, off.stages[0].time.tp_exposed);
  const auto l = labels(base({{"tp_comm_overlap", true}}));
  EXPECT_EQ(l.at("tp_all_gather"), 2 * 2 * 16 * 4 * 2);  // 2 chunks x 2 blocks x 16 layers x 4 mb x 2 stages
}

TEST(Overlap, DataParallelFlowsCanYieldSharedLinks) {
  // tp 2 x dp 4 in one server: the gradient reduce-scatter shares NVLink ports with the backward's
  // TP collectives. A sharing penalty on DP flows gives TP the larger share.
  const Json j = base({{"pp", 1}, {"zero", 1}, {"global_batch", 16}, {"seq_len", 4096}});
  const SimulationResult equal = run(j);
  const SimulationResult yield = run(with(j, {{"dp_comm_weight", 8.0}}));
  EXPECT_LT(yield.stages[0].time.tp_exposed, equal.stages[0].time.tp_exposed);
  EXPECT_NE(yield.iteration, equal.iteration);
}

TEST(Precision, Fp8ParamGatherHalvesGatherBytes) {
  const Json j = base({{"pp", 1}, {"zero", 3}, {"precision", "fp8"}});
  const Job a = testing::job(j), b = testing::job(with(j, {{"fp8_param_gather", true}}));
  const auto ma = stage_memory_reports(a), mb = stage_memory_reports(b);
  EXPECT_LT(mb[0].memory.buffers, ma[0].memory.buffers);
  EXPECT_LT(run(with(j, {{"fp8_param_gather", true}})).iteration, run(j).iteration + sim::Time::ns(1));
}

}  // namespace
}  // namespace trainsim::models::workload
