#include "models/calibration/fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "models/collectives/alpha_beta.hpp"
#include "models/compute/compute_model.hpp"
#include "models/hardware/calibration.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::calibration {
namespace {

using ::trainsim::models::collectives::AlphaBetaModel;
using ::trainsim::models::collectives::CollectiveOp;
using ::trainsim::models::collectives::GroupPlacement;
using ::trainsim::models::compute::ComputeModel;
using ::trainsim::models::compute::GemmShape;
using ::trainsim::models::compute::Precision;
using ::trainsim::models::hardware::ClusterSpec;
using ::trainsim::models::hardware::GpuSpec;

GpuSpec h100() { return models::hardware::parse_gpu(models::presets::find("gpus", "h100-sxm-80gb", "gpu"), "gpu"); }
ClusterSpec dgx_h100() {
  return models::hardware::parse_cluster(models::presets::find("clusters", "dgx-h100", "cluster"), "cluster");
}

// The hardware the synthetic measurements come from: every fitted constant moved off the preset.
struct Truth {
  GpuSpec gpu = h100();
  ClusterSpec cluster = dgx_h100();
  Truth() {
    gpu.gemm_efficiency = 0.71;
    gpu.fp8_gemm_efficiency = 0.62;
    gpu.gemm_tile_overhead_k = 96;
    gpu.gemm_wave_quantization = 0.3;  // a partly stream-K library (Hopper cuBLASLt measured ~0.2)
    gpu.hbm_efficiency = 0.9;
    gpu.kernel_launch = sim::Time::ns(2500);
    gpu.attention_efficiency = 0.38;
    gpu.attention_bwd_efficiency = 0.31;  // backward kernels reach less of the peak
    cluster.collective_launch = sim::Time::us(12);
    cluster.nvlink_efficiency = 0.75;
    cluster.nic_latency = sim::Time::us(6);
    // 8 NICs x 50 GB/s x 0.8 = 320 GB/s < NVLink's 450 x 0.75: the NICs bound a two-node ring.
    cluster.nic_efficiency = 0.8;
  }
};

// GEMM shapes of LLaMA-3 8B layers (hidden 4096, 32 heads of 128 with 8 KV heads, FFN 14336) at
// TP 1..8 and 2k..8k tokens: forward, data-gradient and weight-gradient GEMMs; plus small ones.
std::vector<GemmShape> gemm_shapes() {
  std::vector<GemmShape> out;
  for (const int64_t tp : {1, 2, 4, 8})
    for (const int64_t tokens : {2048, 4096, 8192}) {
      const int64_t h = 4096;
      const std::pair<int64_t, int64_t> weights[] = {
          {h, (h + 2 * 1024) / tp}, {h / tp, h}, {h, 2 * 14336 / tp}, {14336 / tp, h}};  // (in, out)
      for (const auto& [in, outf] : weights) {
        out.push_back({tokens, outf, in, 1});  // forward
        out.push_back({tokens, in, outf, 1});  // data gradient
        out.push_back({in, outf, tokens, 1});  // weight gradient
      }
    }
  for (const GemmShape s : {GemmShape{128, 128, 128, 1}, GemmShape{256, 4096, 4096, 1}, GemmShape{1024, 1024, 64, 1},
                            GemmShape{64, 64, 4096, 1}, GemmShape{512, 512, 512, 1}, GemmShape{2048, 2048, 128, 32},
                            GemmShape{4096, 128, 2048, 8}, GemmShape{8192, 32000, 4096, 1}})
    out.push_back(s);
  return out;
}

// What cuBLASLt would time for one GEMM on the truth hardware: ComputeModel::gemm's formula in
// double precision (no rounding to whole nanoseconds), without FP8's separate cast kernel (the
// runner times the matmul alone).
double gemm_seconds(const GpuSpec& g, Precision p, const GemmShape& s) {
  const ComputeModel cm(g, p);
  const double e = p == Precision::kFp8 ? g.fp8_gemm_efficiency : g.gemm_efficiency;
  const double math = s.flops().count() / (cm.peak().per_second() * e * cm.gemm_shape_efficiency(s));
  const double mem =
      static_cast<double>(cm.gemm_traffic(s).count()) / (g.hbm_bandwidth.bytes_per_second() * g.hbm_efficiency);
  return std::max(math, mem) + g.kernel_launch.seconds();
}

int64_t ring_steps(CollectiveOp op, int64_t n) { return op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1; }

// A ring collective on the truth cluster: AlphaBetaModel's ring formula in double precision.
double ring_seconds(const ClusterSpec& c, CollectiveOp op, int64_t bytes, const GroupPlacement& g) {
  const int64_t s = ring_steps(op, g.size);
  const int64_t cross = g.nodes() <= 1 ? 0 : s * g.nodes() / g.size;
  const double busbytes = static_cast<double>(bytes) * models::collectives::bus_bandwidth_factor(op, g.size);
  const double bw = g.nodes() <= 1 ? c.nvlink_bandwidth.bytes_per_second() * c.nvlink_efficiency
                                   : c.nic_bandwidth.bytes_per_second() * c.nic_efficiency *
                                         static_cast<double>(g.per_node);  // one NIC per GPU on a DGX
  return c.collective_launch.seconds() + c.nvlink_latency.seconds() * static_cast<double>(s - cross) +
         c.nic_latency.seconds() * static_cast<double>(cross) + busbytes / bw;
}

struct Options {
  double noise = 0.0;  // each time is multiplied by 1 + U(-noise, noise)
  bool launch_records = true;
  bool collectives = true;
};

MeasurementSet synthesize(const Truth& t, const Options& o) {
  std::mt19937_64 rng(20250601);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  MeasurementSet set;
  set.provenance.gpu_name = "NVIDIA H100 80GB HBM3 (synthetic)";
  set.provenance.gpu_preset = "h100-sxm-80gb";
  set.provenance.date = "2025-06-01T12:00:00Z";
  auto add = [&](Measurement m, double seconds) {
    m.measured_s = seconds * (1.0 + o.noise * u(rng));
    m.reps = 30;
    set.items.push_back(std::move(m));
  };
  const GpuSpec& g = t.gpu;
  if (o.launch_records)
    for (int i = 0; i < 7; ++i) {
      Measurement m;
      m.name = "launch";
      m.kind = OpKind::kLaunch;
      add(m, g.kernel_launch.seconds());
    }
  // Memory-bound kernels and device copies, 1 MiB .. 4 GiB, 1-3 launches each.
  for (int64_t bytes = int64_t{1} << 20, i = 0; bytes <= int64_t{4} << 30; bytes *= 4, ++i) {
    Measurement m;
    m.name = "memory";
    m.kind = i % 2 ? OpKind::kCopyD2D : OpKind::kMemory;
    m.bytes = bytes;
    m.kernels = 1 + static_cast<int>(i % 3);
    add(m, m.kernels * g.kernel_launch.seconds() +
               static_cast<double>(bytes) / (g.hbm_bandwidth.bytes_per_second() * g.hbm_efficiency));
  }
  // GEMMs in bf16 (every shape) and fp8 (the forward ones of every third shape and the small ones).
  const auto shapes = gemm_shapes();
  for (size_t i = 0; i < shapes.size(); ++i)
    for (const Precision p : {Precision::kBf16, Precision::kFp8}) {
      if (p == Precision::kFp8 && i % 3 != 0 && i + 8 < shapes.size()) continue;
      const GemmShape& s = shapes[i];
      Measurement m;
      m.name = "gemm";
      m.kind = OpKind::kGemm;
      m.m = s.m, m.n = s.n, m.k = s.k, m.batch = s.batch;
      m.precision = models::compute::to_string(p);
      m.flops = s.flops().count();
      const double seconds = gemm_seconds(g, p, s);
      m.best_s = seconds * 0.97;  // the algorithm search finds 3% more
      add(m, seconds);
      m.best_s = 0.0;
    }
  // Causal flash attention, 8 heads of 128 per GPU at 2k..8k tokens: forward and backward.
  for (const int64_t seq : {2048, 4096, 8192})
    for (const int64_t heads : {4, 8, 32}) {
      const double fwd = 4.0 * seq * seq * 128 * heads / 2;
      for (const auto& [kind, flops] :
           {std::pair{OpKind::kAttentionFwd, fwd}, std::pair{OpKind::kAttentionBwd, 2.5 * fwd}}) {
        Measurement m;
        m.name = "attention";
        m.kind = kind;
        m.flops = flops;
        const double e = kind == OpKind::kAttentionBwd ? *g.attention_bwd_efficiency : g.attention_efficiency;
        add(m, flops / (g.peak_bf16.per_second() * g.sustained_clock * e) + g.kernel_launch.seconds());
      }
    }
  if (o.collectives) {
    for (int64_t bytes = 1024; bytes <= int64_t{1} << 30; bytes *= 2) {
      for (const CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter})
        for (const int64_t ranks : {2, 8}) {
          Measurement m;
          m.name = models::collectives::to_string(op);
          m.kind = OpKind::kCollective;
          m.op = m.name;
          m.bytes = bytes;
          m.ranks = static_cast<int>(ranks);
          m.link_class = "nvlink";
          add(m, ring_seconds(t.cluster, op, bytes, GroupPlacement{ranks, ranks}));
        }
      // Across two nodes: two ranks (one per node) and sixteen (two full nodes).
      for (const CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather})
        for (const auto& [ranks, per_node] : {std::pair<int64_t, int64_t>{2, 1}, std::pair<int64_t, int64_t>{16, 8}}) {
          Measurement m;
          m.name = models::collectives::to_string(op);
          m.kind = OpKind::kCollective;
          m.op = m.name;
          m.bytes = bytes;
          m.ranks = static_cast<int>(ranks);
          m.link_class = "ib";
          add(m, ring_seconds(t.cluster, op, bytes, GroupPlacement{ranks, per_node}));
        }
    }
    Measurement local;  // a single GPU: never fitted
    local.name = "all_reduce";
    local.kind = OpKind::kCollective;
    local.op = "all_reduce";
    local.bytes = 1 << 20;
    local.link_class = "local";
    add(local, 1e-5);
  }
  // Not fitted: host copies and a layer.
  Measurement h2d;
  h2d.name = "h2d";
  h2d.kind = OpKind::kCopyH2D;
  h2d.bytes = 1 << 30;
  add(h2d, 0.02);
  Measurement layer;
  layer.name = "layer";
  layer.kind = OpKind::kLayer;
  layer.flops = 1e13;
  add(layer, 0.03);
  return set;
}

