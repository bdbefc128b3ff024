#include "models/hardware/calibration.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../test_support.hpp"
#include "models/compute/compute_model.hpp"
#include "models/presets/catalog.hpp"

namespace trainsim::models::hardware {
namespace {

using sim::config::Json;
using testing::with;

Json h100_calibration() {
  return Json::parse(R"({
    "schema_version": 1,
    "name": "h100-test",
    "description": "Fitted on one H100",
    "gpu": "h100-sxm-80gb",
    "gpu_overrides": {"hbm_efficiency": 0.9, "kernel_launch": "2500ns", "gemm_tile_overhead_k": 96,
                      "gemm_efficiency": 0.71},
    "cluster_overrides": {"nvlink_efficiency": 0.7, "collective_launch": "12us"},
    "provenance": {"gpu_name": "NVIDIA H100 80GB HBM3", "driver": "580.159.04"},
    "fit": {"hbm_efficiency": {"records": 12}},
    "sources": {"hbm_efficiency": "fitted from 12 memory measurements"}
  })");
}

std::string parse_error(const Json& j) {
  return testing::config_error([&] { parse_calibration(j, "calibration"); });
}

TEST(Calibration, ParsesEveryKey) {
  const Calibration c = parse_calibration(h100_calibration(), "calibration");
  EXPECT_EQ(c.name, "h100-test");
  EXPECT_EQ(c.gpu, "h100-sxm-80gb");
  EXPECT_EQ(c.gpu_overrides.size(), 4u);
  EXPECT_EQ(c.cluster_overrides.at("collective_launch"), "12us");
  EXPECT_EQ(c.provenance.at("driver"), "580.159.04");
  EXPECT_EQ(c.sources.at("hbm_efficiency"), "fitted from 12 memory measurements");
  // Only name and gpu are required.
  const Calibration bare = parse_calibration(Json{{"name", "x"}, {"gpu", "b200"}}, "calibration");
  EXPECT_TRUE(bare.gpu_overrides.empty());
  EXPECT_TRUE(bare.cluster_overrides.empty());
}

TEST(Calibration, MergesOverridesAndTheirSourcesOverTheSpecs) {
  const Calibration c = parse_calibration(h100_calibration(), "calibration");
  const Json gpu = presets::find("gpus", "h100-sxm-80gb", "gpu");
  const GpuSpec prior = parse_gpu(gpu, "gpu");
  const GpuSpec g = parse_gpu(calibrate_gpu_json(gpu, c), "gpu");
  EXPECT_DOUBLE_EQ(g.hbm_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(g.gemm_efficiency, 0.71);
  EXPECT_DOUBLE_EQ(g.gemm_tile_overhead_k, 96.0);
  EXPECT_EQ(g.kernel_launch, sim::Time::ns(2500));
  // Everything else is the preset's.
  EXPECT_EQ(g.name, prior.name);
  EXPECT_DOUBLE_EQ(g.attention_efficiency, prior.attention_efficiency);
  EXPECT_DOUBLE_EQ(g.fp8_gemm_efficiency, prior.fp8_gemm_efficiency);
  EXPECT_EQ(g.peak_bf16.per_second(), prior.peak_bf16.per_second());
  // Overridden constants cite the calibration, not the preset's (now stale) source.
  EXPECT_EQ(g.sources.at("hbm_efficiency"), "fitted from 12 memory measurements");
  EXPECT_EQ(g.sources.at("kernel_launch"), "calibration \"h100-test\"");
  EXPECT_EQ(g.sources.at("peak_bf16"), prior.sources.at("peak_bf16"));

  const Json cluster = presets::find("clusters", "dgx-h100", "cluster");
  const ClusterSpec k = parse_cluster(calibrate_cluster_json(cluster, c), "cluster");
  EXPECT_DOUBLE_EQ(k.nvlink_efficiency, 0.7);
  EXPECT_EQ(k.collective_launch, sim::Time::us(12));
  EXPECT_EQ(k.nic_latency, parse_cluster(cluster, "cluster").nic_latency);
  // An inline spec without sources gets them.
  Json bare = cluster;
  bare.erase("sources");
  EXPECT_EQ(parse_cluster(calibrate_cluster_json(bare, c), "cluster").sources.size(), 2u);
}

TEST(Calibration, OverridesAreCheckedByTheSpecSchemasAtTheirOwnPath) {
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"gpu_overrides", {{"hbm_efficiency", 1.5}}}})),
            "calibration.gpu_overrides.hbm_efficiency: must be between 0.05 and 1.0, got 1.5");
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"gpu_overrides", {{"gemm_tile_overhead_k", -1}}}})),
            "calibration.gpu_overrides.gemm_tile_overhead_k: must be between 0.0 and 4096.0, got -1");
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"cluster_overrides", {{"nic_latency", 5}}}})),
            "calibration.cluster_overrides.nic_latency: expected a string like \"2us\", got 5 (add a unit)");
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"gpu_overrides", {{"hbm_eficiency", 0.9}}}})),
            "calibration.gpu_overrides.hbm_eficiency: unknown gpu field (did you mean \"hbm_efficiency\"?)");
  // Fields that are not fitted constants: the name, and datasheet figures of the cluster.
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"gpu_overrides", {{"name", "b200"}}}})),
            "calibration.gpu_overrides.name: \"name\" is not a calibrated gpu constant (calibrations override "
            "memory, hbm_bandwidth, peak_bf16, peak_fp16, peak_fp8, peak_mxfp8, peak_nvfp4, peak_fp32, sms, "
            "gemm_efficiency, fp8_gemm_efficiency, mxfp8_gemm_efficiency, nvfp4_gemm_efficiency, "
            "attention_efficiency, attention_bwd_efficiency, hbm_efficiency, sustained_clock, "
            "gemm_tile_overhead_k, "
            "gemm_wave_quantization, "
            "kernel_launch, reserved_memory, tdp_watts, power_limit_watts)");
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"cluster_overrides", {{"nvlink_bandwidth", "900GBps"}}}})),
            "calibration.cluster_overrides.nvlink_bandwidth: \"nvlink_bandwidth\" is not a calibrated cluster "
            "constant (calibrations override nvlink_efficiency, nvlink_latency, nic_efficiency, nic_latency, "
            "collective_launch, nccl)");
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"gpu_overrides", Json::array()}})),
            "calibration.gpu_overrides: expected an object mapping gpu fields to values, got an array");
}

