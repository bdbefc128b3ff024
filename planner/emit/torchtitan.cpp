// --emit torchtitan: torchtitan.toml, a torchtitan job config (the TOML schema of late 2025:
// [model] hf_assets_path, [compile], [parallelism] module_fqns_per_model_part) for the plan.
// torchtitan composes FSDP2 / HSDP, TP (async TP under torch.compile), PP with the
// torch.distributed.pipelining schedules, CP (ring attention) and EP.
#include <map>

#include "models/llm/recompute_modules.hpp"
#include "models/workload/job/bf16_layers.hpp"
#include "planner/emit/detail/format.hpp"
#include "planner/emit/emitter.hpp"

namespace trainsim::planner::emit {
namespace {

using models::compute::Precision;
using models::workload::Attention;
using models::workload::Job;
using models::workload::Recompute;

std::string str(int64_t v) { return std::to_string(v); }
std::string toml(bool b) { return b ? "true" : "false"; }
std::string dq(const std::string& s) { return "\"" + s + "\""; }

struct Flavor {
  std::string name, flavor, assets;
};
// trainsim preset -> torchtitan model name and flavor (torchtitan/models/<name>), and the
// Hugging Face assets (tokenizer) the shipped configs point at.
const std::map<std::string, Flavor>& flavors() {
  static const std::map<std::string, Flavor> table = {
      {"llama3-8b", {"llama3", "8B", "./assets/hf/Llama-3.1-8B"}},
      {"llama3-70b", {"llama3", "70B", "./assets/hf/Llama-3.1-70B"}},
      {"llama3-405b", {"llama3", "405B", "./assets/hf/Llama-3.1-405B"}},
      {"deepseek-v3", {"deepseek_v3", "671B", "./assets/hf/DeepSeek-V3.1-Base"}},
  };
  return table;
}

// torch.distributed.pipelining schedule names (get_schedule_class).
std::string schedule_class(const Job& j) {
  const std::string& s = j.schedule;
  if (s == "gpipe") return "GPipe";
  if (s == "interleaved") return "Interleaved1F1B";
  if (s == "breadth-first") return "LoopedBFS";
  if (s == "zb-v") return "ZBVZeroBubble";
  return "1F1B";  // 1f1b, and zb-h1 / zb-h2 (no single-stage zero-bubble schedule)
}

// FQNs of each virtual stage in model order: the embedding on the first, norm and head on the last.
std::string model_parts(const Job& j) {
  std::string out = "[\n";
  int64_t layer = 0;
  for (size_t vs = 0; vs < j.layers.size(); ++vs) {
    std::vector<std::string> fqns;
    if (vs == 0) fqns.push_back("tok_embeddings");
    for (int64_t k = 0; k < j.layers[vs]; ++k) fqns.push_back("layers." + str(layer++));
    if (vs + 1 == j.layers.size()) {
      fqns.push_back("norm");
      fqns.push_back("output");
    }
    out += "  [";
    for (size_t i = 0; i < fqns.size(); ++i) {
      if (i) out += ", ";
      out += dq(fqns[i]);
    }
    out += "],\n";
  }
  return out + "]";
}

// Data-parallel mesh: (replicate, shard, reshard policy) and why, when it is not exact.
struct DpMesh {
  int64_t replicate = 1, shard = 1;
  std::string reshard = "default";
};
DpMesh dp_mesh(const Job& j, std::vector<std::string>& notes) {
  DpMesh d;
  if (j.zero == 0) {
    if (j.tp == 1 && j.pp == 1 && j.cp == 1) {
      d.replicate = j.dp;
      return d;
    }
    notes.push_back(
        "ZeRO 0 (plain data parallelism): torchtitan's DDP does not compose with TP/PP/CP, so the data "
        "dimension is FSDP without resharding after forward (ZeRO-2-like: less memory, same traffic).");
    d.shard = j.dp;
    d.reshard = "never";
    return d;
  }
  if (j.zero < 3)
    notes.push_back("ZeRO-" + str(j.zero) +
                    ": torchtitan has no ZeRO-1/2 optimizer; FSDP2 without resharding after forward (ZeRO-2-like "
                    "traffic, weights sharded between steps) is the nearest.");
  if (j.dp_shard % j.cp != 0) {
    notes.push_back("Shard group " + str(j.dp_shard) + " does not contain whole CP groups of " + str(j.cp) +
                    " (torchtitan shards over data_parallel_shard_degree x context_parallel_degree); full sharding "
                    "is written.");
    d.shard = j.dp;
  } else {
    d.shard = j.dp_shard / j.cp;
    d.replicate = j.dp / d.shard;
  }
  d.reshard = j.zero == 3 && j.reshard_after_forward ? "always" : "never";
  return d;
}

// Blackwell's block-scaled formats through torchao's MX converters (torchtitan v0.2.1,
// components/quantization/mx.py): MXFP8 only; NVFP4 (an NVFP4Linear converter) reached
// torchtitan's main branch in 2026, after v0.2.2, so an NVFP4 plan gets MXFP8 and a note.
bool mx(const Job& j) { return j.precision == Precision::kMxfp8 || j.precision == Precision::kNvfp4; }

void quantize_notes(const Job& j, std::vector<std::string>& notes) {
  if (j.precision == Precision::kNvfp4)
    notes.push_back(
        "NVFP4: torchtitan v0.2.1 has no NVFP4 training (its MX converters are MXFP8 only); MXFP8 "
        "(quantize.linear.mx), the nearest, is written: its GEMMs run at MXFP8 rates, not NVFP4's.");
  // A plan of the torchtitan stack cannot reach the first two (stack features
  // mxfp8_tp_refuses_compile, async_tp_needs_compile); a plan of another stack written for
  // torchtitan can.
  if (mx(j) && j.tp > 1 && (j.torch_compile || j.tp_comm_overlap))
    notes.push_back(std::string("MXFP8 with tp ") + str(j.tp) +
                    ": torchtitan v0.2.1 refuses torch.compile of the model with TP and MXFP8, so "
                    "[compile] is off" +
                    (j.tp_comm_overlap ? " and async TP (which needs it) is not written" : "") +
                    "; the element-wise kernels run eager (slower than the plan assumes).");
  if (mx(j) && !j.torch_compile && j.tp == 1)
    notes.push_back(
        "MXFP8 without torch.compile (as the plan is priced): torchtitan warns that its MXFP8 casts need "
        "[compile] for their best speed; plan with torch_compile to price and write it.");
  if (j.model.moe && mx(j) && (j.bf16_first_layers > 0 || j.bf16_last_layers > 0))
    notes.push_back(
        "BF16 first/last layers of a MoE model: filter_fqns keeps their attention and dense GEMMs BF16, but "
        "quantize.grouped_mm.mx converts every \"experts\" module, theirs too.");
  if (mx(j) && j.fp8_param_gather)
    notes.push_back(
        "MXFP8 parameter all-gather: torchtitan's MX converter has no MXFP8 FSDP all-gather; FSDP2 "
        "gathers BF16 weights.");
}

// model.converters for the plan's quantized precision ("" when none).
std::string converters(const Job& j) {
  if (j.precision == Precision::kFp8) return "converters = [\"quantize.linear.float8\"]\n";
  if (!mx(j)) return "";
  if (j.model.moe) return "converters = [\"quantize.linear.mx\", \"quantize.grouped_mm.mx\"]\n";
  return "converters = [\"quantize.linear.mx\"]\n";
}

// The modules the linear converters skip: the LM head, and the BF16 first / last blocks
// (torchao matches each entry as a substring of the module's name: "layers.1." is block 1 only).
std::string filter_fqns(const Job& j) {
  std::string out = "[\"output\"";
  for (int64_t l = 0; l < j.model.layers; ++l)
    if (models::workload::bf16_layer(j, l)) out += ", \"layers." + str(l) + ".\"";
  return out + "]";
}

// The [quantize.*] sections of the converters.
std::string quantize_sections(const Job& j) {
  std::string out;
  if (j.precision == Precision::kFp8) {
    out += "\n[quantize.linear.float8]\nrecipe_name = \"tensorwise\"\n";
    out += "enable_fsdp_float8_all_gather = " + toml(j.fp8_param_gather) + "\n";
    out += "precompute_float8_dynamic_scale_for_fsdp = " + toml(j.fp8_param_gather) + "\n";
    out += "filter_fqns = " + filter_fqns(j) + "\n";
  }
  if (mx(j)) {
    out += "\n[quantize.linear.mx]  # torchao MXLinear: 32-element blocks, E8M0 scales (SM100)\n";
    out += "recipe_name = \"mxfp8_cublas\"\n";
    out += "mxfp8_dim1_cast_kernel_choice = \"cuda\"  # torchtitan's recommendation for speed\n";
    out += "filter_fqns = " + filter_fqns(j) +
           (j.bf16_first_layers + j.bf16_last_layers > 0 ? "  # BF16: the LM head and the BF16 first/last blocks\n"
                                                         : "  # the LM head stays BF16\n");
  }
  if (mx(j) && j.model.moe)
    out +=
        "\n[quantize.grouped_mm.mx]\nrecipe_name = \"mxfp8\"\nfqns = [\"experts\"]  # routed experts' grouped GEMMs\n";
  return out;
}

std::vector<EmittedFile> emit_torchtitan(const Job& j) {
  const auto& m = j.model;
  std::vector<std::string> notes;
  const auto it = flavors().find(m.name);
  const bool llama_like = !m.moe && m.activation == "swiglu" && m.norm == "rmsnorm" && m.position == "rope" && !m.bias;
  Flavor f = it != flavors().end() ? it->second : Flavor{"llama3", "trainsim_custom", "./assets/hf/your-tokenizer"};
  if (it == flavors().end()) {
    if (llama_like)
      notes.push_back("torchtitan has no flavor for " + m.name +
                      ": register \"trainsim_custom\" in "
                      "torchtitan/models/llama3 with dim " +
                      str(m.hidden) + ", n_layers " + str(m.layers) + ", n_heads " + str(m.heads) + ", n_kv_heads " +
                      str(m.kv_heads_or_heads()) + ", vocab_size " + str(m.vocab) + " and an FFN width of " +
                      str(m.ffn_hidden) + " (torchtitan derives it from ffn_dim_multiplier and multiple_of).");
    else
      notes.push_back("torchtitan has no model of " + m.name + "'s architecture (" + m.activation + ", " + m.norm +
                      ", " + m.position + " positions" + (m.moe ? ", MoE" : "") + (m.bias ? ", biases" : "") +
                      "); the [model] section is a placeholder.");
  }
  if (j.precision == Precision::kFp16) notes.push_back("FP16: torchtitan trains in BF16 or FP32; BF16 is written.");
  quantize_notes(j, notes);
  if (j.sp == false && j.tp > 1)
    notes.push_back("Sequence parallelism off: torchtitan's tensor parallelism always shards norms over the sequence.");
  if (j.attention == Attention::kUnfused) notes.push_back("Unfused attention: torchtitan uses SDPA (fused) attention.");
  if (j.pp > 1 && (j.schedule == "zb-h1" || j.schedule == "zb-h2"))
    notes.push_back("Schedule " + j.schedule +
                    ": torch.distributed.pipelining's zero-bubble schedules are multi-stage (InterleavedZeroBubble, "
                    "ZBVZeroBubble); 1F1B is written. InterleavedZeroBubble with two stages per rank is the nearest.");
  if (j.cp > 1 && detail::cp_algorithm(j) != "ring")
    notes.push_back("Context parallelism " + detail::cp_algorithm(j) +
                    ": torchtitan has ring attention only; context_parallel_degree " + str(j.cp) + " runs the ring.");
  if (j.recompute == Recompute::kSelective && j.recompute_modules != models::llm::kRecomputeOps)
    notes.push_back("Selective recompute of " + models::llm::recompute_modules_string(j.recompute_modules) +
                    " (Megatron-Core's modules): torchtitan has per-op selective checkpointing (\"op\"), which "
                    "keeps every other matmul output and recomputes the rest; its memory and time differ.");
  if (j.recompute == Recompute::kFull) {
    bool partial = false;
    for (const int64_t l : j.layers) partial = partial || j.recompute_layers < l;
    if (partial)
      notes.push_back("Recompute of the first " + str(j.recompute_layers) +
                      " layers of each chunk: torchtitan recomputes every layer (or every n-th with a selective int "
                      "option); full is written.");
  }
  if (j.offload_optimizer)
    notes.push_back(
        "Optimizer offload: torchtitan's enable_cpu_offload is FSDP2 CPU offload of parameters, gradients "
        "and optimizer states (more traffic than ZeRO-Offload).");
  if (j.offload_activations) notes.push_back("Activation offload: no torchtitan option.");
  if (!j.overlap_grad_reduce) notes.push_back("overlap_grad_reduce = false: FSDP2 always overlaps its reduce-scatter.");
  if (j.prefetch_layers != 1 && j.zero == 3)
    notes.push_back("prefetch_layers = " + str(j.prefetch_layers) + ": FSDP2 prefetches one module ahead.");
  if (j.dp_comm_weight != 1.0) notes.push_back("dp_comm_weight has no torchtitan option.");
  if (m.moe && j.etp != 1 && j.etp != j.tp)
    notes.push_back("etp = " + str(j.etp) +
                    ": torchtitan supports expert tensor parallelism of 1 or tp; tp is written.");
  if (m.moe && j.etp == 1 && j.tp > 1)
    notes.push_back("Expert tensor parallelism 1 with tp " + str(j.tp) +
                    ": torchtitan then folds the TP ranks into the expert-parallel group (ep a multiple of cp x tp); "
                    "check expert_parallel_degree against that.");
  if (m.moe && j.moe_dispatcher != models::llm::MoeDispatcher::kAllToAll)
    notes.push_back(std::string("Token dispatcher ") + models::workload::to_string(j.moe_dispatcher) +
                    ": torchtitan v0.1.0 dispatches by all-to-all only (DeepEP came later, "
                    "parallelism.expert_parallel_comm_backend).");
  if (m.moe && j.moe_balance == models::llm::MoeBalance::kAuxLoss)
    notes.push_back(
        "Load balancing aux_loss: torchtitan's MoE balances with the expert bias (load_balance_coeff, "
        "auxiliary-loss-free) instead.");
  if (m.moe && it == flavors().end())
    notes.push_back("MoE shape (experts, top-k, capacity) comes from the torchtitan flavor, not from this file.");

  const DpMesh dp = dp_mesh(j, notes);
  const bool async_tp = j.tp_comm_overlap && j.tp > 1 && !mx(j);
  // torch.compile of the model as the plan has it; async TP needs it (only a plan of another stack
  // has async TP without it: noted), and MXFP8 refuses it with TP.
  const bool compile = (j.torch_compile && !(mx(j) && j.tp > 1)) || async_tp;
  if (async_tp && !j.torch_compile)
    notes.push_back(
        "Async TP needs torch.compile in torchtitan: [compile] is on, which the plan (priced eager) is not.");
  const detail::LaunchShape shape = detail::launch_shape(j);

  std::string out = detail::comment(detail::header(j, "torchtitan", "torchtitan job config (TOML)."), "# ");
  out += "#\n";
  out += detail::comment({"Run: NGPU=" + str(shape.procs_per_node) +
                          " CONFIG_FILE=./torchtitan.toml ./run_train.sh on "
                          "each of the " +
                          str(shape.nodes) + " nodes (or torchrun --nnodes " + str(shape.nodes) + " --nproc-per-node " +
                          str(shape.procs_per_node) + " -m torchtitan.train --job.config_file torchtitan.toml)."},
                         "# ");
  out += "#\n";
  out += notes.empty() ? detail::comment({"Everything in this plan maps onto torchtitan options."}, "# ")
                       : detail::bullets("Not expressible in torchtitan, or to check:", notes, "# ");

  out += "\n[job]\ndump_folder = \"./outputs\"\ndescription = " + dq("trainsim plan: " + m.name) + "\n";
  out += "\n[model]\nname = " + dq(f.name) + "\nflavor = " + dq(f.flavor) + "\nhf_assets_path = " + dq(f.assets) + "\n";
  out += converters(j);
  out += "\n[optimizer]  # placeholders, not chosen by trainsim\nname = \"AdamW\"\nlr = 3e-4\neps = 1e-8\n";
  out += "\n[lr_scheduler]\nwarmup_steps = 100\n";
  const int64_t local_batch = j.pp > 1 ? j.micro_batch * j.microbatches : j.micro_batch;
  out += "\n[training]\n";
  out += "local_batch_size = " + str(local_batch) + "  # per data-parallel rank" +
         (j.pp > 1 ? ": " + str(j.microbatches) + " micro-batches of " + str(j.micro_batch) : std::string()) + "\n";
  out += "global_batch_size = " + str(j.global_batch) + "\n";
  out += "seq_len = " + str(j.seq_len) + "\n";
  out += "max_norm = 1.0\nsteps = 1000\ndataset = \"c4\"\n";
  out += "mixed_precision_param = \"bfloat16\"\nmixed_precision_reduce = \"float32\"\n";
  if (j.offload_optimizer) out += "enable_cpu_offload = true\n";

  out += "\n[parallelism]\n";
  out += "data_parallel_replicate_degree = " + str(dp.replicate) + "\n";
  out += "data_parallel_shard_degree = " + str(dp.shard) + "\n";
  out += "fsdp_reshard_after_forward = " + dq(dp.reshard) + "\n";
  out += "tensor_parallel_degree = " + str(j.tp) + "\n";
  if (async_tp) out += "enable_async_tensor_parallel = true  # needs [compile] enable\n";
  out += "pipeline_parallel_degree = " + str(j.pp) + "\n";
  if (j.pp > 1) {
    out += "pipeline_parallel_schedule = " + dq(schedule_class(j)) + "\n";
    out += "pipeline_parallel_microbatch_size = " + str(j.micro_batch) + "\n";
    const detail::PipelineLayout layout = detail::pipeline_layout(j);
    out += "module_fqns_per_model_part = " + model_parts(j) + "  # " + str(j.layers.size()) + " stages" +
           (layout.kind == detail::LayoutKind::kEven ? " of " + str(layout.chunk_layers) + " layers"
                                                     : ", layers " + detail::layer_list(j)) +
           "\n";
  }
  out += "context_parallel_degree = " + str(j.cp) + "\n";
  if (j.cp > 1) out += "context_parallel_rotate_method = \"alltoall\"  # pass K/V shards around the ring\n";
  if (m.moe) {
    out += "expert_parallel_degree = " + str(j.ep) + "\n";
    out += "expert_tensor_parallel_degree = " + str(j.etp == 1 ? 1 : j.tp) + "\n";
  }

  out += "\n[activation_checkpoint]\n";
  out += "mode = " + dq(to_string(j.recompute)) + "\n";
  if (j.recompute == Recompute::kSelective) out += "selective_ac_option = \"op\"\n";
  if (compile)
    out += std::string("\n[compile]\nenable = true\ncomponents = ") +
           (j.compile_loss ? "[\"model\", \"loss\"]\n" : "[\"model\"]\n");
  out += quantize_sections(j);
  return {EmittedFile{"torchtitan.toml", out, false}};
}

}  // namespace
}  // namespace trainsim::planner::emit

TRAINSIM_REGISTER_EMITTER(torchtitan, "torchtitan",
                          "torchtitan job config (torchtitan.toml: FSDP2/HSDP, TP, PP schedule and stages, CP, EP)",
                          ::trainsim::planner::emit::emit_torchtitan)
