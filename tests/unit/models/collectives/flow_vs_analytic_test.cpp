// The flow network against the analytic model (NCCL's table, alpha-beta where NCCL has no entry) on
// an idle cluster, where nothing contends and both should tell the same time.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/collectives/sweep.hpp"

namespace trainsim::models::collectives {
namespace {

void expect_agreement(const char* cluster, const std::string& algo, const std::vector<int64_t>& gpus, double tolerance,
                      const std::vector<sim::Bytes>& sizes = {sim::Bytes(1 << 20), sim::Bytes(64 << 20),
                                                              sim::Bytes(int64_t{1} << 30)}) {
  const auto c = testing::cluster(cluster);
  for (const int64_t n : gpus) {
    const Sweep flow = flow_sweep(c, n, CollectiveOp::kAllReduce, sizes, algo);
    const Sweep analytic = analytic_sweep(c, n, CollectiveOp::kAllReduce, sizes, algo);
    for (size_t i = 0; i < sizes.size(); ++i)
      EXPECT_NEAR(flow.points[i].time.seconds() / analytic.points[i].time.seconds(), 1.0, tolerance)
          << cluster << ", " << algo << ", " << n << " GPUs, " << sizes[i].count() << " bytes: flow "
          << flow.points[i].algorithm << ", analytic " << analytic.points[i].algorithm;
  }
}

TEST(FlowVsAnalytic, RingsAgreeFrom8To16384Gpus) {
  // Every step of a ring across servers pays the journey's mean latency (flow_protocol.cpp).
  // Observed 2026-11-28 on DGX H100 at 1 MiB / 64 MiB / 1 GiB: 8 GPUs equal; 16 -0.1% / -1.5% /
  // +2.6%; 1,024 0.0% / -0.2% / -1.2%; 4,096 0.0% / 0.0% / -0.5%.
  expect_agreement("dgx-h100", "ring", {8, 16, 64, 256, 1024, 4096, 16384}, 0.05);
}

TEST(FlowVsAnalytic, HierarchicalAgreesFrom16To16384Gpus) {
  // The analytic form (AlphaBetaModel::hierarchical_time) overlaps the phases as the sliced plan
  // does. Observed 2026-11-28 at 1 MiB / 64 MiB / 1 GiB: 16 GPUs -6.5% / -12.1% / -1.2%; 64 GPUs
  // +12.6% / +3.7% / +3.8%; 256 GPUs +3.9% / +2.4% / +12.6%; 1,024 to 16,384 within 1.3%.
  expect_agreement("dgx-h100", "hierarchical", {16, 64, 256, 1024, 4096, 16384}, 0.13);
}

TEST(FlowVsAnalytic, TreesAgreeFromAMiBAcrossServers) {
  // The tree's wire factor is the table's bandwidth against the plan's idle one (flow_protocol.cpp).
  // Observed 2026-11-28 on DGX H100 (flow / analytic - 1) at 1 MiB / 64 MiB / 1 GiB: 16 GPUs -3% /
  // -15% / -1%; 64 +12% / -3% / +4%; 256 +21% / -9% / +6%; 1,024 +27% / -8% / +9%; 4,096 +31% / -6% /
  // +11%; 16,384 (not run here: 10 s) +34% / -6% / +14%. Not yet 10% everywhere: between two
  // servers the table's correction by size (left out) makes NCCL slower at 2-64 MiB (-25% at
  // 8 MiB), and from 256 GPUs the flow network's hops store and forward whole 75 KiB LL128 slices
  // that NCCL forwards line by line (+31% at 1 MiB on 4,096 GPUs).
  expect_agreement("dgx-h100", "tree", {16, 64, 256, 1024, 4096}, 0.15,
                   {sim::Bytes(64 << 20), sim::Bytes(int64_t{1} << 30)});
  expect_agreement("dgx-h100", "tree", {16, 64, 256, 1024, 4096}, 0.35, {sim::Bytes(1 << 20), sim::Bytes(8 << 20)});
}

TEST(FlowVsAnalytic, NvlsTreeIsSlowerThanTheTableByAKnownMargin) {
  // NCCL's choice across DGX H100 servers from 64 MiB is NVLS-tree. Observed 2026-11-28 (flow /
  // analytic - 1) at 64 MiB / 1 GiB: 16 GPUs +26% / +15%; 64 +28% / +21%; 256 +33% / +23%; 1,024
  // +38% / +25%. Not yet 10%: between two servers a shard's owner sends it into the switch twice,
  // (1 + 1/g) of the buffer, which the table leaves out; across more the table's NICs run at line
  // rate where the flow network's carry nic_efficiency (0.94), and the 64-slice cap adds pipeline
  // fill on deep trees (512 slices: +25% -> +20% at 1 GiB on 1,024 GPUs; docs/network.md).
  expect_agreement("dgx-h100", "auto", {16, 64, 256, 1024}, 0.40, {sim::Bytes(64 << 20), sim::Bytes(int64_t{1} << 30)});
}

TEST(FlowVsAnalytic, EveryAlgorithmAgreesInsideOneServer) {
  // One DGX: NCCL's ring and NVLS (auto) on the flow network against the table.
  expect_agreement("dgx-h100", "ring", {2, 4, 8}, 0.02);
  expect_agreement("dgx-h100", "auto", {8}, 0.02);
  expect_agreement("dgx-a100", "ring", {8}, 0.02);
}

}  // namespace
}  // namespace trainsim::models::collectives
