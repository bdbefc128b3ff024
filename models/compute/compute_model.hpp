#pragma once
// Kernel cost model of one GPU. GEMMs: FLOPs over the precision's peak times an efficiency that
// comes from the shape (tile padding, wave quantization over the SMs, short-K pipeline fill) with
// a roofline floor from HBM traffic. Memory-bound kernels: bytes over achievable HBM bandwidth.
// Every kernel pays a launch overhead. Constants come from the GPU preset (with sources).

#include <cstdint>
#include <span>

#include "models/hardware/gpu_spec.hpp"
#include "sim/units.hpp"

namespace trainsim::models::compute {

// kFp8: per-tensor scaled FP8 (delayed or current scaling; Hopper and later). kMxfp8 / kNvfp4: the
// OCP microscaling formats Blackwell's tensor cores run natively (MXFP8: E4M3 values in 32-element
// blocks with an E8M0 scale; NVFP4: E2M1 values in 16-element blocks with an E4M3 scale and one fp32
// tensor scale). All three run the model's GEMMs quantized and keep 16-bit activations elsewhere.
enum class Precision : uint8_t { kBf16, kFp16, kFp8, kMxfp8, kNvfp4 };
// Whether GEMMs run on quantized (8- or 4-bit) inputs: fp8, mxfp8, nvfp4.
constexpr bool quantized(Precision p) {
  return p == Precision::kFp8 || p == Precision::kMxfp8 || p == Precision::kNvfp4;
}
// Bytes per element of a quantized GEMM operand, scale factors included: fp8 1, mxfp8 1 + 1/32
// (one E8M0 byte per 32 values), nvfp4 0.5 + 1/16 (one E4M3 byte per 16 values); 2 for 16-bit.
double operand_bytes(Precision p);
Precision parse_precision(const std::string& text, const std::string& path);
const char* to_string(Precision p);
// Bytes per element of activations/weights in this precision's training (fp8 keeps bf16 copies).
int64_t activation_bytes(Precision p);

// C[m,n] = A[m,k] * B[k,n], `batch` independent instances.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  sim::Flops flops() const;
};

class ComputeModel {
 public:
  ComputeModel(const hardware::GpuSpec& gpu, Precision precision);

  // Time of one GEMM (including launch; in fp8 also the cast of the activation operand).
  sim::Time gemm(const GemmShape& s) const;
  // A GEMM kept in 16-bit whatever the precision (bf16, or fp16 in fp16 jobs): the LM head of FP8
  // stacks.
  sim::Time gemm16(const GemmShape& s) const;
  // The matrix product alone, without fp8's cast kernel (what a GEMM microbenchmark times).
  sim::Time gemm_matmul(const GemmShape& s) const;
  // Shape efficiency in (0, 1]: achieved / (peak * gemm_efficiency), before the roofline.
  double gemm_shape_efficiency(const GemmShape& s) const;
  // Bytes per element of this precision's quantize kernel (16-bit in, quantized value and scale
  // out, amax): the cast every quantized GEMM pays on its activation operand.
  double quantize_bytes_per_element() const;
  // HBM traffic of one GEMM (A and B in the precision's input width, C in bf16): its roofline floor.
  sim::Bytes gemm_traffic(const GemmShape& s) const;
  // A grouped GEMM: `problems` (one per expert, each with its own m) in one launch, as CUTLASS's
  // grouped kernels and Transformer Engine's GroupedLinear run MoE experts. Persistent CTAs take
  // output tiles from every problem in turn, so each problem pays its own tile padding (an expert
  // with 40 rows fills a third of a 128-row tile) while wave quantization is over the tiles of all
  // problems together; the roofline floor reads every problem's B (the expert's weights) once
  // whatever its m, so few rows per expert make the group weight-bandwidth bound. Empty problems
  // (m = 0) are skipped; one launch; in fp8 one cast kernel for all A operands.
  sim::Time grouped_gemm(std::span<const GemmShape> problems) const;
  // Its shape efficiency (as gemm_shape_efficiency: one tile shape for the whole group).
  double grouped_shape_efficiency(std::span<const GemmShape> problems) const;
  // The same problems as separate GEMM kernels issued round-robin on `streams` streams, as
  // Transformer Engine's GroupedLinear runs them (multi_stream_cublas_gemm: one cuBLASLt GEMM per
  // expert on 4 compute streams; a CUTLASS grouped kernel only for BF16 on Hopper behind an opt-in,
  // a cuBLASLt grouped GEMM only from 2026). Kernels on different streams share the SMs, so each
  // round of `streams` consecutive problems runs like one group of them (its tiles quantized into
  // waves together) and the rounds follow one another: with few rows per expert most of each
  // round's last wave is idle, where one grouped kernel would fill it with the next experts' tiles.
  // `streams` <= 0 is grouped_gemm.
  sim::Time multi_stream_gemm(std::span<const GemmShape> problems, int streams) const;
  // Streaming kernels moving `bytes` through HBM, issued as `kernels` launches.
  sim::Time memory_bound(sim::Bytes bytes, int kernels = 1) const;
  // Fused (flash) attention kernel executing `flops` (one launch), forward or backward.
  sim::Time flash_attention(sim::Flops flops, bool backward = false) const;
  // Elementwise fp32 math of `flops` (optimizer), bounded below by its HBM traffic.
  sim::Time vector_math(sim::Flops flops, sim::Bytes bytes, int kernels) const;

  sim::FlopRate peak() const { return peak_; }
  sim::FlopRate bf16_peak() const { return gpu_.peak_bf16; }
  const hardware::GpuSpec& gpu() const { return gpu_; }
  Precision precision() const { return precision_; }

 private:
  hardware::GpuSpec gpu_;
  Precision precision_;
  sim::Time matmul(const GemmShape& s, sim::FlopRate peak, double efficiency, double input_bytes) const;
  // Useful over issued tile area for `tiles` output tiles of one shape covering `useful` elements.
  double tile_efficiency(int64_t tiles, double useful, int64_t tm, int64_t tn) const;

  sim::FlopRate peak_;      // GEMM peak for this precision
  double best_efficiency_;  // best achievable fraction of peak_
  sim::Bandwidth hbm_;      // achievable HBM bandwidth
};

}  // namespace trainsim::models::compute
