#pragma once
// Per-rank memory of one pipeline stage: model states by ZeRO stage (bf16/fp16 weights, gradient
// buffer in the stack's reduction dtype, fp32 master weights + Adam moments), activations per
// micro-batch following Korthikanti et al. 2022 (derived per tensor, so GQA / SwiGLU /
// no-dropout models are exact; FP8 stacks keep GEMM inputs in FP8), transient buffers, FP8
// state, and what the software stack allocates besides (CUDA context, workspaces, NCCL buffers,
// the caching allocator's reserve). The number of micro-batches in flight comes from the schedule.

#include <optional>
#include <string>

#include "models/llm/model_spec.hpp"
#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::models::memory {

struct StageMemoryInput {
  const llm::ModelSpec* model = nullptr;
  int64_t layers = 0;                // transformer layers on this rank (all chunks)
  bool first = false, last = false;  // holds the embedding / LM head
  int64_t tp = 1, dp = 1, zero = 0;
  bool sp = false;
  std::string recompute = "none";
  bool flash = true;
  int64_t micro_batch = 1, seq_len = 0;
  int64_t layers_per_chunk = 0;  // layers of one model chunk (activations are allocated per chunk)
  sim::Bytes bucket_size;
  int64_t cp = 1;                  // context parallel: a rank keeps seq_len / cp tokens of each sequence
  int64_t recompute_layers = 0;    // under full recompute: layers of the chunk recomputed (the rest keep all)
  uint32_t recompute_modules = 0;  // under selective recompute: the modules redone (llm::RecomputeModule bits)
  bool embedding_chunk = false;    // the chunk holds the embedding (its output is stored too)
  bool offload_optimizer = false;
  double optimizer_state_bytes = 12.0;  // per parameter: fp32 master + Adam m, v (8 with bf16 moments)
  // ZeRO-3 working set: layers gathered at once (prefetch depth + the one computing), or whole
  // chunks kept gathered (reshard_after_forward off, breadth-first reuse).
  int64_t gathered_layers = 2;
  bool keeps_gathered_chunk = false;
  bool fp8_params = false;  // parameters gathered in FP8 (1 byte)
  // MoE models: the stage's transformer parameters one rank holds (experts split over ep x etp),
  // and the extra activation bytes of the chunk's MoE blocks over the dense formula; -1 / 0 for
  // dense models.
  double transformer_params = -1.0;
  int64_t moe_extra_activation = 0;
  // Routed-expert parameters among them, whose ZeRO states shard over the expert data-parallel
  // group (dp*cp*tp/(ep*etp) ranks holding the same experts) instead of `dp`.
  double expert_params = 0.0;
  int64_t expert_dp = 1;
  // The software stack's conventions (models/stack): FP8 training and what it keeps, the
  // gradient buffer's element size, the loss's logits, and the memory outside PyTorch's tensors.
  bool fp8 = false;
  bool fp8_saved_inputs = false;
  // BF16 first/last layers of a quantized job (workload/job/bf16_layers.hpp): their parameters on
  // one rank before sharding, dense and routed experts (no cached quantized weights, no FP8
  // primary weights for them), and how many of a chunk's stored (not recomputed) layers keep
  // 16-bit saved inputs.
  double bf16_params = 0.0, bf16_expert_params = 0.0;
  int64_t bf16_layers_per_chunk = 0;
  double quantized_bytes = 1.0;   // bytes per quantized value with its scales (fp8 1, mxfp8 1.03, nvfp4 0.56)
  double fp8_weight_cache = 0.0;  // bytes per held transformer parameter
  int64_t fp8_amax_history = 0;
  int64_t main_grad_bytes = 4;
  int64_t offload_grad_bytes = 0;  // the gradient buffer's bytes under offload_optimizer (0: main_grad_bytes)
  double logits_bytes = 8.0;
  sim::Bytes framework;                // CUDA context + workspaces + NCCL buffers of the rank's communicators
  double allocator_fragmentation = 0;  // reserved / allocated - 1 on activations and buffers
};

struct StageMemory {
  sim::Bytes weights, gradients, optimizer;  // model states (after ZeRO sharding)
  sim::Bytes fp8_state;                      // cached FP8 weights (+ transposes) and amax histories
  sim::Bytes activation_per_chunk;           // stored for one micro-batch of the chunk described
  sim::Bytes activations;                    // peak in flight (filled in from the schedule)
  sim::Bytes buffers;                        // transient: recompute working set, logits, comm buffers
  sim::Bytes framework;                      // outside PyTorch's allocator: CUDA context, workspaces, NCCL
  double fragmentation = 0;                  // the caching allocator's reserve on activations and buffers
  double parameters = 0;                     // parameters held (unsharded by ZeRO)
  // Host memory the offloads use per GPU (not device memory; filled in from the schedule): the
  // optimizer's states under optimizer offload, the activations waiting on the host under
  // activation offload.
  sim::Bytes host;
  // Tensors alive at the peak (PyTorch's max_memory_allocated).
  sim::Bytes allocated() const { return weights + gradients + optimizer + fp8_state + activations + buffers; }
  // What the caching allocator holds for them (max_memory_reserved).
  sim::Bytes reserved() const {
    return allocated() +
           sim::Bytes(static_cast<int64_t>(fragmentation * static_cast<double>((activations + buffers).count())));
  }
  // Device memory the process uses: what is checked against the GPU's capacity.
  sim::Bytes total() const { return reserved() + framework; }
  sim::config::Json to_json() const;
};

// Activation bytes one layer keeps for backward, per TP rank, for one micro-batch.
// `quantized_inputs`: bytes per element of the GEMM inputs kept for backward as the quantized casts
// Transformer Engine's GEMMs read (1 for fp8; 0: kept in 16-bit).
// `modules`: under selective recompute, the recomputed modules (llm::RecomputeModule bits) whose
// tensors are not kept; null = what `recompute` implies (selective: the attention core). The
// dense formula's MLP terms stand for a MoE layer's too (the MoE block's extra is separate).
sim::Bytes layer_activation_bytes(const llm::ModelSpec& m, int64_t micro_batch, int64_t seq_len, int64_t tp, bool sp,
                                  const std::string& recompute, bool flash, double quantized_inputs = 0.0,
                                  std::optional<uint32_t> modules = std::nullopt);

// Everything except `activations` (which needs the peak in-flight count).
StageMemory stage_memory(const StageMemoryInput& in);

}  // namespace trainsim::models::memory
