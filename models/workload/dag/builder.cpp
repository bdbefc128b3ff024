#include "models/workload/dag/builder.hpp"

#include <cstdio>
#include <cstdlib>

#include <algorithm>

#include "models/workload/dag/build_context.hpp"
#include "models/workload/dag/communicators.hpp"
#include "models/workload/dag/pipeline.hpp"
#include "models/workload/dag/stage_memory.hpp"
#include "sim/log.hpp"

// GCC's -Wstringop-overread misfires on boost::small_vector copies of Handles that may be empty
// (memmove of a provably-bounded inline buffer); the copies are correct.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

namespace trainsim::models::workload {

namespace dag {
namespace {

using collectives::CollectiveOp;
using collectives::GroupPlacement;
using llm::Cost;
using sim::Bytes;
using sim::Time;
using sim::task::TaskIndex;
using sim::task::TaskKind;
using sim::task::TaskSpec;

size_t su(int64_t x) { return static_cast<size_t>(x); }

// One rank per pipeline stage (representative), or every rank (full), with their streams.
void make_ranks(const BuildContext& c, Communicators& comms, Workload& w) {
  const Job& job = c.job;
  const bool full = c.fidelity == Fidelity::kFullRanks;
  const int64_t dps = full ? job.dp : 1, tps = full ? job.tp : 1, cps = full ? job.cp : 1;
  for (int64_t s = 0; s < c.p; ++s)
    for (int64_t d = 0; d < dps; ++d)
      for (int64_t cp = 0; cp < cps; ++cp)
        for (int64_t t = 0; t < tps; ++t) {
          RankInfo r;
          r.rank = static_cast<int32_t>(comms.global_rank(s, d, t, cp));
          r.stage = static_cast<int32_t>(s);
          r.dp_index = static_cast<int32_t>(d);
          r.tp_index = static_cast<int32_t>(t);
          r.cp_index = static_cast<int32_t>(cp);
          r.compute = w.graph.add_stream(r.rank, "compute");
          r.tp = w.graph.add_stream(r.rank, "tp");
          r.dp = w.graph.add_stream(r.rank, "dp");
          r.pp = w.graph.add_stream(r.rank, "pp");
          if (job.cp > 1) r.cp = w.graph.add_stream(r.rank, "cp");
          if (job.model.moe && job.ep > 1) r.ep = w.graph.add_stream(r.rank, "ep");
          if (job.offload_activations || job.offload_optimizer) {
            r.d2h = w.graph.add_stream(r.rank, "d2h");
            r.h2d = w.graph.add_stream(r.rank, "h2d");
          }
          w.ranks.push_back(r);
        }
}

// Upper bound: about 40 tasks per layer, micro-batch and simulated rank (SP + full recompute
// emit 28; TP overlap adds 4 per chunk, CP ring steps 2 per step), plus per-micro-batch edges;
// untouched reserved pages cost nothing. Also the activation bytes of each virtual stage.
// Refuses a job whose task graph would not fit in memory, before allocating it: about 120 bytes
// per task with its edges (megatron-1t on 3,072 A100: 1.9 M tasks, 217 MB).
void check_task_budget(double tasks) {
  double budget = 25e6;
  if (const char* env = std::getenv("TRAINSIM_MAX_TASKS")) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(v >= 1.0))
      throw ConfigError("TRAINSIM_MAX_TASKS", "expected a positive number of tasks, got \"" + std::string(env) + "\"");
    budget = v;
  }
  if (tasks <= budget) return;
  char text[160];
  std::snprintf(text, sizeof text,
                "the job needs about %.3g tasks to simulate, above the budget of %.3g (about %.0f MB)", tasks, budget,
                budget * 120 / 1e6);
  throw ConfigError("global_batch", text,
                    "fewer micro-batches (a smaller global_batch or a larger micro_batch), representative fidelity, or "
                    "raise the budget with TRAINSIM_MAX_TASKS=N");
}

void reserve(const BuildContext& c, Workload& w) {
  const Job& job = c.job;
  const int64_t per_layer = 40 + 8 * (c.overlap_chunks - 1) + 4 * (job.cp - 1);
  const size_t per_rank = static_cast<size_t>(c.m * job.model.layers / c.p) * static_cast<size_t>(per_layer) +
                          static_cast<size_t>(c.m * c.v) * 12 + 64;
  check_task_budget(static_cast<double>(per_rank) * static_cast<double>(w.ranks.size()));
  w.graph.reserve(per_rank * w.ranks.size(), 2 * per_rank * w.ranks.size());
  w.task_rank_slot.reserve(per_rank * w.ranks.size());
  w.task_comm.reserve(per_rank * w.ranks.size());
  w.activation_per_vstage.assign(su(c.vstages), 0);
  for (int64_t vs = 0; vs < c.vstages; ++vs) w.activation_per_vstage[su(vs)] = chunk_activation_bytes(job, vs);
}

// Without overlap the whole reduction starts after the stage's last backward task.
void flush_open_buckets(const BuildContext& c, PipelineState& ps) {
  for (StageState& st : ps.stages) {
    if (!st.expert_buckets.pending.empty()) {
      for (const Handle& hnd : st.tail) st.expert_buckets.pending.push_back(hnd);
      flush_bucket(c, st.emit, st.expert_buckets, st.tail, -1, true, true);
    }
    if (!st.buckets.pending.empty()) {
      for (const Handle& hnd : st.tail) st.buckets.pending.push_back(hnd);
      flush_bucket(c, st.emit, st.buckets, st.tail, -1, true);
    }
  }
}

// Tied embeddings across pipeline stages: the first and last stage all-reduce the embedding
// gradient (Megatron's embedding group) before the optimizer step.
void sync_tied_embeddings(const BuildContext& c, Communicators& comms, Workload& w, PipelineState& ps) {
  const Job& job = c.job;
  const int64_t first_stage = embedding_stage(job), last_stage = head_stage(job);
  if (!job.model.tied_embeddings || first_stage == last_stage) return;
  const Bytes eb = Bytes::checked(c.embedding_params() * static_cast<double>(c.grad_elem), "model.vocab",
                                  "a smaller vocabulary or hidden size");
  const std::vector<uint32_t> first = members_of(w, first_stage), last = members_of(w, last_stage);
  Handle hf(first.size()), hl(last.size());
  for (size_t i = 0; i < first.size(); ++i) {
    TaskSpec sp;
    sp.kind = TaskKind::kCollective;
    sp.label = c.lb.embed_sync;
    sp.category = static_cast<uint8_t>(Category::kDpComm);
    sp.bytes = eb;
    sp.duration = c.comm.collective(CollectiveOp::kAllReduce, eb, GroupPlacement{2, 1});
    const TaskIndex idx = w.graph.add(sp, {w.ranks[first[i]].dp, w.ranks[last[i]].dp});
    w.task_rank_slot.push_back(first[i]);
    comms.describe(idx, CollectiveOp::kAllReduce, eb, comms.group_id({w.ranks[first[i]].rank, w.ranks[last[i]].rank}));
    w.graph.add_dep(ps.stages[su(first_stage)].embed_grad[i], idx);
    w.graph.add_dep(ps.stages[su(last_stage)].head_grad[i], idx);
    hf[i] = hl[i] = idx;
  }
  ps.stages[su(first_stage)].tail.push_back(hf);
  ps.stages[su(last_stage)].tail.push_back(hl);
}

// The embedding and LM head parameters pipeline stage `s` holds on one rank: the last stage
// holds the LM head, or with tied embeddings its own copy of the embedding (Megatron's embedding
// group) unless it is also the first stage.
double stage_edge_parameters(const BuildContext& c, int64_t s) {
  const Job& job = c.job;
  const int64_t first = embedding_stage(job), last = head_stage(job);
  double params = 0;
  if (s == first) params += c.embedding_params();
  if (s == last && (!job.model.tied_embeddings || first != last)) params += c.embedding_params();
  return params;
}

// Parameters pipeline stage `s` holds on one rank.
double stage_parameters(const BuildContext& c, int64_t s) {
  const Job& job = c.job;
  double params = 0;
  if (!job.model.moe) {
    params = static_cast<double>(job.stage_layers(s)) * c.layer_params;
  } else {
    for (int64_t ch = 0; ch < c.v; ++ch) {
      const int64_t vs = job.virtual_stage(s, ch);
      for (int64_t l = 0; l < job.layers[su(vs)]; ++l)
        params += c.rank_params(static_cast<int>(job.first_layer(vs) + l));
    }
  }
  params += stage_edge_parameters(c, s);
  if (s == head_stage(job)) params += job.rank_mtp_params();  // MTP modules sit on the last stage
  return params;
}

// Routed-expert parameters pipeline stage `s` holds on one rank.
double stage_expert_parameters(const BuildContext& c, int64_t s) {
  const Job& job = c.job;
  double experts = 0;
  if (job.model.moe)
    for (int64_t ch = 0; ch < c.v; ++ch) {
      const int64_t vs = job.virtual_stage(s, ch);
      for (int64_t l = 0; l < job.layers[su(vs)]; ++l)
        experts += c.expert_params(static_cast<int>(job.first_layer(vs) + l));
    }
  if (s == head_stage(job)) experts += job.expert_mtp_params();
  return experts;
}

// Parameters of stage `s` (one rank) that an FP8 parameter all-gather still moves in 16 bits: the
// embedding and LM head (no stack quantizes them) and the BF16 first/last layers (bf16_layers.hpp);
// their routed experts with `experts`.
double stage_wide_parameters(const BuildContext& c, int64_t s, bool experts) {
  const Job& job = c.job;
  double wide = 0;
  for (int64_t ch = 0; ch < c.v; ++ch) {
    const int64_t vs = job.virtual_stage(s, ch);
    for (int64_t l = job.first_layer(vs); l < job.first_layer(vs) + job.layers[su(vs)]; ++l)
      if (c.bf16(static_cast<int>(l))) {
        const double e = c.expert_params(static_cast<int>(l));
        wide += experts ? e : c.rank_params(static_cast<int>(l)) - e;
      }
  }
  return experts ? wide : wide + stage_edge_parameters(c, s);
}

// Optimizer step once a stage's gradients are reduced; the distributed optimizer (ZeRO 1/2)
// then all-gathers the updated parameters inside the shard group (or, overlapped, at the start
// of the next iteration: emitted by make_pipeline_state).
void optimizer_steps(const BuildContext& c, PipelineState& ps) {
  const Job& job = c.job;
  const Labels& lb = c.lb;
  for (int64_t s = 0; s < c.p; ++s) {
    StageState& st = ps.stages[su(s)];
    StageEmitter& e = st.emit;
    const double params = stage_parameters(c, s);
    // Routed experts (MoE) shard over the ranks holding the same experts, the rest over the
    // shard group.
    const double experts = stage_expert_parameters(c, s);
    const int64_t expert_dp = job.expert_dp();
    const double shard = job.zero >= 1 ? (params - experts) / static_cast<double>(job.dp_shard) +
                                             experts / static_cast<double>(expert_dp)
                                       : params;
    Handle opt;
    if (job.offload_optimizer) {
      // ZeRO-Offload: 16-bit gradients to the host, Adam on the CPU (a streaming pass over
      // ~30 bytes of fp32 state per parameter, bound by host memory bandwidth), 16-bit
      // parameters back.
      const int64_t bytes16 = Bytes::checked(2 * shard, "offload_optimizer", "shard the optimizer (zero)").count();
      Handle d2h = e.host(true, lb.grad_d2h, c.transfer(bytes16), Bytes(bytes16), -1, {});
      for (const Handle& t : st.tail) e.link(t, d2h);
      const Time cpu = Bytes::checked(30.0 * shard, "offload_optimizer", "shard the optimizer (zero)") /
                           job.cluster.host_memory_bandwidth +
                       job.stack.step_overhead;
      Handle step = e.host(true, lb.cpu_adam, cpu, Bytes(0), -1, {&d2h});
      opt = e.host(false, lb.param_h2d, c.transfer(bytes16), Bytes(bytes16), -1, {&step});
    } else {
      // Adam over fp32 master weights (multi-tensor apply): read gradient, master, m, v (16 B),
      // write master, m, v (12 B) and the 16-bit weight (2 B), plus the gradient-norm pass for
      // clipping (4 B): 34 bytes and about 12 FLOPs per parameter. The stack's per-step host
      // time (gradient-norm and loss reductions, optimizer launch, timers, logging) is spent here,
      // between the last gradient and the next iteration.
      // bf16 moments read and write 2 bytes each instead of 4: 26 bytes.
      const double bytes = job.optimizer_states == OptimizerStates::kBf16 ? 26.0 : 34.0;
      const Cost step{
          c.cm.vector_math(sim::Flops(12.0 * shard),
                           Bytes::checked(bytes * shard, "optimizer step", "shard the optimizer (zero)"), 4) +
              job.stack.step_overhead,
          sim::Flops(12.0 * shard), 4};
      e.whole_iteration_graph(false);  // full_iteration graphs stop before the optimizer
      opt = e.compute(lb.optimizer, step, Category::kOptimizer, -1, -1, {});
      for (const Handle& t : st.tail) e.link(t, opt);
    }
    // Under an FP8 parameter gather the 16-bit ones move their second byte too.
    const auto gathered = [&](double p, bool expert_part) {
      return c.param_bytes(p) +
             Bytes(job.fp8_param_gather ? static_cast<int64_t>(stage_wide_parameters(c, s, expert_part)) : 0);
    };
    if (job.zero >= 1 && job.zero < 3 && job.dp_shard > 1 && !job.overlap_param_gather)
      e.collective(lb.dp_param_ag, GroupKind::kShard, CollectiveOp::kAllGather, gathered(params - experts, false), -1,
                   -1, {&opt});
    if (job.zero >= 1 && job.zero < 3 && experts > 0 && expert_dp > 1)
      e.collective(lb.dp_param_ag, GroupKind::kExpertGrad, CollectiveOp::kAllGather, gathered(experts, true), -1, -1,
                   {&opt});
  }
}

// Seals the graph; memory events in task order.
void finalize(Workload& w) {
  w.task_comm.resize(w.graph.size(), Workload::kNoComm);
  w.graph.finalize();
  std::stable_sort(w.memory_events.begin(), w.memory_events.end(),
                   [](const memory::TimelineEvent& a, const memory::TimelineEvent& b) { return a.task < b.task; });
}

}  // namespace
}  // namespace dag

