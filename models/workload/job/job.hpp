#pragma once
// A training job: model, cluster (and GPU), and the parallel configuration. JSON keys equal the
// command-line flags (--micro-batch -> "micro_batch"); the CLI merges flags over the job file and
// parses the result once through this schema. resolve_job() checks every cross-field constraint.

#include <optional>
#include <string>
#include <vector>

#include "models/compute/compute_model.hpp"
#include "models/hardware/calibration.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/llm/model_spec.hpp"
#include "models/llm/moe_dispatch.hpp"
#include "models/schedules/schedule.hpp"
#include "models/stack/stack_spec.hpp"
#include "models/workload/job/options.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::workload {

// The options a job file sets and resolution keeps as they are: JobSpec and Job share them, so
// resolve_parallel copies them in one assignment. Defaults are the schema's (job_schema()).
struct JobOptions {
  int64_t gpus = 0;
  int64_t tp = 1, pp = 1, vp = 1;
  bool sp = true;
  int64_t cp = 1;
  CpAlgo cp_algo = CpAlgo::kRing;
  int64_t ep = 1;
  llm::MoeDispatcher moe_dispatcher = llm::MoeDispatcher::kAllToAll;  // moe_options.hpp
  llm::MoeBalance moe_balance = llm::MoeBalance::kAuxLoss;
  int64_t zero = 0;
  OptimizerStates optimizer_states = OptimizerStates::kFp32;
  bool reshard_after_forward = true;
  int64_t prefetch_layers = 1;
  Recompute recompute = Recompute::kNone;
  bool offload_optimizer = false, offload_activations = false;
  int64_t offload_activation_layers = 0;                // layers per chunk whose activations wait in host memory
  int64_t bf16_first_layers = 0, bf16_last_layers = 0;  // of a quantized job, in BF16 (bf16_layers.hpp)
  bool tp_comm_overlap = false, overlap_param_gather = false, fp8_param_gather = false;
  bool torch_compile = false;   // element-wise ops fused (stacks whose kernels are eager PyTorch ops)
  bool compile_loss = true;     // with torch_compile: the loss is compiled too (else eager, as in 2024 torchtitan)
  double dp_comm_weight = 1.0;  // sharing penalty of data-parallel flows on shared links
  int64_t micro_batch = 1, global_batch = 0;
  std::string schedule = "1f1b";  // a name in schedules::ScheduleRegistry
  compute::Precision precision = compute::Precision::kBf16;
  Attention attention = Attention::kFlash;
  bool overlap_grad_reduce = true;
  bool overlap_p2p = true;
  bool scatter_gather = true;
  sim::Bytes bucket_size;
  sim::Time kernel_dispatch;
  uint32_t cuda_graphs = 0;  // CUDA-graph capture scope (cuda_graphs.hpp CudaGraphScope bits)
  Network network = Network::kFlow;
  int64_t seed = 0;
};

// What the schema parses: the shared options plus the presets and the values resolution derives.
struct JobSpec : JobOptions {
  sim::config::Json model;                         // preset name / file (string) or inline object
  sim::config::Json cluster;                       // preset name / file (string) or inline object
  sim::config::Json gpu;                           // optional override of the cluster's GPU (null = cluster's)
  sim::config::Json calibration;                   // preset name / file (string), inline object, or null (none)
  sim::config::Json stack = stack::kDefaultStack;  // software-stack preset name / file (string) or object
  std::optional<int64_t> dp;                       // null: gpus / (tp*cp*pp)
  std::optional<int64_t> cp_ulysses;               // hybrid: Ulysses degree (null: the largest kv_heads/tp allows)
  std::optional<int64_t> etp;                      // expert tensor parallel (null: tp)
  std::vector<int64_t> pp_layout;                  // layers per virtual stage (empty: even split)
  std::optional<int64_t> dp_shard;                 // sharding group size (HSDP / MiCS); null: the whole dp*cp group
  std::optional<int64_t> recompute_layers;         // full recompute of the first N layers of each chunk
  std::optional<uint32_t> recompute_modules;       // selective recompute's modules (llm::RecomputeModule bits)
  std::optional<int64_t> seq_len;                  // null: the model's
  std::optional<int64_t> nvlink_segment;           // GPUs used per rack-scale NVLink domain (null: auto)
};

