#include "models/workload/job/stack.hpp"

#include <algorithm>

#include "models/llm/recompute_modules.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/bf16_layers.hpp"
#include "models/workload/job/cuda_graphs.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

using sim::config::Json;

namespace {

Json stack_json(const Json& ref) {
  return ref.is_string() ? presets::resolve("stacks", ref.get<std::string>(), "stack") : ref;
}

struct FeatureCheck {
  const char* field;  // the job key at fault
  bool (*allowed)(const stack::StackFeatures&, const Job&);
  std::string (*what)(const Job&);  // the feature as the message names it
  const char* fix = nullptr;        // what to change, when not the field or the stack
};

std::string quoted(const std::string& s) { return "\"" + s + "\""; }
std::string flag(const char* field) {
  std::string f = std::string("--") + field;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

// Whether every name of `set` (bits over `names`) is in the stack's `allowed` list.
bool allows_set(const std::vector<std::string>& allowed, uint32_t set, const std::vector<std::string>& names) {
  for (const std::string& n : sim::config::name_set_items(set, names))
    if (!stack::allows(allowed, n)) return false;
  return true;
}

const FeatureCheck kChecks[] = {
    {"schedule", [](const stack::StackFeatures& f, const Job& j) { return stack::allows(f.schedules, j.schedule); },
     [](const Job& j) { return "schedule " + j.schedule; }},
    {"zero", [](const stack::StackFeatures& f, const Job& j) { return stack::allows(f.zero, j.zero); },
     [](const Job& j) { return "ZeRO stage " + std::to_string(j.zero); }},
    {"recompute",
     [](const stack::StackFeatures& f, const Job& j) {
       return stack::allows(f.recompute, std::string(to_string(j.recompute)));
     },
     [](const Job& j) { return std::string("recompute ") + to_string(j.recompute); }},
    {"recompute_modules",
     [](const stack::StackFeatures& f, const Job& j) {
       return allows_set(f.recompute_modules, j.recompute_modules, llm::recompute_module_names());
     },
     [](const Job& j) { return "recompute of " + llm::recompute_modules_string(j.recompute_modules); }},
    {"precision",
     [](const stack::StackFeatures& f, const Job& j) {
       return stack::allows(f.precisions, std::string(compute::to_string(j.precision)));
     },
     [](const Job& j) { return std::string("precision ") + compute::to_string(j.precision); }},
    {"attention",
     [](const stack::StackFeatures& f, const Job& j) {
       return stack::allows(f.attention, std::string(to_string(j.attention)));
     },
     [](const Job& j) { return std::string("attention ") + to_string(j.attention); }},
    {"cp_algo",
     [](const stack::StackFeatures& f, const Job& j) {
       return j.cp == 1 || stack::allows(f.cp_algos, std::string(to_string(j.cp_algo)));
     },
     [](const Job& j) { return std::string("context parallelism (cp_algo ") + to_string(j.cp_algo) + ")"; }},
    {"ep", [](const stack::StackFeatures& f, const Job& j) { return j.ep == 1 || f.expert_parallel; },
     [](const Job&) { return std::string("expert parallelism (ep > 1)"); }},
    {"ep",
     [](const stack::StackFeatures& f, const Job& j) {
       return j.ep == 1 || f.expert_folding || (j.dp % j.ep == 0 && j.tp % j.etp == 0);
     },
     [](const Job& j) {
       std::string what = "MoE parallel folding (";
       if (j.dp % j.ep != 0)
         what += "ep " + std::to_string(j.ep) + " not dividing dp " + std::to_string(j.dp);
       else
         what += "etp " + std::to_string(j.etp) + " not dividing tp " + std::to_string(j.tp);
       return what + ")";
     }},
    {"moe_dispatcher",
     [](const stack::StackFeatures& f, const Job& j) {
       return !j.model.moe || stack::allows(f.moe_dispatchers, std::string(to_string(j.moe_dispatcher)));
     },
     [](const Job& j) { return std::string("the ") + to_string(j.moe_dispatcher) + " MoE token dispatcher"; }},
    {"moe_balance",
     [](const stack::StackFeatures& f, const Job& j) {
       return !j.model.moe || stack::allows(f.moe_balance, std::string(to_string(j.moe_balance)));
     },
     [](const Job& j) { return std::string("MoE load balancing ") + to_string(j.moe_balance); }},
    {"torch_compile", [](const stack::StackFeatures& f, const Job& j) { return !j.torch_compile || f.torch_compile; },
     [](const Job&) { return std::string("torch.compile"); }},
    {"tp_comm_overlap",
     [](const stack::StackFeatures& f, const Job& j) { return !j.tp_comm_overlap || f.tp_comm_overlap; },
     [](const Job&) { return std::string("TP communication overlap"); }},
    // torchtitan v0.2.1 distributed/tensor_parallel.py maybe_enable_async_tp: "Async TP requires
    // 'model' in --compile.components and --compile.enable" (RuntimeError).
    {"tp_comm_overlap",
     [](const stack::StackFeatures& f, const Job& j) {
       return !j.tp_comm_overlap || j.tp == 1 || !f.async_tp_needs_compile || j.torch_compile;
     },
     [](const Job&) { return std::string("TP communication overlap (async TP) without torch_compile"); },
     "set --torch-compile, or drop --tp-comm-overlap"},
    // torchtitan v0.2.1 components/quantization/mx.py: "TP not yet supported with torch.compile for
    // mxfp8" (assert when the model is compiled and tensor_parallel_degree > 1).
    {"torch_compile",
     [](const stack::StackFeatures& f, const Job& j) {
       return !f.mxfp8_tp_refuses_compile || !j.torch_compile || j.tp == 1 || j.precision != compute::Precision::kMxfp8;
     },
     [](const Job& j) { return "torch_compile of an MXFP8 model with tp " + std::to_string(j.tp); },
     "drop --torch-compile (and --tp-comm-overlap, which needs it), or use tp 1 or --precision fp8"},
    {"bf16_first_layers",
     [](const stack::StackFeatures& f, const Job& j) { return j.bf16_first_layers == 0 || f.bf16_edge_layers; },
     [](const Job&) { return std::string("BF16 first layers of a quantized job"); }},
    {"bf16_last_layers",
     [](const stack::StackFeatures& f, const Job& j) { return j.bf16_last_layers == 0 || f.bf16_edge_layers; },
     [](const Job&) { return std::string("BF16 last layers of a quantized job"); }},
    {"bf16_first_layers",
     [](const stack::StackFeatures& f, const Job& j) {
       if (f.bf16_edge_experts || !j.model.moe) return true;
       for (int64_t l = 0; l < j.model.layers; ++l)
         if (bf16_layer(j, l) && j.model.is_moe_layer(l)) return false;
       return true;
     },
     [](const Job&) { return std::string("the routed experts of BF16 first/last MoE layers in BF16"); },
     "keep the BF16 layers to dense ones, or drop --bf16-first-layers / --bf16-last-layers"},
    {"overlap_param_gather",
     [](const stack::StackFeatures& f, const Job& j) { return !j.overlap_param_gather || f.overlap_param_gather; },
     [](const Job&) { return std::string("overlapped parameter all-gather"); }},
    {"fp8_param_gather",
     [](const stack::StackFeatures& f, const Job& j) { return !j.fp8_param_gather || f.fp8_param_gather; },
     [](const Job&) { return std::string("FP8 parameter all-gather"); }},
    {"offload_optimizer",
     [](const stack::StackFeatures& f, const Job& j) { return !j.offload_optimizer || f.offload_optimizer; },
     [](const Job&) { return std::string("optimizer offload"); }},
    {"optimizer_states",
     [](const stack::StackFeatures& f, const Job& j) {
       return j.optimizer_states == OptimizerStates::kFp32 || f.bf16_optimizer_states;
     },
     [](const Job&) { return std::string("bf16 optimizer states"); }},
    {"offload_activations",
     [](const stack::StackFeatures& f, const Job& j) { return !j.offload_activations || f.offload_activations; },
     [](const Job&) { return std::string("activation offload"); }},
    {"dp_shard",
     [](const stack::StackFeatures& f, const Job& j) {
       return j.zero == 0 || j.dp_shard == j.dp_cp() || f.hybrid_shard;
     },
     [](const Job&) { return std::string("hybrid sharding (dp_shard < dp*cp)"); }},
    {"recompute_layers",
     [](const stack::StackFeatures& f, const Job& j) {
       if (j.recompute != Recompute::kFull || f.recompute_layers) return true;
       for (const int64_t l : j.layers)
         if (j.recompute_layers < l) return false;
       return true;
     },
     [](const Job&) { return std::string("partial full recompute (recompute_layers)"); }},
    {"cuda_graph_scope",
     [](const stack::StackFeatures& f, const Job& j) {
       return allows_set(f.cuda_graph_scopes, j.cuda_graphs, cuda_graph_scope_names());
     },
     [](const Job& j) { return "CUDA graphs of " + cuda_graph_scope_string(j.cuda_graphs); }},
    {"pp_layout",
     [](const stack::StackFeatures& f, const Job& j) {
       return f.uneven_layout ||
              std::adjacent_find(j.layers.begin(), j.layers.end(), std::not_equal_to<>()) == j.layers.end();
     },
     [](const Job&) { return std::string("uneven pipeline stages (pp_layout)"); }},
};

}  // namespace

Json with_stack_defaults(const Json& j) {
  if (!j.is_object()) return j;  // the schema reports it
  const Json ref = j.contains("stack") ? j.at("stack") : Json(stack::kDefaultStack);
  if (!ref.is_string() && !ref.is_object()) return j;  // the schema reports it
  const stack::StackSpec s = resolve_stack(ref);
  Json out = j;
  for (auto it = s.defaults.begin(); it != s.defaults.end(); ++it)
    if (!out.contains(it.key())) out[it.key()] = it.value();
  // The precision's own recipe keys (the job's precision, else the defaults', else bf16).
  const Json precision = out.contains("precision") ? out.at("precision") : Json("bf16");
  if (precision.is_string() && s.precision_defaults.contains(precision.get<std::string>())) {
    const Json& keys = s.precision_defaults.at(precision.get<std::string>());
    for (auto it = keys.begin(); it != keys.end(); ++it)
      if (!j.contains(it.key())) out[it.key()] = it.value();
  }
  return out;
}

stack::StackSpec resolve_stack(const Json& ref) {
  stack::StackSpec s = stack::parse_stack(stack_json(ref), "stack");
  // Recipe defaults are job keys: check them against the job schema here, so that a typo in a
  // stack file is reported in the stack, not as an unknown key of the job.
  std::vector<std::string> keys;
  for (const auto& f : job_schema().fields()) keys.push_back(f.key);
  auto check = [&](const Json& defaults, const std::string& at) {
    for (auto it = defaults.begin(); it != defaults.end(); ++it) {
      const bool job_key = std::find(keys.begin(), keys.end(), it.key()) != keys.end();
      // A precision's own defaults cannot change the precision that chose them.
      const bool per_job = it.key() == "stack" || it.key() == "model" || it.key() == "cluster" || it.key() == "gpus" ||
                           (it.key() == "precision" && at != "stack.defaults");
      if (job_key && !per_job) continue;
      const std::string near = sim::config::did_you_mean(it.key(), keys);
      throw ConfigError(
          at + "." + it.key(), "is not a job option a stack can set",
          near.empty() ? "use the job keys of `trainsim config explain`" : "did you mean \"" + near + "\"?");
    }
  };
  check(s.defaults, "stack.defaults");
  for (auto it = s.precision_defaults.begin(); it != s.precision_defaults.end(); ++it)
    check(*it, "stack.precision_defaults." + it.key());
  return s;
}

void apply_calibration_stack(const hardware::Calibration& c, stack::StackSpec& s) {
  if (!c.stack_overrides.contains(s.name)) return;
  const Json& o = c.stack_overrides.at(s.name);
  // Values were range-checked when the calibration was read (hardware/calibration.cpp).
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string& k = it.key();
    const std::string at = "calibration.stack_overrides." + s.name + "." + k;
    if (k == "step_overhead")
      s.step_overhead = sim::config::read_time(*it, at);
    else if (k == "kernels.gemm_scale")
      s.kernels.gemm_scale = it->get<double>();
    else if (k == "kernels.fp8_gemm_scale")
      s.kernels.fp8_gemm_scale = it->get<double>();
    else if (k == "kernels.hopper_attention_fwd_scale")
      s.kernels.hopper_attention_fwd_scale = it->get<double>();
    else if (k == "kernels.hopper_attention_bwd_scale")
      s.kernels.hopper_attention_bwd_scale = it->get<double>();
    else if (k == "memory.allocator_fragmentation")
      s.memory.allocator_fragmentation = it->get<double>();
    const auto src = c.sources.find(s.name + "." + k);
    s.sources[k] = src != c.sources.end() ? src->second : "calibration \"" + c.name + "\"";
  }
}

