#include "models/workload/job/job.hpp"
#include "models/workload/job/limits.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "models/llm/recompute_modules.hpp"
#include "models/presets/catalog.hpp"
#include "models/schedules/schedule.hpp"
#include "models/workload/job/bf16_layers.hpp"
#include "models/workload/job/cuda_graphs.hpp"
#include "models/workload/job/layout.hpp"
#include "models/workload/job/moe_options.hpp"
#include "models/workload/job/rack_placement.hpp"
#include "models/workload/job/stack.hpp"

namespace trainsim::models::workload {

using sim::config::Json;

namespace {
using JobSchema = sim::config::Schema<JobSpec>;
constexpr int64_t kMaxInt = sim::config::kUnboundedInt;

// The presets: model, cluster, and the optional GPU and calibration over the cluster's.
void preset_fields(JobSchema& s) {
  auto ref = [](Json JobSpec::*m, const char* what) {
    return [m, what](JobSpec& j, const Json& v, const std::string& p) {
      if (!v.is_string() && !v.is_object())
        throw ConfigError(p, std::string("expected a ") + what + " preset name, a JSON file path or an object, got " +
                                 sim::config::json_type_name(v));
      j.*m = v;
    };
  };
  s.custom("model", "preset name, file or object", std::nullopt, "The model (`trainsim list models`).",
           ref(&JobSpec::model, "model"))
      .custom("cluster", "preset name, file or object", std::nullopt, "The cluster (`trainsim list clusters`).",
              ref(&JobSpec::cluster, "cluster"))
      .custom("gpu", "preset name, file or object", std::string("null"),
              "Replaces the cluster's GPU (`trainsim list gpus`).",
              [](JobSpec& j, const Json& v, const std::string& p) {
                if (!v.is_null() && !v.is_string() && !v.is_object())
                  throw ConfigError(p, "expected a GPU preset name, a JSON file path or an object");
                j.gpu = v;
              })
      .custom("calibration", "preset name, file or object", std::string("null"),
              "Constants fitted to measurements on the job's GPU (`trainsim validate`, `trainsim list "
              "calibrations`), set over the GPU and cluster; null = the presets' values.",
              [](JobSpec& j, const Json& v, const std::string& p) {
                if (!v.is_null() && !v.is_string() && !v.is_object())
                  throw ConfigError(p, "expected a calibration preset name, a JSON file path or an object");
                j.calibration = v;
              })
      .custom("stack", "preset name, file or object", "\"" + std::string(stack::kDefaultStack) + "\"",
              "The software stack (`trainsim list stacks`, docs/stacks.md): its kernels, overheads, memory "
              "conventions and the features it can run; its recipes' knobs are the defaults of the keys a job "
              "leaves out.",
              [](JobSpec& j, const Json& v, const std::string& p) {
                if (!v.is_string() && !v.is_object())
                  throw ConfigError(p, "expected a stack preset name, a JSON file path or an object");
                j.stack = v;
              });
}

// The parallel configuration: the size of every dimension and the pipeline layout.
void parallel_fields(JobSchema& s) {
  s.integer("gpus", &JobSpec::gpus, 1, kMaxInt, std::nullopt, "Total GPUs.")
      .integer("tp", &JobSpec::tp, 1, 1024, 1, "Tensor-parallel size (Megatron 1-D).")
      .integer("pp", &JobSpec::pp, 1, 65536, 1, "Pipeline-parallel stages.")
      .nullable_integer("dp", &JobSpec::dp, 1, kMaxInt, "Data-parallel size; null = gpus/(tp*pp).")
      .integer("vp", &JobSpec::vp, 1, 1024, 1, "Virtual stages (model chunks) per rank for --schedule interleaved.")
      .boolean("sp", &JobSpec::sp, true,
               "Megatron sequence parallelism in TP regions (on by default as in Megatron-Core/NeMo recipes; "
               "no effect when tp = 1; pass false for 2021-style runs).")
      .integer("cp", &JobSpec::cp, 1, 1024, 1,
               "Context-parallel size: each sequence is split over cp ranks (`cp_algo`); gpus = tp*cp*pp*dp.")
      .enumeration("cp_algo", &JobSpec::cp_algo, option_names<CpAlgo>(), CpAlgo::kRing,
                   "Context parallelism: `ring` passes K/V blocks around the CP ring overlapped with attention "
                   "(Megatron CP, causal load balancing); `ulysses` all-to-alls sequence shards into head shards "
                   "(DeepSpeed-Ulysses; degree limited by kv_heads/tp); `hybrid` = Ulysses inside groups of "
                   "`cp_ulysses` ranks x ring across them (USP / LoongTrain).")
      .nullable_integer("cp_ulysses", &JobSpec::cp_ulysses, 1, 1024,
                        "Ulysses degree of --cp-algo hybrid (divides cp and kv_heads/tp); null = the largest "
                        "such divisor.")
      .integer("ep", &JobSpec::ep, 1, 65536, 1,
               "Expert-parallel size for MoE models: experts are split over ep ranks. The expert layers fold "
               "a stage's tp*cp*dp ranks into etp x ep x expert-dp (Megatron-Core parallel folding), so "
               "ep*etp must divide tp*cp*dp and ep may exceed dp; tokens travel by all-to-all.")
      .nullable_integer(
          "nvlink_segment", &JobSpec::nvlink_segment, 1, 1152,
          "GPUs the job uses in each rack-scale NVLink domain (Slurm --segment x gpus_per_node on an "
          "NVL72 cluster): ranks fill that many GPUs of a rack before the next rack, so the "
          "model-parallel groups that divide it stay inside a rack. A multiple of gpus_per_node, at "
          "most the domain; null = the largest such value of at least half a domain that divides the job's "
          "GPUs (64 of 72 for 256 GPUs), else racks filled in rank order. Ignored on clusters whose "
          "NVLink domain is one node.")
      .nullable_integer("etp", &JobSpec::etp, 1, 1024,
                        "Expert tensor-parallel size; null = tp. Experts' weights are split over etp "
                        "consecutive ranks, independent of the attention tp (parallel folding).")
      .custom("pp_layout", "list of integers or \"a,b,...\"", std::string("null"),
              "Transformer layers of each pipeline stage (pp*vp entries, virtual stages in model order, "
              "summing to the model's layers; `bxk` is k entries of b, as reports print it, and 0 leaves a "
              "chunk only the embedding or the LM head and MTP), e.g. 7,8,8,7 or 7,8x2,7 to lighten the "
              "stages that also hold the embedding and the LM head; null = an even split, or, when the layers do not "
              "divide, the split the "
              "planner uses: lighter first and last stages (Megatron's account-for-embedding/loss split, e.g. "
              "7,8,...,8,7 for 126 layers over 16 stages).",
              [](JobSpec& j, const Json& v, const std::string& p) { j.pp_layout = read_pp_layout(v, p); });
}

// Memory: ZeRO sharding, recomputation and offloading.
void memory_fields(JobSchema& s) {
  s.integer("zero", &JobSpec::zero, 0, 3, 0,
            "ZeRO stage: 1 shards optimizer states (distributed optimizer), 2 also gradients, 3 also weights "
            "(PyTorch FSDP FULL_SHARD).")
      .enumeration("optimizer_states", &JobSpec::optimizer_states, option_names<OptimizerStates>(),
                   OptimizerStates::kFp32,
                   "Adam's moments in fp32 (12 bytes of optimizer state per parameter with the fp32 master "
                   "weights) or bf16 (8 bytes: Megatron-Core --use-precision-aware-optimizer with bf16 "
                   "--exp-avg-dtype/--exp-avg-sq-dtype, Apex DistributedFusedAdam dtype=bf16).")
      .nullable_integer("dp_shard", &JobSpec::dp_shard, 1, kMaxInt,
                        "Ranks a ZeRO/FSDP shard group spans (divides dp*cp): states are sharded inside the "
                        "group and replicated across groups, gradients reduce-scattered inside and all-reduced "
                        "across (FSDP HYBRID_SHARD / HSDP, MiCS). null = the whole dp*cp group.")
      .boolean("reshard_after_forward", &JobSpec::reshard_after_forward, true,
               "ZeRO-3/FSDP: free gathered weights after each forward and gather them again for backward; false "
               "keeps them from forward to backward (FSDP SHARD_GRAD_OP: less traffic, more memory).")
      .integer("prefetch_layers", &JobSpec::prefetch_layers, 0, 64, 1,
               "ZeRO-3/FSDP: layers whose weights are all-gathered ahead of the layer computing (FSDP "
               "forward/backward prefetch; 0 = gather on demand).")
      .enumeration("recompute", &JobSpec::recompute, option_names<Recompute>(), Recompute::kNone,
                   "Activation recomputation (selective = attention core, Korthikanti et al.).")
      .custom("recompute_modules", "list of module names or \"a,b,...\"", std::string("null"),
              "With --recompute selective: the modules of each layer whose forward is redone before their "
              "backward, as Megatron-Core's --recompute-modules names them: core_attn, layernorm, mlp, moe_act, "
              "moe, shared_experts, mla_up_proj (each drops the tensors only it needed, docs/parallelism.md); "
              "ops is PyTorch's op-level selective checkpointing (torchtitan). null = the stack's first "
              "(core_attn, Megatron's default; ops on torchtitan).",
              [](JobSpec& j, const Json& v, const std::string& p) {
                if (v.is_null())
                  j.recompute_modules.reset();
                else
                  j.recompute_modules = llm::parse_recompute_modules(v, p);
              })
      .nullable_integer("recompute_layers", &JobSpec::recompute_layers, 0, kMaxInt,
                        "With --recompute full: recompute only the first N layers of each model chunk and keep "
                        "the others' activations (Megatron --recompute-method block --recompute-num-layers N); "
                        "null = every layer.")
      .boolean("offload_optimizer", &JobSpec::offload_optimizer, false,
               "ZeRO-Offload: fp32 master weights and Adam states live in host memory; gradients go to the host "
               "over the GPU's host link, the CPU runs Adam, updated 16-bit weights come back.")
      .boolean("offload_activations", &JobSpec::offload_activations, false,
               "Copy each chunk's stored activations to host memory after its forward and back before its "
               "backward, on device-to-host and host-to-device copy streams beside compute; the fit check "
               "assumes two chunks stay on the device, the simulated timeline reports what the host link "
               "achieves.")
      .integer("offload_activation_layers", &JobSpec::offload_activation_layers, 0, 1 << 20, 0,
               "Layer-granular activation offload (Megatron-Core --cpu-offloading-num-layers, as Megatron-Bridge's "
               "FSDP recipes set it): the stored activations of this many transformer layers of each model "
               "chunk wait in host memory between their forward and their backward, copied while later layers "
               "compute; the device keeps the other layers' and one layer in flight. The copies are taken as "
               "hidden behind compute (the host link is not simulated for them). 0: none.");
}

// Communication: overlaps, priorities and FP8 parameter gathers.
void communication_fields(JobSchema& s) {
  s.boolean("tp_comm_overlap", &JobSpec::tp_comm_overlap, false,
            "Overlap TP communication with GEMMs by chunking them (Megatron/Transformer Engine "
            "--tp-comm-overlap): a TP collective is hidden behind its GEMM except one chunk's worth.")
      .boolean("overlap_param_gather", &JobSpec::overlap_param_gather, false,
               "Distributed optimizer (zero 1/2): the updated parameters' all-gather overlaps the next "
               "iteration's forward, bucket by bucket (Megatron --overlap-param-gather).")
      .number("dp_comm_weight", &JobSpec::dp_comm_weight, 1.0, 64.0, 1.0,
              "Priority of concurrent collectives on shared links (flow network): the sharing penalty of "
              "data-parallel flows (gradient reduction, parameter gathers) against TP, CP, EP and pipeline "
              "traffic. 1 = equal max-min shares (NCCL has no priorities); 4 = a DP flow gets a quarter of a "
              "latency-critical flow's share, as a lower-priority stream and fewer channels approximate.")
      .boolean("fp8_param_gather", &JobSpec::fp8_param_gather, false,
               "With precision fp8: parameters are all-gathered in FP8 (1 byte) instead of 16-bit (Megatron "
               "--fp8-param-gather, FSDP2 float8 all-gather), and the transformer layers' weights are FP8 "
               "tensors with no 16-bit copy on stacks that cache FP8 weights (Transformer Engine fp8_model_init; "
               "docs/parallelism.md).");
}

// The batch, the sequence, the pipeline schedule and the kernels.
void batch_fields(JobSchema& s) {
  s.integer("micro_batch", &JobSpec::micro_batch, 1, kMaxInt, 1, "Micro-batch size (sequences).")
      .integer("global_batch", &JobSpec::global_batch, 1, kMaxInt, std::nullopt,
               "Global batch size (sequences per iteration).")
      .nullable_integer("seq_len", &JobSpec::seq_len, 1, llm::kMaxSeqLen, "Sequence length; null = the model's.")
      .custom("schedule", "schedule name", std::string("\"1f1b\""), "Pipeline schedule (`trainsim list schedules`).",
              [](JobSpec& j, const Json& v, const std::string& p) {
                j.schedule = sim::config::read_string(v, p);
                schedules::ScheduleRegistry::instance().get(j.schedule, p);
              })
      .enumeration("precision", &JobSpec::precision, option_names<compute::Precision>(), compute::Precision::kBf16,
                   "Mixed precision with fp32 master weights; fp8 runs GEMMs in FP8 (per-tensor scaling), mxfp8 and "
                   "nvfp4 in Blackwell's block-scaled MXFP8 / NVFP4 (docs/precision.md).")
      .enumeration("attention", &JobSpec::attention, option_names<Attention>(), Attention::kFlash,
                   "Attention kernel: fused FlashAttention, or unfused batched GEMMs + softmax (2021 Megatron).");
}

// How the iteration runs: overlaps, buckets, kernel dispatch, the network model, the seed.
void runtime_fields(JobSchema& s) {
  s.boolean("overlap_grad_reduce", &JobSpec::overlap_grad_reduce, true,
            "Overlap bucketed data-parallel gradient reduction with the last backward.")
      .boolean("overlap_p2p", &JobSpec::overlap_p2p, true,
               "Pipeline sends run asynchronously beside compute; false makes each stage wait for its send "
               "to finish (2021 Megatron synchronised after every batch_isend_irecv).")
      .boolean("scatter_gather", &JobSpec::scatter_gather, true,
               "Pipeline sends split across TP ranks and re-gathered over NVLink (Narayanan Sec 4.1).")
      .unit<sim::Bytes>("bucket_size", &JobSpec::bucket_size, &sim::config::read_bytes, "size", std::string("160MB"),
                        "Gradient bucket size for overlapped data-parallel reduction (Megatron: 40M fp32 elements).")
      .unit<sim::Time>(
          "kernel_dispatch", &JobSpec::kernel_dispatch, &sim::config::read_time, "duration", std::string("10us"),
          "Host (CPU) time to issue one kernel from the framework, on a DGX's x86 host (the cluster's "
          "`host_dispatch_scale` scales it: Grace 2.75x): a task whose kernels are shorter is "
          "host-bound. Eager PyTorch ~10 us (the Transformer Engine stacks default to 18 us); kernels inside "
          "CUDA graphs (cuda_graph_scope) cost one graph launch per region.")
      .custom("cuda_graph_scope", "list of scope names or \"a,b,...\"", std::string("[]"),
              "CUDA graphs, as Megatron-Core's --cuda-graph-scope names what is captured: full (each layer), "
              "attn, mlp, moe, moe_router, moe_preprocess, or full_iteration (forward and backward of the "
              "iteration, cuda_graph_impl local). A captured region costs the host one launch instead of one "
              "dispatch per kernel. A dropless MoE layer cannot be captured whole: under full or moe it runs "
              "eager, attention included; attn and moe_router graph its static parts (docs/stacks.md). [] = "
              "no graphs.",
              [](JobSpec& j, const Json& v, const std::string& p) {
                j.cuda_graphs = v.is_null() ? 0u : parse_cuda_graph_scope(v, p);
              })
      .enumeration("network", &JobSpec::network, option_names<Network>(), Network::kFlow,
                   "How communication is simulated: `flow` runs every transfer of every collective as flows "
                   "on the cluster's topology (max-min bandwidth sharing); `analytic` uses the hierarchical "
                   "alpha-beta formulas (no contention between concurrent collectives).")
      .boolean("torch_compile", &JobSpec::torch_compile, false,
               "torch.compile each transformer block (torchtitan --training.compile): the element-wise ops a "
               "model written in eager PyTorch runs one by one (RMSNorm, RoPE, SwiGLU, GQA's key/value "
               "expansion) become fused kernels, as Megatron-Core's are already (docs/stacks.md). Only on stacks "
               "whose kernels are eager ops.")
      .boolean("compile_loss", &JobSpec::compile_loss, true,
               "With torch_compile: the loss is compiled too (torchtitan's compile.components = [model, loss], "
               "2025), so the cross-entropy over the logits is one fused kernel with a 6-byte working set per "
               "logit. false: only the blocks are (torchtitan before 2025, whose loss_fn compile was commented "
               "out): the fp32 loss runs as eager ops and holds the stack's eager_logits_bytes per logit.")
      .integer("seed", &JobSpec::seed, 0, std::numeric_limits<int64_t>::max(), 0,
               "Random seed (stochastic components).");
  ;
}

}  // namespace

const sim::config::Schema<JobSpec>& job_schema() {
  static const JobSchema schema = [] {
    JobSchema s("job",
                "A training job: model, cluster and parallel configuration. "
                "Every key is also a command-line flag (`micro_batch` is `--micro-batch`).");
    preset_fields(s);
    parallel_fields(s);
    moe_fields(s);
    memory_fields(s);
    communication_fields(s);
    batch_fields(s);
    runtime_fields(s);
    bf16_layer_fields(s);
    return s;
  }();
  return schema;
}

JobSpec parse_job(const Json& j) {
  JobSpec spec;
  job_schema().parse(with_stack_defaults(j), "", spec);
  return spec;
}

namespace {
std::string divisors_text(int64_t n, int64_t limit = 12) {
  std::string out;
  int64_t count = 0;
  for (int64_t d = 1; d <= n && count < limit; ++d)
    if (n % d == 0) out += (count++ ? ", " : "") + std::to_string(d);
  return out;
}

std::string multiples_near(int64_t value, int64_t unit) {
  const int64_t lo = value / unit * unit;
  if (lo == 0) return std::to_string(unit);
  return std::to_string(lo) + " or " + std::to_string(lo + unit);
}

Json resolve_ref(const std::string& kind, const Json& ref, const std::string& path) {
  return ref.is_string() ? presets::resolve(kind, ref.get<std::string>(), path) : ref;
}
}  // namespace

namespace {
// Layers per virtual stage: the --pp-layout list, an even split, or (layers not dividing) the
// lighter-first-and-last split the planner uses (layout.hpp).
void resolve_layout(const JobSpec& s, Job& j) {
  const int64_t vstages = j.pp * j.vp, L = j.model.layers;
  if (s.pp_layout.empty()) {
    if (L % vstages == 0) {
      j.layers.assign(static_cast<size_t>(vstages), L / vstages);
      return;
    }
    j.layers = uneven_layout(L, vstages);
    if (j.layers.empty())
      throw ConfigError(j.vp > 1 ? "vp" : "pp",
                        "layers (" + std::to_string(L) + ") do not divide over pp*vp = " + std::to_string(vstages) +
                            ", and lighter first and last stages cannot take up the difference",
                        "choose pp*vp among the divisors of " + std::to_string(L) + ": " + divisors_text(L) +
                            ", or give --pp-layout");
    return;
  }
  if (static_cast<int64_t>(s.pp_layout.size()) != vstages)
    throw ConfigError("pp_layout",
                      "has " + std::to_string(s.pp_layout.size()) + " entries but pp*vp = " + std::to_string(vstages),
                      "give one layer count per virtual stage");
  const int64_t sum = std::accumulate(s.pp_layout.begin(), s.pp_layout.end(), int64_t{0});
  if (sum != L)
    throw ConfigError("pp_layout", "sums to " + std::to_string(sum) + " layers but the model has " + std::to_string(L),
                      "make the entries add up to " + std::to_string(L));
  j.layers = s.pp_layout;
}

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0 && limit % d == 0) return d;
  return 1;
}

