#include "models/workload/dag/builder.hpp"

#include <gtest/gtest.h>

#include <map>

#include "../test_support.hpp"
#include "models/collectives/alpha_beta.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/memory/footprint.hpp"

namespace trainsim::models::workload {
namespace {

using collectives::CollectiveOp;
using sim::config::Json;
using testing::with;

// A small Llama-style job: 32 layers (llama3-8b) at a short sequence so that graphs stay small.
Json small(const Json& extra = Json::object()) {
  return with(Json{{"model", "llama3-8b"},
                   {"cluster", "dgx-h100"},
                   {"gpus", 8},
                   {"tp", 2},
                   {"pp", 2},
                   {"global_batch", 8},
                   {"seq_len", 1024}},
              extra);
}

struct Built {
  Job job;
  compute::ComputeModel cm;
  collectives::AlphaBetaModel comm;
  Workload w;
  Built(const Json& j, Fidelity f = Fidelity::kRepresentative)
      : job(testing::job(j)), cm(job.gpu, job.precision), comm(job.cluster), w(build_workload(job, cm, comm, f)) {}

  std::string label(sim::task::TaskIndex t) const { return w.graph.label(w.graph.task(t).spec.label); }
  int stage(sim::task::TaskIndex t) const { return w.ranks[w.task_rank_slot[t]].stage; }
  std::vector<sim::task::TaskIndex> tasks(const std::string& name) const {
    std::vector<sim::task::TaskIndex> out;
    for (sim::task::TaskIndex t = 0; t < w.graph.size(); ++t)
      if (label(t) == name) out.push_back(t);
    return out;
  }
  size_t count(const std::string& name) const { return tasks(name).size(); }
};

TEST(WorkloadBuilder, RanksFollowMegatronOrder) {
  // Global rank = t + tp (d + dp s): TP innermost, then DP, then PP.
  const Built full(small(), Fidelity::kFullRanks);
  ASSERT_EQ(full.w.ranks.size(), 8u);  // pp 2 x dp 2 x tp 2
  for (const RankInfo& r : full.w.ranks) EXPECT_EQ(r.rank, r.tp_index + 2 * (r.dp_index + 2 * r.stage));
  // Representative: one rank per stage, the (dp 0, tp 0) one.
  const Built rep(small());
  ASSERT_EQ(rep.w.ranks.size(), 2u);
  EXPECT_EQ(rep.w.ranks[1].rank, 4);
  EXPECT_EQ(rep.w.graph.stream_count(), 2u * 4);  // compute, tp, dp, pp per rank
  EXPECT_EQ(full.w.graph.stream_count(), 8u * 4);
}

TEST(WorkloadBuilder, TasksPerLayerAndMicroBatch) {
  // m micro-batches x 32 layers over 2 stages; on every (layer, micro-batch):
  const Built plain(small({{"tp", 1}, {"gpus", 4}, {"global_batch", 4}}));  // tp 1: no TP comm
  const size_t lm = 2 * 32;                                                 // m = 4 / 2 = 2
  // Forward: attention and MLP, each one task (norm merged in without SP).
  EXPECT_EQ(plain.count("attn_fwd"), lm);
  EXPECT_EQ(plain.count("mlp_fwd"), lm);
  EXPECT_EQ(plain.count("attn_norm_fwd"), 0u);
  // Backward: input gradient, weight gradient and norm backward per block.
  for (const char* l : {"attn_dgrad", "attn_wgrad", "attn_norm_bwd", "mlp_dgrad", "mlp_wgrad", "mlp_norm_bwd"})
    EXPECT_EQ(plain.count(l), lm) << l;
  EXPECT_EQ(plain.count("tp_all_reduce"), 0u);
  // Embedding on the first stage and LM head on the last, once per micro-batch.
  EXPECT_EQ(plain.count("embedding_fwd"), 2u);
  EXPECT_EQ(plain.count("lm_head_loss_fwd"), 2u);
  EXPECT_EQ(plain.count("lm_head_wgrad"), 2u);
  // One pipeline send per micro-batch and direction between the two stages.
  EXPECT_EQ(plain.count("pp_send_activation"), 2u);
  EXPECT_EQ(plain.count("pp_send_gradient"), 2u);
  EXPECT_EQ(plain.count("optimizer_step"), 2u);  // one per stage

  // TP without SP: an all-reduce after each block, forward and backward (Megatron f / g).
  const Built tp(small({{"sp", false}}));
  const size_t lm4 = 4 * 32;  // m = 8 / 2 = 4
  EXPECT_EQ(tp.count("tp_all_reduce"), 2 * lm4);
  EXPECT_EQ(tp.count("tp_all_reduce_grad"), 2 * lm4);
  // TP with SP: all-gather before and reduce-scatter after each block; backward all-gathers the
  // gradient and the saved input and reduce-scatters the input gradient.
  const Built sp(small());
  EXPECT_EQ(sp.count("tp_all_gather"), 2 * lm4);
  EXPECT_EQ(sp.count("tp_reduce_scatter"), 2 * lm4);
  EXPECT_EQ(sp.count("tp_all_gather_grad"), 2 * lm4);
  EXPECT_EQ(sp.count("tp_all_gather_input"), 2 * lm4);
  EXPECT_EQ(sp.count("tp_reduce_scatter_grad"), 2 * lm4);
  EXPECT_EQ(sp.count("attn_norm_fwd"), lm4);
  EXPECT_EQ(sp.count("tp_all_reduce"), 0u);
}

TEST(WorkloadBuilder, RecomputeAddsTheRightTasks) {
  const size_t lm = 4 * 32;
  // Full: the whole forward of each layer is redone before its backward.
  const Built full(small({{"recompute", "full"}}));
  for (const char* l : {"recompute_attn_norm", "recompute_attn", "recompute_mlp_norm", "recompute_mlp"})
    EXPECT_EQ(full.count(l), lm) << l;
  for (const auto t : full.tasks("recompute_attn"))
    EXPECT_EQ(full.w.graph.task(t).spec.category, static_cast<uint8_t>(Category::kRecompute));
  // Selective with unfused attention: the attention core only.
  const Built sel(small({{"recompute", "selective"}, {"attention", "unfused"}}));
  EXPECT_EQ(sel.count("recompute_attn_core"), lm);
  EXPECT_EQ(sel.count("recompute_attn"), 0u);
  // Selective with flash attention: nothing to redo (flash recomputes inside its backward).
  const Built flash(small({{"recompute", "selective"}}));
  EXPECT_EQ(flash.count("recompute_attn_core"), 0u);
}

TEST(WorkloadBuilder, ComputeTaskDurationsComeFromTheLayerCosts) {
  const Built b(small({{"sp", false}, {"kernel_dispatch", "0us"}}));
  const llm::LayerCosts lc = llm::layer_costs(b.job.model, {1, 1024, 2, false, true}, b.cm);
  llm::Cost attn = lc.attn.pre_fwd;
  attn += lc.attn.main_fwd;  // without SP the norm runs in the same task
  for (const auto t : b.tasks("attn_fwd")) {
    EXPECT_EQ(b.w.graph.task(t).spec.duration, attn.time);
    EXPECT_EQ(b.w.graph.task(t).spec.flops, attn.flops);
  }
  for (const auto t : b.tasks("mlp_wgrad")) EXPECT_EQ(b.w.graph.task(t).spec.duration, lc.mlp.main_wgrad.time);
  // With 10 us of host dispatch per kernel, a short task is host-bound: 2 kernels of the
  // SP norm (residual + norm) take at least 20 us.
  const Built host(small({{"kernel_dispatch", "10us"}}));
  for (const auto t : host.tasks("attn_norm_fwd")) EXPECT_GE(host.w.graph.task(t).spec.duration, sim::Time::us(20));
}

TEST(WorkloadBuilder, CommunicationTasksRecordWhatTheyMove) {
  const Built b(small(), Fidelity::kFullRanks);
  const int64_t act = 1 * 1024 * 4096 * 2;  // b s h x 2 bytes
  for (const auto t : b.tasks("tp_all_gather")) {
    const CommInfo& c = b.w.comms[b.w.task_comm[t]];
    EXPECT_EQ(c.op, CollectiveOp::kAllGather);
    EXPECT_EQ(c.bytes, sim::Bytes(act));
    const auto& g = b.w.groups[c.group];
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[1], g[0] + 1);  // TP peers are adjacent ranks
    EXPECT_EQ(b.w.graph.task(t).spec.duration,
              b.comm.collective(CollectiveOp::kAllGather, sim::Bytes(act), collectives::GroupPlacement{2, 2}));
  }
  // Pipeline sends: scatter/gather puts 1/tp of the activation on the wire, then all-gathers it
  // over NVLink at the receiver; the peer is the same (dp, tp) position of the next stage.
  for (const auto t : b.tasks("pp_send_activation")) {
    const CommInfo& c = b.w.comms[b.w.task_comm[t]];
    EXPECT_EQ(c.op, CollectiveOp::kSendRecv);
    EXPECT_EQ(c.bytes, sim::Bytes(act / 2));
    const auto& g = b.w.groups[c.group];
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[1], g[0] + 4);  // + tp x dp
    const sim::Time gather =
        b.comm.collective(CollectiveOp::kAllGather, sim::Bytes(act), collectives::GroupPlacement{2, 2});
    EXPECT_EQ(c.extra, gather);
    EXPECT_EQ(b.w.graph.task(t).spec.duration, b.comm.p2p(sim::Bytes(act / 2), false) + gather);
  }
  // Every task either moves nothing or has a descriptor; compute tasks have none.
  ASSERT_EQ(b.w.task_comm.size(), b.w.graph.size());
  for (sim::task::TaskIndex t = 0; t < b.w.graph.size(); ++t)
    EXPECT_EQ(b.w.graph.task(t).spec.kind == sim::task::TaskKind::kCompute, b.w.task_comm[t] == Workload::kNoComm)
        << b.w.graph.display_name(t);
}