const sim::config::Schema<JobSpec>& job_schema();
// Parses a job: the keys its software stack's recipes set (`stack.defaults`) fill in what `j`
// leaves out, then the schema's defaults the rest.
JobSpec parse_job(const sim::config::Json& j);

// Every value resolved, defaults included; checked for consistency.
struct Job : JobOptions {
  llm::ModelSpec model;
  hardware::ClusterSpec cluster;
  hardware::GpuSpec gpu;                             // calibrated when `calibration` is set
  std::optional<hardware::Calibration> calibration;  // applied over gpu and cluster
  stack::StackSpec stack;                            // the software stack (its kernels already applied to gpu)
  int64_t dp = 1;
  int64_t cp_ulysses = 1;          // Ulysses (all-to-all) degree; cp / cp_ulysses ring steps
  int64_t etp = 1;                 // expert tensor parallel
  std::vector<int64_t> layers;     // transformer layers per virtual stage (pp * vp entries)
  int64_t dp_shard = 1;            // ranks one ZeRO shard group spans (dp * cp = fully sharded)
  int64_t recompute_layers = 0;    // under full recompute: layers of each chunk recomputed
  uint32_t recompute_modules = 0;  // under selective recompute: the modules redone (core_attn by default)
  int64_t seq_len = 0;
  int64_t microbatches = 1;  // per pipeline per iteration: global_batch / (dp * micro_batch)
  schedules::Placement placement = schedules::Placement::kLoop;  // the schedule's chunk placement
  bool split_weight_grad = false;                                // the schedule emits W ops

  // Ranks sharing a stage's dense weights: data-parallel replicas times context-parallel ranks.
  int64_t dp_cp() const { return dp * cp; }
  // Ranks holding the same routed experts (MoE): the expert data-parallel group size.
  int64_t expert_dp() const { return dp_cp() * tp / (ep * etp); }
  // Parameters of layer `layer` one rank holds (dense ones over TP, routed experts over ep x etp),
  // and the routed-expert part of them (0 for dense models).
  // MLA's down-projections are whole on every TP rank. MTP layer j is layer `model.layers + j`.
  double rank_layer_params(int64_t layer) const;
  double expert_layer_params(int64_t layer) const;
  // The MTP modules' parameters one rank of the last stage holds (their layers, norms and
  // column-parallel projections), and the routed-expert part of them; 0 without MTP.
  double rank_mtp_params() const;
  double expert_mtp_params() const;
  // The loss runs as eager PyTorch ops: a stack of eager kernels, unless the job compiles the loss
  // with the model (torch_compile and compile_loss). The final norm follows the stack alone
  // (LayerShape::eager_final_norm).
  bool eager_loss() const { return stack.kernels.eager_elementwise && !(torch_compile && compile_loss); }
  // First layer of virtual stage `vs` (prefix sum of `layers`).
  int64_t first_layer(int64_t vs) const;
  // Virtual stage of chunk `chunk` on pipeline stage `stage`, and the layers a stage holds.
  int64_t virtual_stage(int64_t stage, int64_t chunk) const;
  int64_t stage_layers(int64_t stage) const;
  // The resolved configuration as JSON (the "config" object of reports).
  sim::config::Json to_json() const;
};

// Resolves presets and checks divisibility, ranges and capacity; throws ConfigError.
Job resolve_job(const JobSpec& spec);

// The part of resolve_job before the parallel configuration: model, cluster, GPU, calibration,
// precision and attention (the planner resolves them once per search).
Job resolve_hardware(const JobSpec& spec);
// resolve_hardware without the model: cluster, GPU, calibration, precision and attention (a
// replayed trace brings its own workload, traces/chakra_workload.hpp).
Job resolve_platform(const JobSpec& spec);

// The part of resolve_job after the presets: copies the options of `spec` (its JobOptions;
// spec.model/cluster/gpu/calibration are not read) into `job`, whose model, cluster and
// GPU are already resolved, and checks it. The planner resolves each candidate this way without
// parsing presets again.
void resolve_parallel(const JobSpec& spec, Job& job);

}  // namespace trainsim::models::workload
