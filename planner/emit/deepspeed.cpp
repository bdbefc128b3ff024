// --emit deepspeed: ds_config.json (the DeepSpeed configuration: batch, precision, ZeRO, activation
// checkpointing) and megatron_deepspeed.sh (the Megatron-DeepSpeed command line that carries TP,
// PP, Ulysses sequence parallelism and MoE, which a DeepSpeed config cannot). JSON has no comments,
// so everything DeepSpeed cannot express is said in the script's header.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "models/llm/recompute_modules.hpp"
#include "planner/emit/detail/format.hpp"
#include "planner/emit/emitter.hpp"

namespace trainsim::planner::emit {
namespace {

using models::compute::Precision;
using models::workload::Attention;
using models::workload::Job;
using models::workload::Recompute;
using OJson = nlohmann::ordered_json;

std::string str(int64_t v) { return std::to_string(v); }

// DeepSpeed's pipeline engine supports ZeRO stages 0 and 1 only.
int64_t ds_zero_stage(const Job& j) { return j.pp > 1 && j.zero > 1 ? 1 : j.zero; }

std::string ds_config(const Job& j) {
  OJson c;
  c["train_batch_size"] = j.global_batch;
  c["train_micro_batch_size_per_gpu"] = j.micro_batch;
  c["gradient_accumulation_steps"] = j.microbatches;
  c["gradient_clipping"] = 1.0;
  c["steps_per_print"] = 10;
  if (j.precision == Precision::kFp16) {
    c["fp16"] = OJson{{"enabled", true},           {"loss_scale", 0}, {"initial_scale_power", 16},
                      {"loss_scale_window", 1000}, {"hysteresis", 2}, {"min_loss_scale", 1}};
  } else {
    c["bf16"] = OJson{{"enabled", true}};
    c["data_types"] = OJson{{"grad_accum_dtype", "fp32"}};
  }
  const int64_t stage = ds_zero_stage(j);
  const int64_t bucket = j.bucket_size.count() / 4;
  OJson z;
  z["stage"] = stage;
  z["overlap_comm"] = j.overlap_grad_reduce;
  z["contiguous_gradients"] = true;
  z["reduce_scatter"] = true;
  z["reduce_bucket_size"] = bucket;
  if (stage < 3) z["allgather_bucket_size"] = bucket;
  if (stage == 3) {
    // Prefetch `prefetch_layers` layers' worth of this rank's parameters ahead of use.
    const double layer = j.rank_layer_params(0);
    z["stage3_prefetch_bucket_size"] = static_cast<int64_t>(static_cast<double>(j.prefetch_layers) * layer + 0.5);
    if (j.dp_shard != j.dp_cp()) {
      z["mics_shard_size"] = j.dp_shard;
      z["mics_hierarchical_params_gather"] = false;
    }
  }
  if (j.offload_optimizer) z["offload_optimizer"] = OJson{{"device", "cpu"}, {"pin_memory", true}};
  c["zero_optimization"] = z;
  if (j.recompute == Recompute::kFull)
    c["activation_checkpointing"] =
        OJson{{"partition_activations", false},           {"cpu_checkpointing", j.offload_activations},
              {"contiguous_memory_optimization", false},  {"number_checkpoints", nullptr},
              {"synchronize_checkpoint_boundary", false}, {"profile", false}};
  c["wall_clock_breakdown"] = false;
  return c.dump(2) + "\n";
}

std::vector<std::string> ds_notes(const Job& j) {
  std::vector<std::string> n;
  const auto& m = j.model;
  if (j.pp > 1 && j.zero > 1)
    n.push_back("ZeRO-" + str(j.zero) +
                " with pp > 1: DeepSpeed's pipeline engine supports only ZeRO stages 0 and 1, so ds_config.json has "
                "stage 1; " +
                (j.zero == 2 ? "gradients are not sharded" : "gradients and weights are not sharded") +
                ", re-check memory, or use pp = 1 with --no-pipeline-parallel.");
  if (j.precision == Precision::kFp8) n.push_back("FP8: Megatron-DeepSpeed has no FP8 GEMMs; BF16 is written.");
  if (j.recompute == models::workload::Recompute::kSelective && j.recompute_modules != models::llm::kRecomputeCoreAttn)
    n.push_back("Selective recompute of " + models::llm::recompute_modules_string(j.recompute_modules) +
                ": Megatron-DeepSpeed recomputes the attention core only (--recompute-granularity selective).");
  if (j.precision == Precision::kMxfp8 || j.precision == Precision::kNvfp4)
    n.push_back(std::string(j.precision == Precision::kMxfp8 ? "MXFP8" : "NVFP4") +
                ": Megatron-DeepSpeed has no block-scaled (MXFP8 or NVFP4) GEMMs, nor any FP8; BF16 is written, "
                "whose GEMMs run at BF16 rates and whose weights all-gather in BF16.");
  if (j.pp > 1) {
    if (j.vp > 1)
      n.push_back("Schedule " + j.schedule + " (vp = " + str(j.vp) +
                  "): DeepSpeed's pipeline engine has no interleaved (virtual) stages; it runs its 1F1B schedule "
                  "with one stage per rank.");
    else if (j.schedule == "gpipe")
      n.push_back(
          "Schedule gpipe: DeepSpeed's pipeline engine runs 1F1B (same bubble, fewer micro-batches in flight).");
    else if (j.schedule == "zb-h2")
      n.push_back("Schedule zb-h2: only ZB-H1 exists in Megatron-DeepSpeed (--enable-zbh1-pipeline, written).");
    bool even = true;
    for (const int64_t l : j.layers) even = even && l == j.layers.front();
    if (!even)
      n.push_back("Uneven layout " + detail::layer_list(j) +
                  ": not expressible; DeepSpeed partitions the transformer layers evenly over the stages.");
  }
  if (j.cp > 1) {
    const int64_t kv_local = m.kv_heads_or_heads() / j.tp;
    if (detail::cp_algorithm(j) != "ulysses")
      n.push_back("Context parallelism " + detail::cp_algorithm(j) +
                  ": DeepSpeed has Ulysses (all-to-all) sequence parallelism only; --ds-sequence-parallel-size " +
                  str(j.cp) + " runs Ulysses, which needs the KV heads per TP rank divisible by " + str(j.cp) +
                  (kv_local % j.cp == 0 ? std::string(" (they are: ") + str(kv_local) + ")."
                                        : std::string(": this plan has ") + str(kv_local) +
                                              ", so it cannot run on DeepSpeed; use the megatron, nemo or "
                                              "torchtitan emitters for ring attention."));
    if (j.sp)
      n.push_back(
          "Megatron sequence parallelism cannot be combined with DeepSpeed's; --sequence-parallel is left out.");
  }
  if (j.pp > 1 && j.schedule == "zb-h1" && j.sp && j.cp == 1)
    n.push_back(
        "--enable-zbh1-pipeline is not tested with Megatron sequence parallelism (Megatron-DeepSpeed asserts "
        "it off); --sequence-parallel is left out.");
  if (m.moe && j.pp > 1)
    n.push_back(
        "MoE with pp > 1 runs DeepSpeed-MoE inside the pipeline engine's model (GPTModelPipe); check that your "
        "Megatron-DeepSpeed version supports it.");
  if (m.moe) {
    const auto& moe = *m.moe;
    if (moe.first_dense_layers > 0 || moe.layer_freq > 1)
      n.push_back("MoE layer pattern (first " + str(moe.first_dense_layers) + " dense, then every " +
                  str(moe.layer_freq) +
                  "): Megatron-DeepSpeed places experts every --expert-interval layers with no dense prefix; check "
                  "which layers it picks.");
    if (j.moe_dispatcher != models::llm::MoeDispatcher::kAllToAll)
      n.push_back(std::string("Token dispatcher ") + models::workload::to_string(j.moe_dispatcher) +
                  ": DeepSpeed-MoE dispatches by one all-to-all over the expert-parallel group.");
    if (j.moe_balance == models::llm::MoeBalance::kAuxFree)
      n.push_back("Auxiliary-loss-free balancing: DeepSpeed-MoE's gate balances with its auxiliary loss (l_aux).");
    if (moe.shared_experts > 0)
      n.push_back(
          "Shared experts: DeepSpeed-MoE has no DeepSeek-style shared experts (--mlp-type residual is PR-MoE).");
    if (moe.expert_ffn_hidden != m.ffn_hidden)
      n.push_back("Expert FFN width " + str(moe.expert_ffn_hidden) + " differs from the dense " + str(m.ffn_hidden) +
                  ": DeepSpeed-MoE experts use --ffn-hidden-size.");
    if (j.etp != 1 && j.etp != j.tp)
      n.push_back("etp = " + str(j.etp) + ": DeepSpeed-MoE splits experts over all tp ranks or none.");
  }
  if (j.zero > 0 && j.zero < 3 && j.dp_shard != j.dp_cp())
    n.push_back("Shard group " + str(j.dp_shard) + " (HSDP) with ZeRO-" + str(j.zero) +
                ": not expressible; DeepSpeed's MiCS (mics_shard_size) applies to ZeRO-3 only.");
  if (j.zero == 3 && !j.reshard_after_forward)
    n.push_back(
        "reshard_after_forward = false: ZeRO-3 has no exact switch (stage3_max_reuse_distance keeps "
        "parameters that are reused soon).");
  if (j.offload_activations && j.recompute != Recompute::kFull)
    n.push_back(
        "Activation offload: DeepSpeed offloads only activation checkpoints (cpu_checkpointing with full "
        "recompute); not expressible here.");
  if (j.tp_comm_overlap) n.push_back("TP communication overlap: no Megatron-DeepSpeed flag.");
  if (j.overlap_param_gather)
    n.push_back(
        "Overlapped parameter all-gather (ZeRO-1/2): no DeepSpeed option; overlap_comm overlaps the gradient "
        "reduction only.");
  if (j.attention == Attention::kUnfused) n.push_back("Unfused attention: FlashAttention is simply not requested.");
  return n;
}

std::string launcher(const Job& j) {
  const auto& m = j.model;
  const detail::LaunchShape shape = detail::launch_shape(j);
  std::vector<detail::ShellArgGroup> g;
  detail::ShellArgGroup ds{"DS_ARGS", "DeepSpeed: ZeRO-" + str(ds_zero_stage(j)) + " (ds_config.json)", {}};
  ds.flag("--deepspeed");
  ds.arg("--deepspeed_config", "\"${DS_CONFIG:-ds_config.json}\"");
  ds.arg("--zero-stage", ds_zero_stage(j));
  if (j.pp == 1) ds.flag("--no-pipeline-parallel");
  if (j.recompute == Recompute::kFull) {
    ds.flag("--checkpoint-activations");
    ds.flag("--deepspeed-activation-checkpointing");
  }
  g.push_back(ds);

  detail::ShellArgGroup model{"MODEL_ARGS", "Model shape: " + m.name, {}};
  model.arg("--num-layers", m.layers);
  model.arg("--hidden-size", m.hidden);
  model.arg("--ffn-hidden-size", m.moe ? m.moe->expert_ffn_hidden : m.ffn_hidden);
  model.arg("--num-attention-heads", m.heads);
  if (m.kv_heads_or_heads() != m.heads) model.arg("--num-key-value-heads", m.kv_heads_or_heads());
  model.arg("--seq-length", j.seq_len);
  model.arg("--max-position-embeddings", std::max(j.seq_len, m.seq_len));
  if (m.position == "rope") {
    model.flag("--use-rotary-position-embeddings");
    model.flag("--no-position-embedding");
  }
  model.arg("--normalization", m.norm == "rmsnorm" ? "rmsnorm" : "layernorm");
  if (m.activation == "swiglu") model.flag("--swiglu");
  if (!m.tied_embeddings) model.flag("--untie-embeddings-and-output-weights");
  if (!m.bias) model.flag("--disable-bias-linear");
  if (!m.dropout) {
    model.arg("--attention-dropout", "0.0");
    model.arg("--hidden-dropout", "0.0");
  }
  g.push_back(model);

  detail::ShellArgGroup par{"PARALLEL_ARGS", "Parallelism", {}};
  par.arg("--tensor-model-parallel-size", j.tp);
  par.arg("--pipeline-model-parallel-size", j.pp);
  const bool zbh1 = j.pp > 1 && j.schedule == "zb-h1";
  if (j.sp && j.cp == 1 && !zbh1) par.flag("--sequence-parallel");
  if (j.cp > 1) par.arg("--ds-sequence-parallel-size", j.cp, "Ulysses");
  if (zbh1) par.flag("--enable-zbh1-pipeline");
  if (!j.scatter_gather && j.pp > 1) par.flag("--no-scatter-gather-tensors-in-pipeline");
  if (m.moe) {
    par.arg("--num-experts", m.moe->experts);
    par.arg("--topk", m.moe->top_k);
    par.arg("--expert-interval", m.moe->layer_freq);
    par.arg("--moe-expert-parallel-size", j.ep);
    if (j.etp == j.tp && j.tp > 1) par.flag("--enable-expert-tensor-parallelism");
    if (m.moe->capacity_factor)
      par.arg("--moe-train-capacity-factor", detail::fmt_float(*m.moe->capacity_factor));
    else
      par.flag("--disable-moe-token-dropping", "dropless");
  }
  g.push_back(par);

  detail::ShellArgGroup batch{"BATCH_ARGS", "Batch and precision", {}};
  batch.arg("--micro-batch-size", j.micro_batch);
  batch.arg("--global-batch-size", j.global_batch);
  batch.arg("--seed", j.seed);
  batch.flag(j.precision == Precision::kFp16 ? "--fp16" : "--bf16");
  if (j.attention == Attention::kFlash) batch.flag("--use-flash-attn-v2");
  if (j.recompute == Recompute::kSelective) batch.arg("--recompute-granularity", "selective");
  if (j.offload_optimizer) batch.flag("--cpu-optimizer", "DeepSpeed CPU Adam with offload_optimizer");
  g.push_back(batch);

  detail::ShellArgGroup data{"DATA_ARGS", "Data, tokenizer, optimizer (placeholders, not chosen by trainsim)", {}};
  data.arg("--data-path", "\"${DATA_PATH:?set DATA_PATH to a Megatron indexed dataset prefix}\"");
  data.arg("--tokenizer-type", "HFTokenizer");
  data.arg("--tokenizer-model", "\"${TOKENIZER:?set TOKENIZER to a Hugging Face tokenizer}\"");
  data.arg("--train-iters", "\"${TRAIN_ITERS:-1000}\"");
  data.arg("--lr", "3.0e-4");
  data.arg("--min-lr", "3.0e-5");
  data.arg("--lr-decay-style", "cosine");
  data.arg("--lr-warmup-iters", "100");
  data.arg("--weight-decay", "0.1");
  data.arg("--adam-beta1", "0.9");
  data.arg("--adam-beta2", "0.95");
  data.arg("--log-interval", "10");
  g.push_back(data);

  std::string out = "#!/usr/bin/env bash\n";
  out += detail::comment(
      detail::header(j, "deepspeed",
                     "Megatron-DeepSpeed command line (TP, PP, sequence and expert parallelism) for ds_config.json."),
      "# ");
  out += "#\n";
  out += detail::comment({"Run from the Megatron-DeepSpeed checkout, with a hostfile of the " + str(shape.nodes) +
                          " nodes (" + str(shape.procs_per_node) +
                          " slots each): bash megatron_deepspeed.sh. DeepSpeed's data parallelism is gpus / (tp x pp x "
                          "sequence parallel) = " +
                          str(j.dp) + ", so train_batch_size = micro-batch x gradient_accumulation_steps x dp = " +
                          str(j.micro_batch) + " x " + str(j.microbatches) + " x " + str(j.dp) + "."},
                         "# ");
  out += "#\n";
  const auto notes = ds_notes(j);
  out += notes.empty()
             ? detail::comment({"Everything in this plan maps onto DeepSpeed and Megatron-DeepSpeed."}, "# ")
             : detail::bullets("Not expressible in DeepSpeed / Megatron-DeepSpeed, or to check:", notes, "# ");
  out += "\n";
  if (j.tp > 1 || j.cp > 1) out += "export CUDA_DEVICE_MAX_CONNECTIONS=1\n\n";
  out += detail::render_shell_arrays(g, "ARGS");
  out += "\nexec deepspeed --num_nodes " + str(shape.nodes) + " --num_gpus " + str(shape.procs_per_node) +
         " --hostfile \"${HOSTFILE:-hostfile}\" \\\n";
  out += "  \"${MEGATRON_DEEPSPEED_DIR:-.}/pretrain_gpt.py\" \"${ARGS[@]}\"\n";
  return out;
}

std::vector<EmittedFile> emit_deepspeed(const Job& j) {
  return {EmittedFile{"ds_config.json", ds_config(j), false}, EmittedFile{"megatron_deepspeed.sh", launcher(j), true}};
}

}  // namespace
}  // namespace trainsim::planner::emit

TRAINSIM_REGISTER_EMITTER(deepspeed, "deepspeed",
                          "DeepSpeed config (ds_config.json) and the Megatron-DeepSpeed command line for TP/PP/SP/EP",
                          ::trainsim::planner::emit::emit_deepspeed)
