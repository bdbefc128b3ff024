#include "models/hardware/gpu_spec.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace trainsim::models::hardware
