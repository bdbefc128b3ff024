#include "models/workload/dag/stage_memory.hpp"

#include <algorithm>

#include "models/llm/moe.hpp"
#include "models/llm/recompute_modules.hpp"
#include "models/workload/job/bf16_layers.hpp"

namespace trainsim::models::workload {

namespace {

// BF16 first/last layers among the layers of chunk `vs` whose activations are stored: full
// recompute with recompute_layers redoes the chunk's first ones, which keep only their input.
int64_t stored_bf16_layers(const Job& job, int64_t vs) {
  const int64_t n = job.layers[static_cast<size_t>(vs)];
  const int64_t redone = job.recompute == Recompute::kFull ? std::min(job.recompute_layers, n) : int64_t{0};
  return bf16_layers_in(job, job.first_layer(vs) + redone, n - redone);
}
// Extra activation bytes of one MoE block over the dense MLP the footprint formula counts: the
// dense fc1/activation outputs are replaced by the permuted rows the rank's experts compute
// (input, fc1 output(s), activation output per row, on the most loaded EP rank), the router's
// fp32 probabilities, and the shared experts' fc1/activation outputs. Selective recompute's
// modules (recompute_modules.hpp) drop what they redo: moe_act the rows' activation outputs,
// shared_experts the shared outputs, moe the whole block but its input; mlp (dense layers only)
// leaves a MoE layer's router input, which the dense formula then no longer counts.
int64_t moe_block_extra(const Job& job) {
  const auto& m = job.model;
  const auto& moe = *m.moe;
  const double kAct = 2.0, gates = m.activation == "swiglu" ? 2.0 : 1.0;
  const double T = static_cast<double>(job.micro_batch * (job.seq_len / job.cp));
  const double t = static_cast<double>(job.tp);
  const double tokens = T / (job.sp ? t : 1.0);
  const uint32_t mods = job.recompute_modules;
  const bool norms = (mods & llm::kRecomputeLayernorm) != 0, mlp = (mods & llm::kRecomputeMlp) != 0;
  const bool whole = (mods & llm::kRecomputeMoe) != 0;
  const double gemm_in = compute::quantized(job.precision) && job.stack.memory.fp8_saved_inputs
                             ? compute::operand_bytes(job.precision)
                             : kAct;
  const double norm_output = tokens * static_cast<double>(m.hidden) * gemm_in;
  const double router_input = (!norms && !whole ? norm_output : 0.0) - (!norms && !mlp ? norm_output : 0.0);
  // A clamped SwiGLU keeps the unclamped fc1 output beside the clamped copy (footprint.cpp).
  const double clamp = m.activation_clamp ? gates : 0.0;
  const double dense = mlp ? 0.0 : T * (gates + 1.0 + clamp) * static_cast<double>(m.ffn_hidden) * kAct / t;
  if (whole) return static_cast<int64_t>(router_input - dense);
  const llm::Routing r = llm::route_tokens(m, job.ep, static_cast<int64_t>(tokens), job.moe_balance);
  const double rows = r.received_tokens * static_cast<double>(job.etp);
  const double fe = static_cast<double>(moe.expert_ffn_hidden) / static_cast<double>(job.etp);
  const double act_out = (mods & llm::kRecomputeMoeAct) ? 0.0 : 1.0;
  const double routed = rows * (static_cast<double>(m.hidden) + (gates + act_out * (1.0 + clamp)) * fe) * kAct;
  const double router = tokens * static_cast<double>(moe.experts) * 4.0;
  // Shared experts run whole on the rank's own tokens (the ranks of an expert-TP group hold
  // different tokens).
  const double shared =
      (mods & llm::kRecomputeSharedExperts)
          ? 0.0
          : tokens * (gates + 1.0 + clamp) * static_cast<double>(moe.shared_experts * moe.expert_ffn_hidden) * kAct;
  return static_cast<int64_t>(routed + router + shared + router_input - dense);
}

// Activation bytes of one micro-batch's MTP modules (mtp_layers of them, on the last virtual
// stage): each keeps its transformer layer's activations (a MoE block's extra too) and the inputs
// of its two RMSNorms and of its 2h -> h projection (4 x h per token, on the SP shard).
int64_t mtp_activation(const Job& job) {
  const auto& m = job.model;
  if (m.mtp_layers == 0) return 0;
  const int64_t seq_local = job.seq_len / job.cp;
  const std::string kept = job.recompute == Recompute::kFull ? "none" : to_string(job.recompute);
  const double fp8_inputs = compute::quantized(job.precision) && job.stack.memory.fp8_saved_inputs
                                ? compute::operand_bytes(job.precision)
                                : 0.0;
  int64_t per =
      memory::layer_activation_bytes(
          m, job.micro_batch, seq_local, job.tp, job.sp, kept, job.attention == Attention::kFlash, fp8_inputs,
          job.recompute == Recompute::kSelective ? std::optional<uint32_t>(job.recompute_modules) : std::nullopt)
          .count();
  if (m.is_moe_layer(m.layers)) per += moe_block_extra(job);
  const double T = static_cast<double>(job.micro_batch * seq_local) / (job.sp ? static_cast<double>(job.tp) : 1.0);
  per += static_cast<int64_t>(T * 4.0 * static_cast<double>(m.hidden) * 2.0);
  return per * m.mtp_layers;
}

// MoE layers of a chunk that keep their activations (full recompute keeps only the first
// recompute_layers layers' inputs).
int64_t moe_layers_in(const Job& job, int64_t vs) {
  int64_t n = 0;
  const int64_t first = job.recompute == Recompute::kFull ? job.recompute_layers : 0;
  for (int64_t l = first; l < job.layers[static_cast<size_t>(vs)]; ++l)
    n += job.model.is_moe_layer(job.first_layer(vs) + l) ? 1 : 0;
  return n;
}
}  // namespace

int64_t communicators(const Job& job) {
  // NCCL communicators a rank drives: its TP, CP, data-parallel (dp*cp) and pipeline groups, and
  // the expert-parallel one for MoE.
  int64_t n = 0;
  for (const int64_t size : {job.tp, job.cp, job.dp_cp(), job.pp, job.ep}) n += size > 1 ? 1 : 0;
  return n;
}

int64_t embedding_stage(const Job& job) { return schedules::stage_of(job.placement, static_cast<int>(job.pp), 0); }

int64_t head_stage(const Job& job) {
  return schedules::stage_of(job.placement, static_cast<int>(job.pp), static_cast<int>(job.pp * job.vp - 1));
}

memory::StageMemoryInput stage_memory_input(const Job& job, int64_t stage) {
  memory::StageMemoryInput in;
  in.model = &job.model;
  in.layers = job.stage_layers(stage);
  int64_t largest = 0;
  for (int64_t c = 0; c < job.vp; ++c)
    largest = std::max(largest, job.layers[static_cast<size_t>(job.virtual_stage(stage, c))]);
  in.layers_per_chunk = largest;
  in.first = stage == embedding_stage(job);
  in.last = stage == head_stage(job);
  in.embedding_chunk = in.first;
  in.tp = job.tp;
  in.dp = job.dp_shard;
  in.zero = job.zero;
  in.sp = job.sp;
  in.recompute = to_string(job.recompute);
  in.recompute_layers = job.recompute_layers;
  in.recompute_modules = job.recompute_modules;
  in.flash = job.attention == Attention::kFlash;
  in.micro_batch = job.micro_batch;
  in.seq_len = job.seq_len;
  in.cp = job.cp;
  in.bucket_size = job.bucket_size;
  in.offload_optimizer = job.offload_optimizer;
  in.optimizer_state_bytes = job.optimizer_states == OptimizerStates::kBf16 ? 8.0 : 12.0;
  in.gathered_layers = job.prefetch_layers + 1;
  in.keeps_gathered_chunk =
      !job.reshard_after_forward ||
      schedules::ScheduleRegistry::instance().get(job.schedule, "schedule").reuses_gathered_weights;
  in.fp8_params = job.fp8_param_gather;
  const stack::StackMemory& sm = job.stack.memory;
  in.fp8 = compute::quantized(job.precision);
  in.quantized_bytes = compute::operand_bytes(job.precision);
  in.fp8_saved_inputs = sm.fp8_saved_inputs;
  in.fp8_weight_cache = sm.fp8_weight_cache;
  in.fp8_amax_history = sm.fp8_amax_history;
  in.main_grad_bytes = sm.main_grad_bytes;
  in.offload_grad_bytes = sm.offload_grad_bytes;
  const bool eager_loss = job.eager_loss() && sm.eager_logits_bytes > 0.0;
  in.logits_bytes = eager_loss ? sm.eager_logits_bytes : sm.logits_bytes;
  in.framework = sm.cuda_context + sm.workspaces + sm.nccl_per_communicator * communicators(job);
  in.allocator_fragmentation = sm.allocator_fragmentation;
  if (job.model.moe || job.model.mla || job.model.mtp_layers > 0) {
    in.transformer_params = 0;
    int64_t most_moe = 0;
    for (int64_t c = 0; c < job.vp; ++c) {
      const int64_t vs = job.virtual_stage(stage, c);
      for (int64_t l = 0; l < job.layers[static_cast<size_t>(vs)]; ++l) {
        in.transformer_params += job.rank_layer_params(job.first_layer(vs) + l);
        in.expert_params += job.expert_layer_params(job.first_layer(vs) + l);
      }
      if (job.model.moe) most_moe = std::max(most_moe, moe_layers_in(job, vs));
    }
    if (in.last) {
      in.transformer_params += job.rank_mtp_params();
      in.expert_params += job.expert_mtp_params();
    }
    if (job.model.moe) in.moe_extra_activation = moe_block_extra(job) * most_moe;
    in.expert_dp = job.expert_dp();
  }
  // The MTP modules' activations belong to the last chunk, which is on the last stage.
  if (in.last) in.moe_extra_activation += mtp_activation(job);
  if (job.bf16_first_layers > 0 || job.bf16_last_layers > 0) {
    for (int64_t c = 0; c < job.vp; ++c) {
      const int64_t vs = job.virtual_stage(stage, c), first = job.first_layer(vs);
      for (int64_t l = first; l < first + job.layers[static_cast<size_t>(vs)]; ++l)
        if (bf16_layer(job, l)) {
          const double experts = job.expert_layer_params(l);
          in.bf16_params += job.rank_layer_params(l) - experts;
          in.bf16_expert_params += experts;
        }
      in.bf16_layers_per_chunk = std::max(in.bf16_layers_per_chunk, stored_bf16_layers(job, vs));
    }
  }
  return in;
}

int64_t chunk_activation_bytes(const Job& job, int64_t vs) {
  const int64_t stage = schedules::stage_of(job.placement, static_cast<int>(job.pp), static_cast<int>(vs));
  memory::StageMemoryInput in = stage_memory_input(job, stage);
  in.layers_per_chunk = job.layers[static_cast<size_t>(vs)];
  in.bf16_layers_per_chunk = stored_bf16_layers(job, vs);
  in.embedding_chunk = vs == 0;
  in.moe_extra_activation = job.model.moe ? moe_block_extra(job) * moe_layers_in(job, vs) : 0;
  if (vs == job.pp * job.vp - 1) in.moe_extra_activation += mtp_activation(job);
  const int64_t bytes = memory::stage_memory(in).activation_per_chunk.count();
  if (job.offload_activation_layers <= 0 || in.layers_per_chunk <= 0) return bytes;
  // Layer-granular offload: n of the chunk's L layers wait in host memory; the device keeps the
  // other L - n and one offloaded layer being copied out or prefetched back.
  const int64_t L = in.layers_per_chunk, n = std::min(job.offload_activation_layers, L);
  const int64_t kept = std::min(L, L - n + 1);
  return static_cast<int64_t>(static_cast<double>(bytes) * static_cast<double>(kept) / static_cast<double>(L));
}

int64_t host_offload_bytes(const Job& job, int64_t stage, const std::vector<schedules::Op>& order) {
  int64_t bytes = 0;
  if (job.offload_optimizer) {
    // The states as the device would have held them, and the fp32 gradients the CPU step reads
    // beside them (DeepSpeed ZeRO-Offload's fp32 gradient partitions, Megatron-Core's CPU
    // optimizer's pinned gradient copies), sharded alike: 4 bytes per parameter of the shard.
    memory::StageMemoryInput in = stage_memory_input(job, stage);
    in.offload_optimizer = false;
    const double states = static_cast<double>(memory::stage_memory(in).optimizer.count());
    bytes += static_cast<int64_t>(states * (1.0 + 4.0 / in.optimizer_state_bytes));
  }
  if (job.offload_activations || job.offload_activation_layers > 0) {
    Job kept = job;
    kept.offload_activations = false;
    kept.offload_activation_layers = 0;
    const auto kept_peak = static_cast<double>(activation_peak(kept, stage, order).bytes);
    int64_t layers = 0, largest = 0;  // the stage's longest chunk, its largest chunk's activations
    for (int64_t c = 0; c < job.vp; ++c) {
      const int64_t vs = job.virtual_stage(stage, c);
      layers = std::max(layers, job.layers[static_cast<size_t>(vs)]);
      largest = std::max(largest, chunk_activation_bytes(kept, vs));
    }
    if (job.offload_activations) {
      // Every chunk in flight but the one being computed waits on the host (the prefetched one
      // is on both).
      bytes += static_cast<int64_t>(std::max(0.0, kept_peak - static_cast<double>(largest)));
    } else if (layers > 0) {
      // N of each chunk's L layers wait on the host, for every chunk in flight.
      const double share =
          static_cast<double>(std::min(job.offload_activation_layers, layers)) / static_cast<double>(layers);
      bytes += static_cast<int64_t>(kept_peak * share);
    }
  }
  return bytes;
}

ActivationPeak activation_peak(const Job& job, int64_t stage, const std::vector<schedules::Op>& order) {
  std::vector<int64_t> bytes(static_cast<size_t>(job.vp));
  for (int64_t c = 0; c < job.vp; ++c)
    bytes[static_cast<size_t>(c)] = chunk_activation_bytes(job, job.virtual_stage(stage, c));
  const schedules::OpType frees = job.split_weight_grad ? schedules::OpType::kW : schedules::OpType::kB;
  ActivationPeak peak;
  int64_t live = 0, chunks = 0;
  for (const auto& op : order) {
    const int64_t b = bytes[static_cast<size_t>(op.chunk)];
    if (op.type == schedules::OpType::kF) {
      live += b;
      ++chunks;
    } else if (op.type == frees) {
      live -= b;
      --chunks;
    }
    peak.bytes = std::max(peak.bytes, live);
    peak.chunks = std::max(peak.chunks, chunks);
  }
  if (job.offload_activations) {
    // Offloaded: the chunk being computed and the one being prefetched for the next backward.
    const int64_t largest = *std::max_element(bytes.begin(), bytes.end());
    peak.bytes = std::min(peak.bytes, 2 * largest);
  }
  return peak;
}

}  // namespace trainsim::models::workload
