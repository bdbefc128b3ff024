#include "models/hardware/gpu_spec.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../test_support.hpp"

namespace trainsim::models::hardware {
namespace {

using sim::config::Json;

Json minimal() {
  return Json{{"name", "toy"},
              {"memory", "16GiB"},
              {"hbm_bandwidth", "1TBps"},
              {"peak_bf16", "100TFLOPS"},
              {"peak_fp16", "100TFLOPS"},
              {"peak_fp32", "10TFLOPS"},
              {"sms", 100},
              {"gemm_efficiency", 0.5},
              {"attention_efficiency", 0.25},
              {"hbm_efficiency", 0.5},
              {"kernel_launch", "1us"},
              {"reserved_memory", "1GiB"}};
}

TEST(GpuSpec, ParsesUnitsAndDefaults) {
  const GpuSpec g = parse_gpu(minimal(), "gpu");
  EXPECT_EQ(g.memory, sim::Bytes(int64_t{16} << 30));
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth.bytes_per_second(), 1e12);
  EXPECT_DOUBLE_EQ(g.peak_bf16.per_second(), 100e12);
  EXPECT_EQ(g.kernel_launch, sim::Time::us(1));
  EXPECT_EQ(g.sms, 100);
  // Optional fields: no FP8 tensor cores, FP8 efficiency 0.7, full sustained clock, no sources.
  EXPECT_EQ(g.peak_fp8.per_second(), 0.0);
  EXPECT_DOUBLE_EQ(g.fp8_gemm_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(g.sustained_clock, 1.0);
  EXPECT_TRUE(g.sources.empty());
}

TEST(GpuSpec, PresetsCarryTheirDatasheetNumbers) {
  const GpuSpec a100 = testing::gpu("a100-sxm-80gb");
  EXPECT_DOUBLE_EQ(a100.peak_bf16.per_second(), 312e12);
  EXPECT_EQ(a100.sms, 108);
  EXPECT_EQ(a100.peak_fp8.per_second(), 0.0);  // Ampere: no FP8
  const GpuSpec h100 = testing::gpu("h100-sxm-80gb");
  EXPECT_EQ(h100.sms, 132);
  EXPECT_GT(h100.peak_fp8.per_second(), 1.9 * h100.peak_bf16.per_second());
  EXPECT_EQ(h100.sources.count("gemm_efficiency"), 1u);
}

TEST(GpuSpec, RejectsBadValuesWithThePath) {
  Json j = minimal();
  j["memory"] = 16;
  EXPECT_EQ(testing::config_error([&] { parse_gpu(j, "gpu"); }).rfind("gpu.memory: expected a string like", 0), 0u);
  EXPECT_NE(testing::config_error([&] { parse_gpu(j, "gpu"); }).find("(add a unit)"), std::string::npos);
  j = minimal();
  j["gemm_efficiency"] = 1.5;
  EXPECT_EQ(testing::config_error([&] { parse_gpu(j, "gpu"); }),
            "gpu.gemm_efficiency: must be between 0.05 and 1.0, got 1.5");
  j = minimal();
  j["smss"] = 3;
  EXPECT_EQ(testing::config_error([&] { parse_gpu(j, "gpu"); }),
            "gpu.smss: unknown key in gpu (did you mean \"sms\"?)");
  j = minimal();
  j["sources"] = 3;
  EXPECT_EQ(testing::config_error([&] { parse_gpu(j, "gpu"); }),
            "gpu.sources: expected an object mapping field names to sources");
}

TEST(GpuSpec, APowerLimitLowersTheSustainedClock) {
  Json j = minimal();
  j["sustained_clock"] = 0.9;
  j["tdp_watts"] = 700;
  j["power_limit_watts"] = 500;
  const GpuSpec capped = parse_gpu(j, "gpu");
  // Cube-root law: f ~ P^(1/3) in the DVFS range; the limit is the power charged.
  EXPECT_NEAR(capped.sustained_clock, 0.9 * std::cbrt(500.0 / 700.0), 1e-12);
  EXPECT_DOUBLE_EQ(capped.tdp_watts, 500.0);
  j["power_limit_watts"] = 700;
  EXPECT_DOUBLE_EQ(parse_gpu(j, "gpu").sustained_clock, 0.9);
  j["power_limit_watts"] = 800;
  EXPECT_NE(testing::config_error([&] { parse_gpu(j, "gpu"); }).find("gpu.power_limit_watts: is 800 W, above"),
            std::string::npos);
  j.erase("tdp_watts");
  j["power_limit_watts"] = 500;
  EXPECT_NE(testing::config_error([&] { parse_gpu(j, "gpu"); }).find("needs the board's tdp_watts"), std::string::npos);
  // The torchtitan boards: H100 compute, 96 GB HBM2e, 500 W of 700.
  const GpuSpec gt = testing::gpu("h100-sxm-96gb"), h100 = testing::gpu("h100-sxm-80gb");
  EXPECT_EQ(gt.peak_bf16.per_second(), h100.peak_bf16.per_second());
  EXPECT_LT(gt.sustained_clock, h100.sustained_clock * 0.9);
  EXPECT_GT(gt.memory, h100.memory);
  EXPECT_LT(gt.hbm_bandwidth.bytes_per_second(), h100.hbm_bandwidth.bytes_per_second());
  EXPECT_DOUBLE_EQ(gt.tdp_watts, 500.0);
}

}  // namespace
}  // namespace trainsim::models::hardware
