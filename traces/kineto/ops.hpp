#pragma once
// What a Kineto trace's operators are, in the compute model's terms: GEMMs (aten::mm, addmm,
// bmm, baddbmm, matmul, linear, _scaled_mm: the shape from "Input Dims", the precision from
// "Input type"), fused attention (scaled_dot_product flash / efficient / cuDNN and flash_attn,
// forward and backward: FLOPs from the query and key shapes, causal), memory-bound operators
// (any other operator with tensor inputs: bytes from their shapes and element types), NCCL
// collectives, and the rest. predict_op() prices an operator with models::compute::ComputeModel,
// the way the simulator prices the kernels it generates.

#include <cstdint>
#include <optional>
#include <string>

#include "models/compute/compute_model.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "sim/units.hpp"
#include "traces/kineto/trace.hpp"

namespace trainsim::traces {

enum class OpClass : uint8_t { kGemm, kAttentionFwd, kAttentionBwd, kMemory, kCollective, kOther };
const char* to_string(OpClass c);
inline constexpr int kOpClasses = 6;

struct OpInfo {
  OpClass cls = OpClass::kOther;
  std::string precision;  // GEMM / attention: "bf16" | "fp16" | "fp8" | "fp32"
  models::compute::GemmShape gemm;
  double flops = 0.0;  // GEMM and attention (attention: causal, as the simulator counts it)
  int64_t bytes = 0;   // memory-bound: bytes through HBM (tensor inputs read, one output written)
  std::string note;    // kOther: why the compute model does not price it, e.g. "fp32 GEMM"
};

// Classifies `op` (its kernels decide whether it is a collective or a host copy).
OpInfo classify_op(const KinetoOp& op, const KinetoTrace& trace);

// True for NCCL kernels ("nccl" in the name, or a "Collective name" argument).
bool is_communication(const KinetoKernel& k);
// The collective an NCCL kernel runs: all_reduce, all_gather, reduce_scatter, all_to_all,
// send_recv, broadcast, or "other"; from "Collective name", else from the kernel name
// (ncclDevKernel_AllReduce_Sum_bf16_RING_LL -> all_reduce).
std::string collective_kind(const KinetoKernel& k);

// Device time the compute model predicts for the op's `kernels` kernels on `gpu` (a launch each);
// nullopt for what it does not price (collectives, the rest, fp32 GEMMs, fp8 on a GPU without).
std::optional<sim::Time> predict_op(const OpInfo& info, int kernels, const models::hardware::GpuSpec& gpu);

// "aten::mm [[8192,4096],[4096,4096]] c10::BFloat16": operators with the same key share a shape.
std::string op_key(const KinetoOp& op);

}  // namespace trainsim::traces
