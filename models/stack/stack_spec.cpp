#include "models/stack/stack_spec.hpp"

namespace trainsim::models::stack {

using sim::config::Json;
using sim::config::Schema;

namespace {

std::vector<std::string> read_names(const Json& j, const std::string& path, const std::vector<std::string>& allowed) {
  if (!j.is_array()) throw ConfigError(path, "expected a list of names, got " + sim::config::json_type_name(j));
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    out.push_back(allowed.empty() ? sim::config::read_string(j[i], p) : sim::config::read_enum(j[i], p, allowed));
  }
  return out;
}

template <typename T>
auto names(std::vector<std::string> T::*m, std::vector<std::string> allowed = {}) {
  return [m, allowed](T& t, const Json& j, const std::string& p) { t.*m = read_names(j, p, allowed); };
}

const Schema<StackFeatures>& features_schema() {
  static const Schema<StackFeatures> schema = [] {
    Schema<StackFeatures> s("stack.features", "What the stack can run; a job asking for more is refused.");
    s.custom("schedules", "list of schedule names", std::nullopt, "Pipeline schedules it implements.",
             names(&StackFeatures::schedules))
        .custom("zero", "list of integers in [0, 3]", std::nullopt,
                "ZeRO stages it runs with the memory trainsim simulates for them.",
                [](StackFeatures& f, const Json& j, const std::string& p) {
                  if (!j.is_array()) throw ConfigError(p, "expected a list of ZeRO stages, e.g. [0, 1]");
                  f.zero.clear();
                  for (size_t i = 0; i < j.size(); ++i)
                    f.zero.push_back(sim::config::read_int(j[i], p + "[" + std::to_string(i) + "]", 0, 3));
                })
        .custom("recompute", "list of none|selective|full", std::nullopt, "Activation recomputation modes.",
                names(&StackFeatures::recompute, {"none", "selective", "full"}))
        .custom("recompute_modules", "list of core_attn|layernorm|mlp|moe_act|moe|shared_experts|mla_up_proj|ops",
                std::string("[\"core_attn\"]"),
                "Modules selective recompute can redo (the job's `recompute_modules`); the first is what "
                "--recompute selective does without --recompute-modules. The attention core only unless the "
                "stack names more (Megatron-Core 0.12+ --recompute-modules); `ops` is PyTorch's op-level "
                "selective checkpointing (torchtitan).",
                names(&StackFeatures::recompute_modules,
                      {"core_attn", "layernorm", "mlp", "moe_act", "moe", "shared_experts", "mla_up_proj", "ops"}))
        .custom("precisions", "list of bf16|fp16|fp8|mxfp8|nvfp4", std::nullopt, "Mixed-precision modes.",
                names(&StackFeatures::precisions, {"bf16", "fp16", "fp8", "mxfp8", "nvfp4"}))
        .custom("attention", "list of flash|unfused", std::nullopt, "Attention kernels (the job's `attention`).",
                names(&StackFeatures::attention, {"flash", "unfused"}))
        .custom("cp_algos", "list of ring|ulysses|hybrid", std::nullopt,
                "Context-parallel algorithms (empty: no context parallelism).",
                names(&StackFeatures::cp_algos, {"ring", "ulysses", "hybrid"}))
        .boolean("expert_parallel", &StackFeatures::expert_parallel, std::nullopt, "MoE expert parallelism (ep > 1).")
        .boolean("expert_folding", &StackFeatures::expert_folding, std::nullopt,
                 "MoE parallel folding: the expert layers' etp x ep x expert-dp grid is independent of the "
                 "attention's tp x cp x dp (ep may exceed dp; etp need not divide tp). Without it ep must "
                 "divide dp and etp divide tp.")
        .custom("moe_dispatchers", "list of alltoall|allgather|flex", std::string("[\"alltoall\"]"),
                "MoE token dispatchers (the job's `moe_dispatcher`).",
                names(&StackFeatures::moe_dispatchers, {"alltoall", "allgather", "flex"}))
        .custom("moe_balance", "list of aux_loss|aux_free", std::string("[\"aux_loss\"]"),
                "MoE router load-balancing methods (the job's `moe_balance`).",
                names(&StackFeatures::moe_balance, {"aux_loss", "aux_free"}))
        .boolean("tp_comm_overlap", &StackFeatures::tp_comm_overlap, std::nullopt,
                 "TP communication overlapped with GEMMs.")
        .boolean("overlap_param_gather", &StackFeatures::overlap_param_gather, std::nullopt,
                 "The distributed optimizer's parameter all-gather overlapped with the forward.")
        .boolean("fp8_param_gather", &StackFeatures::fp8_param_gather, std::nullopt, "FP8 parameter all-gather.")
        .boolean("offload_optimizer", &StackFeatures::offload_optimizer, std::nullopt,
                 "Optimizer states in host memory.")
        .boolean("bf16_optimizer_states", &StackFeatures::bf16_optimizer_states, false,
                 "Adam moments in bf16 (optimizer_states bf16).")
        .boolean("offload_activations", &StackFeatures::offload_activations, std::nullopt,
                 "Activations copied to host memory between forward and backward.")
        .boolean("hybrid_shard", &StackFeatures::hybrid_shard, std::nullopt,
                 "Sharding over fewer ranks than dp*cp (dp_shard: HSDP, MiCS).")
        .boolean("recompute_layers", &StackFeatures::recompute_layers, std::nullopt,
                 "Full recomputation of only the first N layers of each chunk.")
        .boolean("uneven_layout", &StackFeatures::uneven_layout, std::nullopt,
                 "Pipeline stages with different layer counts (pp_layout).")
        .boolean("torch_compile", &StackFeatures::torch_compile, false,
                 "torch.compile of the model (the job's torch_compile).")
        .boolean("async_tp_needs_compile", &StackFeatures::async_tp_needs_compile, false,
                 "TP communication overlap (async TP) runs only under torch.compile: tp_comm_overlap needs "
                 "torch_compile.")
        .boolean("mxfp8_tp_refuses_compile", &StackFeatures::mxfp8_tp_refuses_compile, false,
                 "An MXFP8 model with tp > 1 is not compiled: mxfp8 with tp > 1 refuses torch_compile.")
        .boolean("bf16_edge_layers", &StackFeatures::bf16_edge_layers, false,
                 "BF16 first and last layers of a quantized job (the job's bf16_first_layers / "
                 "bf16_last_layers).")
        .boolean("bf16_edge_experts", &StackFeatures::bf16_edge_experts, false,
                 "The routed experts of BF16 first/last MoE layers run in BF16 too; without it a job whose BF16 "
                 "layers include MoE layers is refused.")
        .boolean("bf16_edge_layers_per_stage", &StackFeatures::bf16_edge_layers_per_stage, false,
                 "Under fp8 and mxfp8 at most a pipeline stage's layers (layers / pp) in BF16 at each end; more "
                 "is refused.")
        .custom("cuda_graph_scopes", "list of full|attn|mlp|moe|moe_router|moe_preprocess|full_iteration",
                std::string("[]"), "What its CUDA graphs can capture (the job's cuda_graph_scope); [] = none.",
                names(&StackFeatures::cuda_graph_scopes,
                      {"full", "attn", "mlp", "moe", "moe_router", "moe_preprocess", "full_iteration"}));
    return s;
  }();
  return schema;
}

const Schema<StackKernels>& kernels_schema() {
  static const Schema<StackKernels> schema = [] {
    Schema<StackKernels> s("stack.kernels", "The kernels the stack runs.");
    s.enumeration("attention_kernel", &StackKernels::attention_kernel, {"unfused", "fa2", "fa3", "cudnn"}, std::nullopt,
                  "Its attention kernel.")
        .number("hopper_attention_fwd_scale", &StackKernels::hopper_attention_fwd_scale, 0.05, 2.0, 1.0,
                "Fused attention forward throughput relative to the GPU preset's, on GPUs with Hopper tensor "
                "cores (FlashAttention-2-class kernels issue Ampere mma.sync there).")
        .number("hopper_attention_bwd_scale", &StackKernels::hopper_attention_bwd_scale, 0.05, 2.0, 1.0,
                "The same for the backward.")
        .number("fp8_gemm_scale", &StackKernels::fp8_gemm_scale, 0.05, 2.0, 1.0,
                "FP8 GEMM throughput inside the framework relative to the GPU preset's isolated cuBLASLt rate "
                "(fp8_gemm_efficiency).")
        .number("gemm_scale", &StackKernels::gemm_scale, 0.05, 2.0, 1.0,
                "16-bit GEMM throughput inside the framework relative to the GPU preset's (gemm_efficiency), e.g. "
                "an older cuBLAS.")
        .boolean("fp8_lm_head", &StackKernels::fp8_lm_head, std::nullopt,
                 "Under precision fp8, the output layer's GEMMs run in FP8 too (false: 16-bit).")
        .enumeration("fp8_recipe", &StackKernels::fp8_recipe, {"none", "delayed", "current", "blockwise"}, std::nullopt,
                     "FP8 scaling recipe (none: the stack has no FP8 training).")
        .boolean("eager_elementwise", &StackKernels::eager_elementwise, false,
                 "The model's norms, RoPE and activation run as separate eager PyTorch ops (torchtitan's "
                 "Llama: RMSNorm in fp32 op by op, complex-number RoPE, silu * mul, repeat_kv), not fused "
                 "kernels, unless the job sets torch_compile.")
        .boolean("fsdp_copy_out", &StackKernels::fsdp_copy_out, false,
                 "Under ZeRO-3, the stack shards each parameter (FSDP2's fully_shard) rather than flat "
                 "buffers: after every parameter all-gather a kernel on the compute stream copies the gathered "
                 "flat buffer out into the unsharded parameters (split_with_sizes_copy: the gathered bytes "
                 "read and written), before the layer can run.")
        .boolean("recompute_early_stop", &StackKernels::recompute_early_stop, false,
                 "Full recompute stops as PyTorch's non-reentrant torch.utils.checkpoint does (early stop, the "
                 "default since PyTorch 2.1): once every tensor the layer's backward needs is recomputed, so the "
                 "MLP's last GEMM (its output is not saved) and what follows it are not redone.")
        .integer("grouped_gemm_streams", &StackKernels::grouped_gemm_streams, 0, 64, 0,
                 "How MoE experts' GEMMs run: 0 = one grouped kernel over all local experts (CUTLASS grouped "
                 "GEMM, torch._grouped_mm); n = one GEMM kernel per expert issued round-robin on n streams "
                 "(Transformer Engine GroupedLinear's multi-stream cuBLAS path, n = 4).");
    return s;
  }();
  return schema;
}

const Schema<StackMemory>& memory_schema() {
  static const Schema<StackMemory> schema = [] {
    Schema<StackMemory> s("stack.memory", "Device memory the stack allocates besides model states and activations.");
    s.unit("cuda_context", &StackMemory::cuda_context, &sim::config::read_bytes, "size", std::nullopt,
           "CUDA context and loaded kernel modules (outside PyTorch's allocator).")
        .unit("workspaces", &StackMemory::workspaces, &sim::config::read_bytes, "size", std::nullopt,
              "cuBLAS / Transformer Engine GEMM workspaces of one rank.")
        .unit("nccl_per_communicator", &StackMemory::nccl_per_communicator, &sim::config::read_bytes, "size",
              std::nullopt, "NCCL buffers of one communicator (group) a rank uses.")
        .number("allocator_fragmentation", &StackMemory::allocator_fragmentation, 0.0, 1.0, std::nullopt,
                "Caching-allocator overhead: reserved / allocated - 1 on the dynamically allocated tensors "
                "(activations and transient buffers).")
        .integer("main_grad_bytes", &StackMemory::main_grad_bytes, 2, 4, std::nullopt,
                 "Bytes per element of the gradient reduction buffer (4: fp32 main grads, 2: bf16).")
        .integer("offload_grad_bytes", &StackMemory::offload_grad_bytes, 0, 4, 0,
                 "Bytes per element of the device's gradient buffer when the optimizer is offloaded to the "
                 "host (0: main_grad_bytes, the framework keeps its reduction buffer; DeepSpeed's ZeRO-Offload "
                 "keeps 16-bit gradients: 2).")
        .boolean("fp8_saved_inputs", &StackMemory::fp8_saved_inputs, std::nullopt,
                 "Under fp8, GEMM inputs saved for backward are kept in FP8 (1 byte).")
        .number("fp8_weight_cache", &StackMemory::fp8_weight_cache, 0.0, 8.0, std::nullopt,
                "Under fp8, bytes per held parameter of cached FP8 weight copies (and transposes).")
        .integer("fp8_amax_history", &StackMemory::fp8_amax_history, 0, 1 << 20, std::nullopt,
                 "Amax history length per FP8 tensor (delayed scaling; fp32 each).")
        .number("logits_bytes", &StackMemory::logits_bytes, 1.0, 16.0, std::nullopt,
                "Bytes per logit element alive at the loss (8: fp32 logits and their gradient).")
        .number("eager_logits_bytes", &StackMemory::eager_logits_bytes, 0.0, 32.0, 0.0,
                "Bytes per logit element alive at the loss when the loss runs eagerly (a stack with "
                "eager_elementwise kernels and a job without torch_compile, or with it and compile_loss "
                "false); 0: logits_bytes.");
    return s;
  }();
  return schema;
}

const Schema<StackHost>& host_schema() {
  static const Schema<StackHost> schema = [] {
    Schema<StackHost> s("stack.host",
                        "Host-side issue costs of eager execution (docs/stacks.md, host synchronization).");
    s.unit("sync_latency", &StackHost::sync_latency, &sim::config::read_time, "duration", std::nullopt,
           "Device-to-host copy and stream synchronization until the host issues again.")
        .boolean("moe_dispatch_sync", &StackHost::moe_dispatch_sync, std::nullopt,
                 "The dropless MoE token dispatcher copies the token counts to the host and synchronizes "
                 "before the expert-parallel all-to-all, once per MoE layer forward.");
    return s;
  }();
  return schema;
}

template <typename T>
auto nested(T StackSpec::*m, const Schema<T>& (*schema)()) {
  return [m, schema](StackSpec& s, const Json& j, const std::string& p) { schema().parse(j, p, s.*m); };
}

}  // namespace