double fitted(const FitResult& r, const std::string& name) {
  const ParameterFit* p = r.find(name);
  EXPECT_NE(p, nullptr) << name;
  if (!p) return NAN;
  EXPECT_FALSE(p->kept) << name << ": " << p->note;
  EXPECT_NE(p->note.rfind("kept", 0), 0u) << name << ": " << p->note;
  return p->fitted;
}

// The truth values, as the fit reports them (seconds, fractions, elements of K).
std::vector<std::pair<std::string, double>> truth_values(const Truth& t) {
  return {{"kernel_launch", t.gpu.kernel_launch.seconds()},
          {"hbm_efficiency", t.gpu.hbm_efficiency},
          {"gemm_efficiency", t.gpu.gemm_efficiency},
          {"fp8_gemm_efficiency", t.gpu.fp8_gemm_efficiency},
          {"attention_efficiency", t.gpu.attention_efficiency},
          {"attention_bwd_efficiency", *t.gpu.attention_bwd_efficiency},
          {"collective_launch", t.cluster.collective_launch.seconds()},
          {"nvlink_efficiency", t.cluster.nvlink_efficiency},
          {"nic_latency", t.cluster.nic_latency.seconds()},
          {"nic_efficiency", t.cluster.nic_efficiency}};
}

// The double-precision formulas the synthetic data use are the simulator's own, to the nanosecond.
TEST(Fit, SyntheticTimesAreTheSimulatorsFormulas) {
  const Truth t;
  for (const GemmShape& s : gemm_shapes()) {
    const ComputeModel cm(t.gpu, Precision::kBf16);
    EXPECT_NEAR(gemm_seconds(t.gpu, Precision::kBf16, s), cm.gemm(s).seconds(), 1.5e-9)
        << s.m << "x" << s.n << "x" << s.k;
  }
  const AlphaBetaModel ab(t.cluster);
  for (const auto& [ranks, per_node] : {std::pair<int64_t, int64_t>{8, 8}, std::pair<int64_t, int64_t>{2, 2},
                                        std::pair<int64_t, int64_t>{16, 8}, std::pair<int64_t, int64_t>{2, 1}})
    for (const CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather})
      for (const int64_t bytes : {int64_t{4096}, int64_t{1} << 28}) {
        const GroupPlacement g{ranks, per_node};
        EXPECT_NEAR(ring_seconds(t.cluster, op, bytes, g), ab.ring_time(op, sim::Bytes(bytes), g).seconds(), 2e-9)
            << ranks << " ranks, " << bytes << " B";
      }
}

