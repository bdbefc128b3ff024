#include "models/calibration/kernel_evidence.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "../test_support.hpp"
#include "models/calibration/fit.hpp"
#include "models/hardware/calibration.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/job/kernel_sizes.hpp"
#include "models/workload/job/prediction_band.hpp"

namespace trainsim::models::calibration {
namespace {

using sim::config::Json;
constexpr double kMiB = 1048576.0;

Measurement gemm(int64_t m, int64_t n, int64_t k, const char* precision) {
  Measurement r;
  r.name = "gemm";
  r.kind = OpKind::kGemm;
  r.m = m, r.n = n, r.k = k;
  r.precision = precision;
  r.flops = 2.0 * static_cast<double>(m * n * k);
  r.measured_s = r.flops / 6e14;
  return r;
}

Measurement all_reduce(int ranks, double bytes) {
  Measurement r;
  r.name = "all_reduce";
  r.kind = OpKind::kCollective;
  r.op = "all_reduce";
  r.ranks = ranks;
  r.bytes = static_cast<int64_t>(bytes);
  r.link_class = ranks > 1 ? "nvlink" : "local";
  r.measured_s = 1e-5 + bytes / 3e11;
  return r;
}

MeasurementSet measured() {
  MeasurementSet s;
  s.items = {gemm(1024, 4096, 4096, "bf16"), gemm(8192, 1024, 8192, "fp8"), all_reduce(8, kMiB),
             all_reduce(8, 256 * kMiB), all_reduce(1, 64 * 1024 * kMiB)};
  Measurement mem;
  mem.name = "norm";
  mem.kind = OpKind::kMemory;
  mem.bytes = 1 << 30;
  mem.measured_s = 5e-4;
  s.items.push_back(mem);
  return s;
}

TEST(KernelEvidence, CoversTheMeasuredGemmsAndCollectives) {
  const stack::Evidence e = kernel_evidence(measured(), "h100-sxm-80gb", "dgx-h100");
  EXPECT_EQ(e.gpu_presets, std::vector<std::string>{"h100-sxm-80gb"});
  EXPECT_EQ(e.precisions, (std::vector<std::string>{"bf16", "fp8"}));
  EXPECT_EQ(e.clusters, std::vector<std::string>{"dgx-h100"});
  ASSERT_TRUE(e.gemm_m && e.gemm_n && e.gemm_k && e.message_bytes);
  EXPECT_EQ(*e.gemm_m, std::make_pair(1024.0, 8192.0));
  EXPECT_EQ(*e.gemm_n, std::make_pair(1024.0, 4096.0));
  EXPECT_EQ(*e.gemm_k, std::make_pair(4096.0, 8192.0));
  // The one-GPU ("local") collective measured no link: it widens nothing.
  EXPECT_EQ(*e.message_bytes, std::make_pair(kMiB, 256 * kMiB));
  EXPECT_FALSE(e.gpus || e.params_b || e.seq_len || e.dense || e.moe);
}

TEST(KernelEvidence, MeasurementsOfOneKindRestrictOnlyWhatTheyMeasured) {
  MeasurementSet gemms_only;
  gemms_only.items = {gemm(2048, 2048, 2048, "bf16"), all_reduce(1, kMiB)};
  const stack::Evidence e = kernel_evidence(gemms_only, "h200-sxm-141gb", "dgx-h200");
  EXPECT_TRUE(e.clusters.empty());
  EXPECT_FALSE(e.message_bytes);
  EXPECT_EQ(e.precisions, std::vector<std::string>{"bf16"});
  const stack::Evidence none = kernel_evidence(MeasurementSet{}, "", "");
  EXPECT_TRUE(none.empty());
}

// The fit carries the evidence into the calibration file, which reads it back.
TEST(KernelEvidence, TheCalibrationFileCarriesIt) {
  const auto gpu = hardware::parse_gpu(presets::find("gpus", "h100-sxm-80gb", "gpu"), "gpu");
  const auto cluster = hardware::parse_cluster(presets::find("clusters", "dgx-h100", "cluster"), "cluster");
  const FitResult r = fit(measured(), gpu, &cluster);
  const Json file = calibration_json(r, Provenance{}, "h100-kernels");
  EXPECT_EQ(file.at("evidence"), stack::to_json(r.evidence));
  const hardware::Calibration cal = hardware::parse_calibration(file, "calibration");
  EXPECT_EQ(stack::to_json(cal.evidence), file.at("evidence"));
  EXPECT_EQ(*cal.evidence.message_bytes, std::make_pair(kMiB, 256 * kMiB));
}

TEST(KernelEvidence, ParsedRangesAndTheirErrors) {
  const stack::Evidence e =
      stack::parse_evidence(Json{{"gemm_m", {256, 16384}}, {"message_bytes", {4096, 1e9}}}, "evidence");
  EXPECT_EQ(*e.gemm_m, std::make_pair(256.0, 16384.0));
  EXPECT_FALSE(e.empty());
  EXPECT_NE(models::testing::config_error([] {
              stack::parse_evidence(Json{{"gemm_k", {512, 16}}}, "evidence");
            }).find("evidence.gemm_k: max is below min"),
            std::string::npos);
  EXPECT_NE(models::testing::config_error([] {
              stack::parse_evidence(Json{{"gemm_mm", {1, 2}}}, "evidence");
            }).find("gemm_m"),
            std::string::npos);
}

// A span is outside when one of its ends reaches more than 2x beyond the measured range.
TEST(KernelEvidence, SpansOutsideTheMeasuredRange) {
  stack::Evidence e;
  e.gemm_m = std::make_pair(1024.0, 8192.0);
  e.message_bytes = std::make_pair(kMiB, 256 * kMiB);
  stack::Coverage c;
  c.gemm_m = std::make_pair(512.0, 16384.0);
  c.message_bytes = std::make_pair(kMiB / 2, 512 * kMiB);
  EXPECT_TRUE(stack::outside(e, c).empty());
  // GEMMs far larger than measured run at the largest measured ones' saturated efficiency.
  c.gemm_m = std::make_pair(1024.0, 131072.0);
  EXPECT_TRUE(stack::outside(e, c).empty());
  c.gemm_m = std::make_pair(511.0, 16384.0);
  c.message_bytes = std::make_pair(4096.0, 4096.0);
  const auto o = stack::outside(e, c);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0], "GEMM m 511-16384 (measured 1024-8192)");
  EXPECT_EQ(o[1], "collective buffers (MiB) 0.003906 (measured 1-256)");
  // A job without collectives (one GPU) or evidence without them: nothing to compare.
  c.message_bytes.reset();
  EXPECT_EQ(stack::outside(e, c).size(), 1u);
}

