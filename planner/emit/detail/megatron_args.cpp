#include "planner/emit/detail/megatron_args.hpp"

#include <algorithm>

#include "models/llm/recompute_modules.hpp"
#include "models/workload/job/cuda_graphs.hpp"
#include "planner/emit/detail/format.hpp"
#include "planner/emit/detail/megatron_precision.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::emit::detail {

using models::compute::Precision;
using models::workload::Job;
using models::workload::Recompute;

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// Before Megatron-Core 0.10 only the flags of core_r0.8.0 are written (the older pinned flag set:
// no --attention-backend, --cp-comm-type, --expert-tensor-parallel-size, first/last stage layers,
// --moe-layer-freq, shared experts, HSDP instances, FP8 parameter gather or optimizer offload).
// r0.8.0, v0.14.0 and v0.15.0 are pinned: a release from 0.10 gets the newer names, checked
// against 0.14 and 0.15 only.
bool legacy(int minor) { return minor < 10; }

// Megatron-Bridge releases and the Megatron-Core they run (pyproject.toml's megatron-core pin):
// v0.1.x (container 25.09) >=0.14,<0.15; v0.2.x (25.11) >=0.15,<0.16.
std::optional<int> bridge_core_minor(const std::string& target) {
  for (const std::string repo : {"NVIDIA-NeMo/Megatron-Bridge@", "NVIDIA/Megatron-Bridge@"}) {
    if (target.rfind(repo, 0) != 0) continue;
    const std::string tag = target.substr(repo.size());
    const std::string release = tag.size() > 1 && (tag[0] == 'v' || tag[0] == 'r') ? tag.substr(1) : tag;
    if (release.rfind("0.1.", 0) == 0 || tag == "25.09") return 14;  // v0.1.0, r0.1.0 (release branch)
    if (release.rfind("0.2.", 0) == 0 || tag == "25.11") return 15;
  }
  return std::nullopt;
}

// --moe-layer-freq: "" when every layer is MoE, N for one MoE layer every N layers, else a
// run-length Python list expression (Megatron's moe_freq_type) such as ([0]*3+[1]*58).
std::string moe_layer_freq(const Job& j) {
  const auto& moe = *j.model.moe;
  if (moe.first_dense_layers == 0) return moe.layer_freq == 1 ? "" : str(moe.layer_freq);
  std::string out;
  int64_t run = 0, value = -1;
  auto flush = [&] {
    if (run == 0) return;
    if (!out.empty()) out += "+";
    out += '[';
    out += str(value);
    out += "]*";
    out += str(run);
  };
  for (int64_t l = 0; l < j.model.layers; ++l) {
    const int64_t v = j.model.is_moe_layer(l) ? 1 : 0;
    if (v != value) {
      flush();
      value = v;
      run = 0;
    }
    ++run;
  }
  flush();
  return "(" + out + ")";
}

// The token dispatcher and the router's load balancing (models/llm/moe_dispatch.hpp). flex needs
// DeepEP (Megatron-Core 0.12; --moe-flex-dispatcher-backend came later, 0.15 spells it
// --moe-enable-deepep); expert-bias balancing 0.11, with the sigmoid score function it requires.
void moe_dispatch_args(const Job& j, int minor, ShellArgGroup& b, MegatronCommand& c) {
  using models::llm::MoeBalance;
  using models::llm::MoeDispatcher;
  const bool flex = j.moe_dispatcher == MoeDispatcher::kFlex;
  if (flex && minor < 12) {
    b.arg("--moe-token-dispatcher-type", "alltoall");
    c.notes.push_back("Token dispatcher flex (DeepEP): Megatron-Core 0." + str(minor) +
                      " has no flex dispatcher (0.12); alltoall is written, which moves more bytes.");
  } else {
    b.arg("--moe-token-dispatcher-type", models::workload::to_string(j.moe_dispatcher));
    if (flex) b.flag("--moe-enable-deepep", "DeepEP fused dispatch/combine");
  }
  if (j.moe_balance == MoeBalance::kAuxFree && minor >= 11) {
    b.arg("--moe-router-load-balancing-type", "none", "no auxiliary loss");
    b.flag("--moe-router-enable-expert-bias", "DeepSeek-V3 auxiliary-loss-free balancing");
    b.arg("--moe-router-score-function", "sigmoid", "expert bias requires it");
    return;
  }
  if (j.moe_balance == MoeBalance::kAuxFree)
    c.notes.push_back("Auxiliary-loss-free balancing: Megatron-Core 0." + str(minor) +
                      " has no --moe-router-enable-expert-bias (0.11); the auxiliary loss is written.");
  b.arg("--moe-router-load-balancing-type", "aux_loss");
}

