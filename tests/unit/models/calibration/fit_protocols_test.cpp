// The per-protocol NCCL scales come back from collectives synthesised with known scales.
#include "models/calibration/fit_protocols.hpp"

#include <gtest/gtest.h>

#include "models/collectives/nccl_tuning.hpp"
#include "models/hardware/calibration.hpp"
#include "models/presets/catalog.hpp"

namespace trainsim::models::calibration {
namespace {

namespace col = models::collectives;

TEST(FitProtocols, RecoversKnownScalesAndWritesTheNcclObject) {
  const auto prior =
      models::hardware::parse_cluster(models::presets::find("clusters", "dgx-h100", "cluster"), "cluster");
  // Truth: LL at 1.7x NCCL's latency and 0.4x its bandwidth, Simple at 2.1x and 0.95x.
  hardware::ClusterSpec truth = prior;
  truth.nccl.ll = {1.7, 0.4};
  truth.nccl.simple = {2.1, 0.95};
  std::vector<Measurement> items;
  for (const char* proto : {"ll", "simple"})
    for (int64_t bytes : {int64_t{1} << 16, int64_t{1} << 20, int64_t{1} << 24, int64_t{1} << 28}) {
      Measurement m;
      m.name = "all_reduce";
      m.kind = OpKind::kCollective;
      m.op = "all_reduce";
      m.ranks = 8;
      m.link_class = "nvlink";
      m.protocol = proto;
      m.bytes = bytes;
      const col::NcclSystem s = col::nccl_system(truth, 8, 8, false);
      m.measured_s = truth.collective_launch.seconds() +
                     1e-6 * col::nccl_time_us(col::CollectiveOp::kAllReduce, col::NcclAlgorithm::kRing,
                                              col::parse_protocol(proto, "p"), sim::Bytes(bytes), s);
      items.push_back(m);
    }
  FitResult r;
  r.cluster = prior;
  r.has_cluster = true;
  fit_protocol_scales(items, r);
  EXPECT_NEAR(r.cluster.nccl.ll.latency, 1.7, 1e-6);
  EXPECT_NEAR(r.cluster.nccl.ll.bandwidth, 0.4, 1e-6);
  EXPECT_NEAR(r.cluster.nccl.simple.latency, 2.1, 1e-6);
  EXPECT_NEAR(r.cluster.nccl.simple.bandwidth, 0.95, 1e-6);
  EXPECT_EQ(r.cluster.nccl.ll128.latency, prior.nccl.ll128.latency);  // no LL128 records: kept
  ASSERT_NE(r.find("nccl.ll.latency"), nullptr);
  EXPECT_FALSE(r.find("nccl.ll.latency")->kept);
  EXPECT_LT(r.find("nccl.ll.latency")->rms_after, 1e-9);
  // The calibration file carries the whole nccl object, and applying it gives the fitted scales.
  const nlohmann::json j = calibration_json(r, Provenance{}, "h100-protocols");
  const auto cal = models::hardware::parse_calibration(j, "calibration");
  const auto applied = models::hardware::parse_cluster(
      models::hardware::calibrate_cluster_json(models::presets::find("clusters", "dgx-h100", "cluster"), cal),
      "cluster");
  EXPECT_NEAR(applied.nccl.ll.latency, 1.7, 1e-3);
  EXPECT_NEAR(applied.nccl.simple.bandwidth, 0.95, 1e-3);
  EXPECT_EQ(applied.nccl.architecture, "hopper");
  EXPECT_NEAR(applied.nccl.nvls.bandwidth, prior.nccl.nvls.bandwidth, 1e-3);
}

TEST(FitProtocols, OneSizeKeepsThePrior) {
  Measurement m;
  m.kind = OpKind::kCollective;
  m.op = "all_reduce";
  m.ranks = 8;
  m.link_class = "nvlink";
  m.protocol = "ll128";
  m.bytes = 1 << 20;
  m.measured_s = 1e-4;
  FitResult r;
  r.cluster = models::hardware::parse_cluster(models::presets::find("clusters", "dgx-a100", "cluster"), "cluster");
  r.has_cluster = true;
  const double before = r.cluster.nccl.ll128.latency;
  fit_protocol_scales({m, m}, r);
  EXPECT_EQ(r.cluster.nccl.ll128.latency, before);
  ASSERT_NE(r.find("nccl.ll128.latency"), nullptr);
  EXPECT_TRUE(r.find("nccl.ll128.latency")->kept);
}

}  // namespace
}  // namespace trainsim::models::calibration
