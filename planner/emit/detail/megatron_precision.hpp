#pragma once
// The precision of a Megatron-LM command line: the 16-bit type, the quantized GEMM recipe
// (per-tensor FP8, Blackwell's MXFP8 and NVFP4) with its parameter all-gather, and the attention
// kernel, for the Megatron-Core release the flags are written for. docs/emitters.md, "Blackwell
// precisions", has the mapping and its sources.

#include <string>
#include <vector>

#include "models/compute/compute_model.hpp"
#include "planner/emit/detail/megatron_args.hpp"

namespace trainsim::planner::emit::detail {

// The recipe Megatron-Core 0.`minor` can run for `p`: `p` itself, or the nearest older one when the
// release predates it (NVFP4, --fp4-format: 0.15; MXFP8, --fp8-recipe mxfp8: 0.12; before that
// per-tensor FP8).
models::compute::Precision megatron_runnable_precision(models::compute::Precision p, int minor);

// PRECISION_ARGS (and, before Megatron-Core 0.10, the attention kernel's environment).
void megatron_precision_args(const models::workload::Job& j, int minor, MegatronCommand& c);
// What the release cannot run of the plan's precision (the fallback recipe written instead), and
// what NVIDIA's Blackwell recipes change for MXFP8 and NVFP4 (checks for the user).
void megatron_precision_notes(const models::workload::Job& j, int minor, std::vector<std::string>& notes);

}  // namespace trainsim::planner::emit::detail