void model_args(const Job& j, int minor, MegatronCommand& c) {
  const auto& m = j.model;
  ShellArgGroup b{"MODEL_ARGS", "Model shape: " + m.name, {}};
  b.arg("--num-layers", m.layers);
  b.arg("--hidden-size", m.hidden);
  b.arg("--ffn-hidden-size", m.ffn_hidden);
  b.arg("--num-attention-heads", m.heads);
  if (m.kv_heads_or_heads() != m.heads) {
    b.flag("--group-query-attention");
    b.arg("--num-query-groups", m.kv_heads_or_heads());
  }
  b.arg("--seq-length", j.seq_len);
  b.arg("--max-position-embeddings", std::max(j.seq_len, m.seq_len));
  b.arg("--position-embedding-type", m.position == "rope" ? "rope" : "learned_absolute");
  b.arg("--normalization", m.norm == "rmsnorm" ? "RMSNorm" : "LayerNorm");
  if (m.activation == "swiglu") b.flag("--swiglu");
  if (!m.tied_embeddings) b.flag("--untie-embeddings-and-output-weights");
  if (!m.bias) b.flag("--disable-bias-linear");
  if (m.qk_norm) b.flag("--qk-layernorm");
  if (m.mla && !legacy(minor)) {  // Megatron-Core 0.8 has no MLA flags
    const auto& a = *m.mla;
    b.flag("--multi-latent-attention");
    if (a.q_lora_rank) b.arg("--q-lora-rank", *a.q_lora_rank);
    b.arg("--kv-lora-rank", a.kv_lora_rank);
    b.arg("--qk-head-dim", a.qk_nope_head_dim);
    b.arg("--qk-pos-emb-head-dim", a.qk_rope_head_dim);
    b.arg("--v-head-dim", a.v_head_dim);
  }
  if (m.mtp_layers > 0 && !legacy(minor)) b.arg("--mtp-num-layers", m.mtp_layers);
  if (!m.dropout) {
    b.arg("--attention-dropout", "0.0");
    b.arg("--hidden-dropout", "0.0");
  }
  if (m.moe) {
    const auto& moe = *m.moe;
    b.arg("--num-experts", moe.experts);
    b.arg("--moe-router-topk", moe.top_k);
    if (!legacy(minor)) {  // Megatron-Core 0.8: experts take --ffn-hidden-size, every layer is MoE
      b.arg("--moe-ffn-hidden-size", moe.expert_ffn_hidden);
      if (moe.shared_experts > 0)
        b.arg("--moe-shared-expert-intermediate-size", moe.shared_experts * moe.expert_ffn_hidden,
              str(moe.shared_experts) + " shared expert(s) x " + str(moe.expert_ffn_hidden));
      const std::string freq = moe_layer_freq(j);
      if (!freq.empty()) b.arg("--moe-layer-freq", shell_word(freq), "1 = MoE layer, 0 = dense MLP");
    }
    if (moe.capacity_factor) b.arg("--moe-expert-capacity-factor", fmt_float(*moe.capacity_factor));
    if (moe.capacity_factor && moe.pad_to_capacity)
      b.flag("--moe-pad-expert-input-to-capacity", "static shapes: no host sync in the dispatcher");
    moe_dispatch_args(j, minor, b, c);
    if (j.precision != Precision::kFp16) b.flag("--moe-grouped-gemm");
  }
  c.groups.push_back(std::move(b));
}

