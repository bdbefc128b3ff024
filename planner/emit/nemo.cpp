// --emit nemo: nemo_recipe.py, a NeMo 2.0 recipe (nemo.collections.llm + NeMo-Run) for the plan:
// the model's published recipe (or a GPTConfig of its shape) with every parallelism, batch,
// precision and memory setting of the plan written as attribute overrides.
#include <algorithm>
#include <map>

#include "models/llm/recompute_modules.hpp"
#include "planner/emit/detail/format.hpp"
#include "planner/emit/emitter.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::emit {
namespace {

using models::compute::Precision;
using models::workload::Attention;
using models::workload::Job;
using models::workload::OptimizerStates;
using models::workload::Recompute;

std::string str(int64_t v) { return std::to_string(v); }
std::string py(bool b) { return b ? "True" : "False"; }
std::string dq(const std::string& s) { return "\"" + s + "\""; }

// trainsim preset -> NeMo 2.0 recipe module (nemo/collections/llm/recipes/<name>.py), and what
// differs between the two models.
struct Recipe {
  std::string module;
  std::string caveat;
};
const std::map<std::string, Recipe>& recipes() {
  static const std::map<std::string, Recipe> table = {
      {"llama3-8b", {"llama3_8b", ""}},
      {"llama3-70b", {"llama3_70b", ""}},
      {"llama3-405b", {"llama31_405b", "The recipe is Llama 3.1 405B, the same shape as trainsim's llama3-405b."}},
      {"llama2-7b", {"llama2_7b", ""}},
      {"llama3.2-1b", {"llama32_1b", ""}},
      {"gpt3-175b", {"gpt3_175b", ""}},
      {"mixtral-8x7b", {"mixtral_8x7b", ""}},
      {"mixtral-8x22b", {"mixtral_8x22b", ""}},
      {"deepseek-v3",
       {"deepseek_v3",
        "NeMo's DeepSeek-V3 has Multi-head Latent Attention and multi-token prediction, which trainsim approximates "
        "with multi-head attention and leaves out."}},
      {"qwen3-30b-a3b",
       {"qwen3_30b_a3b", "NeMo's Qwen3 also has QK-norm, which trainsim does not model (2 x 128 weights per layer)."}},
      {"qwen3-235b-a22b",
       {"qwen3_235b_a22b",
        "NeMo's Qwen3 also has QK-norm, which trainsim does not model (2 x 128 weights per layer)."}},
  };
  return table;
}

struct Py {
  std::string text;
  void line(const std::string& s = "") { text += s.empty() ? "\n" : "    " + s + "\n"; }
  void set(const std::string& lhs, const std::string& rhs, const std::string& note = "") {
    line(lhs + " = " + rhs + (note.empty() ? "" : "  # " + note));
  }
};

std::string generic_model(const Job& j) {
  const auto& m = j.model;
  std::vector<std::pair<std::string, std::string>> kv = {
      {"num_layers", str(m.layers)},
      {"hidden_size", str(m.hidden)},
      {"ffn_hidden_size", str(m.ffn_hidden)},
      {"num_attention_heads", str(m.heads)},
      {"num_query_groups", str(m.kv_heads_or_heads())},
      {"seq_length", str(j.seq_len)},
      {"normalization", dq(m.norm == "rmsnorm" ? "RMSNorm" : "LayerNorm")},
      {"activation_func", m.activation == "swiglu" ? "F.silu" : "F.gelu"},
      {"gated_linear_unit", py(m.activation == "swiglu")},
      {"position_embedding_type", dq(m.position == "rope" ? "rope" : "learned_absolute")},
      {"share_embeddings_and_output_weights", py(m.tied_embeddings)},
      {"add_bias_linear", py(m.bias)},
      {"hidden_dropout", m.dropout ? "0.1" : "0.0"},
      {"attention_dropout", m.dropout ? "0.1" : "0.0"},
  };
  if (m.moe) {
    kv.push_back({"num_moe_experts", str(m.moe->experts)});
    kv.push_back({"moe_router_topk", str(m.moe->top_k)});
    kv.push_back({"moe_ffn_hidden_size", str(m.moe->expert_ffn_hidden)});
    if (m.moe->shared_experts > 0)
      kv.push_back({"moe_shared_expert_intermediate_size", str(m.moe->shared_experts * m.moe->expert_ffn_hidden)});
  }
  std::string out = "run.Config(\n        GPTModel,\n        config=run.Config(\n            GPTConfig,\n";
  for (const auto& [k, v] : kv) out += "            " + k + "=" + v + ",\n";
  return out + "        ),\n    )";
}

// MXFP8 and NVFP4 in NeMo 2.x, and what NVIDIA's Blackwell recipes (Megatron-Bridge 25.11,
// scripts/performance/configs/llama3) change for them; a stack that targets Megatron-Bridge.
void blackwell_notes(const Job& j, std::vector<std::string>& n) {
  if (j.stack.target.find("/Megatron-Bridge@") != std::string::npos)
    n.push_back("Stack \"" + j.stack.name + "\" targets " + j.stack.target +
                ": this is a NeMo 2.0 recipe (NeMo v2.4.0 names); Megatron-Bridge sets the same Megatron-Core fields "
                "on its ConfigContainer (cfg.model, cfg.ddp, cfg.optimizer) and names its precision "
                "cfg.mixed_precision = \"" +
                (j.precision == Precision::kNvfp4   ? "bf16_with_nvfp4_mixed"
                 : j.precision == Precision::kMxfp8 ? "bf16_with_mxfp8_mixed"
                 : j.precision == Precision::kFp8   ? "bf16_with_fp8_delayed_scaling_mixed"
                 : j.precision == Precision::kFp16  ? "fp16_mixed"
                                                    : "bf16_mixed") +
                "\" (megatron/bridge/training/mixed_precision.py).");
  if (j.precision == Precision::kNvfp4)
    n.push_back(
        "NVFP4: NeMo 2.x has no NVFP4 recipe (v2.4.0's MegatronMixedPrecision has no fp4 fields); "
        "bf16_with_mxfp8_mixed, the nearest, is written: its GEMMs run at MXFP8 rates, not NVFP4's. Megatron-Bridge "
        "25.11 has bf16_with_nvfp4_mixed; --emit megatron writes --fp4-format e2m1 (Megatron-Core 0.15).");
  if (j.precision == Precision::kMxfp8 && j.overlap_param_gather)
    n.push_back(
        "MXFP8 with overlap_param_gather: Megatron-Bridge 25.11's LLaMA-3 MXFP8 recipes turn it off (\"keeping this "
        "enabled causes NaN grad norm\"); if the gradient norm turns NaN, drop it.");
  if (j.precision == Precision::kMxfp8 && !j.fp8_param_gather)
    n.push_back(
        "MXFP8 without fp8_param_gather: Megatron-Core (from 0.14) warns that this \"will use significant amount "
        "additional GPU memory\" (bf16_with_mxfp8_mixed turns it on); check memory before running.");
}

std::vector<std::string> notes(const Job& j, bool has_recipe) {
  std::vector<std::string> n;
  if (!has_recipe)
    n.push_back("NeMo has no recipe for " + j.model.name +
                ": the llama3_8b recipe supplies trainer, data, optimizer and logging, and the model is a GPTConfig "
                "of trainsim's shape (vocabulary from the tokenizer of your data module).");
  else if (!recipes().at(j.model.name).caveat.empty())
    n.push_back(recipes().at(j.model.name).caveat);
  if (j.pp > 1) {
    const std::string& s = j.schedule;
    if (s == "gpipe") n.push_back("Schedule gpipe: NeMo (Megatron-Core) runs 1F1B, with the same bubble.");
    if (s == "zb-h1" || s == "zb-h2") n.push_back("Schedule " + s + ": no zero-bubble schedule in NeMo; 1F1B runs.");
    if (s == "zb-v")
      n.push_back("Schedule zb-v: no V-shape placement or zero-bubble schedule in NeMo; interleaved 1F1B with vp = 2.");
    if (s == "breadth-first")
      n.push_back("Schedule breadth-first: not in NeMo; interleaved 1F1B with the same vp runs.");
  }
  if (j.cp > 1 && detail::cp_algorithm(j) == "hybrid")
    n.push_back("Hybrid CP (a2a+p2p) also needs hierarchical_context_parallel_sizes = [" + str(j.cp_ulysses) + ", " +
                str(j.cp / j.cp_ulysses) +
                "] passed to Megatron-Core's initialize_model_parallel; check that your NeMo "
                "version forwards it.");
  if (j.zero == 3 && !j.reshard_after_forward)
    n.push_back("reshard_after_forward = false has no Megatron FSDP switch (optim_grads is the nearest).");
  if (j.zero == 1 && j.dp_shard != j.dp_cp())
    n.push_back("HSDP shard groups of " + str(j.dp_shard) +
                " ranks: num_distributed_optimizer_instances must also reach initialize_model_parallel; check that "
                "your NeMo version forwards it.");
  if (j.zero == 3 && j.dp_shard != j.dp_cp())
    n.push_back("Shard groups of " + str(j.dp_shard) +
                " ranks (HSDP) with Megatron FSDP: written as full sharding; check your version's HSDP support.");
  if (j.offload_activations && !(j.pp == 1 && j.recompute == Recompute::kNone))
    n.push_back(
        "Activation offload is not expressible: Megatron-Core's cpu_offloading supports neither pipeline "
        "parallelism nor recomputation.");
  if (j.dp_comm_weight != 1.0) n.push_back("dp_comm_weight (priority of data-parallel traffic) has no NeMo setting.");
  if (!j.scatter_gather && j.pp > 1) n.push_back("scatter_gather = false has no NeMo setting.");
  if (j.model.moe && j.precision == Precision::kFp16)
    n.push_back("MoE in FP16: Megatron-Core's expert parallelism and grouped GEMMs need BF16.");
  blackwell_notes(j, n);
  return n;
}

// The NeMo side of the plan's precision: mixed-precision plugin, and whether it is BF16.
struct NemoPrecision {
  bool bf16 = true;
  std::string dtype;   // torch dtype of pipeline communication
  std::string plugin;  // nemo.collections.llm.recipes.precision.mixed_precision factory
};
// NeMo v2.4.0's factories (nemo/collections/llm/recipes/precision/mixed_precision.py): FP8 delayed
// scaling, FP8 current scaling (fp8_recipe "tensorwise", with one BF16 layer at each end by
// default), MXFP8 (fp8 "hybrid", fp8_recipe "mxfp8"); no NVFP4, which gets MXFP8 and a note.
NemoPrecision nemo_precision(const Job& j) {
  const bool bf16 = j.precision != Precision::kFp16;
  const std::string dtype = bf16 ? "torch.bfloat16" : "torch.float16";
  std::string plugin = bf16 ? "bf16_mixed" : "fp16_mixed";
  // Per-tensor FP8 as the plan's stack scales it: delayed, or current (tensorwise).
  if (j.precision == Precision::kFp8)
    plugin = j.stack.kernels.fp8_recipe == "current" ? "bf16_with_fp8_current_scaling_mixed" : "bf16_with_fp8_mixed";
  if (j.precision == Precision::kMxfp8 || j.precision == Precision::kNvfp4) plugin = "bf16_with_mxfp8_mixed";
  return {bf16, dtype, plugin};
}

// MXFP8 with its weights kept and all-gathered in MXFP8: the all-gather reuses the gradient buffer
// (Megatron-Core >= 0.13 DDP and optimizer field, which Megatron-Bridge's bf16_with_mxfp8_mixed
// sets and NeMo's plugin does not carry). The DDP config asserts fp8_param_gather with it.
bool reuse_grad_buf(const Job& j) { return j.fp8_param_gather && j.precision != Precision::kFp8; }

// The comment block at the top: plan header, how to run, and what NeMo cannot express.
std::string file_header(const Job& j, const std::string& module, bool has_recipe) {
  const detail::LaunchShape shape = detail::launch_shape(j);
  std::string out = detail::comment(
      detail::header(j, "nemo", "NeMo 2.0 recipe (nemo.collections.llm " + module + " recipe with overrides)."), "# ");
  out += "#\n";
  out +=
      detail::comment({"Run: python nemo_recipe.py (NeMo-Run LocalExecutor on one node); on the cluster's " +
                       str(shape.nodes) + " nodes pass an executor of yours, such as run.SlurmExecutor, to run.run."},
                      "# ");
  out += "#\n";
  const auto n = notes(j, has_recipe);
  out += n.empty() ? detail::comment({"Everything in this plan maps onto NeMo settings."}, "# ")
                   : detail::bullets("Not expressible in NeMo, or to check:", n, "# ");
  return out;
}

std::string imports(const Job& j, bool has_recipe, const std::string& plugin) {
  std::string out;
  out += "\nimport nemo_run as run\nimport torch\n";
  if (!has_recipe) out += "import torch.nn.functional as F\n";
  out += "from megatron.core.distributed import DistributedDataParallelConfig\n";
  out += "from megatron.core.transformer.enums import AttnBackend\n\n";
  out += "from nemo.collections import llm\n";
  if (!has_recipe) out += "from nemo.collections.llm.gpt.model.base import GPTConfig, GPTModel\n";
  out += "from nemo.collections.llm.recipes.precision.mixed_precision import " + plugin + "\n";
  if (j.tp_comm_overlap && j.tp > 1)
    out += "from nemo.lightning.pytorch.callbacks.megatron_comm_overlap import MegatronCommOverlapCallback\n";
  return out;
}

// recipe.model for a model without a NeMo recipe.
void set_generic_model(Py& p, const Job& j) {
  p.line();
  p.line("# Model: trainsim's " + j.model.name + " (no NeMo recipe)");
  p.set("recipe.model", generic_model(j));
}

// tp, pp, vp, cp, sp, ep, the pipeline layout, the CP algorithm and the MoE dispatcher.
void set_parallelism(Py& p, const Job& j, const NemoPrecision& prec) {
  const auto& m = j.model;
  p.line();
  p.line("# Parallelism: tp x cp x pp x dp = " + str(j.tp) + " x " + str(j.cp) + " x " + str(j.pp) + " x " + str(j.dp));
  p.line("strategy = recipe.trainer.strategy");
  p.set("strategy.tensor_model_parallel_size", str(j.tp));
  p.set("strategy.pipeline_model_parallel_size", str(j.pp));
  p.set("strategy.virtual_pipeline_model_parallel_size", j.vp > 1 ? str(j.vp) : "None");
  p.set("strategy.context_parallel_size", str(j.cp));
  p.set("strategy.sequence_parallel", py(j.sp));
  p.set("strategy.pipeline_dtype", prec.dtype);
  if (m.moe) {
    p.set("strategy.expert_model_parallel_size", str(j.ep));
    p.set("strategy.expert_tensor_parallel_size", str(j.etp));
  }
  const detail::PipelineLayout layout = detail::pipeline_layout(j);
  if (layout.kind == detail::LayoutKind::kFirstLast) {
    if (layout.first_differs) p.set("recipe.model.config.num_layers_in_first_pipeline_stage", str(layout.first_layers));
    if (layout.last_differs) p.set("recipe.model.config.num_layers_in_last_pipeline_stage", str(layout.last_layers));
  }
  if (layout.kind == detail::LayoutKind::kCustom)
    p.set("recipe.model.config.pipeline_model_parallel_layout", dq(detail::megatron_layout(j)),
          "layers per virtual stage " + detail::layer_list(j) + " (Megatron-Core >= 0.13)");
  if (j.cp > 1)
    p.set("recipe.model.config.cp_comm_type", dq(detail::cp_algorithm(j) == "ring"      ? "p2p"
                                                 : detail::cp_algorithm(j) == "ulysses" ? "a2a"
                                                                                        : "a2a+p2p"));
  if (m.moe) {
    p.set("recipe.model.config.moe_token_dispatcher_type", dq(models::workload::to_string(j.moe_dispatcher)));
    if (j.moe_dispatcher == models::llm::MoeDispatcher::kFlex)
      p.set("recipe.model.config.moe_enable_deepep", "True", "DeepEP fused dispatch/combine");
    if (j.moe_balance == models::llm::MoeBalance::kAuxFree) {
      p.set("recipe.model.config.moe_router_load_balancing_type", dq("none"), "no auxiliary loss");
      p.set("recipe.model.config.moe_router_enable_expert_bias", "True", "auxiliary-loss-free balancing");
      p.set("recipe.model.config.moe_router_score_function", dq("sigmoid"), "expert bias requires it");
    } else {
      p.set("recipe.model.config.moe_router_load_balancing_type", dq("aux_loss"));
    }
    p.set("recipe.model.config.moe_grouped_gemm", py(prec.bf16));
    p.set("recipe.model.config.moe_expert_capacity_factor",
          m.moe->capacity_factor ? detail::fmt_float(*m.moe->capacity_factor) : "None", "None = dropless");
    if (m.moe->capacity_factor && m.moe->pad_to_capacity)
      p.set("recipe.model.config.moe_pad_expert_input_to_capacity", "True");
  }
}

// ZeRO stage, DDP bucket and overlap settings, Megatron FSDP.
void set_data_parallel(Py& p, const Job& j, const NemoPrecision& prec) {
  p.line();
  p.line("# Data parallelism: ZeRO " + str(j.zero));
  std::vector<std::pair<std::string, std::string>> ddp = {
      {"check_for_nan_in_grad", "True"},
      {"grad_reduce_in_fp32", py(prec.bf16)},
      {"overlap_grad_reduce", py(j.overlap_grad_reduce || j.overlap_param_gather)},
      {"overlap_param_gather", py(j.overlap_param_gather)},
      {"use_distributed_optimizer", py(j.zero >= 1)},
  };
  if (j.zero < 3) ddp.push_back({"bucket_size", str(j.bucket_size.count() / 4)});
  if (j.zero == 3) ddp.push_back({"data_parallel_sharding_strategy", dq("optim_grads_params")});
  if (j.zero == 1 && j.dp_shard != j.dp_cp())
    ddp.push_back({"num_distributed_optimizer_instances", str(j.dp_cp() / j.dp_shard)});
  if (reuse_grad_buf(j)) {
    ddp.push_back({"fp8_param_gather", "True"});
    ddp.push_back({"reuse_grad_buf_for_mxfp8_param_ag", "True"});
  }
  std::string ddp_text = "run.Config(\n        DistributedDataParallelConfig,\n";
  for (const auto& [k, v] : ddp) ddp_text += "        " + k + "=" + v + ",\n";
  p.set("strategy.ddp", ddp_text + "    )");
  if (j.zero == 3) {
    p.set("strategy.fsdp", dq("megatron"), "Megatron FSDP (ZeRO-3)");
    p.set("recipe.model.config.init_model_with_meta_device", "True");
    p.set("recipe.model.config.gradient_accumulation_fusion", "False");
  }
  p.set("recipe.optim.config.use_distributed_optimizer", py(j.zero >= 1));
}

void set_batch(Py& p, const Job& j) {
  p.line();
  p.line("# Batch: " + str(j.microbatches) + " micro-batches per pipeline per iteration");
  p.set("recipe.data.seq_length", str(j.seq_len));
  p.set("recipe.model.config.seq_length", str(j.seq_len));
  p.set("recipe.data.micro_batch_size", str(j.micro_batch));
  p.set("recipe.data.global_batch_size", str(j.global_batch));
}

void set_precision(Py& p, const Job& j, const NemoPrecision& prec) {
  p.line();
  p.line("# Precision");
  p.set("recipe.trainer.plugins", prec.plugin + "()");
  if (models::compute::quantized(j.precision)) p.set("recipe.trainer.plugins.fp8_param_gather", py(j.fp8_param_gather));
  if (reuse_grad_buf(j)) p.set("recipe.optim.config.reuse_grad_buf_for_mxfp8_param_ag", "True");
  // BF16 first/last layers as the plan has them (the current-scaling plugin keeps one at each end
  // unless told otherwise).
  const bool edges = j.bf16_first_layers > 0 || j.bf16_last_layers > 0;
  if (edges || prec.plugin == "bf16_with_fp8_current_scaling_mixed")
    p.set("recipe.trainer.plugins.first_last_layers_bf16", py(edges));
  if (edges) {
    p.set("recipe.trainer.plugins.num_layers_at_start_in_bf16", str(j.bf16_first_layers));
    p.set("recipe.trainer.plugins.num_layers_at_end_in_bf16", str(j.bf16_last_layers));
  }
  p.set("recipe.optim.config.bf16", py(prec.bf16));
  p.set("recipe.optim.config.fp16", py(!prec.bf16));
  p.set("recipe.model.config.attention_backend",
        j.attention == Attention::kFlash ? "AttnBackend.flash" : "AttnBackend.unfused");
}

void set_recompute_and_offload(Py& p, const Job& j) {
  p.line();
  p.line("# Activation recomputation and offload");
  if (j.recompute == Recompute::kNone) {
    p.set("recipe.model.config.recompute_granularity", "None");
    p.set("recipe.model.config.recompute_method", "None");
    p.set("recipe.model.config.recompute_num_layers", "None");
  } else if (j.recompute == Recompute::kSelective) {
    const bool core_only = j.recompute_modules == models::llm::kRecomputeCoreAttn;
    p.set("recipe.model.config.recompute_granularity", dq("selective"), core_only ? "core attention" : "");
    if (!core_only) {
      std::string list;
      const auto& names = models::llm::recompute_module_names();
      for (size_t i = 0; i < names.size(); ++i)
        if (j.recompute_modules & (1u << i)) list += (list.empty() ? "" : ", ") + dq(names[i]);
      p.set("recipe.model.config.recompute_modules", "[" + list + "]");
    }
    p.set("recipe.model.config.recompute_method", "None");
    p.set("recipe.model.config.recompute_num_layers", "None");
  } else {
    const int64_t largest = *std::max_element(j.layers.begin(), j.layers.end());
    const bool all = j.recompute_layers >= largest;
    p.set("recipe.model.config.recompute_granularity", dq("full"));
    p.set("recipe.model.config.recompute_method", dq(all ? "uniform" : "block"));
    p.set("recipe.model.config.recompute_num_layers", all ? "1" : str(j.recompute_layers));
  }
  if (j.offload_optimizer || j.optimizer_states == OptimizerStates::kBf16)
    p.set("recipe.optim.config.use_precision_aware_optimizer", "True");
  if (j.optimizer_states == OptimizerStates::kBf16) {
    p.set("recipe.optim.config.exp_avg_dtype", "torch.bfloat16");
    p.set("recipe.optim.config.exp_avg_sq_dtype", "torch.bfloat16");
  }
  if (j.offload_optimizer) {
    p.set("recipe.optim.config.optimizer_cpu_offload", "True");
    p.set("recipe.optim.config.optimizer_offload_fraction", "1.0");
    p.set("recipe.optim.config.overlap_cpu_optimizer_d2h_h2d", "True");
  }
  if (j.offload_activations && j.pp == 1 && j.recompute == Recompute::kNone) {
    p.set("recipe.model.config.cpu_offloading", "True");
    p.set("recipe.model.config.cpu_offloading_num_layers", str(j.model.layers - 1));
  }
}

// MegatronCommOverlapCallback, when the plan overlaps tensor-parallel communication.
void add_tp_comm_overlap(Py& p, const Job& j) {
  if (!(j.tp_comm_overlap && j.tp > 1)) return;
  p.line();
  p.line("# Tensor-parallel communication overlap (Transformer Engine userbuffers)");
  p.line("if recipe.trainer.callbacks is None:");
  p.line("    recipe.trainer.callbacks = []");
  p.line("recipe.trainer.callbacks.append(");
  p.line("    run.Config(");
  p.line("        MegatronCommOverlapCallback,");
  p.line("        tp_comm_overlap=True,");
  p.line("        overlap_grad_reduce=" + py(j.overlap_grad_reduce || j.overlap_param_gather) + ",");
  p.line("        overlap_param_gather=" + py(j.overlap_param_gather) + ",");
  if (j.vp > 1) p.line("        overlap_p2p_comm=" + py(j.overlap_p2p) + ",");
  p.line("    )");
  p.line(")");
}

// The body of trainsim_recipe(): the recipe with the plan's overrides.
std::string recipe_body(const Job& j, const std::string& module, bool has_recipe, const NemoPrecision& prec) {
  Py p;
  p.line("recipe = llm." + module +
         ".pretrain_recipe(name=name, dir=log_dir, num_nodes=NUM_NODES, num_gpus_per_node=GPUS_PER_NODE)");
  if (!has_recipe) set_generic_model(p, j);
  set_parallelism(p, j, prec);
  set_data_parallel(p, j, prec);
  set_batch(p, j);
  set_precision(p, j, prec);
  set_recompute_and_offload(p, j);
  add_tp_comm_overlap(p, j);
  p.line("return recipe");
  return p.text;
}

std::vector<EmittedFile> emit_nemo(const Job& j) {
  if (j.zero == 2)
    throw ConfigError("zero",
                      "ZeRO-2 is not expressible in NeMo: Megatron-Core's distributed optimizer shards only optimizer "
                      "states (ZeRO-1) and keeps a full gradient buffer per rank",
                      "use --zero 1, or --emit deepspeed");
  const auto it = recipes().find(j.model.name);
  const bool has_recipe = it != recipes().end();
  const std::string module = has_recipe ? it->second.module : "llama3_8b";
  const detail::LaunchShape shape = detail::launch_shape(j);
  const NemoPrecision prec = nemo_precision(j);

  std::string out = file_header(j, module, has_recipe);
  out += imports(j, has_recipe, prec.plugin);
  out += "\nNUM_NODES = " + str(shape.nodes) + "\nGPUS_PER_NODE = " + str(shape.procs_per_node) + "\n\n\n";
  out +=
      "def trainsim_recipe(name: str = \"trainsim_plan\", log_dir: str = \"/checkpoints/trainsim_plan\") -> "
      "run.Partial:\n";
  out += recipe_body(j, module, has_recipe, prec);
  out += "\n\nif __name__ == \"__main__\":\n";
  out += "    executor = run.LocalExecutor(ntasks_per_node=GPUS_PER_NODE, launcher=\"torchrun\")\n";
  out += "    run.run(trainsim_recipe(), executor=executor, name=\"trainsim_plan\")\n";
  return {EmittedFile{"nemo_recipe.py", out, false}};
}

}  // namespace
}  // namespace trainsim::planner::emit

TRAINSIM_REGISTER_EMITTER(nemo, "nemo", "NeMo 2.0 recipe override (nemo_recipe.py: nemo.collections.llm + NeMo-Run)",
                          ::trainsim::planner::emit::emit_nemo)
