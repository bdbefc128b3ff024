#include "planner/emit/detail/megatron_precision.hpp"

#include "planner/emit/detail/format.hpp"

namespace trainsim::planner::emit::detail {

using models::compute::Precision;
using models::workload::Attention;
using models::workload::Job;

namespace {

std::string core(int minor) { return "Megatron-Core 0." + std::to_string(minor); }

// Before 0.10 only core_r0.8.0's flags are written (megatron_args.cpp, legacy()).
bool legacy(int minor) { return minor < 10; }

// The quantized GEMM recipe `run` (what the release can run of the plan's precision) and its
// parameter all-gather. Flag names: megatron/training/arguments.py, _add_transformer_engine_args.
void recipe_args(const Job& j, int minor, Precision run, ShellArgGroup& b) {
  const bool gather = j.fp8_param_gather && !legacy(minor);
  switch (run) {
    case Precision::kFp8:
      b.arg("--fp8-format", "hybrid", "E4M3 forward, E5M2 backward (Transformer Engine)");
      // The stack's scaling: Megatron-LM's --fp8-recipe defaults to delayed (0.12+).
      if (j.stack.kernels.fp8_recipe == "current" && minor >= 12)
        b.arg("--fp8-recipe", "tensorwise", "per-tensor current scaling, as the plan's stack");
      if (gather) b.flag("--fp8-param-gather");
      break;
    case Precision::kMxfp8:
      b.arg("--fp8-format", "e4m3", "E4M3 in every GEMM operand, as Megatron-Bridge's bf16_with_mxfp8_mixed");
      b.arg("--fp8-recipe", "mxfp8", "MXFP8BlockScaling: 32-element blocks, E8M0 scales (Blackwell)");
      if (gather) {
        b.flag("--fp8-param-gather", "MXFP8 weights, no BF16 copy");
        if (minor >= 13)
          b.flag("--reuse-grad-buf-for-mxfp8-param-ag", "the weights all-gather in BF16 inside the gradient buffer");
      }
      break;
    case Precision::kNvfp4:
      b.arg("--fp4-format", "e2m1", "NVFP4: E2M1 values (Transformer Engine >= 2.7)");
      b.arg("--fp4-recipe", "nvfp4", "NVFP4BlockScaling: 16-element blocks, E4M3 scales + fp32 tensor scale");
      if (gather) b.flag("--fp4-param-gather", "weights created as NVFP4 tensors (fp4_param)");
      break;
    case Precision::kBf16:
    case Precision::kFp16: break;
  }
}

const char* upper(Precision p) {
  switch (p) {
    case Precision::kFp8: return "FP8";
    case Precision::kMxfp8: return "MXFP8";
    case Precision::kNvfp4: return "NVFP4";
    case Precision::kFp16: return "FP16";
    case Precision::kBf16: break;
  }
  return "BF16";
}

}  // namespace

// What NVIDIA's own Blackwell recipes (Megatron-Bridge 25.11, scripts/performance) change is from
// configs/llama3/llama3_llm_pretrain.py and utils/helpers.py of Megatron-Bridge v0.2.0.
void megatron_precision_notes(const Job& j, int minor, std::vector<std::string>& n) {
  const Precision run = megatron_runnable_precision(j.precision, minor);
  if (run != j.precision)
    n.push_back(std::string(upper(j.precision)) + ": " + core(minor) + " has no " +
                (j.precision == Precision::kNvfp4 ? "--fp4-format (0.15)" : "--fp8-recipe mxfp8 (0.12)") + "; " +
                (run == Precision::kMxfp8 ? "MXFP8 (--fp8-recipe mxfp8)" : "per-tensor FP8 (--fp8-format hybrid)") +
                ", the nearest, is written: its GEMMs run at " + upper(run) + " rates, not the plan's " +
                upper(j.precision) + " rates.");
  if (run == Precision::kMxfp8 && !j.fp8_param_gather)
    n.push_back(
        "MXFP8 without --fp8-param-gather: Megatron-Core (from 0.14) warns that MXFP8 without "
        "--reuse-grad-buf-for-mxfp8-param-ag and --fp8-param-gather \"will use significant amount additional GPU "
        "memory\" (Megatron-Bridge's bf16_with_mxfp8_mixed sets both); check memory before running.");
  if (run == Precision::kMxfp8 && j.overlap_param_gather)
    n.push_back(
        "MXFP8 with --overlap-param-gather: Megatron-Bridge 25.11's LLaMA-3 MXFP8 recipes turn it off (\"keeping "
        "this enabled causes NaN grad norm\"); if the gradient norm turns NaN, drop it (the plan overlaps it).");
  if (run == Precision::kNvfp4 && j.tp_comm_overlap && j.tp > 1)
    n.push_back(
        "NVFP4 with --tp-comm-overlap: Megatron-Bridge 25.11's NVFP4 recipes turn TP communication overlap off; "
        "check that your Transformer Engine's userbuffers overlap NVFP4 GEMMs, or drop it (the plan overlaps it).");
  if (run == Precision::kNvfp4 && j.fp8_param_gather && !legacy(minor))
    n.push_back(
        "NVFP4 parameter all-gather: --fp4-param-gather creates the weights as NVFP4 tensors; Megatron-Bridge's "
        "bf16_with_nvfp4_mixed leaves it off (BF16 all-gather). Check that your version gathers them in NVFP4.");
  if ((j.bf16_first_layers > 0 || j.bf16_last_layers > 0) && minor < 14)
    n.push_back("BF16 first/last layers: " + core(minor) +
                " has no --first-last-layers-bf16 (0.14): every layer runs quantized, faster than the plan.");
  if (j.fp8_param_gather && j.zero == 0)
    n.push_back(std::string(run == Precision::kNvfp4 ? "--fp4-param-gather" : "--fp8-param-gather") +
                " needs the distributed optimizer or FSDP in Megatron-LM (the plan has ZeRO 0).");
}

Precision megatron_runnable_precision(Precision p, int minor) {
  if (p == Precision::kNvfp4 && minor < 15) p = Precision::kMxfp8;
  if (p == Precision::kMxfp8 && minor < 12) p = Precision::kFp8;
  return p;
}

void megatron_precision_args(const Job& j, int minor, MegatronCommand& c) {
  ShellArgGroup b{"PRECISION_ARGS", "Precision and attention kernel", {}};
  b.flag(j.precision == Precision::kFp16 ? "--fp16" : "--bf16");
  const Precision run = megatron_runnable_precision(j.precision, minor);
  recipe_args(j, minor, run, b);
  if ((j.bf16_first_layers > 0 || j.bf16_last_layers > 0) && minor >= 14) {
    b.flag("--first-last-layers-bf16", "these transformer layers out of the quantized GEMMs");
    b.arg("--num-layers-at-start-in-bf16", std::to_string(j.bf16_first_layers));
    b.arg("--num-layers-at-end-in-bf16", std::to_string(j.bf16_last_layers));
  }
  if (!legacy(minor)) {
    b.arg("--attention-backend", j.attention == Attention::kFlash ? "flash" : "unfused");
  } else if (j.attention == Attention::kFlash) {
    // Before --attention-backend, Transformer Engine picks its attention kernel from the environment.
    c.env.push_back("NVTE_FLASH_ATTN=1");
    c.env_comments.push_back("Transformer Engine attention: FlashAttention (no --attention-backend before 0.10)");
  } else {
    c.env.push_back("NVTE_FLASH_ATTN=0");
    c.env_comments.push_back("Transformer Engine attention: unfused (no --attention-backend before 0.10)");
    c.env.push_back("NVTE_FUSED_ATTN=0");
    c.env_comments.push_back("Transformer Engine attention: unfused (no cuDNN fused attention)");
  }
  c.groups.push_back(std::move(b));
}

}  // namespace trainsim::planner::emit::detail