void resolve_context_parallel(const JobSpec& s, Job& j) {
  const int64_t kv_local = j.model.kv_heads_or_heads() / j.tp;
  if (s.cp_ulysses && j.cp_algo != CpAlgo::kHybrid)
    throw ConfigError("cp_ulysses", std::string("only applies to --cp-algo hybrid (got ") + to_string(j.cp_algo) + ")",
                      "drop --cp-ulysses or use --cp-algo hybrid");
  if (j.cp == 1) {
    j.cp_ulysses = 1;
    return;
  }
  if (j.attention != Attention::kFlash)
    throw ConfigError(
        "cp", std::string("context parallelism needs fused attention (attention = ") + to_string(j.attention) + ")",
        "use --attention flash or --cp 1");
  // Causal load balancing cuts every sequence into 2*cp chunks (rank i keeps chunks i and 2cp-1-i).
  if (j.seq_len % (2 * j.cp) != 0)
    throw ConfigError("cp",
                      "seq_len (" + std::to_string(j.seq_len) + ") must be divisible by 2*cp = " +
                          std::to_string(2 * j.cp) + " (causal load balancing splits a sequence into 2*cp chunks)",
                      "choose --cp so that 2*cp divides " + std::to_string(j.seq_len));
  if (j.cp_algo == CpAlgo::kRing) {
    j.cp_ulysses = 1;
  } else if (j.cp_algo == CpAlgo::kUlysses) {
    if (kv_local % j.cp != 0)
      throw ConfigError("cp",
                        "Ulysses degree cp = " + std::to_string(j.cp) + " must divide kv_heads/tp = " +
                            std::to_string(kv_local) + " (each rank attends with whole KV heads)",
                        "use --cp among " + divisors_text(kv_local) + ", or --cp-algo hybrid");
    j.cp_ulysses = j.cp;
  } else {
    j.cp_ulysses = s.cp_ulysses.value_or(largest_divisor_at_most(kv_local, j.cp));
    if (j.cp % j.cp_ulysses != 0 || kv_local % j.cp_ulysses != 0)
      throw ConfigError("cp_ulysses",
                        std::to_string(j.cp_ulysses) + " must divide cp (" + std::to_string(j.cp) +
                            ") and kv_heads/tp (" + std::to_string(kv_local) + ")",
                        "use a common divisor of " + std::to_string(j.cp) + " and " + std::to_string(kv_local));
  }
}