void parallel_args(const Job& j, int minor, MegatronCommand& c) {
  ShellArgGroup b{"PARALLEL_ARGS",
                  "Parallelism: tp x cp x pp x dp = " + str(j.tp) + " x " + str(j.cp) + " x " + str(j.pp) + " x " +
                      str(j.dp) + " = " + str(j.gpus) + " GPUs",
                  {}};
  b.arg("--tensor-model-parallel-size", j.tp);
  b.arg("--pipeline-model-parallel-size", j.pp);
  const PipelineLayout layout = pipeline_layout(j);
  switch (layout.kind) {
    case LayoutKind::kEven:
      if (j.vp > 1)
        b.arg("--num-layers-per-virtual-pipeline-stage", layout.chunk_layers,
              str(j.model.layers) + " layers / (pp " + str(j.pp) + " x vp " + str(j.vp) + ")");
      break;
    case LayoutKind::kFirstLast:
      if (legacy(minor)) break;  // a note says so
      if (layout.first_differs) b.arg("--decoder-first-pipeline-num-layers", layout.first_layers);
      if (layout.last_differs) b.arg("--decoder-last-pipeline-num-layers", layout.last_layers);
      if (j.vp > 1) b.arg("--num-virtual-stages-per-pipeline-rank", j.vp);
      break;
    case LayoutKind::kCustom:
      if (minor < 13) break;  // a note says so
      b.arg("--pipeline-model-parallel-layout", shell_word(megatron_layout(j)),
            "layers per virtual stage " + layer_list(j) + " (Megatron-Core >= 0.13)");
      break;
  }
  if (j.vp > 1 && j.schedule == "breadth-first" && !legacy(minor))
    b.arg("--microbatch-group-size-per-virtual-pipeline-stage", j.microbatches,
          "every micro-batch through a chunk before the next chunk");
  if (j.sp) b.flag("--sequence-parallel");
  if (j.cp > 1) {
    b.arg("--context-parallel-size", j.cp);
    // Before 0.10 no --cp-comm-type: Transformer Engine's P2P ring is the only algorithm (a note).
    const std::string algo = legacy(minor) ? "" : cp_algorithm(j);
    if (algo == "ring") b.arg("--cp-comm-type", "p2p", "ring attention");
    if (algo == "ulysses") b.arg("--cp-comm-type", "a2a", "Ulysses all-to-all");
    if (algo == "hybrid") {
      b.arg("--cp-comm-type", "a2a+p2p", "Ulysses inside, ring across");
      b.arg("--hierarchical-context-parallel-sizes", str(j.cp_ulysses) + " " + str(j.cp / j.cp_ulysses),
            "a2a group, p2p group");
    }
  }
  if (j.model.moe) {
    b.arg("--expert-model-parallel-size", j.ep);
    if (!legacy(minor)) b.arg("--expert-tensor-parallel-size", j.etp);
  }
  c.groups.push_back(std::move(b));
}

// Refuses the ZeRO stages Megatron-Core 0.`minor` cannot run as trainsim simulates them: ZeRO-2
// and ZeRO-3 need Megatron FSDP (0.12).
void check_zero(const Job& j, int minor) {
  if (j.zero == 2 && minor < 12)
    throw ConfigError("zero",
                      "ZeRO-2 is not expressible in Megatron-Core 0." + str(minor) +
                          ": its distributed optimizer shards only optimizer states (ZeRO-1) and keeps a full "
                          "gradient buffer per rank; Megatron FSDP (optim_grads) arrives in 0.12",
                      "use --zero 1, or --emit deepspeed");
  if (j.zero == 3 && minor < 12)
    throw ConfigError("zero",
                      "ZeRO-3 is not expressible in Megatron-Core 0." + str(minor) +
                          ": Megatron FSDP (--use-custom-fsdp) arrives in 0.12",
                      "use --zero 1, or --emit deepspeed or torchtitan");
}

