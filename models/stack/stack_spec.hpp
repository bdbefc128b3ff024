#pragma once
// A software-stack profile: the framework a job runs on (Megatron-LM 2021, Megatron-Core with
// Transformer Engine, NeMo, DeepSpeed, torchtitan) and what that changes in a prediction: the
// kernels it runs, what it overlaps, its per-step overheads, the default knobs of its recipes,
// the memory it allocates beyond the model states and activations, and the features it can
// express. Presets are data (models/presets/stacks/*.json, `trainsim list stacks`); each
// constant records its source (docs/stacks.md).

#include <map>
#include <string>
#include <vector>

#include "models/stack/evidence.hpp"
#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::models::stack {

// What the stack can run; a job asking for more is refused naming the stack and the feature.
struct StackFeatures {
  std::vector<std::string> schedules;          // pipeline schedules (schedule registry names)
  std::vector<int64_t> zero;                   // ZeRO stages with the simulated memory semantics
  std::vector<std::string> recompute;          // none | selective | full
  std::vector<std::string> recompute_modules;  // selective recompute's modules (core_attn, layernorm, ...)
  std::vector<std::string> precisions;         // bf16 | fp16 | fp8 | mxfp8 | nvfp4
  std::vector<std::string> attention;          // flash | unfused
  std::vector<std::string> cp_algos;           // context parallelism (empty: none)
  bool expert_parallel = false;                // MoE expert parallelism (ep > 1)
  bool expert_folding = false;                 // MoE parallel folding: EP beyond DP, any etp (expert_layout.hpp)
  std::vector<std::string> moe_dispatchers;    // MoE token dispatchers: alltoall | allgather | flex
  std::vector<std::string> moe_balance;        // MoE router balancing: aux_loss | aux_free
  bool tp_comm_overlap = false;                // TP communication overlapped with GEMMs
  bool overlap_param_gather = false;           // distributed optimizer's all-gather beside the forward
  bool fp8_param_gather = false;               // FP8 parameter all-gather
  bool offload_optimizer = false;              // optimizer states in host memory
  bool bf16_optimizer_states = false;          // Adam moments in bf16 (optimizer_states bf16)
  bool offload_activations = false;            // activations copied to host memory
  bool hybrid_shard = false;                   // dp_shard < dp*cp (HSDP / MiCS)
  bool recompute_layers = false;               // full recompute of only the first N layers of a chunk
  bool uneven_layout = false;                  // pp_layout with unequal stages
  bool torch_compile = false;                  // torch_compile fuses the eager element-wise ops
  bool async_tp_needs_compile = false;         // tp_comm_overlap (async TP) only under torch_compile
  bool mxfp8_tp_refuses_compile = false;       // no torch_compile of an MXFP8 model with tp > 1
  bool bf16_edge_layers = false;               // BF16 first/last layers of a quantized job
  bool bf16_edge_experts = false;              // their routed experts too (else they stay quantized)
  bool bf16_edge_layers_per_stage = false;     // under fp8/mxfp8 at most a pipeline stage's at each end
  std::vector<std::string> cuda_graph_scopes;  // what CUDA graphs can capture (the job's cuda_graph_scope)
};

// The kernels it runs, where they differ from the GPU preset's reference (cuDNN/FA3-class fused
// attention with wgmma on Hopper, FlashAttention-2 on Ampere).
struct StackKernels {
  std::string attention_kernel;  // unfused | fa2 | fa3 | cudnn (as named in docs and reports)
  // Attention throughput relative to the GPU preset's on GPUs with Hopper tensor cores (wgmma):
  // FlashAttention-2-class kernels issue Ampere mma.sync there.
  double hopper_attention_fwd_scale = 1.0, hopper_attention_bwd_scale = 1.0;
  // FP8 GEMM throughput inside the framework relative to the isolated cuBLASLt rate of the GPU
  // preset (what Transformer Engine spends around each FP8 GEMM beyond the input cast trainsim
  // prices: scaling-factor and amax bookkeeping, transposes, split accumulation).
  double fp8_gemm_scale = 1.0;
  // The same for 16-bit GEMMs (gemm_efficiency): an older cuBLAS than the one the preset measured.
  double gemm_scale = 1.0;
  bool fp8_lm_head = false;        // the output layer's GEMMs run in FP8 (else 16-bit, as Megatron-Core's output layer)
  std::string fp8_recipe;          // delayed | current | blockwise | none
  bool eager_elementwise = false;  // norms, RoPE, activation as separate eager PyTorch ops (llm/eager_ops.hpp)
  int64_t grouped_gemm_streams = 0;  // MoE experts: 0 = one grouped kernel; n = per-expert GEMMs on n streams
  // ZeRO-3 as FSDP2 runs it (per-parameter sharding): each all-gather's flat output is copied out
  // into the unsharded parameters by a kernel on the compute stream.
  bool fsdp_copy_out = false;
  // Full recompute as PyTorch's non-reentrant checkpoint runs it: recomputation stops once every
  // tensor the backward needs is back, so the MLP's last GEMM and what follows are not redone.
  bool recompute_early_stop = false;
};