// Parameters a stage holds (per TP rank): its layers, plus the word embedding on the first stage
// and the LM head on the last. With tied embeddings the head *is* the embedding on one stage;
// over several stages the last one keeps its own copy (Megatron's embedding group).
double stage_params(const Job& j, int s) {
  const double emb = static_cast<double>(j.model.vocab * j.model.hidden) / static_cast<double>(j.tp);
  double p = static_cast<double>(j.stage_layers(0)) * j.model.layer_parameters() / static_cast<double>(j.tp);
  if (s == 0) p += emb;
  if (s == j.pp - 1 && (!j.model.tied_embeddings || j.pp > 1)) p += emb;
  return p;
}

// Sum of the bytes of the tasks labelled `name` on stage s.
double bytes_on_stage(const Built& b, const std::string& name, int s) {
  double total = 0;
  for (const auto t : b.tasks(name))
    if (b.stage(t) == s) total += static_cast<double>(b.w.graph.task(t).spec.bytes.count());
  return total;
}

// The builder (and this closed form) leaves out position tables and final norms; the tolerance
// only absorbs the whole-byte rounding of each bucket.
constexpr double kTol = 0.003;

void expect_gradient_reduction_covers_the_stage(const Json& j) {
  const Built b(j);
  for (int s = 0; s < b.job.pp; ++s) {
    // fp32 main gradients: 4 bytes per parameter, all-reduced (ZeRO-1+: reduce-scattered).
    const double bytes = bytes_on_stage(b, "dp_grad_reduce", s);
    EXPECT_NEAR(bytes / (4 * stage_params(b.job, s)), 1.0, kTol) << j.dump() << " stage " << s;
  }
}