void data_parallel_args(const Job& j, int minor, MegatronCommand& c) {
  ShellArgGroup b{"DP_ARGS", "Data parallelism: ZeRO " + str(j.zero) + ", gradient reduction and its overlap", {}};
  if (j.zero == 1) b.flag("--use-distributed-optimizer", "ZeRO-1: optimizer states sharded");
  if (j.zero >= 2) {
    if (minor >= 14)
      b.flag("--use-megatron-fsdp", "Megatron FSDP (--use-custom-fsdp before Megatron-Core 0.14)");
    else
      b.flag("--use-custom-fsdp", "Megatron FSDP (--use-megatron-fsdp from Megatron-Core 0.14)");
    if (j.zero == 2)
      b.arg("--data-parallel-sharding-strategy", "optim_grads", "ZeRO-2: optimizer states and gradients sharded");
    else
      b.arg("--data-parallel-sharding-strategy", "optim_grads_params", "ZeRO-3");
  }
  if (j.zero == 1 && j.dp_shard != j.dp_cp() && !legacy(minor))
    b.arg("--num-distributed-optimizer-instances", j.dp_cp() / j.dp_shard,
          "shard groups of " + str(j.dp_shard) + " ranks, replicated (HSDP)");
  const bool overlap_grad = j.overlap_grad_reduce || j.overlap_param_gather;
  if (overlap_grad && j.dp_cp() > 1) b.flag("--overlap-grad-reduce");
  if (j.overlap_param_gather) b.flag("--overlap-param-gather");
  if (j.dp_cp() > 1 && j.zero < 2)
    b.arg("--ddp-bucket-size", j.bucket_size.count() / 4,
          "elements: " + str(j.bucket_size.count()) + " B of fp32 gradients");
  if (!b.args.empty()) c.groups.push_back(std::move(b));
}

void memory_args(const Job& j, int minor, MegatronCommand& c) {
  ShellArgGroup b{"MEMORY_ARGS", "Activation recomputation and offload", {}};
  if (j.recompute == Recompute::kSelective && j.recompute_modules == models::llm::kRecomputeCoreAttn)
    b.arg("--recompute-granularity", "selective", "core attention (default module)");
  if (j.recompute == Recompute::kSelective && j.recompute_modules != models::llm::kRecomputeCoreAttn) {
    b.arg("--recompute-granularity", "selective");
    std::string modules = models::llm::recompute_modules_string(j.recompute_modules);
    std::replace(modules.begin(), modules.end(), ',', ' ');
    b.arg("--recompute-modules", modules, "Megatron-Core 0.12+");
  }
  if (j.recompute == Recompute::kFull) {
    const int64_t largest = *std::max_element(j.layers.begin(), j.layers.end());
    b.arg("--recompute-granularity", "full");
    if (j.recompute_layers >= largest) {
      b.arg("--recompute-method", "uniform");
      b.arg("--recompute-num-layers", 1, "every layer recomputes from its input");
    } else {
      b.arg("--recompute-method", "block");
      b.arg("--recompute-num-layers", j.recompute_layers, "first layers of each model chunk");
    }
  }
  const bool bf16_states = j.optimizer_states == models::workload::OptimizerStates::kBf16;
  if (j.offload_optimizer && !legacy(minor)) {
    b.flag("--optimizer-cpu-offload");
    b.arg("--optimizer-offload-fraction", "1.0");
    b.flag("--use-precision-aware-optimizer", "required by --optimizer-cpu-offload");
    b.flag("--overlap-cpu-optimizer-d2h-h2d");
  } else if (bf16_states && !legacy(minor)) {
    b.flag("--use-precision-aware-optimizer", "Adam moments in bf16 (fp32 master weights)");
  }
  if (bf16_states && !legacy(minor)) {
    b.arg("--exp-avg-dtype", "bf16");
    b.arg("--exp-avg-sq-dtype", "bf16");
  }
  if (!b.args.empty()) c.groups.push_back(std::move(b));
}

void overlap_args(const Job& j, MegatronCommand& c) {
  ShellArgGroup b{"OVERLAP_ARGS", "Communication overlap", {}};
  if (j.tp_comm_overlap && j.tp > 1) b.flag("--tp-comm-overlap", "Transformer Engine userbuffers");
  if (!j.overlap_p2p && j.vp > 1) b.flag("--no-overlap-p2p-communication");
  if (!j.scatter_gather && j.pp > 1) b.flag("--no-scatter-gather-tensors-in-pipeline");
  if (!b.args.empty()) c.groups.push_back(std::move(b));
}