Workload build_workload(const Job& job, const compute::ComputeModel& cm, const collectives::CommModel& comm,
                        Fidelity fidelity) {
  Workload w;
  const dag::BuildContext ctx(job, cm, comm, fidelity, w.graph);
  Communicators comms(w, comm, job);
  dag::make_ranks(ctx, comms, w);
  dag::reserve(ctx, w);
  TRAINSIM_LOG_TRACE(kBuilder, "ranks: ", w.ranks.size(), " simulated (",
                     fidelity == Fidelity::kFullRanks ? "full" : "representative", " fidelity)");
  dag::PipelineState ps = dag::make_pipeline_state(ctx, w, comms);
  dag::walk_pipeline(ctx, comms, w, ps);
  TRAINSIM_LOG_TRACE(kBuilder, "pipeline walk: ", w.graph.size(), " tasks on ", w.graph.stream_count(), " streams");
  dag::flush_open_buckets(ctx, ps);
  dag::sync_tied_embeddings(ctx, comms, w, ps);
  dag::optimizer_steps(ctx, ps);
  dag::finalize(w);
  TRAINSIM_LOG_DEBUG(kBuilder, job.model.name, " tp ", job.tp, " pp ", job.pp, " vp ", job.vp, " dp ", job.dp, " cp ",
                     job.cp, " ep ", job.ep, ", ", job.microbatches, " micro-batches (", job.schedule,
                     "): ", w.graph.size(), " tasks, ", w.graph.stream_count(), " streams, ", w.comms.size(),
                     " distinct collectives, ", w.memory_events.size(), " memory events, ", w.ranks.size(),
                     " simulated ranks");
  return w;
}

}  // namespace trainsim::models::workload