Json job_8b() {
  return Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 1},
              {"global_batch", 1},    {"micro_batch", 1},      {"seq_len", 4096}};
}

// The spans of a job's main GEMMs and collectives, at the shapes the layer kernels give them.
TEST(KernelSizes, TheJobsMainGemmsAndCollectiveBuffers) {
  using workload::kernel_sizes;
  const auto one = kernel_sizes(workload::resolve_job(workload::parse_job(job_8b())));
  // Forward and input-gradient GEMMs have m = the 4,096 tokens; weight gradients m = the input
  // width (4,096 or the MLP's 14,336) and k = the tokens; the LM head has n = the vocabulary.
  ASSERT_TRUE(one.gemm_m && one.gemm_n && one.gemm_k);
  EXPECT_EQ(*one.gemm_m, std::make_pair(4096.0, 14336.0));
  EXPECT_EQ(one.gemm_n->second, 128256.0);
  EXPECT_EQ(one.gemm_k->first, 4096.0);
  EXPECT_FALSE(one.message_bytes);  // one GPU: no collective

  Json tp = job_8b();
  tp["gpus"] = 2, tp["tp"] = 2;
  const auto two = kernel_sizes(workload::resolve_job(workload::parse_job(tp)));
  EXPECT_EQ(*two.message_bytes, std::make_pair(4096.0 * 4096 * 2, 4096.0 * 4096 * 2));  // b*s*h bf16
  EXPECT_EQ(two.gemm_m->second, 7168.0);                                                // 14,336 / 2

  Json dp = job_8b();
  dp["gpus"] = 8, dp["global_batch"] = 8, dp["zero"] = 1, dp["bucket_size"] = "40MB";
  const auto eight = kernel_sizes(workload::resolve_job(workload::parse_job(dp)));
  ASSERT_TRUE(eight.message_bytes);
  // Buckets of at least 40 MB: a layer's 218 M gradients in fp32 (872 MB) flush each bucket.
  EXPECT_GT(eight.message_bytes->first, 40e6);
  EXPECT_LT(eight.message_bytes->first, 1e9);
}

// A kernel calibration (no band of its own) marks a job whose GEMMs or collectives leave what it
// measured, beside the stack's band.
TEST(KernelEvidence, AJobOutsideAKernelCalibrationIsExtrapolated) {
  Json job{{"model", "llama3-70b"},
           {"cluster", "dgx-h100"},
           {"gpus", 8},
           {"tp", 8},
           {"global_batch", 8},
           {"seq_len", 8192},
           {"stack", "nemo-24.07"},
           {"precision", "fp8"},
           {"calibration", "h100-sxm-80gb-measured"}};
  const auto in = workload::prediction_band(workload::resolve_job(workload::parse_job(job)));
  EXPECT_FALSE(in.extrapolated) << (in.outside.empty() ? "" : in.outside[0]);
  EXPECT_NE(in.basis.find("calibration h100-sxm-80gb-measured carries no cross-validated error"), std::string::npos);
  job["seq_len"] = 131072;  // larger GEMMs than measured: no gap of the calibration's (the stack's suite has one)
  for (const auto& o : workload::prediction_band(workload::resolve_job(workload::parse_job(job))).outside)
    EXPECT_EQ(o.find("calibration"), std::string::npos) << o;
  job["seq_len"] = 256;  // m = 256 tokens against GEMMs measured from m = 1,024
  const auto small = workload::prediction_band(workload::resolve_job(workload::parse_job(job)));
  EXPECT_TRUE(small.extrapolated);
  ASSERT_FALSE(small.outside.empty());
  std::string all;
  for (const auto& o : small.outside) all += o + "; ";
  EXPECT_NE(all.find("calibration h100-sxm-80gb-measured: GEMM m 256"), std::string::npos) << all;
  EXPECT_NEAR(small.relative, std::max(2.0 * in.relative, 0.15), 1e-12);
  // A stack no suite checks: extrapolated already (25 %); the calibration's gaps are listed, the
  // band is not widened twice.
  job["precision"] = "bf16";
  job["stack"] = "megatron-core-2025";
  const auto none = workload::prediction_band(workload::resolve_job(workload::parse_job(job)));
  EXPECT_TRUE(none.extrapolated);
  EXPECT_GE(none.outside.size(), 2u);
  EXPECT_NEAR(none.relative, 0.25, 1e-12);
  job["seq_len"] = 8192;
  EXPECT_EQ(workload::prediction_band(workload::resolve_job(workload::parse_job(job))).outside.size(), 1u);
}

}  // namespace
}  // namespace trainsim::models::calibration