// CUDA graphs (models/workload/job/cuda_graphs.hpp): Megatron-LM core_v0.15 --cuda-graph-impl with
// one --cuda-graph-scope of full|attn|full_iteration; core_v0.14 --enable-cuda-graph (local) or
// --external-cuda-graph (Transformer Engine) with the same scopes.
void graph_args(const Job& j, int minor, MegatronCommand& c) {
  using models::workload::kGraphAttn, models::workload::kGraphFull, models::workload::kGraphFullIteration;
  const uint32_t g = j.cuda_graphs;
  if (g == 0) return;
  const uint32_t rest = g & ~(kGraphFull | kGraphAttn | kGraphFullIteration);
  if (rest != 0)
    c.notes.push_back("CUDA graph scope " + models::workload::cuda_graph_scope_string(rest) + ": Megatron-LM core_v0." +
                      str(minor) +
                      "'s --cuda-graph-scope takes one of full|attn|full_iteration; Megatron-Bridge 25.11 "
                      "recipes set the list as model.cuda_graph_scope (cuda_graph_impl transformer_engine).");
  if (minor < 14) {
    c.notes.push_back("CUDA graphs: not emitted (Megatron-Core 0." + str(minor) + " has no --cuda-graph-scope).");
    return;
  }
  if ((g & (kGraphFull | kGraphAttn | kGraphFullIteration)) == 0) return;
  ShellArgGroup b{"GRAPH_ARGS", "CUDA graphs", {}};
  const bool iteration = (g & kGraphFullIteration) != 0;
  if (minor >= 15)
    b.arg("--cuda-graph-impl", iteration ? "local" : "transformer_engine");
  else
    b.flag(iteration ? "--enable-cuda-graph" : "--external-cuda-graph");
  b.arg("--cuda-graph-scope", iteration ? "full_iteration" : (g & kGraphFull) ? "full" : "attn");
  c.groups.push_back(std::move(b));
}

void batch_args(const Job& j, MegatronCommand& c) {
  ShellArgGroup b{"BATCH_ARGS", "Batch: " + str(j.microbatches) + " micro-batches per pipeline per iteration", {}};
  b.arg("--micro-batch-size", j.micro_batch);
  b.arg("--global-batch-size", j.global_batch);
  b.arg("--seed", j.seed);
  c.groups.push_back(std::move(b));
}

void placeholder_args(const Job& j, int minor, MegatronCommand& c) {
  ShellArgGroup data{
      "DATA_ARGS", "Data and tokenizer (placeholder: mock data; use --data-path and your tokenizer)", {}};
  data.flag("--mock-data");
  data.arg("--tokenizer-type", "NullTokenizer");
  data.arg("--vocab-size", j.model.vocab);
  c.groups.push_back(std::move(data));
  ShellArgGroup opt{
      "TRAINING_ARGS", "Optimizer, schedule, logging, checkpoints (placeholders, not chosen by trainsim)", {}};
  opt.arg("--train-iters", "\"${TRAIN_ITERS:-1000}\"");
  opt.arg("--lr", "3.0e-4");
  opt.arg("--min-lr", "3.0e-5");
  opt.arg("--lr-decay-style", "cosine");
  opt.arg("--lr-warmup-iters", "100");
  opt.arg("--weight-decay", "0.1");
  opt.arg("--clip-grad", "1.0");
  opt.arg("--adam-beta1", "0.9");
  opt.arg("--adam-beta2", "0.95");
  opt.arg("--init-method-std", "0.02");
  // The auxiliary loss's weight, unless expert-bias balancing replaces the loss (moe_dispatch_args).
  if (j.model.moe && (j.moe_balance == models::llm::MoeBalance::kAuxLoss || minor < 11))
    opt.arg("--moe-aux-loss-coeff", "1e-2");
  opt.arg("--log-interval", "10");
  opt.arg("--eval-interval", "1000");
  opt.arg("--eval-iters", "10");
  opt.arg("--save", "\"${CHECKPOINT_DIR:-checkpoints}\"");
  opt.arg("--load", "\"${CHECKPOINT_DIR:-checkpoints}\"");
  opt.arg("--save-interval", "1000");
  c.groups.push_back(std::move(opt));
}