// Device memory the stack allocates besides the model states and activations (allocated vs
// reserved as PyTorch's caching allocator reports them).
struct StackMemory {
  sim::Bytes cuda_context;               // CUDA context and loaded kernel modules (outside PyTorch's allocator)
  sim::Bytes workspaces;                 // cuBLAS / Transformer Engine GEMM workspaces, per rank
  sim::Bytes nccl_per_communicator;      // NCCL channel buffers of one communicator the rank uses
  double allocator_fragmentation = 0.0;  // reserved / allocated - 1 on dynamically allocated tensors
  int64_t main_grad_bytes = 4;           // bytes per gradient element in the reduction buffer
  int64_t offload_grad_bytes = 0;        // the same under optimizer offload (0: main_grad_bytes)
  bool fp8_saved_inputs = false;         // FP8 runs keep GEMM inputs for backward in FP8 (1 byte)
  double fp8_weight_cache = 0.0;         // bytes per held parameter of cached FP8 weights (+ transposes)
  int64_t fp8_amax_history = 0;          // amax history length (delayed scaling), fp32 per FP8 tensor
  double logits_bytes = 8.0;             // bytes per logit element alive at the loss (fp32 logits + grad)
  double eager_logits_bytes = 0.0;       // the same when an eager stack's job is not compiled (0: logits_bytes)
};

// The host side of eager execution (models/llm/host_sync.hpp): what a host-device synchronization
// costs when the host must then issue every kernel (the job's kernel_dispatch each) while the GPU waits.
struct StackHost {
  sim::Time sync_latency;          // device-to-host copy + stream synchronize until the host issues again
  bool moe_dispatch_sync = false;  // the dropless MoE dispatcher synchronizes before the EP all-to-all
};

// Published runs its accuracy suite checks (tests/accuracy/): the error there is the band of a
// prediction inside their evidence, and a job outside every entry is extrapolated.
struct StackAccuracy {
  double band = 0;  // 68th percentile of the rows' absolute throughput errors
  int64_t runs = 0;
  std::string source;  // the suite and its data
  Evidence evidence;
};

struct StackSpec {
  std::string name, description;
  std::string framework;  // "Megatron-Core r0.8 + Transformer Engine 1.7", ...
  std::string target;     // repository@commit the profile (and its emitter flag set) targets
  std::string emitter;    // the launch-config emitter for this framework
  sim::config::Json defaults = sim::config::Json::object();  // job keys its recipes set
  // Job keys its recipes set for one precision (precision name -> object of job keys), over
  // `defaults`; a job's own keys win.
  sim::config::Json precision_defaults = sim::config::Json::object();
  StackFeatures features;
  StackKernels kernels;
  StackMemory memory;
  StackHost host;
  sim::Time step_overhead;  // framework and host time per iteration outside the kernels
  std::vector<StackAccuracy> accuracy;
  std::map<std::string, std::string> sources;
};

// The stack used when a job names none (the current Megatron-Core; docs/stacks.md says why).
inline constexpr const char* kDefaultStack = "megatron-core-2025";

const sim::config::Schema<StackSpec>& stack_schema();
StackSpec parse_stack(const sim::config::Json& j, const std::string& path);

// Whether `value` is in `allowed` (a feature list).
template <typename T>
bool allows(const std::vector<T>& allowed, const T& value) {
  for (const auto& a : allowed)
    if (a == value) return true;
  return false;
}

}  // namespace trainsim::models::stack
