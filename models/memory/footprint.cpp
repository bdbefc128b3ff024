#include "models/memory/footprint.hpp"

#include <algorithm>
#include <vector>

#include "models/llm/recompute_modules.hpp"

namespace trainsim::models::memory {

namespace {
constexpr double kAct = 2.0;  // bytes per bf16/fp16 activation element

// A footprint term, computed in double; past 1 EiB it is an error, never a wrapped-around count.
sim::Bytes footprint_bytes(double bytes) {
  return sim::Bytes::checked(bytes, "memory footprint",
                             "a smaller model, micro_batch or seq_len: one GPU's footprint passes 1 EiB");
}

// Op-level selective checkpointing (llm::kRecomputeOps, torchtitan's "op" policy: PyTorch's
// checkpoint with a policy that saves aten.mm outputs except every second one, the SDPA outputs
// and the TP reduce-scatter outputs). Per token: the layer's input, the saved matmul outputs in
// forward order wq, wk, wv, wo, w1, (w3,) w2 (the 1st, 3rd, 5th, 7th), the attention output and
// its fp32 log-sum-exp per head; a row-parallel matmul's output is the whole partial sum before
// its reduce-scatter, and that reduce-scatter's output is kept too.
sim::Bytes op_checkpoint_bytes(const llm::ModelSpec& m, double T, int64_t tp, bool sp) {
  const double t = static_cast<double>(tp), h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_width()) / 2.0, f = static_cast<double>(m.ffn_hidden);
  struct Mm {
    double width;
    bool row_parallel;
  };
  std::vector<Mm> mms{
      {static_cast<double>(m.q_width()) / t, false}, {kv / t, false}, {kv / t, false}, {h, true}, {f / t, false}};
  if (m.activation == "swiglu") mms.push_back({f / t, false});
  mms.push_back({h, true});
  double per_token = h / (sp ? t : 1.0);  // the checkpointed layer's input
  for (size_t i = 0; i < mms.size(); i += 2) {
    per_token += mms[i].width;
    if (mms[i].row_parallel && tp > 1) per_token += h / t;  // the reduce-scatter's output
  }
  per_token += static_cast<double>(m.v_width()) / t;  // the attention output
  double bytes = T * per_token * kAct + T * static_cast<double>(m.heads) / t * 4.0;
  return footprint_bytes(bytes);
}
}  // namespace

