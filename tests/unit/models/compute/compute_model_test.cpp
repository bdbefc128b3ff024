#include "models/compute/compute_model.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "sim/error.hpp"

namespace trainsim::models::compute {
namespace {

TEST(ComputeModel, LargeGemmRunsAtBestEfficiencyTimesSustainedClock) {
  const auto g = testing::gpu("a100-sxm-80gb");
  const ComputeModel cm(g, Precision::kBf16);
  // 8192 x 8192 x 8192: 64 x 32 tiles of 128x256 = 2048 tiles = 18.96 waves of 108 SMs -> 19 waves,
  // wave efficiency 2048/2052; K efficiency 8192/(8192+128).
  const GemmShape s{8192, 8192, 8192, 1};
  const double shape = (2048.0 / (19.0 * 108.0)) * (8192.0 / 8320.0);
  EXPECT_NEAR(cm.gemm_shape_efficiency(s), shape, 1e-9);
  const double rate = s.flops().count() / cm.gemm(s).seconds();
  const double expected = g.peak_bf16.per_second() * g.gemm_efficiency * g.sustained_clock * shape;
  EXPECT_NEAR(rate / expected, 1.0, 0.001);  // the 4 us launch is 0.1% of a ~4 ms GEMM
}

TEST(ComputeModel, SkinnyGemmsAreSlowerPerFlop) {
  const ComputeModel cm(testing::gpu("h100-sxm-80gb"), Precision::kBf16);
  const GemmShape big{8192, 8192, 8192, 1};
  const GemmShape skinny{128, 8192, 8192, 1};  // 32 tiles of 128x256 on 132 SMs: a quarter wave
  const double big_rate = big.flops().count() / cm.gemm(big).seconds();
  const double skinny_rate = skinny.flops().count() / cm.gemm(skinny).seconds();
  EXPECT_LT(skinny_rate, 0.5 * big_rate);
}

TEST(ComputeModel, MemoryBoundTimeIsBytesOverAchievableBandwidthPlusLaunch) {
  const auto g = testing::gpu("h100-sxm-80gb");
  const ComputeModel cm(g, Precision::kBf16);
  const sim::Bytes bytes(1'000'000'000);
  const double expected = 1e9 / (g.hbm_bandwidth.bytes_per_second() * g.hbm_efficiency) + 3 * g.kernel_launch.seconds();
  EXPECT_NEAR(cm.memory_bound(bytes, 3).seconds(), expected, 2e-9);
}

TEST(ComputeModel, Fp8NeedsFp8TensorCores) {
  EXPECT_THROW(ComputeModel(testing::gpu("a100-sxm-80gb"), Precision::kFp8), ConfigError);
  const ComputeModel bf16(testing::gpu("h100-sxm-80gb"), Precision::kBf16);
  const ComputeModel fp8(testing::gpu("h100-sxm-80gb"), Precision::kFp8);
  const GemmShape s{8192, 8192, 8192, 1};
  // Twice the peak at a lower best efficiency, minus the activation cast: still clearly faster.
  EXPECT_LT(fp8.gemm(s), bf16.gemm(s));
  EXPECT_GT(fp8.gemm(s).count_ns() * 2, bf16.gemm(s).count_ns());
}

}  // namespace
}  // namespace trainsim::models::compute