void resolve_experts(Job& j) {
  const auto& m = j.model;
  if (!m.moe) {
    if (j.ep > 1)
      throw ConfigError("ep", "model \"" + m.name + "\" has no experts (ep = " + std::to_string(j.ep) + ")",
                        "drop --ep, or use an MoE model (trainsim list models)");
    j.etp = j.tp;
    return;
  }
  const auto& moe = *m.moe;
  if (moe.experts % j.ep != 0)
    throw ConfigError(
        "ep", "experts (" + std::to_string(moe.experts) + ") must be divisible by ep (" + std::to_string(j.ep) + ")",
        "choose --ep among " + divisors_text(moe.experts));
  // Parallel folding (expert_layout.hpp): the expert grid etp x ep x edp covers the stage's ranks.
  const int64_t stage_ranks = j.tp * j.cp * j.dp;
  if (stage_ranks % (j.ep * j.etp) != 0) {
    std::string what = "ep x etp (" + std::to_string(j.ep) + " x " + std::to_string(j.etp);
    what += ") must divide the ranks of a pipeline stage, tp x cp x dp = " + std::to_string(stage_ranks);
    throw ConfigError("ep", what + " (the expert layers fold the same GPUs into etp x ep x expert-dp)",
                      "choose --ep among " + divisors_text(std::gcd(stage_ranks / j.etp, moe.experts)) +
                          ", or change --etp or the GPUs");
  }
  if (moe.expert_ffn_hidden % j.etp != 0)
    throw ConfigError("etp",
                      "expert_ffn_hidden (" + std::to_string(moe.expert_ffn_hidden) + ") must be divisible by etp (" +
                          std::to_string(j.etp) + ")",
                      "choose --etp among " + divisors_text(moe.expert_ffn_hidden));
  if (j.tp > 1 && !j.sp)
    throw ConfigError("sp", "MoE layers with tp > 1 need sequence parallelism (Megatron-Core requires it)",
                      "pass --sp true or --tp 1");
  // Megatron pads to capacity only in the all-to-all dispatcher (moe_token_drop.py; the flex
  // dispatcher refuses moe_pad_expert_input_to_capacity in TransformerConfig).
  if (moe.pad_to_capacity && j.moe_dispatcher != llm::MoeDispatcher::kAllToAll)
    throw ConfigError("moe_dispatcher",
                      "pads experts to capacity (model moe.pad_to_capacity) only with the alltoall dispatcher",
                      "use --moe-dispatcher alltoall, or drop moe.pad_to_capacity");
}