sim::Bytes layer_activation_bytes(const llm::ModelSpec& m, int64_t micro_batch, int64_t seq_len, int64_t tp, bool sp,
                                  const std::string& recompute, bool flash, double quantized_inputs,
                                  std::optional<uint32_t> modules) {
  const double T = static_cast<double>(micro_batch) * static_cast<double>(seq_len);
  const double h = static_cast<double>(m.hidden), t = static_cast<double>(tp);
  const double repl = sp ? 1.0 / t : 1.0;  // tensors outside TP regions are split only with SP
  if (recompute == "full") return footprint_bytes(T * h * kAct * repl);  // layer input only
  const uint32_t mods = recompute != "selective" ? 0u : modules.value_or(llm::kRecomputeCoreAttn);
  if (mods & llm::kRecomputeOps) return op_checkpoint_bytes(m, T, tp, sp);
  const double kv = static_cast<double>(m.kv_width());  // keys and values as attention reads them
  const double q = static_cast<double>(m.q_width()), v = static_cast<double>(m.v_width());
  const double f = static_cast<double>(m.ffn_hidden);
  const double gates = m.activation == "swiglu" ? 2.0 : 1.0;
  const double drop = m.dropout ? 1.0 : 0.0;
  // Korthikanti et al. Sec 4.1, per tensor: attention block = norm input + QKV input (2 x 2Th
  // replicated), Q, K, V (2T(h+2kvd)/t), out-proj input (2Th/t), dropout mask (Th);
  // MLP block = norm input + fc1 input (4Th), fc1 output and activation output (2T(g+1)f/t),
  // dropout mask (Th). For MHA/GeLU this is Th(10 + 24/t) + masks = the paper's 34 at t = 1.
  // Under FP8, Transformer Engine keeps the four GEMM inputs (QKV and fc1 inputs, out-proj input,
  // fc2 input = activation output) as the FP8 casts its GEMMs read: 1 byte each (MXFP8 1 + 1/32
  // with its block scales, NVFP4 0.5 + 1/16: `quantized_inputs`).
  const double gemm_in = quantized_inputs > 0.0 ? quantized_inputs : kAct;
  // Recomputed modules keep nothing of their own (recompute_modules.hpp): layernorm drops the two
  // norm outputs (the QKV and fc1 / router inputs), mlp the whole dense MLP but its input (the
  // norm's), mla_up_proj the materialised heads.
  const bool norms = (mods & llm::kRecomputeLayernorm) != 0, mlp = (mods & llm::kRecomputeMlp) != 0;
  const double norm_outputs = (norms ? 0.0 : 1.0) + (norms || mlp ? 0.0 : 1.0);
  double bytes = T * h * (2 * kAct + norm_outputs * gemm_in + 2 * drop) * repl;  // norm inputs, GEMM inputs, masks
  if (!(m.mla && (mods & llm::kRecomputeMlaUpProj))) bytes += T * (q + kv) * kAct / t;  // Q, K, V
  bytes += T * v * gemm_in / t;                                                         // out-proj input
  if (m.qk_norm) bytes += T * (q + kv / 2) * kAct / t;  // QK-norm inputs (queries, keys)
  if (m.mla) {
    // MLA (mla.hpp): the latents are kept twice (norm input, up-projection input) and the shared
    // RoPE key once, on the rank's sequence shard under SP; Q, K, V above are the materialised heads.
    const llm::MlaSpec& a = *m.mla;
    const double latents = static_cast<double>(a.q_lora_rank.value_or(0) + a.kv_lora_rank);
    bytes += T * (2 * latents + static_cast<double>(a.qk_rope_head_dim)) * kAct * repl;
  }
  if (!mlp) bytes += T * (gates * kAct + gemm_in) * f / t;  // fc1 output(s) and activation output
  // A clamped SwiGLU keeps the unclamped fc1 output too (the clamps' autograd), beside the clamped
  // copy the fused GLU saves (llm::append_glu_clamp).
  if (!mlp && m.activation_clamp) bytes += T * gates * kAct * f / t;
  if (flash) {
    bytes += T * static_cast<double>(m.heads) / t * 4.0;  // softmax log-sum-exp (fp32 per row)
  } else if (!(mods & llm::kRecomputeCoreAttn)) {
    // Unfused attention keeps softmax output (2), dropout mask (1) and dropout output (2) per
    // score: 5 a s^2 b / t (the paper's 5as/h term).
    const double scores = static_cast<double>(micro_batch) * static_cast<double>(m.heads) / t *
                          static_cast<double>(seq_len) * static_cast<double>(seq_len);
    bytes += scores * (m.dropout ? 5.0 : 2.0);
  }
  return footprint_bytes(bytes);
}

