#pragma once
// The planner's fast estimate of one candidate: its memory per GPU (exact: the same stage memory
// model and schedule activation peaks as `trainsim simulate`'s fit check) and its iteration time
// from closed forms over the same cost models the discrete-event simulation uses:
//  - per layer and micro-batch, forward / input-gradient / weight-gradient kernel times from
//    llm::layer_costs (or the MoE block's), with the host dispatch floor;
//  - TP collectives (all-reduce, or all-gather + reduce-scatter with SP) on the alpha-beta model;
//    exposed in the forward, hidden behind the weight-gradient GEMMs in the backward where the
//    builder overlaps them; CP ring steps exposed where a K/V transfer outlasts a step; MoE
//    all-to-alls exposed; ZeRO-3 gathers exposed where they outlast the layer they prefetch for;
//  - the pipeline: the schedule's own op order replayed with those F / B / W op times
//    (pipeline_cache.hpp), plus the stage-boundary transfers on the fill and drain, plus the
//    LM head's work on the last stage;
//  - after the last backward: the part of the data-parallel gradient reduction that the final
//    backward cannot hide, the optimizer step, and the distributed optimizer's parameter gather.
// Each Estimator owns caches keyed by shape; use one per thread.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "models/collectives/alpha_beta.hpp"
#include "models/compute/compute_model.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/workload/job/job.hpp"
#include "planner/search/candidate.hpp"
#include "planner/search/pipeline_cache.hpp"

namespace trainsim::planner::search {

struct Estimate {
  double iteration_s = 0;
  // Where the iteration goes (seconds, on the critical stage): compute, exposed communication of
  // each kind, pipeline bubble and transfers, then the tail after the last backward.
  double compute_s = 0, tp_s = 0, cp_s = 0, ep_s = 0, zero3_s = 0, bubble_s = 0, dp_s = 0, optimizer_s = 0;
  double peak_memory_bytes = 0;
  int32_t worst_memory_stage = 0;
  // Host memory the offloads keep per GPU on the most loaded stage (computed only when the
  // cluster gives host_memory and the candidate offloads; a candidate over it does not fit).
  double host_memory_bytes = 0;
};

enum class Verdict : uint8_t { kOk, kInvalid, kDoesNotFit };

// Memory a plan may use per GPU: headroom x device memory, and at most the usable memory
// (capacity - reserved) the simulator's own fit check allows.
double usable_memory_bytes(const models::workload::Job& hardware, double headroom);

class Estimator {
 public:
  // `hardware` holds the resolved model, cluster and GPU; `base` the job's fixed fields
  // (precision, batch, sequence, overlap switches ...). A candidate fits when its peak memory is
  // at most headroom x device memory and at most the usable memory (capacity - reserved).
  Estimator(const models::workload::Job& hardware, const models::workload::JobSpec& base, double headroom);

  // kInvalid: resolve_job rejects the candidate (`why` gets the field); kDoesNotFit: estimate
  // filled with the memory only.
  Verdict estimate(const Candidate& c, Estimate& out, std::string* why = nullptr);

  // The job of the last candidate estimated (resolved).
  const models::workload::Job& job() const { return job_; }

 private:
  struct LayerTimes {
    // Seconds per layer and micro-batch on one rank.
    double fwd = 0, fwd_comm = 0;   // forward kernels; exposed TP / CP / EP communication
    double dgrad = 0, wgrad = 0;    // backward kernels (selective recompute inside dgrad)
    double bwd_comm_hidden = 0;     // backward TP collectives that overlap the weight-gradient GEMMs
    double bwd_comm_exposed = 0;    // the rest
    double tp = 0, cp = 0, ep = 0;  // exposed parts by kind (forward + backward, for the breakdown)
    double head_fwd = 0, head_bwd = 0, embed_fwd = 0, embed_bwd = 0;  // LM head + loss, embedding
    double edge_head = 0, edge_embed = 0;                             // their forward + backward
    double moe_fwd = 0, moe_dgrad = 0, moe_wgrad = 0, moe_comm = 0;   // a MoE layer's MLP block instead
    double dense_mlp_fwd = 0, dense_mlp_dgrad = 0, dense_mlp_wgrad = 0;
    double early_stop = 0;  // what full recompute leaves out under the stack's recompute_early_stop
  };
  const LayerTimes& layer_times();
  LayerTimes price_layers(const models::compute::ComputeModel& cm);  // layer_times on `cm`, uncached
  double memory();
  // estimate()'s phases, in order, over its working state (estimator.cpp).
  struct Pass;
  void layer_ops(Pass& s);                              // one layer's F, B and W
  void zero3_ops(Pass& s);                              // ZeRO-3 gathers and reduce-scatters per layer
  void stage_ops(Pass& s);                              // the slowest stage's chunk op times
  void pipeline(Pass& s);                               // the schedule's makespan
  void grad_reduction(Pass& s);                         // exposed data-parallel gradient reduction
  void optimizer_step(Pass& s);                         // optimizer step and parameter all-gather
  static void breakdown(const Pass& s, Estimate& out);  // iteration time and its parts

  models::workload::Job job_;
  models::workload::JobSpec spec_;
  models::compute::ComputeModel cm_;
  models::collectives::AlphaBetaModel comm_;
  PipelineCache pipes_;
  double capacity_ = 0;
  int32_t return_stage_ = 0;  // worst memory stage of the last memory()
  uint8_t schedule_ = 0;      // the candidate's schedule (registry index)
  std::map<std::tuple<int64_t, int64_t, int64_t, bool, int64_t, int64_t, bool, int>, LayerTimes> layers_;
};

}  // namespace trainsim::planner::search
