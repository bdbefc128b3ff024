#pragma once
// The dense peaks a utilization is reported against (docs/precision.md, "Which peak"). trainsim's
// MFU is model FLOP/s over the GPU's dense BF16 peak whatever the precision, so that figures compare
// across precisions and with published MFUs; a job whose GEMMs run quantized (fp8, mxfp8, nvfp4)
// also gets its utilization of its own precision's dense peak, which it cannot pass. Every report
// names the peak: "of dense BF16 peak" in text, `MFU(BF16)` and `MFU(FP8)` in tables, `mfu_peak`
// beside `mfu` in JSON.

#include <optional>

#include "models/compute/compute_model.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::models::compute {

struct Peak {
  const char* key;    // "bf16_dense": the value of "mfu_peak" in JSON
  const char* label;  // "BF16": in text and table headers
  sim::FlopRate rate;
};

// The peak trainsim's MFU is against.
Peak bf16_peak(const hardware::GpuSpec& gpu);
// The dense peak of a quantized precision (FP8, MXFP8, NVFP4); nullopt for bf16 and fp16, or a GPU
// without that peak.
std::optional<Peak> precision_peak(const hardware::GpuSpec& gpu, Precision p);
// A utilization against the BF16 peak, against `peak` instead.
double utilization_of(double bf16_mfu, const hardware::GpuSpec& gpu, const Peak& peak);
// Sets "mfu_peak" ("bf16_dense") beside "mfu" in `out`, and for a quantized job
// "mfu_low_precision" (against its precision's dense peak) and "mfu_low_precision_peak" ("fp8_dense").
void put_mfu_peaks(sim::config::Json& out, double bf16_mfu, const hardware::GpuSpec& gpu, Precision p);

}  // namespace trainsim::models::compute