void resolve_sharding(const JobSpec& s, Job& j) {
  j.dp_shard = s.dp_shard.value_or(j.dp_cp());
  if (s.dp_shard && j.zero == 0)
    throw ConfigError("dp_shard", "shards ZeRO states but zero = 0", "add --zero 1, 2 or 3, or drop --dp-shard");
  if (j.dp_cp() % j.dp_shard != 0)
    throw ConfigError("dp_shard", std::to_string(j.dp_shard) + " must divide dp*cp = " + std::to_string(j.dp_cp()),
                      "choose --dp-shard among " + divisors_text(j.dp_cp()));
  if (j.model.moe && j.zero >= 3 && j.dp_shard < j.dp_cp())
    throw ConfigError("dp_shard",
                      "hybrid sharding (dp_shard " + std::to_string(j.dp_shard) + " < dp*cp " +
                          std::to_string(j.dp_cp()) + ") is not modelled for MoE models",
                      "drop --dp-shard (FSDP over all data-parallel ranks), or use --zero 1");
  if (s.recompute_layers) {
    if (j.recompute != Recompute::kFull)
      throw ConfigError("recompute_layers",
                        std::string("applies to --recompute full (got ") + to_string(j.recompute) + ")",
                        "add --recompute full or drop --recompute-layers");
    j.recompute_layers = *s.recompute_layers;
    const int64_t largest = *std::max_element(j.layers.begin(), j.layers.end());
    if (j.recompute_layers > largest)
      throw ConfigError("recompute_layers",
                        std::to_string(j.recompute_layers) + " exceeds the layers of the largest model chunk (" +
                            std::to_string(largest) + ")",
                        "use at most " + std::to_string(largest) + ", or drop it to recompute every layer");
  } else {
    j.recompute_layers = j.recompute == Recompute::kFull ? *std::max_element(j.layers.begin(), j.layers.end()) : 0;
  }
  if (s.recompute_modules && j.recompute != Recompute::kSelective)
    throw ConfigError("recompute_modules",
                      std::string("applies to --recompute selective (got ") + to_string(j.recompute) + ")",
                      "add --recompute selective or drop --recompute-modules");
  // Without --recompute-modules, selective recompute is what the stack's selective checkpointing
  // does first: Megatron's attention core, PyTorch's op policy on torchtitan.
  uint32_t stack_default = llm::kRecomputeCoreAttn;
  if (!j.stack.features.recompute_modules.empty())
    stack_default = llm::parse_recompute_modules(Json(j.stack.features.recompute_modules.front()), "stack");
  j.recompute_modules = j.recompute == Recompute::kSelective ? s.recompute_modules.value_or(stack_default) : 0u;
  if (s.recompute_modules && *s.recompute_modules == 0)
    throw ConfigError("recompute_modules", "is empty", "name at least one module, or use --recompute none");
  if (j.offload_activation_layers > 0 && j.offload_activations)
    throw ConfigError("offload_activation_layers", "and offload_activations both offload the stored activations",
                      "keep one: --offload-activation-layers N (per layer) or --offload-activations (whole chunks)");
  if (j.fp8_param_gather && !compute::quantized(j.precision))
    throw ConfigError("fp8_param_gather", "needs a quantized precision (fp8, mxfp8 or nvfp4)",
                      "add --precision fp8 or drop --fp8-param-gather");
  if (j.tp_comm_overlap && j.tp > 1 && !j.sp)
    throw ConfigError("tp_comm_overlap", "overlaps the all-gather / reduce-scatter of sequence parallelism",
                      "pass --sp true, or drop --tp-comm-overlap");
  if (j.overlap_param_gather && (j.zero < 1 || j.zero > 2))
    throw ConfigError(
        "overlap_param_gather",
        "overlaps the distributed optimizer's parameter all-gather (zero 1 or 2), got zero = " + std::to_string(j.zero),
        "add --zero 1, or drop --overlap-param-gather");
}

}  // namespace