const Schema<StackSpec>& stack_schema() {
  static const Schema<StackSpec> schema = [] {
    Schema<StackSpec> s("stack",
                        "A software-stack profile (`trainsim list stacks`, docs/stacks.md): kernels, overlaps, "
                        "overheads, default knobs, memory conventions and features of one framework version.");
    s.string("name", &StackSpec::name, std::nullopt, "Preset name, e.g. `nemo-24.07`.")
        .string("description", &StackSpec::description, "", "One line shown by `trainsim list stacks`.")
        .string("framework", &StackSpec::framework, std::nullopt, "Framework and library versions it models.")
        .string("target", &StackSpec::target, std::nullopt,
                "Repository@commit of the version it targets (its emitter's flag set).")
        .string("emitter", &StackSpec::emitter, std::nullopt, "Launch-config emitter of this framework (--emit).")
        .custom("defaults", "object of job keys", std::string("{}"),
                "Job options its recipes set; a job's own keys and flags win.",
                [](StackSpec& s, const Json& j, const std::string& p) {
                  if (!j.is_object()) throw ConfigError(p, "expected an object of job keys, e.g. {\"zero\": 1}");
                  s.defaults = j;
                })
        .custom("precision_defaults", "object of precision -> job keys", std::string("{}"),
                "Job options its recipes set for one precision (e.g. {\"fp8\": {\"fp8_param_gather\": true}}), "
                "over `defaults`; a job's own keys and flags win.",
                [](StackSpec& s, const Json& j, const std::string& p) {
                  if (!j.is_object())
                    throw ConfigError(p,
                                      "expected an object of precisions, e.g. {\"fp8\": {\"fp8_param_gather\": true}}");
                  for (auto it = j.begin(); it != j.end(); ++it) {
                    sim::config::read_enum(Json(it.key()), p, {"bf16", "fp16", "fp8", "mxfp8", "nvfp4"});
                    if (!it->is_object()) throw ConfigError(p + "." + it.key(), "expected an object of job keys");
                  }
                  s.precision_defaults = j;
                })
        .custom("features", "object", std::nullopt, "What it can run.", nested(&StackSpec::features, features_schema))
        .custom("kernels", "object", std::nullopt, "Its kernels.", nested(&StackSpec::kernels, kernels_schema))
        .custom("memory", "object", std::nullopt, "Its memory conventions.", nested(&StackSpec::memory, memory_schema))
        .custom("host", "object", std::nullopt, "Its host-side issue costs.", nested(&StackSpec::host, host_schema))
        .unit("step_overhead", &StackSpec::step_overhead, &sim::config::read_time, "duration", std::nullopt,
              "Framework and host time per iteration outside the kernels (optimizer launch, gradient-norm "
              "and loss reductions, logging).")
        .custom("accuracy", "array", std::string("[]"),
                "Published runs its accuracy suite checks: [{\"band\": 0.06, \"runs\": 12, \"source\": "
                "\"tests/accuracy/...\", \"evidence\": {...}}]. The band of a prediction inside an entry's "
                "evidence (stack/evidence.hpp); outside every entry the prediction is extrapolated.",
                [](StackSpec& s, const Json& j, const std::string& p) {
                  if (!j.is_array()) throw ConfigError(p, "expected an array of {band, runs, source, evidence}");
                  for (size_t i = 0; i < j.size(); ++i) {
                    const std::string at = p + "[" + std::to_string(i) + "]";
                    const Json& e = j[i];
                    if (!e.is_object()) throw ConfigError(at, "expected an object {band, runs, source, evidence}");
                    for (auto it = e.begin(); it != e.end(); ++it)
                      if (it.key() != "band" && it.key() != "runs" && it.key() != "source" && it.key() != "evidence")
                        throw ConfigError(at + "." + it.key(), "unknown key", "use band, runs, source and evidence");
                    for (const char* k : {"band", "runs", "source", "evidence"})
                      if (!e.contains(k)) throw ConfigError(at + "." + k, "is missing");
                    StackAccuracy a;
                    a.band = sim::config::read_number(e.at("band"), at + ".band", 0.0, 10.0);
                    a.runs = sim::config::read_int(e.at("runs"), at + ".runs", 1, 1 << 30);
                    if (!e.at("source").is_string()) throw ConfigError(at + ".source", "expected a string");
                    a.source = e.at("source").get<std::string>();
                    a.evidence = parse_evidence(e.at("evidence"), at + ".evidence");
                    s.accuracy.push_back(std::move(a));
                  }
                })
        .sources(&StackSpec::sources);
    return s;
  }();
  return schema;
}

StackSpec parse_stack(const Json& j, const std::string& path) {
  StackSpec s;
  stack_schema().parse(j, path, s);
  return s;
}

}  // namespace trainsim::models::stack
