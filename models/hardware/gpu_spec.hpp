#pragma once
// An accelerator: datasheet limits plus the few efficiency constants the compute model needs.
// Presets are data (models/presets/gpus/*.json); each constant records its source.

#include <map>
#include <optional>
#include <string>

#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::models::hardware {

struct GpuSpec {
  std::string name;
  std::string description;
  sim::Bytes memory;                                        // device memory capacity
  sim::Bandwidth hbm_bandwidth;                             // datasheet HBM bandwidth
  sim::FlopRate peak_bf16, peak_fp16, peak_fp8, peak_fp32;  // dense tensor-core peaks
  sim::FlopRate peak_mxfp8, peak_nvfp4;                     // block-scaled peaks (0: not supported)
  int64_t sms = 0;                                          // streaming multiprocessors (wave quantization)
  double gemm_efficiency = 0.8;                             // best achievable fraction of peak for large GEMMs
  double fp8_gemm_efficiency = 0.7;                         // same for fp8 GEMMs
  std::optional<double> mxfp8_gemm_efficiency;              // same for MXFP8 (null: fp8_gemm_efficiency)
  std::optional<double> nvfp4_gemm_efficiency;              // same for NVFP4 (null: fp8_gemm_efficiency)
  double attention_efficiency = 0.5;                        // fused (flash) attention forward, fraction of peak
  std::optional<double> attention_bwd_efficiency;           // its backward (null: attention_efficiency)
  double hbm_efficiency = 0.85;         // achievable fraction of HBM bandwidth for streaming kernels
  double sustained_clock = 1.0;         // tensor-core clock held under sustained load / boost clock
  double gemm_tile_overhead_k = 128.0;  // per-tile pipeline fill + epilogue, in elements of K
  double gemm_wave_quantization = 1.0;  // share of a partial last wave of tiles that is lost (0..1)
  sim::Time kernel_launch;              // per-kernel launch + scheduling overhead
  sim::Bytes reserved_memory;           // CUDA context + allocator fragmentation not usable by tensors
  double tdp_watts = 0.0;               // board power limit (0: unknown); energy estimates
  // A power cap below the board's TDP (nvidia-smi -pl): parse_gpu lowers sustained_clock by the
  // cube root of limit / TDP and charges the limit as tdp_watts. 0: none.
  double power_limit_watts = 0.0;
  std::map<std::string, std::string> sources;  // field -> origin
};

const sim::config::Schema<GpuSpec>& gpu_schema();
GpuSpec parse_gpu(const sim::config::Json& j, const std::string& path);

}  // namespace trainsim::models::hardware