Job resolve_job(const JobSpec& s) {
  Job j = resolve_hardware(s);
  resolve_parallel(s, j);
  return j;
}

Job resolve_hardware(const JobSpec& s) {
  // The model first, as before: its errors are reported ahead of the cluster's.
  llm::ModelSpec model = llm::parse_model(resolve_ref("models", s.model, "model"), "model");
  Job j = resolve_platform(s);
  j.model = std::move(model);
  return j;
}

Job resolve_platform(const JobSpec& s) {
  Job j;
  const Json cluster_json = resolve_ref("clusters", s.cluster, "cluster");
  j.cluster = hardware::parse_cluster(cluster_json, "cluster");
  Json gpu_json;
  std::string gpu_path = "cluster.gpu";
  if (!s.gpu.is_null()) {
    gpu_json = resolve_ref("gpus", s.gpu, "gpu");
    gpu_path = "gpu";
  } else if (j.cluster.gpu == "inline") {
    gpu_json = j.cluster.gpu_inline;
  } else {
    gpu_json = presets::find("gpus", j.cluster.gpu, "cluster.gpu");
  }
  j.gpu = hardware::parse_gpu(gpu_json, gpu_path);
  if (!s.calibration.is_null()) {
    // Fitted constants replace the presets' ones; the specs are parsed again with the overrides
    // merged in (each override was already checked by its schema when the calibration was read).
    hardware::Calibration cal =
        hardware::parse_calibration(resolve_ref("calibrations", s.calibration, "calibration"), "calibration");
    if (cal.gpu != j.gpu.name)
      throw ConfigError("calibration", "measured on " + cal.gpu + " but the job runs on " + j.gpu.name,
                        "use a calibration measured on " + j.gpu.name + ", or drop --calibration");
    j.gpu = hardware::parse_gpu(hardware::calibrate_gpu_json(gpu_json, cal), gpu_path);
    j.cluster = hardware::parse_cluster(hardware::calibrate_cluster_json(cluster_json, cal), "cluster");
    j.calibration = std::move(cal);
  }
  j.stack = resolve_stack(s.stack);
  if (j.calibration) apply_calibration_stack(*j.calibration, j.stack);
  apply_stack_kernels(j.stack, j.gpu);
  j.precision = s.precision;
  // A precision the GPU's tensor cores do not run is the job's error before anything is sized
  // (the compute model's constructor names the GPU and the fix).
  if (compute::quantized(j.precision)) (void)compute::ComputeModel(j.gpu, j.precision);
  j.attention = s.attention;
  return j;
}