void schedule_notes(const Job& j, std::vector<std::string>& notes) {
  if (j.pp == 1) return;
  const std::string& s = j.schedule;
  if (s == "gpipe")
    notes.push_back(
        "Schedule gpipe: Megatron-LM has no GPipe (all forwards, then all backwards) schedule; it runs 1F1B, which "
        "has the same bubble and keeps at most pp micro-batches in flight instead of all of them.");
  if (s == "zb-h1" || s == "zb-h2")
    notes.push_back("Schedule " + s +
                    ": Megatron-LM has no zero-bubble schedule (Qi et al., ICLR 2024); this runs 1F1B, whose bubble "
                    "is larger. Megatron-DeepSpeed has --enable-zbh1-pipeline (see --emit deepspeed).");
  if (s == "zb-v")
    notes.push_back(
        "Schedule zb-v: Megatron-LM has neither the V-shape chunk placement nor zero-bubble W ops; this runs "
        "interleaved 1F1B with vp = 2 in Megatron's loop placement (rank r holds virtual stages r and r + pp). "
        "torchtitan's ZBVZeroBubble runs it (see --emit torchtitan).");
  if (s == "breadth-first")
    notes.push_back(
        "Schedule breadth-first: Megatron-LM has no breadth-first schedule; interleaved 1F1B with "
        "--microbatch-group-size-per-virtual-pipeline-stage = micro-batches approximates it (every micro-batch "
        "through a chunk before the next chunk), but its backward order differs and FSDP does not keep a chunk's "
        "weights gathered across micro-batches. torchtitan's LoopedBFS runs it (see --emit torchtitan).");
}

// What the flags of Megatron-Core before 0.10 (core_r0.8.0) cannot say about the plan.
void legacy_notes(const Job& j, int minor, std::vector<std::string>& n) {
  if (!legacy(minor)) return;
  const std::string v = "Megatron-Core 0." + str(minor);
  if (j.vp > 1 && j.schedule == "breadth-first")
    n.push_back(v + " has no --microbatch-group-size-per-virtual-pipeline-stage: this runs plain interleaved 1F1B.");
  if (pipeline_layout(j).kind == LayoutKind::kFirstLast)
    n.push_back(
        "Uneven layout " + layer_list(j) + ": " + v +
        " has no --decoder-first/last-pipeline-num-layers: it needs an even split, so this layout does not run there "
        "as written.");
  const std::string algo = j.cp > 1 ? cp_algorithm(j) : "ring";
  if (algo != "ring")
    n.push_back("Context parallelism " + algo + ": " + v +
                " has no --cp-comm-type; its context parallelism is Transformer Engine's P2P ring.");
  if (j.model.moe) {
    const auto& moe = *j.model.moe;
    if (j.etp != j.tp)
      n.push_back("Expert tensor parallelism etp = " + str(j.etp) + ": " + v +
                  " has no --expert-tensor-parallel-size; its experts run at tp = " + str(j.tp) + ".");
    if (moe.expert_ffn_hidden != j.model.ffn_hidden)
      n.push_back("Expert width " + str(moe.expert_ffn_hidden) + ": " + v +
                  " has no --moe-ffn-hidden-size; its experts take --ffn-hidden-size (" + str(j.model.ffn_hidden) +
                  ").");
    if (moe.shared_experts > 0) n.push_back("Shared experts: " + v + " has no --moe-shared-expert-intermediate-size.");
    if (!moe_layer_freq(j).empty())
      n.push_back("Dense layers between MoE layers: " + v + " has no --moe-layer-freq; every layer is MoE.");
  }
  if (j.zero == 1 && j.dp_shard != j.dp_cp())
    n.push_back("Shard groups of " + str(j.dp_shard) + " ranks: " + v +
                " has no --num-distributed-optimizer-instances; the distributed optimizer shards over all of dp*cp.");
  if (j.fp8_param_gather) n.push_back("FP8 parameter all-gather: " + v + " has no --fp8-param-gather.");
  if (j.offload_optimizer) n.push_back("Optimizer offload: " + v + " has no --optimizer-cpu-offload.");
  if (j.optimizer_states == models::workload::OptimizerStates::kBf16)
    n.push_back("bf16 optimizer states: " + v + " has no --use-precision-aware-optimizer (fp32 Adam states).");
}