void expect_optimizer_covers_the_stage(const Json& j) {
  const Built b(j);
  for (int s = 0; s < b.job.pp; ++s) {
    const double shard = stage_params(b.job, s) / (b.job.zero >= 1 ? static_cast<double>(b.job.dp) : 1.0);
    for (const auto t : b.tasks("optimizer_step")) {
      if (b.stage(t) == s) {
        EXPECT_NEAR(b.w.graph.task(t).spec.flops.count() / (12 * shard), 1.0, kTol) << j.dump() << " stage " << s;
      }
    }
    if (b.job.zero == 1 || b.job.zero == 2) {
      // The distributed optimizer all-gathers the updated 2-byte parameters.
      EXPECT_NEAR(bytes_on_stage(b, "dp_param_all_gather", s) / (2 * stage_params(b.job, s)), 1.0, kTol)
          << j.dump() << " stage " << s;
    }
  }
}

TEST(WorkloadBuilder, GradientReductionCoversEveryParameterOnce) {
  const Json gpt{
      {"model", "megatron-1.7b"}, {"cluster", "dgx-a100"}, {"gpus", 8}, {"tp", 2}, {"pp", 2}, {"global_batch", 8},
      {"seq_len", 512},           {"bucket_size", "40MB"}};
  for (const Json& j :
       {small(), small({{"zero", 1}}), small({{"pp", 1}, {"gpus", 4}}), small({{"pp", 4}, {"gpus", 16}}), gpt,
        with(gpt, {{"pp", 4}, {"gpus", 16}}), with(gpt, {{"overlap_grad_reduce", false}})})
    expect_gradient_reduction_covers_the_stage(j);
}

