#pragma once
// One logged run's record (run_record.hpp) read as a trainsim job: what the free-text fields of
// the published schema name (GPU, framework, precision), matched to presets, and the model shape
// matched to a model preset or built from the shape. Every guess is listed in `assumptions`.
//
//   cluster.gpu     GB300 -> gb300-nvl72, GB200 -> gb200-nvl72, B300 -> dgx-b300, B200 -> dgx-b200,
//                   H800 -> dgx-h800, H200 -> dgx-h200, H100 ... 96GB -> dgx-h100 with h100-sxm-96gb,
//                   H100 -> dgx-h100, A100 ... 40GB -> dgx-a100 with a100-sxm-40gb, A100 -> dgx-a100
//   framework       torchtitan; Megatron-Bridge or NeMo 25+ -> megatron-bridge-2025; NeMo 24 ->
//                   nemo-24.07; DeepSpeed (Megatron-DeepSpeed, ZeRO) -> deepspeed; Megatron-Core
//                   v0.N -> megatron-core-2024 (N < 10) or -2025; Megatron-LM -> megatron-lm-2021
//                   (-2023 when the text says 2023 or later)
//   precision       NVFP4, MXFP8 / FP8-MX, FP8, BF16, FP16 (the first named); parallel.float8 ->
//                   fp8; unstated -> the defaults' precision, else an error
//   model           a preset with the same layers, hidden, heads, vocab (when given) and (dense)
//                   ffn_hidden or (MoE) experts and top-k, and the conventions its name implies
//                   (below; no preset has Nemotron's), with the record's seq_len; else the shape, with GPT
//                   conventions (GeLU, LayerNorm, learned positions, biases, tied) for names
//                   starting "GPT" or "Megatron", Nemotron's (GeLU-priced squared ReLU,
//                   LayerNorm, RoPE) for "Nemotron", and Llama's (SwiGLU, RMSNorm, RoPE) otherwise
//   parallel        tp, pp, cp, ep, etp, vp (> 1: interleaved), micro_batch (null: 1),
//                   global_batch (null: micro_batch x grad_accum x dp), recompute (full, selective*,
//                   none; null: the stack's), fsdp > 0 or zero 3 -> zero 3, torch_compile, float8

#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::calibration {

// The job keys a record's fields say (without the defaults and the record's own `job`).
// `precision_default` is used when the record states none ("" = error). Throws ConfigError at
// `path`.<field>.
sim::config::Json record_job(const sim::config::Json& record, const sim::config::Json& defaults,
                             const std::string& path, std::vector<std::string>& assumptions);

// The cluster preset (and GPU preset, "" = the cluster's) a GPU description names; empty when none.
struct ClusterGuess {
  std::string cluster, gpu;
};
ClusterGuess cluster_for(const std::string& gpu_text);
// The stack preset a framework description names; "" when none.
std::string stack_for(const std::string& framework);
// bf16 | fp16 | fp8 | mxfp8 | nvfp4 named by a precision description; "" when none.
std::string precision_for(const std::string& text);

}  // namespace trainsim::models::calibration
