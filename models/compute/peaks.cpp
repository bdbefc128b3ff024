#include "models/compute/peaks.hpp"

namespace trainsim::models::compute {

Peak bf16_peak(const hardware::GpuSpec& gpu) { return Peak{"bf16_dense", "BF16", gpu.peak_bf16}; }

std::optional<Peak> precision_peak(const hardware::GpuSpec& gpu, Precision p) {
  std::optional<Peak> out;
  if (p == Precision::kFp8) out = Peak{"fp8_dense", "FP8", gpu.peak_fp8};
  if (p == Precision::kMxfp8) out = Peak{"mxfp8_dense", "MXFP8", gpu.peak_mxfp8};
  if (p == Precision::kNvfp4) out = Peak{"nvfp4_dense", "NVFP4", gpu.peak_nvfp4};
  if (out && !(out->rate.per_second() > 0)) out.reset();
  return out;
}

double utilization_of(double bf16_mfu, const hardware::GpuSpec& gpu, const Peak& peak) {
  return bf16_mfu * (gpu.peak_bf16 / peak.rate);
}

void put_mfu_peaks(sim::config::Json& out, double bf16_mfu, const hardware::GpuSpec& gpu, Precision p) {
  out["mfu_peak"] = bf16_peak(gpu).key;
  if (const auto low = precision_peak(gpu, p)) {
    out["mfu_low_precision"] = utilization_of(bf16_mfu, gpu, *low);
    out["mfu_low_precision_peak"] = low->key;
  }
}

}  // namespace trainsim::models::compute