TEST(Fit, RecoversKnownConstantsExactlyWithoutNoise) {
  const Truth t;
  const ClusterSpec prior_cluster = dgx_h100();
  const MeasurementSet set = synthesize(t, Options{});
  const FitResult r = fit(set, h100(), &prior_cluster);
  for (const auto& [name, value] : truth_values(t)) EXPECT_NEAR(fitted(r, name) / value, 1.0, 1e-6) << name;
  EXPECT_EQ(fitted(r, "gemm_tile_overhead_k"), 96.0);
  EXPECT_NEAR(fitted(r, "gemm_wave_quantization"), 0.3, 1e-12);
  for (const auto& p : r.parameters) EXPECT_LT(p.rms_after, 1e-6) << p.name;
  // The fitted specs carry the values.
  EXPECT_EQ(r.gpu.kernel_launch, sim::Time::ns(2500));
  EXPECT_NEAR(r.gpu.gemm_efficiency, 0.71, 1e-6);
  EXPECT_EQ(r.gpu.gemm_tile_overhead_k, 96.0);
  EXPECT_EQ(r.cluster.collective_launch, sim::Time::us(12));
  EXPECT_EQ(r.cluster.nic_latency, sim::Time::us(6));
  EXPECT_NEAR(r.cluster.nic_efficiency, 0.8, 1e-6);
  // Untouched constants stay the preset's.
  EXPECT_EQ(r.cluster.nvlink_latency, prior_cluster.nvlink_latency);
  EXPECT_EQ(r.gpu.sustained_clock, h100().sustained_clock);
  // The algorithm search gap: best is 3% faster than what was measured.
  EXPECT_EQ(r.gemm_searched, std::count_if(set.items.begin(), set.items.end(),
                                           [](const Measurement& m) { return m.kind == OpKind::kGemm; }));
  EXPECT_NEAR(r.gemm_best_gap, 0.03, 1e-12);
  // Records that are not fitted are accounted for.
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0], "1 single-GPU (local) collective records not fitted");
  EXPECT_EQ(r.notes[1],
            "1 host copy and 1 layer records are not fitted (no constant models host copies; layers are compared by "
            "the report)");
  // The fit improves on the preset for every group.
  for (const auto& p : r.parameters) EXPECT_GT(p.rms_before, p.rms_after) << p.name;
}

