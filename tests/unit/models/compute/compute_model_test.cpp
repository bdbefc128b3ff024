#include "models/compute/compute_model.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "sim/error.hpp"

namespace trainsim::models::compute {
namespace {

// A GPU with round numbers so that every closed form below is easy to check by hand:
// 100 SMs, 100 TFLOPS bf16 at best efficiency 0.5 (50 TFLOPS), 1000 GB/s HBM at efficiency 0.5
// (500 GB/s), 1 us per kernel launch.
hardware::GpuSpec toy(double sustained_clock = 1.0, const char* hbm = "1000GBps") {
  sim::config::Json j{{"name", "toy"},
                      {"memory", "16GiB"},
                      {"hbm_bandwidth", hbm},
                      {"peak_bf16", "100TFLOPS"},
                      {"peak_fp16", "100TFLOPS"},
                      {"peak_fp8", "200TFLOPS"},
                      {"peak_fp32", "10TFLOPS"},
                      {"sms", 100},
                      {"gemm_efficiency", 0.5},
                      {"fp8_gemm_efficiency", 0.4},
                      {"attention_efficiency", 0.25},
                      {"hbm_efficiency", 0.5},
                      {"sustained_clock", sustained_clock},
                      {"kernel_launch", "1us"},
                      {"reserved_memory", "1GiB"}};
  return hardware::parse_gpu(j, "gpu");
}

// Tile throughput relative to 128x256 (see compute_model.cpp): 128x128 0.866, 64x128 0.707,
// 64x64 0.577; the pipeline fill costs 128 elements of K.
constexpr double kQ128 = 0.866, kQ64x128 = 0.707, kQ64 = 0.577;
double k_eff(double k) { return k / (k + 128); }

TEST(ComputeModel, LargeGemmRunsAtBestEfficiencyTimesSustainedClock) {
  const auto g = testing::gpu("a100-sxm-80gb");
  const ComputeModel cm(g, Precision::kBf16);
  // 8192 x 8192 x 8192: 64 x 32 tiles of 128x256 = 2048 tiles = 18.96 waves of 108 SMs -> 19 waves,
  // wave efficiency 2048/2052; K efficiency 8192/(8192+128).
  const GemmShape s{8192, 8192, 8192, 1};
  const double shape = (2048.0 / (19.0 * 108.0)) * k_eff(8192);
  EXPECT_NEAR(cm.gemm_shape_efficiency(s), shape, 1e-9);
  const double rate = s.flops().count() / cm.gemm(s).seconds();
  const double expected = g.peak_bf16.per_second() * g.gemm_efficiency * g.sustained_clock * shape;
  EXPECT_NEAR(rate / expected, 1.0, 0.001);  // the 4 us launch is 0.1% of a ~4 ms GEMM
  // ~ gemm_efficiency x sustained_clock of the datasheet peak (shape losses are 2%).
  EXPECT_NEAR(rate / g.peak_bf16.per_second(), g.gemm_efficiency * g.sustained_clock, 0.02);
  EXPECT_DOUBLE_EQ(cm.peak().per_second(), g.peak_bf16.per_second() * g.sustained_clock);
}

TEST(ComputeModel, ComputeBoundGemmTimeIsFlopsOverRatePlusLaunch) {
  const ComputeModel cm(toy(), Precision::kBf16);
  // m = 100 x 256, n = 128: exactly 100 tiles of 256x128 = one full wave, shape efficiency 1;
  // k = 1152: K efficiency 1152/1280 = 0.9. Rate 100 TFLOPS x 0.5 x 0.9 = 45 TFLOPS.
  const GemmShape s{25600, 128, 1152, 1};
  EXPECT_DOUBLE_EQ(cm.gemm_shape_efficiency(s), 0.9);
  const double flops = 2.0 * 25600 * 128 * 1152;  // 7.55 GFLOP -> 167.8 us
  // HBM traffic (A + B in, C out, 2 B each) = 65.8 MB / 500 GB/s = 131.7 us < 167.8 us: compute-bound.
  const double traffic = (25600.0 * 1152 + 1152.0 * 128 + 25600.0 * 128) * 2;
  ASSERT_LT(traffic / 500e9, flops / 45e12);
  EXPECT_NEAR(cm.gemm(s).seconds(), flops / 45e12 + 1e-6, 2e-9);
  EXPECT_DOUBLE_EQ(s.flops().count(), flops);
  // A power-capped clock at half speed doubles the math time.
  const ComputeModel slow(toy(0.5), Precision::kBf16);
  EXPECT_NEAR(slow.gemm(s).seconds(), 2 * flops / 45e12 + 1e-6, 2e-9);
}

TEST(ComputeModel, WaveQuantizationAgainstTheSmCount) {
  const ComputeModel cm(toy(), Precision::kBf16);
  const double k = 4096;
  // 1280 x 1280: 10 x 10 = 100 tiles of 128x128 fill the 100 SMs exactly once (0.866); the big
  // 256x128 tile would leave half of every SM idle (50 tiles, 0.5), 64x128 needs exactly 2 waves
  // (0.707), 64x64 4 waves (0.577). Best: 128x128.
  EXPECT_NEAR(cm.gemm_shape_efficiency({1280, 1280, 4096, 1}), kQ128 * k_eff(k), 1e-12);
  // 1280 x 1408 (10% more work): 110 tiles of 128x128 need a second, mostly empty wave
  // (110/200 x 0.866 = 0.476); 256x128 runs 55 tiles and 128x256 60 tiles in one wave at
  // 1280*1408/(100*32768) = 0.55; 64x128: 220 tiles, 3 waves, 0.733 x 0.707 = 0.519; 64x64:
  // 440 tiles, 5 waves, 0.88 x 0.577 = 0.508. Best 0.55.
  const double eff_1408 = 1280.0 * 1408 / (100.0 * 32768);
  EXPECT_NEAR(cm.gemm_shape_efficiency({1280, 1408, 4096, 1}), eff_1408 * k_eff(k), 1e-12);
  ASSERT_GT(eff_1408, 110.0 / 200 * kQ128);
  ASSERT_GT(eff_1408, 1280.0 * 1408 / (300.0 * 8192) * kQ64x128);
  ASSERT_GT(eff_1408, 1280.0 * 1408 / (500.0 * 4096) * kQ64);
  // So 10% more FLOPs take 1.1 x 0.866/0.55 = 1.73x the time.
  const double t1 = cm.gemm({1280, 1280, 4096, 1}).seconds(), t2 = cm.gemm({1280, 1408, 4096, 1}).seconds();
  EXPECT_GT(t2 / t1, 1.6);
  // One 128 x 128 output tile: best as 4 tiles of 64x64 on 4 of 100 SMs: 128^2/(100 x 64^2) x 0.577.
  EXPECT_NEAR(cm.gemm_shape_efficiency({128, 128, 4096, 1}), 0.04 * kQ64 * k_eff(k), 1e-12);
  // Batched instances fill the waves: 100 of them in 128x128 tiles are one full wave.
  EXPECT_NEAR(cm.gemm_shape_efficiency({128, 128, 4096, 100}), kQ128 * k_eff(k), 1e-12);
}

TEST(ComputeModel, SkinnyGemmsAreSlowerPerFlop) {
  const ComputeModel cm(testing::gpu("h100-sxm-80gb"), Precision::kBf16);
  const GemmShape big{8192, 8192, 8192, 1};
  const GemmShape skinny{128, 8192, 8192, 1};  // 32 tiles of 128x256 on 132 SMs: a quarter wave
  const GemmShape tiny{128, 128, 8192, 1};
  const auto rate = [&](const GemmShape& s) { return s.flops().count() / cm.gemm(s).seconds(); };
  EXPECT_LT(rate(skinny), 0.5 * rate(big));
  EXPECT_LT(rate(tiny), 0.1 * rate(skinny));
}

TEST(ComputeModel, ShortKGemmsAreMemoryBound) {
  // A slow memory (100 GB/s x 0.5 = 50 GB/s) against 50 TFLOPS of math.
  const ComputeModel cm(toy(1.0, "100GBps"), Precision::kBf16);
  // 25600 x 128 x 16: math 2*25600*128*16 / (50 TFLOPS x 16/144) = 18.9 us; HBM traffic
  // (25600*16 + 16*128 + 25600*128) x 2 B = 7.38 MB / 50 GB/s = 147.5 us: the roofline floor wins.
  const GemmShape s{25600, 128, 16, 1};
  const double traffic = (25600.0 * 16 + 16.0 * 128 + 25600.0 * 128) * 2;
  ASSERT_GT(traffic / 50e9, s.flops().count() / (50e12 * 16.0 / 144));
  EXPECT_NEAR(cm.gemm(s).seconds(), traffic / 50e9 + 1e-6, 2e-9);
  EXPECT_EQ(cm.gemm({0, 128, 16, 1}), sim::Time::zero());
}

TEST(ComputeModel, MemoryBoundTimeIsBytesOverAchievableBandwidthPlusLaunch) {
  const ComputeModel cm(toy(), Precision::kBf16);
  // 10^9 bytes at 1000 GB/s x 0.5 = 2 ms, plus 3 launches of 1 us.
  EXPECT_EQ(cm.memory_bound(sim::Bytes(1'000'000'000), 3), sim::Time::ns(2'003'000));
  const auto g = testing::gpu("h100-sxm-80gb");
  const ComputeModel h100(g, Precision::kBf16);
  const double expected = 1e9 / (g.hbm_bandwidth.bytes_per_second() * g.hbm_efficiency) + 3 * g.kernel_launch.seconds();
  EXPECT_NEAR(h100.memory_bound(sim::Bytes(1'000'000'000), 3).seconds(), expected, 2e-9);
}

TEST(ComputeModel, FlashAttentionAndVectorMath) {
  const ComputeModel cm(toy(), Precision::kBf16);
  // 10^12 FLOPs at 100 TFLOPS x 0.25 = 40 ms, plus one launch.
  EXPECT_EQ(cm.flash_attention(sim::Flops(1e12)), sim::Time::ns(40'001'000));
  // fp32 optimizer math: max(10^10 FLOPs / 10 TFLOPS = 1 ms, 10^8 B / 500 GB/s = 0.2 ms) + 4 us.
  EXPECT_EQ(cm.vector_math(sim::Flops(1e10), sim::Bytes(100'000'000), 4), sim::Time::ns(1'004'000));
  // ... and the bandwidth side when it is the larger: 10^9 B -> 2 ms.
  EXPECT_EQ(cm.vector_math(sim::Flops(1e10), sim::Bytes(1'000'000'000), 4), sim::Time::ns(2'004'000));
}

TEST(ComputeModel, Fp8GemmsRunAtTheFp8PeakAndPayTheActivationCast) {
  const ComputeModel cm(toy(), Precision::kFp8);
  const GemmShape s{25600, 128, 1152, 1};
  // 200 TFLOPS x 0.4 x 0.9 = 72 TFLOPS; traffic with 1-byte inputs (A, B) and a 2-byte output
  // = 36.2 MB / 500 GB/s = 72.4 us < 104.9 us math; cast of A: 3 B per element = 88.5 MB -> 176.9 us.
  const double flops = 2.0 * 25600 * 128 * 1152;
  const double cast = 25600.0 * 1152 * 3 / 500e9;
  EXPECT_NEAR(cm.gemm(s).seconds(), flops / 72e12 + 1e-6 + cast + 1e-6, 3e-9);
  EXPECT_DOUBLE_EQ(cm.peak().per_second(), 200e12);
  EXPECT_DOUBLE_EQ(cm.bf16_peak().per_second(), 100e12);
}

TEST(ComputeModel, Fp8NeedsFp8TensorCores) {
  EXPECT_EQ(testing::config_error([] { ComputeModel(testing::gpu("a100-sxm-80gb"), Precision::kFp8); }),
            "precision: fp8 GEMMs need a GPU with FP8 tensor cores; a100-sxm-80gb has none (use --precision bf16 "
            "or an H100/H200/B200 GPU)");
  EXPECT_THROW(ComputeModel(testing::gpu("a100-sxm-40gb"), Precision::kFp8), ConfigError);
  const ComputeModel bf16(testing::gpu("h100-sxm-80gb"), Precision::kBf16);
  const ComputeModel fp8(testing::gpu("h100-sxm-80gb"), Precision::kFp8);
  const GemmShape s{8192, 8192, 8192, 1};
  // Twice the peak at a lower best efficiency, minus the activation cast: still clearly faster.
  EXPECT_LT(fp8.gemm(s), bf16.gemm(s));
  EXPECT_GT(fp8.gemm(s).count_ns() * 2, bf16.gemm(s).count_ns());
}

TEST(ComputeModel, PrecisionNames) {
  for (const Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp8})
    EXPECT_EQ(parse_precision(to_string(p), "precision"), p);
  EXPECT_EQ(testing::config_error([] { parse_precision("bf61", "precision"); }),
            "precision: unknown value \"bf61\" (did you mean \"bf16\"?)");
  EXPECT_EQ(activation_bytes(Precision::kFp8), 2);  // fp8 training keeps bf16 activations
}

// ---- grouped GEMMs (MoE experts) ----

TEST(ComputeModel, GroupedGemmOfOneProblemIsThatGemm) {
  const ComputeModel cm(toy(), Precision::kBf16);
  for (const GemmShape s : {GemmShape{1000, 3000, 2000}, GemmShape{40, 4096, 4096}, GemmShape{8192, 256, 64}}) {
    const GemmShape one[] = {s};
    EXPECT_EQ(cm.grouped_gemm(one), cm.gemm(s));
    EXPECT_DOUBLE_EQ(cm.grouped_shape_efficiency(one), cm.gemm_shape_efficiency(s));
  }
}

TEST(ComputeModel, GroupedGemmQuantizesWavesOverAllProblems) {
  // 8 experts of 256 x 256 output. Alone, an expert's best tiling (16 tiles of 64x64) fills 16 of
  // the 100 SMs: 0.16 x 0.577. Grouped, 64 tiles of 64x128 fill 64 SMs in one wave: 0.64 x 0.707
  // (64x64 would need two waves: 128 tiles), so the group runs far faster than 8 GEMMs in a row.
  const ComputeModel cm(toy(), Precision::kBf16);
  const GemmShape e{256, 256, 4096};
  const std::vector<GemmShape> group(8, e);
  EXPECT_NEAR(cm.gemm_shape_efficiency(e), 0.16 * kQ64 * k_eff(4096), 1e-12);
  EXPECT_NEAR(cm.grouped_shape_efficiency(group), 0.64 * kQ64x128 * k_eff(4096), 1e-12);
  EXPECT_LT(cm.grouped_gemm(group), cm.gemm(e) * 4);
  // Empty experts cost nothing; no rows at all costs nothing.
  std::vector<GemmShape> with_empty = group;
  with_empty.push_back(GemmShape{0, 256, 4096});
  EXPECT_EQ(cm.grouped_gemm(with_empty), cm.grouped_gemm(group));
  EXPECT_EQ(cm.grouped_gemm(std::vector<GemmShape>{GemmShape{0, 256, 4096}}), sim::Time::zero());
}

TEST(ComputeModel, GroupedGemmTimePerTokenRisesAsTokensPerExpertFall) {
  // Mixtral-shaped fc1 (n = 2 x 14336, k = 4096) over 8 local experts on an H100, from 8192 rows
  // per expert down to 8: tile padding, the last wave and finally the weights (8 x 235 MB read
  // once whatever the rows) make each token dearer.
  const ComputeModel cm(testing::gpu("h100-sxm-80gb"), Precision::kBf16);
  double previous = 0.0;
  for (const int64_t m : {8192, 2048, 512, 128, 32, 8}) {
    const std::vector<GemmShape> group(8, GemmShape{m, 28672, 4096});
    const double per_token = cm.grouped_gemm(group).seconds() / static_cast<double>(8 * m);
    EXPECT_GT(per_token, previous) << m << " rows per expert";
    previous = per_token;
  }
  // At 8 rows the group is bound by reading the weights: bytes over achievable HBM bandwidth.
  const std::vector<GemmShape> tiny(8, GemmShape{8, 28672, 4096});
  const sim::Time weights =
      cm.gemm_traffic(GemmShape{8, 28672, 4096}) * 8 / (cm.gpu().hbm_bandwidth * cm.gpu().hbm_efficiency);
  EXPECT_NEAR(cm.grouped_gemm(tiny).seconds(), (weights + cm.gpu().kernel_launch).seconds(), 1e-8);
}

}  // namespace
}  // namespace trainsim::models::compute