TEST(WorkloadBuilder, GradientReductionCountsATiedEmbeddingOnceOnASingleStage) {
  // Regression (fixed): with tied embeddings and pp = 1, build_workload adds the embedding's parameters to the
  // data-parallel gradient buckets twice: once after embedding_bwd (vs == 0) and once after
  // lm_head_wgrad (vs == last), but on one stage they are the same tensor. megatron-1.7b, pp 1,
  // tp 2: expected 4 B x (24 layers + 1 embedding) / 2 = 3.29 GB of dp_grad_reduce, got 3.53 GB
  // (+7%). (With pp > 1 both copies exist and both are reduced, which is right.)
  expect_gradient_reduction_covers_the_stage(Json{{"model", "megatron-1.7b"},
                                                  {"cluster", "dgx-a100"},
                                                  {"gpus", 4},
                                                  {"tp", 2},
                                                  {"global_batch", 4},
                                                  {"seq_len", 512}});
}

TEST(WorkloadBuilder, OptimizerStepCoversTheStageParameters) {
  // Adam: about 12 FLOPs per parameter of the (ZeRO-sharded) stage.
  for (const Json& j : {small(), small({{"zero", 1}}), small({{"pp", 1}, {"gpus", 4}, {"zero", 2}}),
                        small({{"pp", 4}, {"gpus", 16}}), small({{"pp", 1}, {"gpus", 4}, {"zero", 3}})})
    expect_optimizer_covers_the_stage(j);
}

TEST(WorkloadBuilder, OptimizerStepCoversTiedEmbeddings) {
  // Regression (fixed): Builder::stage_parameters (models/workload/dag/builder.cpp) adds the LM-head embedding on
  // the last stage when `!tied_embeddings || p == 1`; the condition is inverted for tied models:
  // it should be `!tied_embeddings || p > 1` (as memory::stage_memory has it: `!tied || !first`).
  //  - tied, pp 1: the one embedding is counted twice: megatron-1.7b tp 2 gives optimizer FLOPs
  //    for 24 x 31.9M + 2 x 59.0M = 883M parameters instead of 824M (+7%), and ZeRO-1/2 all-gathers
  //    2 bytes of each of them;
  //  - tied, pp > 1: the last stage's copy of the embedding (which Megatron keeps, all-reduces
  //    over the embedding group, and which the gradient buckets here do include) is not updated:
  //    pp 2, last stage 382M + 0 instead of 382M + 59M parameters (-13%).
  const Json gpt{{"model", "megatron-1.7b"}, {"cluster", "dgx-a100"}, {"gpus", 4}, {"tp", 2},
                 {"global_batch", 4},        {"seq_len", 512},        {"zero", 1}};
  expect_optimizer_covers_the_stage(gpt);
  expect_optimizer_covers_the_stage(with(gpt, {{"pp", 2}, {"gpus", 8}}));
}