// Which release the flags are for, when the job's stack does not name a Megatron-Core release.
void version_note(const Job& j, int minor, std::vector<std::string>& n) {
  if (bridge_core_minor(j.stack.target))
    n.push_back("Stack \"" + j.stack.name + "\" targets " + j.stack.target + ", which runs Megatron-Core 0." +
                str(minor) +
                ": these are Megatron-LM's flags for that release (pretrain_gpt.py); a Megatron-Bridge recipe sets the "
                "same Megatron-Core fields on its ConfigContainer (cfg.model, cfg.ddp, cfg.optimizer, "
                "cfg.mixed_precision).");
  if (megatron_core_minor(j.stack.target)) return;
  n.push_back("Stack \"" + j.stack.name + "\" targets " + (j.stack.target.empty() ? "no release" : j.stack.target) +
              ", not a Megatron-Core release of NVIDIA/Megatron-LM: these flags are written for Megatron-Core 0." +
              str(minor) + ".");
}

void notes(const Job& j, int minor, MegatronCommand& c) {
  auto& n = c.notes;
  version_note(j, minor, n);
  schedule_notes(j, n);
  legacy_notes(j, minor, n);
  if (pipeline_layout(j).kind == LayoutKind::kCustom)
    n.push_back("Uneven layout " + layer_list(j) +
                ": only --pipeline-model-parallel-layout (Megatron-Core >= 0.13) expresses it; older versions take "
                "--decoder-first/last-pipeline-num-layers, which can only change the first and last ranks.");
  if (j.zero >= 2) {
    const std::string z = "ZeRO-" + str(j.zero);
    n.push_back(
        z +
        " uses Megatron FSDP: --use-megatron-fsdp from Megatron-Core 0.14 on (--use-custom-fsdp in 0.12-0.13), "
        "whose checkpoints want --ckpt-format fsdp_dtensor. FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset (not 1).");
    if (j.pp > 1)
      n.push_back(z +
                  " with pp > 1: check that your Megatron FSDP supports pipeline parallelism "
                  "(--use-torch-fsdp2 does not).");
    if (j.dp_shard != j.dp_cp())
      n.push_back("Shard groups of " + str(j.dp_shard) +
                  " ranks (HSDP) with Megatron FSDP: written as full sharding; recent Megatron FSDP has an HSDP mode "
                  "(see --num-distributed-optimizer-instances and --enable-full-sharding-in-hsdp in your version).");
    if (j.zero == 3 && !j.reshard_after_forward)
      n.push_back(
          "reshard_after_forward = false (keep gathered weights until backward) has no Megatron FSDP flag; "
          "optim_grads (ZeRO-2) is the nearest strategy.");
    if (j.zero == 3 && j.prefetch_layers != 1)
      n.push_back("prefetch_layers = " + str(j.prefetch_layers) +
                  ": Megatron FSDP prefetches by communication buckets (--suggested-communication-unit-size), not "
                  "by a layer count.");
  }
  if (j.offload_optimizer && j.zero == 0)
    n.push_back(
        "Optimizer offload: Megatron's --optimizer-cpu-offload runs inside the distributed optimizer; add "
        "--use-distributed-optimizer (ZeRO-1) for it to take effect.");
  if (j.offload_activations)
    n.push_back(
        "Activation offload is not expressible here: Megatron-LM has no command-line flag for it (Megatron-Core's "
        "TransformerConfig.cpu_offloading, which --emit nemo sets, supports neither pipeline parallelism nor "
        "recomputation).");
  if (j.overlap_param_gather && !j.overlap_grad_reduce)
    n.push_back("--overlap-param-gather requires --overlap-grad-reduce in Megatron-LM, so both are set.");
  megatron_precision_notes(j, minor, n);
  if (j.model.moe && j.precision == Precision::kFp16)
    n.push_back(
        "MoE in FP16: Megatron-LM supports expert parallelism and grouped GEMMs only in BF16; use --precision bf16.");
  if (!j.overlap_p2p && j.vp > 1 && j.pp <= 2)
    n.push_back("--no-overlap-p2p-communication with the interleaved schedule needs pp > 2 in Megatron-LM.");
  if (j.dp_comm_weight != 1.0)
    n.push_back("dp_comm_weight = " + fmt(j.dp_comm_weight) +
                " (lower priority of data-parallel traffic) has no Megatron-LM flag.");
  const int64_t pad = 128 * j.tp;
  if (j.model.vocab % pad != 0)
    n.push_back("Megatron pads the vocabulary (" + str(j.model.vocab) + ") to a multiple of " +
                "--make-vocab-size-divisible-by (128) x tp = " + str(pad) + "; trainsim used the unpadded size.");
  if (j.tp > 1 && j.cluster.domain_gpus() < j.tp)
    n.push_back("tp = " + str(j.tp) +
                (j.cluster.domain_gpus() > j.cluster.gpus_per_node ? " spans NVLink domains" : " spans nodes") +
                ": tensor parallelism leaves NVLink.");
}

}  // namespace

