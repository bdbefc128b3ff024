#pragma once
// BF16 first and last layers of a quantized job, as Megatron-Core keeps them
// (TransformerConfig first_last_layers_bf16 with num_layers_at_start_in_bf16 /
// num_layers_at_end_in_bf16: "retains first and last N TransformerBlocks in BF16 as opposed to
// FP8", fp8_utils.py / fp4_utils.py is_first_last_bf16_layer over the global layer index). The
// NVFP4 training recipes keep a few of the most sensitive layers in higher precision this way.
//
// A BF16 layer runs every GEMM of its blocks in BF16: no quantize kernels, 16-bit activations
// saved for the backward, no cached quantized weights, and 16-bit weights in the FP8 parameter
// all-gather. The embedding and LM head are 16-bit whatever this says (docs/precision.md); MTP
// layers follow the model's last layer index, so they stay quantized.
//
// Refused (exit 2): on a precision that is not quantized; more BF16 layers than the model has;
// under fp8 / mxfp8 more at one end than a pipeline stage's layers on a stack with
// features.bf16_edge_layers_per_stage (Megatron-Core's TransformerConfig); FP8 delayed scaling
// (Megatron-Core's TransformerConfig: "Delayed scaling does not support first / last layer in
// BF16"); a stack without features.bf16_edge_layers, or without features.bf16_edge_experts when a
// BF16 layer is a MoE layer (models/workload/job/stack.cpp).

#include <cstdint>

#include "sim/config/schema.hpp"

namespace trainsim::models::workload {

struct Job;
struct JobSpec;

// The job keys bf16_first_layers and bf16_last_layers.
void bf16_layer_fields(sim::config::Schema<JobSpec>& s);
// The refusals above, on a resolved job.
void check_bf16_layers(const Job& j);
// Whether transformer layer `layer` (global index) runs in BF16.
bool bf16_layer(const Job& j, int64_t layer);
// How many of the layers [first, first + count) run in BF16.
int64_t bf16_layers_in(const Job& j, int64_t first, int64_t count);
// The share of the model's transformer layers that run in BF16.
double bf16_layer_share(const Job& j);
// Bytes per transformer parameter in a parameter all-gather, averaged over the model's layers: 2,
// or under fp8_param_gather 1 but for the BF16 layers' 2 (the planner's estimate; the simulator
// gathers each layer at its own width).
double gathered_param_bytes(const Job& j);

}  // namespace trainsim::models::workload