TEST(Calibration, ClosedSchema) {
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"gpu_overides", Json::object()}})),
            "calibration.gpu_overides: unknown key in calibration (did you mean \"gpu_overrides\"?)");
  Json j = h100_calibration();
  j.erase("gpu");
  EXPECT_EQ(parse_error(j), "calibration.gpu: missing required key (add \"gpu\": string)");
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"schema_version", 2}})),
            "calibration.schema_version: unsupported calibration schema version 2 (this trainsim reads version 1; "
            "regenerate it with `trainsim validate`)");
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"fit", 3}})),
            "calibration.fit: expected an object, got an integer");
  EXPECT_EQ(parse_error(with(h100_calibration(), Json{{"sources", {{"hbm_eficiency", "x"}}}})),
            "calibration.sources.hbm_eficiency: names no overridden field (did you mean \"hbm_efficiency\"?)");
}

// --- applied by resolve_job ---------------------------------------------------------------

Json job() {
  return Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 8}, {"tp", 8}, {"global_batch", 8}};
}

std::string job_error(const Json& j) {
  return testing::config_error([&] { workload::resolve_job(workload::parse_job(j)); });
}

TEST(Calibration, JobAppliesAnInlineCalibration) {
  const workload::Job j = testing::job(with(job(), Json{{"calibration", h100_calibration()}}));
  EXPECT_DOUBLE_EQ(j.gpu.hbm_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(j.gpu.gemm_tile_overhead_k, 96.0);
  EXPECT_DOUBLE_EQ(j.cluster.nvlink_efficiency, 0.7);
  EXPECT_EQ(j.cluster.collective_launch, sim::Time::us(12));
  ASSERT_TRUE(j.calibration.has_value());
  EXPECT_EQ(j.calibration->name, "h100-test");
  EXPECT_EQ(j.to_json().at("calibration"), "h100-test");
  // Uncalibrated jobs report no calibration key (reports stay byte-identical).
  const workload::Job plain = testing::job(job());
  EXPECT_FALSE(plain.calibration.has_value());
  EXPECT_FALSE(plain.to_json().contains("calibration"));
  EXPECT_DOUBLE_EQ(plain.gpu.gemm_tile_overhead_k, 128.0);
  // null is the default.
  EXPECT_FALSE(testing::job(with(job(), Json{{"calibration", nullptr}})).calibration.has_value());
}

TEST(Calibration, JobAppliesItOverAGpuOverrideAndAnInlineClusterGpu) {
  Json cal = h100_calibration();
  cal["gpu"] = "h200-sxm-141gb";
  const workload::Job j = testing::job(with(job(), Json{{"gpu", "h200-sxm-141gb"}, {"calibration", cal}}));
  EXPECT_EQ(j.gpu.name, "h200-sxm-141gb");
  EXPECT_DOUBLE_EQ(j.gpu.hbm_efficiency, 0.9);
  EXPECT_EQ(j.gpu.memory, testing::gpu("h200-sxm-141gb").memory);
  Json cluster = testing::ideal_cluster();
  cluster["gpu"] = presets::find("gpus", "h100-sxm-80gb", "gpu");
  const workload::Job k = testing::job(with(job(), Json{{"cluster", cluster}, {"calibration", h100_calibration()}}));
  EXPECT_DOUBLE_EQ(k.gpu.hbm_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(k.cluster.nvlink_efficiency, 0.7);
}

TEST(Calibration, JobRejectsACalibrationOfAnotherGpu) {
  Json cal = h100_calibration();
  cal["gpu"] = "a100-sxm-80gb";
  EXPECT_EQ(job_error(with(job(), Json{{"calibration", cal}})),
            "calibration: measured on a100-sxm-80gb but the job runs on h100-sxm-80gb (use a calibration measured "
            "on h100-sxm-80gb, or drop --calibration)");
}

TEST(Calibration, JobNamesTheBadOverride) {
  Json cal = h100_calibration();
  cal["gpu_overrides"]["hbm_efficiency"] = 0;
  EXPECT_EQ(job_error(with(job(), Json{{"calibration", cal}})),
            "calibration.gpu_overrides.hbm_efficiency: must be between 0.05 and 1.0, got 0");
  EXPECT_EQ(job_error(with(job(), Json{{"calibration", 3}})),
            "calibration: expected a calibration preset name, a JSON file path or an object");
  EXPECT_EQ(job_error(with(job(), Json{{"calibration", "h100-nothing"}})),
            "calibration: unknown calibration preset \"h100-nothing\" (see `trainsim list calibrations`, or give a "
            "JSON file)");
}

TEST(Calibration, JobReadsACalibrationFile) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "trainsim_calibration_test";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "h100.json").string();
  std::ofstream(file) << h100_calibration().dump(2);
  const workload::Job j = testing::job(with(job(), Json{{"calibration", file}}));
  EXPECT_DOUBLE_EQ(j.gpu.hbm_efficiency, 0.9);
  std::filesystem::remove_all(dir);
}

TEST(Calibration, TileOverheadFeedsTheGemmShapeModel) {
  // K efficiency is k / (k + gemm_tile_overhead_k); 128 is the default (identical to the former
  // constant), and a calibrated value changes only that factor.
  GpuSpec g = testing::gpu("h100-sxm-80gb");
  const compute::GemmShape s{8192, 8192, 1024, 1};
  const double at128 = compute::ComputeModel(g, compute::Precision::kBf16).gemm_shape_efficiency(s);
  g.gemm_tile_overhead_k = 0.0;
  const double at0 = compute::ComputeModel(g, compute::Precision::kBf16).gemm_shape_efficiency(s);
  EXPECT_NEAR(at128 / at0, 1024.0 / (1024.0 + 128.0), 1e-12);
}

}  // namespace
}  // namespace trainsim::models::hardware