void resolve_parallel(const JobSpec& s, Job& j) {
  static_cast<JobOptions&>(j) = s;
  j.etp = s.etp.value_or(s.tp);
  j.seq_len = s.seq_len.value_or(j.model.seq_len);
  // kernel_dispatch is written for a DGX's x86 host; the cluster's host CPU issues at its own pace.
  if (j.cluster.host_dispatch_scale != 1.0)
    j.kernel_dispatch = sim::Time::from_seconds_ceil(s.kernel_dispatch.seconds() * j.cluster.host_dispatch_scale);

  resolve_nvlink_segment(s, j);
  const auto& m = j.model;
  if (j.gpus > j.cluster.max_gpus)
    throw ConfigError("gpus",
                      std::to_string(j.gpus) + " GPUs exceed cluster \"" + j.cluster.name + "\"'s maximum of " +
                          std::to_string(j.cluster.max_gpus),
                      "use at most " + std::to_string(j.cluster.max_gpus) + " GPUs");
  if (m.heads % j.tp != 0)
    throw ConfigError("tp",
                      "heads (" + std::to_string(m.heads) + ") must be divisible by tp (" + std::to_string(j.tp) + ")",
                      "choose --tp among the divisors of " + std::to_string(m.heads) + ": " + divisors_text(m.heads));
  if (m.kv_heads_or_heads() % j.tp != 0)
    throw ConfigError("tp",
                      "kv_heads (" + std::to_string(m.kv_heads_or_heads()) + ") must be divisible by tp (" +
                          std::to_string(j.tp) + ")",
                      "choose --tp among the divisors of " + std::to_string(m.kv_heads_or_heads()) + ": " +
                          divisors_text(m.kv_heads_or_heads()));
  if (m.ffn_hidden % j.tp != 0)
    throw ConfigError(
        "tp",
        "ffn_hidden (" + std::to_string(m.ffn_hidden) + ") must be divisible by tp (" + std::to_string(j.tp) + ")",
        "choose a --tp that divides " + std::to_string(m.ffn_hidden));
  const int64_t mp = j.tp * j.cp * j.pp;
  const std::string mp_name = j.cp > 1 ? "tp*cp*pp" : "tp*pp";
  if (j.gpus % mp != 0)
    throw ConfigError("gpus",
                      std::to_string(j.gpus) + " GPUs cannot be split into model-parallel groups of " + mp_name +
                          " = " + std::to_string(mp) + " GPUs",
                      "use a multiple of " + std::to_string(mp) + " GPUs, e.g. " + multiples_near(j.gpus, mp));
  j.dp = j.gpus / mp;
  if (s.dp && *s.dp != j.dp)
    throw ConfigError("dp",
                      "dp (" + std::to_string(*s.dp) + ") must equal gpus/(" + mp_name + ") = " + std::to_string(j.dp),
                      "drop --dp or set --gpus " + std::to_string(*s.dp * mp));
  if (const int64_t domain = j.cluster.domain_gpus(); j.tp > domain && j.tp % domain != 0)
    throw ConfigError("tp",
                      "tp (" + std::to_string(j.tp) + ") larger than an NVLink domain must be a multiple of its " +
                          std::to_string(domain) + " GPUs",
                      "use --tp at most " + std::to_string(domain));
  const int64_t per_step = j.dp * j.micro_batch;
  if (j.global_batch % per_step != 0)
    throw ConfigError(
        "global_batch",
        "global_batch (" + std::to_string(j.global_batch) +
            ") is not divisible by dp*micro_batch = " + std::to_string(per_step),
        "use a multiple of " + std::to_string(per_step) + ", e.g. " + multiples_near(j.global_batch, per_step));
  j.microbatches = j.global_batch / per_step;
  // Schedules and task graphs grow with micro-batches x virtual stages: refuse before allocating.
  if (j.microbatches * j.vp > 1'000'000)
    throw ConfigError("global_batch",
                      std::to_string(j.microbatches) + " micro-batches" +
                          (j.vp > 1 ? " x " + std::to_string(j.vp) + " virtual stages" : std::string()) +
                          " per iteration is above the 1,000,000 a pipeline schedule is built for",
                      "a larger micro_batch, or a smaller global_batch (the speed per token is the same)");
  check_token_counts(j);
  const auto& sched = schedules::ScheduleRegistry::instance().get(j.schedule, "schedule");
  check_stack_schedule(j);
  schedules::check_schedule_shape(sched, static_cast<int>(j.pp), static_cast<int>(j.microbatches),
                                  static_cast<int>(j.vp));
  j.placement = sched.placement;
  j.split_weight_grad = sched.splits_weight_grad;
  resolve_layout(s, j);
  if (j.sp && j.tp == 1) j.sp = false;  // sequence parallelism is a no-op without TP
  resolve_context_parallel(s, j);
  resolve_experts(j);
  resolve_sharding(s, j);
  check_stack_features(j);
  check_cuda_graphs(j);
  check_bf16_layers(j);
}

}  // namespace trainsim::models::workload