void apply_stack_kernels(const stack::StackSpec& s, hardware::GpuSpec& gpu) {
  gpu.fp8_gemm_efficiency *= s.kernels.fp8_gemm_scale;
  // The block-scaled formats run through the same Transformer Engine GEMM path (their own
  // efficiencies fall back to the FP8 one, already scaled, when the preset leaves them out).
  if (gpu.mxfp8_gemm_efficiency) *gpu.mxfp8_gemm_efficiency *= s.kernels.fp8_gemm_scale;
  if (gpu.nvfp4_gemm_efficiency) *gpu.nvfp4_gemm_efficiency *= s.kernels.fp8_gemm_scale;
  gpu.gemm_efficiency *= s.kernels.gemm_scale;
  if (gpu.peak_fp8.per_second() <= 0.0) return;  // pre-Hopper: the preset's kernel is FlashAttention-2 class
  const double fwd = gpu.attention_efficiency;
  const double bwd = gpu.attention_bwd_efficiency.value_or(fwd);
  gpu.attention_efficiency = fwd * s.kernels.hopper_attention_fwd_scale;
  gpu.attention_bwd_efficiency = bwd * s.kernels.hopper_attention_bwd_scale;
}

hardware::GpuSpec without_stack_kernels(const stack::StackSpec& s, hardware::GpuSpec gpu) {
  gpu.fp8_gemm_efficiency /= s.kernels.fp8_gemm_scale;
  if (gpu.mxfp8_gemm_efficiency) *gpu.mxfp8_gemm_efficiency /= s.kernels.fp8_gemm_scale;
  if (gpu.nvfp4_gemm_efficiency) *gpu.nvfp4_gemm_efficiency /= s.kernels.fp8_gemm_scale;
  gpu.gemm_efficiency /= s.kernels.gemm_scale;
  if (gpu.peak_fp8.per_second() <= 0.0) return gpu;
  gpu.attention_efficiency /= s.kernels.hopper_attention_fwd_scale;
  if (gpu.attention_bwd_efficiency) *gpu.attention_bwd_efficiency /= s.kernels.hopper_attention_bwd_scale;
  return gpu;
}

std::string stacks_with(bool (*has)(const stack::StackFeatures&, const Job&), const Job& j) {
  std::string out;
  for (const auto& p : presets::list("stacks")) {
    const stack::StackSpec s = stack::parse_stack(presets::find("stacks", p.name, "stack"), "stack");
    if (has(s.features, j)) out += (out.empty() ? "" : ", ") + p.name;
  }
  return out;
}

namespace {
void check(const FeatureCheck& c, const Job& j) {
  if (c.allowed(j.stack.features, j)) return;
  // A check with its own fix is a rule inside one stack: other stacks are no fix for it alone.
  const std::string others = c.fix != nullptr ? std::string() : stacks_with(c.allowed, j);
  std::string fix = c.fix != nullptr ? c.fix : "change " + flag(c.field);
  if (!others.empty()) fix += ", or use --stack " + others;
  throw ConfigError(c.field, "stack " + quoted(j.stack.name) + " (" + j.stack.framework + ") cannot run " + c.what(j),
                    fix);
}
}  // namespace

void check_stack_schedule(const Job& j) { check(kChecks[0], j); }

void check_stack_features(const Job& j) {
  for (const FeatureCheck& c : kChecks) check(c, j);
}

}  // namespace trainsim::models::workload
