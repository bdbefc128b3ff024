// trainsim's own measurements on one NVIDIA H100 80GB HBM3 (SXM, driver 580.159.04, CUDA 13.0,
// cuBLASLt 13.1.0, NCCL 2.28.9), taken by `trainsim validate` on 2026-11-26 and committed as
// tests/accuracy/data/h100_llama3_70b_tp8.measurements.json (provenance inside): every GEMM of a
// LLaMA-3-70B layer at TP 8, seq 8192 (cuBLASLt default and best algorithm, bf16 and fp8), HBM
// copy, launch cost, and the replay of one layer shard (forward + backward, 26 kernels: cuBLASLt
// GEMMs, trainsim's kernels/ version 5 for attention (the Hopper wgmma kernels, kAuto on an H100)
// and the memory-bound ops). The measurements of kernels/ version 3 (mma.sync attention, taken
// 2026-11-23) are in git history; docs/validator.md has both tables.
//
// Targets (validator issue): the layer within 15% before calibration and within 5% after; the
// GEMM harness within 3% of the best cuBLAS time per shape. The committed calibration preset
// (h100-sxm-80gb-measured) must be what the fit produces from these measurements.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/calibration/fit.hpp"
#include "models/hardware/calibration.hpp"
#include "models/presets/catalog.hpp"
#include "validator_common.hpp"

namespace trainsim::accuracy {
namespace {

const nlohmann::json kJob70b{{"model", "llama3-70b"}, {"cluster", "dgx-h100"}, {"gpus", 8},      {"tp", 8},
                             {"micro_batch", 1},      {"global_batch", 1},     {"seq_len", 8192}};

TEST(ValidatorH100, Llama70bLayerShardBeforeAndAfterCalibration) {
  const auto job = validator_job(kJob70b);
  const auto set = validator_measurements("h100_llama3_70b_tp8");
  const auto fitted = models::calibration::fit(set, job.gpu, &job.cluster);
  const auto report = validator::make_report(set, job, job.gpu, job.cluster, fitted.gpu, fitted.cluster);
  const validator::ReportRow* layer = print_validator_report(report);
  ASSERT_NE(layer, nullptr);
  // Seen: +0.6% before (the preset's GEMMs ~5% slow and its attention, an FA3-class 45% of peak,
  // 20-34% fast against the wgmma kernels' 36% / 30%: they nearly cancel), -0.0% after. With the
  // version-3 mma.sync attention (2026-11-23) it was -3.7% before and +1.6% after.
  EXPECT_LT(std::abs(layer->error_before()), 0.15);
  EXPECT_LT(std::abs(layer->error_after()), 0.05);
  EXPECT_NEAR(layer->error_before(), 0.006, 0.005);
  EXPECT_NEAR(layer->error_after(), 0.0, 0.005);
  // The GEMM harness: the heuristic's first algorithm against the best of 8 candidates, timed
  // round-robin. Seen: median gap 1.5%; at most 14% (8192x8192x1024 bf16).
  EXPECT_LT(fitted.gemm_best_gap, 0.03);
  // Every GEMM kind's median error shrinks with the calibration.
  for (const auto& k : report.kinds) {
    if (k.kind == models::calibration::OpKind::kGemm) {
      EXPECT_LT(k.median_abs_after, k.median_abs_before);
    }
  }
}

TEST(ValidatorH100, CommittedCalibrationIsTheFitOfTheCommittedMeasurements) {
  const auto job = validator_job(kJob70b);
  const auto set = validator_measurements("h100_llama3_70b_tp8");
  const auto fitted = models::calibration::fit(set, job.gpu, &job.cluster);
  const auto produced = models::calibration::calibration_json(fitted, set.provenance, "h100-sxm-80gb-measured");
  const auto preset = models::presets::find("calibrations", "h100-sxm-80gb-measured", "calibration");
  EXPECT_EQ(preset.at("gpu_overrides"), produced.at("gpu_overrides"));
  EXPECT_EQ(preset.at("cluster_overrides"), produced.at("cluster_overrides"));
  EXPECT_EQ(preset.at("evidence"), produced.at("evidence"));  // what a job under it may leave
  // Applied to a job, the preset reproduces the fitted constants.
  auto spec = kJob70b;
  spec["calibration"] = "h100-sxm-80gb-measured";
  const auto calibrated = validator_job(spec);
  EXPECT_NEAR(calibrated.gpu.gemm_efficiency, fitted.gpu.gemm_efficiency, 1e-4);
  EXPECT_NEAR(calibrated.gpu.attention_efficiency, fitted.gpu.attention_efficiency, 1e-4);
}

// Out of sample: the calibration fitted on the 70B layer (h100-sxm-80gb-measured) predicts other
// models, TP degrees and sequence lengths measured the same day, among them the whole iteration of
// LLaMA-3.2-1B trained on one GPU (4 micro-batches of 4,096 tokens; the replay's host is a C++
// loop, so the job's per-kernel dispatch is 4 us, near the measured 3.5 us launch cost, rather
// than the eager-PyTorch default of 10 us).
TEST(ValidatorH100, CalibrationFromThe70bLayerPredictsOtherJobs) {
  using models::calibration::OpKind;
  const nlohmann::json one_gpu{{"model", "llama3.2-1b"},  {"cluster", "dgx-h100"}, {"gpus", 1},
                               {"micro_batch", 1},        {"global_batch", 4},     {"seq_len", 4096},
                               {"kernel_dispatch", "4us"}};
  const std::vector<CrossCase> cases = {
      {"h100_llama3_8b_tp2",
       {{"model", "llama3-8b"},
        {"cluster", "dgx-h100"},
        {"gpus", 2},
        {"tp", 2},
        {"global_batch", 1},
        {"seq_len", 8192}},
       OpKind::kLayer,
       0.012,
       0.061,
       // Over the 5% (+4.5% with the version-3 kernels): the 8B shard has 16 q heads and 4
       // kv heads per GPU against the 70B shard's 8 and 1, and the wgmma attention runs it at 38%
       // forward and 31% backward of peak where the 70B fit saw 36% and 30% (one efficiency per
       // direction cannot follow the head count); its GEMMs are predicted 4-6% slow as before.
       0.07},
      {"h100_llama3_405b_tp8",
       {{"model", "llama3-405b"},
        {"cluster", "dgx-h100"},
        {"gpus", 8},
        {"tp", 8},
        {"global_batch", 1},
        {"seq_len", 8192}},
       OpKind::kLayer,
       0.029,
       -0.000,
       0.05},
      {"h100_llama3.2_1b", one_gpu, OpKind::kLayer, -0.070, -0.038, 0.05},
      {"h100_llama3.2_1b", one_gpu, OpKind::kIteration, -0.006, 0.015, 0.05},
  };
  expect_cross_cases(cases, "h100-sxm-80gb-measured");
}

}  // namespace
}  // namespace trainsim::accuracy