TEST(Fit, RecoversKnownConstantsWithinTwoPercentUnderOnePercentNoise) {
  const Truth t;
  const ClusterSpec prior_cluster = dgx_h100();
  const FitResult r = fit(synthesize(t, Options{.noise = 0.01}), h100(), &prior_cluster);
  for (const auto& [name, value] : truth_values(t)) EXPECT_NEAR(fitted(r, name) / value, 1.0, 0.02) << name;
  EXPECT_NEAR(fitted(r, "gemm_tile_overhead_k"), 96.0, 16.0);
  EXPECT_NEAR(fitted(r, "gemm_wave_quantization"), 0.3, 0.1);
  // Residuals are what the noise leaves: U(-1%, 1%) has an RMS of 0.58%.
  for (const auto& p : r.parameters) EXPECT_LT(p.rms_after, 0.0075) << p.name;
}

TEST(Fit, LaunchComesFromTheMemoryInterceptWithoutLaunchRecords) {
  const Truth t;
  const FitResult r = fit(synthesize(t, Options{.launch_records = false}), h100(), nullptr);
  EXPECT_NEAR(fitted(r, "kernel_launch") / 2.5e-6, 1.0, 1e-6);
  EXPECT_NEAR(fitted(r, "hbm_efficiency") / 0.9, 1.0, 1e-6);
  EXPECT_EQ(r.find("kernel_launch")->note, "intercept of the memory fit (no launch records)");
  EXPECT_EQ(r.find("kernel_launch")->kinds, "copy_d2d+memory");
  EXPECT_NEAR(fitted(r, "gemm_efficiency") / 0.71, 1.0, 1e-6);
  // No cluster: no collective constants, and the records are said to be unused.
  EXPECT_FALSE(r.has_cluster);
  EXPECT_EQ(r.find("nvlink_efficiency"), nullptr);
}