TEST(WorkloadBuilder, GradientBucketsAreReducedAsTheyFill) {
  // With 160 MB buckets of fp32 gradients (40M parameters), a stage of 16 Llama 3 8B layers at
  // tp 2 (109M parameters, 436 MB of gradients each: 7 GB in all) is reduced in many buckets;
  // ZeRO-1 reduce-scatters instead of all-reducing.
  const Built ar(small());
  const Built rs(small({{"zero", 1}}));
  EXPECT_GT(ar.count("dp_grad_reduce"), 10u);
  for (const auto t : ar.tasks("dp_grad_reduce")) EXPECT_EQ(ar.w.comms[ar.w.task_comm[t]].op, CollectiveOp::kAllReduce);
  for (const auto t : rs.tasks("dp_grad_reduce"))
    EXPECT_EQ(rs.w.comms[rs.w.task_comm[t]].op, CollectiveOp::kReduceScatter);
  // A bucket is issued once it reaches the bucket size; only the last one of each stage (forced
  // at the end of the backward) may be smaller.
  for (int s = 0; s < 2; ++s) {
    std::vector<int64_t> sizes;
    for (const auto t : ar.tasks("dp_grad_reduce"))
      if (ar.stage(t) == s) sizes.push_back(ar.w.graph.task(t).spec.bytes.count());
    ASSERT_FALSE(sizes.empty());
    for (size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_GE(sizes[i], 160'000'000) << "stage " << s << " bucket " << i;
  }
  // No data parallelism: no gradient reduction at all.
  EXPECT_EQ(Built(small({{"gpus", 4}})).count("dp_grad_reduce"), 0u);
}

TEST(WorkloadBuilder, ZeroThreeGathersWeightsPerLayerAndUse) {
  const Built b(small({{"pp", 1}, {"gpus", 4}, {"zero", 3}}));  // dp 2, m 4
  const size_t lm = 4 * 32;
  // Forward and backward each gather the layer's 2-byte weights; gradients are reduce-scattered
  // per layer and micro-batch as soon as they exist.
  EXPECT_EQ(b.count("zero3_param_all_gather"), 2 * lm);
  EXPECT_EQ(b.count("zero3_grad_reduce_scatter"), lm);
  // Only the embedding and LM-head gradients (not sharded per layer) go through one bucket,
  // reduce-scattered after the last backward: 2 x V h / t parameters x 4 B.
  const auto buckets = b.tasks("dp_grad_reduce");
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(b.w.graph.task(buckets[0]).spec.bytes, sim::Bytes(static_cast<int64_t>(2.0 * 128256 * 4096 / 2 * 4)));
  EXPECT_EQ(b.w.comms[b.w.task_comm[buckets[0]]].op, CollectiveOp::kReduceScatter);
  const double layer = b.job.model.layer_parameters() / 2;
  for (const auto t : b.tasks("zero3_param_all_gather"))
    EXPECT_EQ(b.w.graph.task(t).spec.bytes, sim::Bytes(static_cast<int64_t>(layer * 2)));
  for (const auto t : b.tasks("zero3_grad_reduce_scatter"))
    EXPECT_EQ(b.w.graph.task(t).spec.bytes, sim::Bytes(static_cast<int64_t>(layer * 4)));
}

TEST(WorkloadBuilder, TiedEmbeddingsSyncBetweenFirstAndLastStage) {
  const Json gpt{{"model", "megatron-1.7b"}, {"cluster", "dgx-a100"}, {"gpus", 8}, {"tp", 2}, {"pp", 2},
                 {"global_batch", 8},        {"seq_len", 512}};
  const Built b(gpt, Fidelity::kFullRanks);
  // One all-reduce per (dp, tp) position, between stage 0 and stage 1: 4 B x V h / t.
  const auto sync = b.tasks("embedding_grad_all_reduce");
  ASSERT_EQ(sync.size(), 4u);
  for (const auto t : sync) {
    EXPECT_EQ(b.w.graph.task(t).spec.bytes, sim::Bytes(4 * 51200 * 2304 / 2));
    const auto& g = b.w.groups[b.w.comms[b.w.task_comm[t]].group];
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[1] - g[0], 4);
  }
  EXPECT_EQ(Built(small()).count("embedding_grad_all_reduce"), 0u);  // Llama: untied
}

