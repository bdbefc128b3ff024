#pragma once
// Calibrating the compute model from a Kineto trace: every GEMM, attention and memory-bound
// operator the trace timed (kineto_ops.hpp) becomes a validator Measurement record (one per
// distinct shape: the median of its occurrences, as the validator reports its microbenchmarks),
// the calibration fit (models/calibration/fit.hpp) fits the GPU constants, and the result is a
// calibration file a job names with `calibration` (models/hardware/calibration.hpp). The report
// gives, per operator class, the operators, their measured time and the compute model's
// prediction with the prior and with the fitted constants.

#include <string>
#include <vector>

#include "models/calibration/fit.hpp"
#include "models/calibration/measurement.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "sim/config/schema.hpp"
#include "sim/units.hpp"
#include "traces/kineto/ops.hpp"
#include "traces/kineto/trace.hpp"

namespace trainsim::traces {

// The GPU the trace ran on: `gpu_ref` (a preset name or GPU file) when given, else the preset
// its deviceProperties name maps to. ConfigError at "--gpu" when neither is known.
models::hardware::GpuSpec trace_gpu(const KinetoTrace& trace, const std::string& gpu_ref);

struct ClassSummary {
  OpClass cls = OpClass::kOther;
  int ops = 0;      // operators with GPU time
  int kernels = 0;  // their kernels
  sim::Time measured;
  // Priced classes only (GEMM, attention, memory): the operators the compute model prices, their
  // measured time, and its prediction with the prior and with the fitted constants.
  int priced_ops = 0;
  sim::Time priced_measured, before, after;
  double error_before() const;  // before / priced_measured - 1
  double error_after() const;
};

struct KinetoCalibration {
  std::string trace;  // file name
  std::string device_name;
  std::vector<ClassSummary> classes;  // one per OpClass, in enum order
  models::calibration::MeasurementSet measurements;
  models::calibration::FitResult fit;
  std::vector<std::string> notes;  // operators not priced and why, unlinked kernels

  // A calibration file (models::calibration::calibration_json) saying it came from this trace.
  sim::config::Json calibration_json(const std::string& name) const;
  sim::config::Json to_json() const;  // the report, with "schema_version"
};

// `command` is recorded in the measurements' provenance.
KinetoCalibration calibrate_kineto(const KinetoTrace& trace, const std::string& file,
                                   const models::hardware::GpuSpec& prior, const std::string& command);

}  // namespace trainsim::traces