std::optional<int> megatron_core_minor(const std::string& target) {
  if (const auto bridge = bridge_core_minor(target)) return bridge;
  const std::string repo = "NVIDIA/Megatron-LM@core_";
  if (target.rfind(repo, 0) != 0) return std::nullopt;
  const std::string tag = target.substr(repo.size());  // r0.8.0, v0.15.0
  if (tag.size() < 5 || (tag[0] != 'r' && tag[0] != 'v') || tag.compare(1, 2, "0.") != 0) return std::nullopt;
  const size_t end = tag.find_first_not_of("0123456789", 3);
  if (end == 3 || end == std::string::npos || tag[end] != '.') return std::nullopt;
  return std::stoi(tag.substr(3, end - 3));
}

int megatron_core_minor(const Job& j) { return megatron_core_minor(j.stack.target).value_or(kMegatronCoreMinor); }

MegatronCommand megatron_command(const Job& j) { return megatron_command(j, megatron_core_minor(j)); }

MegatronCommand megatron_command(const Job& j, int mcore_minor) {
  check_zero(j, mcore_minor);
  MegatronCommand c;
  if (blackwell(j) && mcore_minor >= 12) {
    // From 0.12 Megatron-LM asserts CUDA_DEVICE_MAX_CONNECTIONS=1 only below compute capability 10.
    c.env.push_back("CUDA_DEVICE_MAX_CONNECTIONS=32");
    c.env_comments.push_back(
        "Blackwell: no kernel-order requirement; 32 as Megatron-Bridge's scripts, so streams do not serialize");
  } else if ((j.tp > 1 || j.cp > 1) && j.zero < 2) {
    c.env.push_back("CUDA_DEVICE_MAX_CONNECTIONS=1");
    c.env_comments.push_back("Megatron requires it with TP/CP before Blackwell: kernels issue in program order");
  }
  model_args(j, mcore_minor, c);
  parallel_args(j, mcore_minor, c);
  data_parallel_args(j, mcore_minor, c);
  batch_args(j, c);
  megatron_precision_args(j, mcore_minor, c);
  memory_args(j, mcore_minor, c);
  overlap_args(j, c);
  graph_args(j, mcore_minor, c);
  placeholder_args(j, mcore_minor, c);
  notes(j, mcore_minor, c);
  return c;
}

std::string render_megatron_arrays(const MegatronCommand& c) {
  std::string out;
  for (size_t i = 0; i < c.env.size(); ++i) out += "export " + c.env[i] + "  # " + c.env_comments[i] + "\n";
  if (!c.env.empty()) out += "\n";
  return out + render_shell_arrays(c.groups, "MEGATRON_ARGS");
}

std::string render_megatron_notes(const MegatronCommand& c) {
  if (c.notes.empty()) return comment({"Everything in this plan maps onto Megatron-LM flags."}, "# ");
  return bullets("Not expressible in Megatron-LM, or to check before running:", c.notes, "# ");
}

}  // namespace trainsim::planner::emit::detail