TEST(Fit, CollectiveRecordsWithoutACluster) {
  const MeasurementSet set = synthesize(Truth(), Options{});
  const auto n = std::count_if(set.items.begin(), set.items.end(),
                               [](const Measurement& m) { return m.kind == OpKind::kCollective; });
  const FitResult r = fit(set, h100(), nullptr);
  EXPECT_EQ(r.notes.front(), std::to_string(n) + " collective records not fitted: no cluster was given");
}

TEST(Fit, GroupsWithoutRecordsKeepThePrior) {
  const ClusterSpec c = dgx_h100();
  const FitResult r = fit(MeasurementSet{}, h100(), &c);
  ASSERT_EQ(r.parameters.size(), 12u);
  for (const auto& p : r.parameters) {
    EXPECT_TRUE(p.kept) << p.name;
    EXPECT_EQ(p.fitted, p.prior) << p.name;
    EXPECT_EQ(p.note, "kept: no measurements") << p.name;
  }
  EXPECT_EQ(r.gpu.gemm_efficiency, h100().gemm_efficiency);
  EXPECT_EQ(r.gpu.kernel_launch, h100().kernel_launch);
  EXPECT_EQ(r.cluster.nvlink_efficiency, c.nvlink_efficiency);
  // An empty fit makes a calibration with no overrides, which is valid.
  const auto cal = models::hardware::parse_calibration(calibration_json(r, Provenance{}, "empty"), "calibration");
  EXPECT_TRUE(cal.gpu_overrides.empty());
}

TEST(Fit, OneGemmDepthCannotSeparateTheTileOverhead) {
  MeasurementSet set;
  const Truth t;
  for (const int64_t m : {4096, 8192, 16384}) {
    Measurement g;
    g.name = "gemm";
    g.m = m, g.n = 4096, g.k = 4096;
    g.measured_s = gemm_seconds(t.gpu, Precision::kBf16, GemmShape{m, 4096, 4096, 1});
    set.items.push_back(g);
  }
  const FitResult r = fit(set, h100(), nullptr);
  EXPECT_TRUE(r.find("gemm_tile_overhead_k")->kept);
  EXPECT_EQ(r.find("gemm_tile_overhead_k")->note, "kept: needs math-bound GEMMs of at least two K");
  EXPECT_FALSE(r.find("gemm_efficiency")->kept);  // still fitted, at the preset's tile overhead
}

TEST(Fit, AttentionForwardAndBackwardAreFittedApart) {
  Truth t;
  MeasurementSet set;
  const double rate = t.gpu.peak_bf16.per_second() * t.gpu.sustained_clock;
  for (const double f : {1e11, 1e12, 1e13}) {
    Measurement m;
    m.name = "fwd";
    m.kind = OpKind::kAttentionFwd;
    m.flops = f;
    m.measured_s = f / (rate * 0.55) + 2.5e-6;
    set.items.push_back(m);
    m.kind = OpKind::kAttentionBwd;
    m.flops = 2.5 * f;
    m.measured_s = 2.5 * f / (rate * 0.40) + 2.5e-6;
    set.items.push_back(m);
  }
  Measurement l;
  l.name = "launch";
  l.kind = OpKind::kLaunch;
  l.measured_s = 2.5e-6;
  set.items.push_back(l);
  const FitResult r = fit(set, h100(), nullptr);
  EXPECT_NEAR(r.find("attention_efficiency")->fitted, 0.55, 1e-9);
  EXPECT_NEAR(r.find("attention_bwd_efficiency")->fitted, 0.40, 1e-9);
  EXPECT_EQ(r.find("attention_efficiency")->kinds, "attention_fwd");
  EXPECT_EQ(r.find("attention_bwd_efficiency")->kinds, "attention_bwd");
  ASSERT_TRUE(r.gpu.attention_bwd_efficiency.has_value());
  // Only forward records: the backward keeps its prior (the forward efficiency when none is set).
  MeasurementSet fwd_only;
  for (const auto& m : set.items)
    if (m.kind != OpKind::kAttentionBwd) fwd_only.items.push_back(m);
  const FitResult f = fit(fwd_only, h100(), nullptr);
  EXPECT_TRUE(f.find("attention_bwd_efficiency")->kept);
  EXPECT_FALSE(f.gpu.attention_bwd_efficiency.has_value());
}