TEST(WorkloadBuilder, ActivationMemoryEventsPerChunk) {
  const Built b(small({{"schedule", "interleaved"}, {"vp", 2}}));  // m 4, 2 chunks per stage
  // One allocation at the first forward task of each (micro-batch, chunk), one free at the end of
  // its backward, of the stage's per-chunk activation bytes.
  ASSERT_EQ(b.w.memory_events.size(), 2u * 2 * 4 * 2);
  EXPECT_TRUE(std::is_sorted(b.w.memory_events.begin(), b.w.memory_events.end(),
                             [](const auto& x, const auto& y) { return x.task < y.task; }));
  // Virtual stage of chunk c on stage s: c * p + s; each holds 8 layers.
  for (int vs = 0; vs < 4; ++vs) {
    memory::StageMemoryInput in;
    in.model = &b.job.model;
    in.layers = 16;
    in.layers_per_chunk = 8;
    in.first = vs % 2 == 0;
    in.last = vs % 2 == 1;
    in.embedding_chunk = vs == 0;
    in.tp = 2;
    in.dp = 2;
    in.sp = true;
    in.micro_batch = 1;
    in.seq_len = 1024;
    in.bucket_size = b.job.bucket_size;
    EXPECT_EQ(b.w.activation_per_vstage[static_cast<size_t>(vs)],
              memory::stage_memory(in).activation_per_chunk.count());
  }
  for (int s = 0; s < 2; ++s) {
    int allocs = 0, frees = 0;
    for (const auto& e : b.w.memory_events)
      if (b.w.ranks[e.slot].stage == s) {
        EXPECT_TRUE(e.bytes == b.w.activation_per_vstage[static_cast<size_t>(s)] ||
                    e.bytes == b.w.activation_per_vstage[static_cast<size_t>(s + 2)]);
        (e.at_start ? allocs : frees) += 1;
      }
    EXPECT_EQ(allocs, 8);
    EXPECT_EQ(frees, 8);
  }
}

TEST(WorkloadBuilder, ExpertLayersFoldTheStageIntoTheirOwnGrid) {
  // Megatron-Core parallel folding: tp 2 x dp 4 attention ranks per stage, the experts on
  // etp 1 x ep 8 (ep > dp): the EP group is the whole stage, TP peers included, and nobody shares
  // an expert slice (expert-dp 1).
  const Json moe{
      {"model", "qwen3-30b-a3b"}, {"cluster", "dgx-h100"}, {"gpus", 16}, {"tp", 2}, {"pp", 2}, {"ep", 8}, {"etp", 1},
      {"global_batch", 8},        {"seq_len", 512},        {"zero", 1}};
  const Built b(moe, Fidelity::kFullRanks);
  const auto a2a = b.tasks("ep_dispatch_all_to_all");
  ASSERT_FALSE(a2a.empty());
  for (const auto t : a2a) {
    const auto& g = b.w.groups[b.w.comms[b.w.task_comm[t]].group];
    ASSERT_EQ(g.size(), 8u);
    const int32_t stage0 = g.front() / 8 * 8;
    for (int32_t i = 0; i < 8; ++i) EXPECT_EQ(g[static_cast<size_t>(i)], stage0 + i);
  }
  EXPECT_EQ(b.job.expert_dp(), 1);
  // etp 2 x ep 4: ETP groups are consecutive rank pairs, EP groups stride 2, expert-DP pairs
  // stride 8 - in a stage of 8 ranks, the EP group {0, 2, 4, 6} mixes TP and DP ranks.
  const Json moe2 = with(moe, Json{{"ep", 4}, {"etp", 2}, {"pp", 1}});
  const Built c(moe2, Fidelity::kFullRanks);
  std::map<std::string, std::vector<int32_t>> of_rank0;
  for (sim::task::TaskIndex t = 0; t < c.w.graph.size(); ++t) {
    if (c.w.task_rank_slot[t] != 0 || t >= c.w.task_comm.size() || c.w.task_comm[t] == Workload::kNoComm) continue;
    of_rank0[c.label(t)] = c.w.groups[c.w.comms[c.w.task_comm[t]].group];
  }
  EXPECT_EQ(of_rank0["ep_dispatch_all_to_all"], (std::vector<int32_t>{0, 2, 4, 6}));
  EXPECT_EQ(of_rank0["etp_all_gather"], (std::vector<int32_t>{0, 1}));
}

}  // namespace
}  // namespace trainsim::models::workload
