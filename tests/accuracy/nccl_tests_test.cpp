// nccl-tests all_reduce_perf on one 8x A100 NVSwitch node (stas00/ml-engineering, in
// ../shared/data/collectives_dev.json, ids mle_a100_8gpu_allreduce_*): bus bandwidth per
// message size, compared with `trainsim collective` on the dgx-a100 preset.
//
// Target (network issue): busbw within 10% for messages >= 1 MB and within 25% below.
// Two predictions: the analytic hierarchical alpha-beta ring of the foundation issue, and the
// flow-level network (the automatic algorithm choice run as flows on the derived NVSwitch
// topology, as `trainsim collective` does). Both use one latency per step and the large-message
// bus bandwidth from the same curve's plateau; neither models NCCL's protocol switch (LL / LL128 /
// Simple) or its channel count ramp, so mid-size messages come out too fast. The bounds below pin
// today's errors.
#include <gtest/gtest.h>

#include "accuracy_common.hpp"
#include "models/collectives/alpha_beta.hpp"
#include "models/collectives/flow_collective.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "models/presets/catalog.hpp"
#include "topology/spec.hpp"

namespace trainsim::accuracy {
namespace {

TEST(NcclTests, AllReduce8xA100BusBandwidth) {
  const auto data = load_shared("collectives_dev.json");
  if (!data) GTEST_SKIP() << "../shared/data/collectives_dev.json not present";
  const auto cluster =
      models::hardware::parse_cluster(models::presets::find("clusters", "dgx-a100", "cluster"), "cluster");
  const models::collectives::AlphaBetaModel model(cluster);
  const models::collectives::GroupPlacement group{8, 8};
  const auto spec = models::hardware::network_spec(cluster);
  const topology::Topology topo = topology::build_topology(spec, 8, "cluster.network");
  const topology::Router router(topo, topology::routing_params(spec, topo, "cluster.network"));
  std::vector<Row> small, large, flow_small, flow_large;
  for (const auto& rec : *data) {
    if (rec.at("id").get<std::string>().rfind("mle_a100_8gpu_allreduce_", 0) != 0) continue;
    const sim::Bytes size(rec.at("size_bytes").get<int64_t>());
    const double t = model.collective(models::collectives::CollectiveOp::kAllReduce, size, group).seconds();
    Row row;
    row.id = rec.at("id").get<std::string>();
    row.config = cat(size.count(), " B");
    row.measured = rec.at("busbw_GBps").get<double>();
    row.predicted = static_cast<double>(size.count()) / t / 1e9 * 2.0 * 7.0 / 8.0;
    (size.count() >= (1 << 20) ? large : small).push_back(row);
    const auto f = models::collectives::run_flow_collective(router, 8, models::collectives::CollectiveOp::kAllReduce,
                                                            size, "auto", cluster.collective_launch);
    row.config = cat(size.count(), " B ", f.algorithm);
    row.predicted = static_cast<double>(size.count()) / f.time.seconds() / 1e9 * 2.0 * 7.0 / 8.0;
    (size.count() >= (1 << 20) ? flow_large : flow_small).push_back(row);
  }
  ASSERT_EQ(small.size() + large.size(), 20u);
  print_table("nccl-tests all_reduce 8x A100, messages < 1 MB (busbw GB/s)", small, "GB/s");
  print_table("nccl-tests all_reduce 8x A100, messages >= 1 MB (busbw GB/s)", large, "GB/s");
  // Observed 2026-11-22: < 1 MB median 16%, max 69%; >= 1 MB median 25.5%, max 98% (1-64 MB,
  // where NCCL is still ramping up); >= 512 MB within 4%. Targets not met (see header).
  EXPECT_LE(stats(small).median_abs, 0.17);
  EXPECT_LE(stats(large).median_abs, 0.26);
  print_table("nccl-tests all_reduce 8x A100 on the flow network, messages < 1 MB (busbw GB/s)", flow_small, "GB/s");
  print_table("nccl-tests all_reduce 8x A100 on the flow network, messages >= 1 MB (busbw GB/s)", flow_large, "GB/s");
  // Observed 2026-11-22 on the flow network (auto choice = ring inside a server, as NCCL): < 1 MB
  // median 16.1%, >= 1 MB median 25.5%, the same as the analytic ring (same physics on an idle
  // NVSwitch); >= 512 MB within 4%. Targets not met: NCCL protocols and channel ramp are missing.
  EXPECT_LE(stats(flow_small).median_abs, 0.17);
  EXPECT_LE(stats(flow_large).median_abs, 0.26);
}

// Multi-node all-reduce bus bandwidth against the per-NIC figures in collectives_dev.json (large
// messages; the records give no size, 4 GiB is simulated): 2 DGX-A100-like nodes with 4 x HDR
// per node (the vtrain-a100 preset: 4 NICs for 8 GPUs; ids nccl_tests_175_a100_2node_4xhdr and
// nccl_tests_100_hgx_a100_2node_4xhdr) and DGX A100 with 8 x HDR (nccl_812_dgx_a100_multinode_192,
// node count not stated: 2 nodes simulated). The flow network runs NCCL's rings (one channel
// per GPU of a server, PXN routing).
TEST(NcclTests, MultiNodeAllReducePerNicFigures) {
  const auto data = load_shared("collectives_dev.json");
  if (!data) GTEST_SKIP() << "../shared/data/collectives_dev.json not present";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nccl_tests_175_a100_2node_4xhdr", "vtrain-a100"},
      {"nccl_tests_100_hgx_a100_2node_4xhdr", "vtrain-a100"},
      {"nccl_812_dgx_a100_multinode_192", "dgx-a100"}};
  std::vector<Row> rows;
  for (const auto& [id, preset] : cases) {
    double measured = -1;
    for (const auto& rec : *data)
      if (rec.at("id").get<std::string>() == id) measured = rec.at("busbw_GBps").get<double>();
    ASSERT_GT(measured, 0) << id;
    const auto cluster =
        models::hardware::parse_cluster(models::presets::find("clusters", preset, "cluster"), "cluster");
    const auto spec = models::hardware::network_spec(cluster);
    const topology::Topology topo = topology::build_topology(spec, 16, "cluster.network");
    const topology::Router router(topo, topology::routing_params(spec, topo, "cluster.network"));
    const sim::Bytes size(int64_t{4} << 30);
    const auto f = models::collectives::run_flow_collective(router, 16, models::collectives::CollectiveOp::kAllReduce,
                                                            size, "auto", cluster.collective_launch);
    Row row;
    row.id = id;
    row.config = cat(preset, " 16 GPUs 4 GiB ", f.algorithm);
    row.measured = measured;
    row.predicted = static_cast<double>(size.count()) / f.time.seconds() / 1e9 * 2.0 * 15.0 / 16.0;
    rows.push_back(row);
  }
  print_table("nccl-tests all_reduce across 2 nodes on the flow network (busbw GB/s)", rows, "GB/s");
  // Observed 2026-11-22: +11.6%, +5.5%, -0.1%.
  EXPECT_LE(stats(rows).max_abs, 0.13);
}

}  // namespace
}  // namespace trainsim::accuracy