TEST(Fit, ImplausibleEfficienciesAreClampedAndSaySo) {
  MeasurementSet set;
  for (const int64_t bytes : {int64_t{1} << 30, int64_t{1} << 32}) {
    Measurement m;  // faster than the datasheet HBM bandwidth (an L2-resident buffer, say)
    m.name = "memory";
    m.kind = OpKind::kMemory;
    m.bytes = bytes;
    m.measured_s = static_cast<double>(bytes) / 5e12;
    set.items.push_back(m);
  }
  const FitResult r = fit(set, h100(), nullptr);
  EXPECT_EQ(r.gpu.hbm_efficiency, 1.0);
  EXPECT_EQ(r.find("hbm_efficiency")->note.rfind("fitted 1.493 clamped to 1 ", 0), 0u)
      << r.find("hbm_efficiency")->note;
}

TEST(Fit, CalibrationFileAppliesTheFittedConstants) {
  const Truth t;
  const ClusterSpec prior_cluster = dgx_h100();
  const MeasurementSet set = synthesize(t, Options{});
  const FitResult r = fit(set, h100(), &prior_cluster);
  const nlohmann::json j = calibration_json(r, set.provenance, "h100-synthetic");
  const auto cal = models::hardware::parse_calibration(j, "calibration");
  EXPECT_EQ(cal.name, "h100-synthetic");
  EXPECT_EQ(cal.gpu, "h100-sxm-80gb");
  EXPECT_EQ(j.at("gpu_overrides").at("kernel_launch"), "2500ns");
  EXPECT_EQ(j.at("gpu_overrides").at("gemm_tile_overhead_k"), 96);
  EXPECT_EQ(j.at("gpu_overrides").at("gemm_efficiency"), 0.71);
  EXPECT_EQ(j.at("cluster_overrides").at("collective_launch"), "12000ns");
  EXPECT_EQ(j.at("cluster_overrides").size(), 4u);
  EXPECT_EQ(j.at("sources").at("hbm_efficiency"),
            "fitted by trainsim validate from 7 copy_d2d+memory measurements on NVIDIA H100 80GB HBM3 (synthetic), "
            "2025-06-01T12:00:00Z: relative RMS error 0.00% (31.24% with the preset's value)");
  EXPECT_EQ(j.at("fit").at("parameters").size(), 12u);
  // Applied over the preset, the calibration reproduces the truth.
  const GpuSpec g = models::hardware::parse_gpu(
      models::hardware::calibrate_gpu_json(models::presets::find("gpus", "h100-sxm-80gb", "gpu"), cal), "gpu");
  EXPECT_EQ(g.kernel_launch, t.gpu.kernel_launch);
  EXPECT_EQ(g.gemm_tile_overhead_k, 96.0);
  EXPECT_NEAR(g.attention_efficiency, 0.38, 1e-9);
  EXPECT_NEAR(*g.attention_bwd_efficiency, 0.31, 1e-9);
  EXPECT_NEAR(g.gemm_wave_quantization, 0.3, 1e-9);
  EXPECT_NEAR(g.hbm_efficiency, 0.9, 1e-9);
  // Fitted on one GPU, a calibration says so: a job on another is rejected.
  nlohmann::json job{
      {"model", "llama3-8b"}, {"cluster", "dgx-a100"}, {"gpus", 8}, {"global_batch", 8}, {"calibration", j}};
  try {
    models::workload::resolve_job(models::workload::parse_job(job));
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "calibration");
  }
}

}  // namespace
}  // namespace trainsim::models::calibration