StageMemory stage_memory(const StageMemoryInput& in) {
  const llm::ModelSpec& m = *in.model;
  const double h = static_cast<double>(m.hidden), t = static_cast<double>(in.tp);
  double params =
      in.transformer_params >= 0.0 ? in.transformer_params : static_cast<double>(in.layers) * m.layer_parameters() / t;
  if (in.first)
    params +=
        static_cast<double>(m.vocab) * h / t + (m.position == "learned" ? static_cast<double>(in.seq_len) * h : 0.0);
  if (in.last && (!m.tied_embeddings || !in.first)) params += static_cast<double>(m.vocab) * h / t;
  if (in.last) params += m.norm == "layernorm" ? 2 * h : h;  // final norm: weight (and bias)
  StageMemory s;
  s.parameters = params;
  const double dp = static_cast<double>(in.dp);
  // Megatron mixed precision: 2-byte weights, 4-byte fp32 main gradients, 12-byte optimizer
  // state (fp32 master copy, Adam m and v); ZeRO-1 shards the optimizer, ZeRO-2 also the
  // gradients, ZeRO-3 also the weights (Rajbhandari et al. 2020, Fig. 1).
  // `dp` is the shard group (dp*cp ranks unless HSDP / MiCS shard over fewer).
  // Routed experts shard over their own group (the ranks holding the same experts).
  const double dense = params - in.expert_params;
  const double edp = static_cast<double>(std::max<int64_t>(in.expert_dp, 1));
  auto sharded = [&](bool on) { return on ? dense / dp + in.expert_params / edp : params; };
  // The transformer layers' parameters one rank holds (the embedding and LM head are not FP8).
  const double transformer =
      in.transformer_params >= 0.0 ? in.transformer_params : static_cast<double>(in.layers) * m.layer_parameters() / t;
  const double held_transformer =
      in.zero >= 3 ? (transformer - in.expert_params) / dp + in.expert_params / edp : transformer;
  // FP8 parameter gather (Megatron --fp8-param-gather: Transformer Engine's fp8_model_init) makes
  // the layers' weights FP8 tensors: no 16-bit copy, the FP8 value is the weight (the fp32 master
  // stays in the optimizer); the cache below then holds only what it keeps besides the value.
  // Only stacks that cache FP8 weights (Transformer Engine's modules) do this: FSDP2's float8
  // all-gather keeps 16-bit shards and casts what it gathers.
  const bool fp8_primary = in.fp8 && in.fp8_params && in.fp8_weight_cache > 0.0;
  const double held_bf16 =
      in.zero >= 3 ? in.bf16_params / dp + in.bf16_expert_params / edp : in.bf16_params + in.bf16_expert_params;
  const double held_quantized = std::max(0.0, held_transformer - held_bf16);
  s.weights =
      footprint_bytes(sharded(in.zero >= 3) * 2.0 - (fp8_primary ? held_quantized * (2.0 - in.quantized_bytes) : 0.0));
  // The gradient buffer holds the stack's reduction dtype (fp32 main grads, or bf16). Under
  // optimizer offload the fp32 states go to the host; the device keeps the stack's buffer
  // (Megatron-Core's CPU optimizer copies its main grads out) or 16-bit gradients (DeepSpeed's
  // ZeRO-Offload): offload_grad_bytes.
  const double grad_bytes = static_cast<double>(
      in.offload_optimizer && in.offload_grad_bytes > 0 ? in.offload_grad_bytes : in.main_grad_bytes);
  s.gradients = footprint_bytes(sharded(in.zero >= 2) * grad_bytes);
  s.optimizer =
      in.offload_optimizer ? sim::Bytes(0) : footprint_bytes(sharded(in.zero >= 1) * in.optimizer_state_bytes);

  // Context parallelism splits every sequence: activations scale with the local tokens.
  const int64_t seq_local = in.seq_len / std::max<int64_t>(in.cp, 1);
  const int64_t recomputed = in.recompute == "full" ? std::min(in.recompute_layers, in.layers_per_chunk) : int64_t{0};
  const std::string kept = in.recompute == "full" ? "none" : in.recompute;
  const double fp8_inputs = in.fp8 && in.fp8_saved_inputs ? in.quantized_bytes : 0.0;
  const auto modules = in.recompute_modules != 0 ? std::optional<uint32_t>(in.recompute_modules) : std::nullopt;
  const int64_t stored = in.layers_per_chunk - recomputed;
  const int64_t stored16 = fp8_inputs > 0.0 ? std::min(in.bf16_layers_per_chunk, stored) : int64_t{0};
  s.activation_per_chunk =
      layer_activation_bytes(m, in.micro_batch, seq_local, in.tp, in.sp, "full", in.flash) * recomputed +
      layer_activation_bytes(m, in.micro_batch, seq_local, in.tp, in.sp, kept, in.flash, fp8_inputs, modules) *
          (stored - stored16) +
      layer_activation_bytes(m, in.micro_batch, seq_local, in.tp, in.sp, kept, in.flash, 0.0, modules) * stored16;
  s.activation_per_chunk += sim::Bytes(in.moe_extra_activation);
  const double T = static_cast<double>(in.micro_batch) * static_cast<double>(seq_local);
  // The embedding's output is the first layer's input (counted there); only its dropout mask
  // (1 byte per element, Korthikanti et al. Sec 4.3, Megatron's theoretical_memory_usage) is extra.
  if (in.embedding_chunk && m.dropout) s.activation_per_chunk += footprint_bytes(T * h * 1.0 / (in.sp ? t : 1.0));
  // Transient working set: under full recompute one layer's activations are rebuilt during its
  // backward; the last stage holds fp32 logits and their gradient; one TP comm buffer; the
  // gradient bucket under communication; ZeRO-3 gathers one layer's weights.
  sim::Bytes buffers = footprint_bytes(T * h * kAct * 2);
  if (in.recompute == "full")
    buffers += layer_activation_bytes(m, in.micro_batch, seq_local, in.tp, in.sp, "none", in.flash);
  if (in.last) buffers += footprint_bytes(T * static_cast<double>(m.vocab) / t * in.logits_bytes);
  buffers += in.bucket_size;
  if (in.zero >= 3) {
    // A stage holding BF16 first/last layers gathers them 16-bit: its working set is sized by them.
    const double elem = in.fp8_params && in.bf16_layers_per_chunk == 0 ? 1.0 : 2.0;
    const double gathered = in.keeps_gathered_chunk ? static_cast<double>(std::max(in.layers_per_chunk, int64_t{1}))
                                                    : static_cast<double>(in.gathered_layers);
    // A gathered layer is what one rank holds unsharded: the whole layer over TP, or for MoE models
    // (transformer_params given) its share of the experts too.
    const double layer = in.transformer_params >= 0.0 && in.layers > 0
                             ? in.transformer_params / static_cast<double>(in.layers)
                             : m.layer_parameters() / t;
    buffers += footprint_bytes(gathered * layer * elem);
    // The LM head is unsharded while the loss runs (FSDP2 keeps torchtitan's [norm, output] group
    // gathered from its forward through its backward; Megatron FSDP and ZeRO-3 gather it for both):
    // the logits' peak holds it, 16-bit (no stack quantizes the output layer's all-gather).
    if (in.last) buffers += footprint_bytes(static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / t * 2.0);
  }
  s.buffers = buffers;
  if (in.fp8) {
    // Cached FP8 weights (and transposes) of the transformer layers this rank holds (the LM head
    // and embedding stay 16-bit), and delayed scaling's amax histories: 4 Linear modules per
    // layer, each with 3 forward (input, weight, output) and 2 backward (grad output, grad input)
    // FP8 tensors, fp32 per entry.
    const double amax = static_cast<double>(in.layers) * 4.0 * 5.0 * static_cast<double>(in.fp8_amax_history) * 4.0;
    // The cache is in bytes per parameter of per-tensor FP8 (value + transpose); block formats hold
    // their scale factors beside the values (MXFP8 1 + 1/32, NVFP4 0.5 + 1/16 bytes per value).
    // FP8 weights are their own value copy: the transpose remains.
    const double cache = fp8_primary ? std::max(0.0, in.fp8_weight_cache - 1.0) : in.fp8_weight_cache;
    s.fp8_state = footprint_bytes(held_quantized * cache * in.quantized_bytes + amax);
  }
  s.framework = in.framework;
  s.fragmentation = in.allocator_fragmentation;
  return s;
}

sim::config::Json StageMemory::to_json() const {
  return sim::config::Json{{"weights_bytes", weights.count()},
                           {"gradients_bytes", gradients.count()},
                           {"optimizer_bytes", optimizer.count()},
                           {"fp8_state_bytes", fp8_state.count()},
                           {"activations_bytes", activations.count()},
                           {"buffers_bytes", buffers.count()},
                           {"allocated_bytes", allocated().count()},
                           {"reserved_bytes", reserved().count()},
                           {"framework_bytes", framework.count()},
                           {"total_bytes", total().count()},
                           {"host_bytes", host.count()}};
}

}  // namespace trainsim::models::memory
