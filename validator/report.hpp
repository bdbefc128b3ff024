#pragma once
// Predicted vs measured: every measurement beside what the simulator predicts for it with the
// GPU and cluster constants before calibration and after, per op kind and for the replayed layer.

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/calibration/measurement.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/workload/job.hpp"

namespace trainsim::validator {

namespace calibration = models::calibration;

// What the simulator predicts for one measurement with these constants (seconds), or NaN where
// it has no model for the op (host copies; collectives of a single GPU). A kLayer record is
// predicted as the sum of the layer's kernels for `job`'s model and shape.
double predict(const calibration::Measurement& m, const models::hardware::GpuSpec& gpu,
               const models::hardware::ClusterSpec& c, const models::workload::Job& job);

struct ReportRow {
  std::string name;
  calibration::OpKind kind = calibration::OpKind::kGemm;
  std::string detail;  // shape, size or precision in a few words
  double measured_s = 0.0;
  double best_s = 0.0;  // GEMMs: best cuBLASLt algorithm
  double before_s = NAN, after_s = NAN;
  // Collectives, as nccl-tests reports them: algbw = bytes / time, busbw = algbw x the op's bus
  // factor (NaN for one rank, which moves nothing between GPUs).
  double algbw_GBps = NAN, busbw_GBps = NAN;
  double error_before() const { return before_s / measured_s - 1.0; }  // signed relative error
  double error_after() const { return after_s / measured_s - 1.0; }
};

struct KindSummary {
  calibration::OpKind kind = calibration::OpKind::kGemm;
  int count = 0;
  double median_abs_before = NAN, max_abs_before = NAN;
  double median_abs_after = NAN, max_abs_after = NAN;
};

struct Report {
  calibration::Provenance provenance;
  std::vector<ReportRow> rows;
  std::vector<KindSummary> kinds;         // kinds with at least one predicted row, in calibration::OpKind order
  double gemm_default_vs_best_max = NAN;  // largest (default - best) / best over GEMM shapes
};

Report make_report(const calibration::MeasurementSet& set, const models::workload::Job& job,
                   const models::hardware::GpuSpec& before, const models::hardware::ClusterSpec& cluster_before,
                   const models::hardware::GpuSpec& after, const models::hardware::ClusterSpec& cluster_after);

void print_report(std::ostream& out, const Report& r);
nlohmann::json report_json(const Report& r);

}  // namespace trainsim::validator
