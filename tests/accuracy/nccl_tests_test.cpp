// nccl-tests all_reduce_perf on one 8x A100 NVSwitch node (stas00/ml-engineering, in
// ../shared/data/collectives_dev.json, ids mle_a100_8gpu_allreduce_*), on one 8x H200 node
// (../shared/data/collectives_dev_h200.json) and on one 8x B200 node
// (../shared/data/collectives_dev_b200.json): bus bandwidth per message size, compared with
// `trainsim collective` on the dgx-a100, dgx-h200 and dgx-b200 presets.
//
// Target (issue 21): A100 busbw median error <= 8% from 1 MB up and <= 12% below; H200 median
// <= 10% across the curve. Two predictions each: the analytic model (NCCL's tuning model,
// nccl_tuning.hpp, choosing algorithm x protocol x channels) and the flow network (the same
// choice run as flows with the protocol's wire factor and step latencies). The presets' `nccl`
// scales are fitted to these same curves (their sources say how), so these rows check the fit and
// the plumbing; the held-out curves are what judges it.
//
// Before issue 21 (one latency per step, one bandwidth, no protocols): A100 < 1 MB median 16.1%,
// >= 1 MB median 25.5% (max 98%); no H200 test.
#include <gtest/gtest.h>

#include "accuracy_common.hpp"
#include "models/collectives/alpha_beta.hpp"
#include "models/collectives/flow_collective.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "models/presets/catalog.hpp"
#include "summary.hpp"
#include "topology/spec.hpp"

namespace trainsim::accuracy {
namespace {

namespace col = models::collectives;

struct Curve {
  std::vector<Row> analytic, flow;
};

// Every record of `file` whose id starts with `prefix` and has a size, run on `gpus` GPUs of
// `preset` with `algorithm` ("auto" or a registered plan; on the analytic model "ring" pins NCCL's
// ring).
// `field`: the record's measured bus bandwidth (the B200 sweep keeps its NVLS-off run in
// busbw_nvls_off_GBps beside the default one).
Curve run_curve(const std::string& file, const std::string& prefix, const std::string& preset, col::CollectiveOp op,
                const std::string& algorithm, int32_t gpus_filter = 0, const std::string& field = "busbw_GBps") {
  Curve out;
  const auto data = load_shared(file);
  if (!data) return out;
  const auto cluster = models::hardware::parse_cluster(models::presets::find("clusters", preset, "cluster"), "cluster");
  const auto spec = models::hardware::network_spec(cluster);
  const topology::Topology topo = topology::build_topology(spec, 8, "cluster.network");
  const topology::Router router(topo, topology::routing_params(spec, topo, "cluster.network"));
  const col::AlphaBetaModel model(cluster);
  for (const auto& rec : *data) {
    const std::string id = rec.at("id").get<std::string>();
    if (id.rfind(prefix, 0) != 0 || !rec.at("size_bytes").is_number() || !rec.contains(field) ||
        !rec.at(field).is_number())
      continue;
    // A prefix ending in '_' names a curve: the rest of the id is the size.
    if (prefix.back() == '_' && id.find_first_not_of("0123456789", prefix.size()) != std::string::npos) continue;
    const auto n = rec.at("gpus").get<int32_t>();
    if (gpus_filter > 0 && n != gpus_filter) continue;
    const sim::Bytes size(rec.at("size_bytes").get<int64_t>());
    const double factor = col::bus_bandwidth_factor(op, n);
    const col::GroupPlacement g{n, n};
    Row row;
    row.id = field == "busbw_GBps" ? id : id + " (" + field + ")";
    row.measured = rec.at(field).get<double>();
    double t = model.collective(op, size, g).seconds();
    std::string label = model.algorithm(op, size, g);
    if (algorithm == "ring") {
      const auto c = model.nccl_choice(op, size, g, col::NcclAlgorithm::kRing);
      t = cluster.collective_launch.seconds() + c->time_us * 1e-6;
      label = std::string("Ring/") + col::to_string(c->protocol);
    }
    row.config = cat(n, " GPUs ", size.count(), " B ", label);
    row.predicted = static_cast<double>(size.count()) / t / 1e9 * factor;
    out.analytic.push_back(row);
    const auto f = col::run_flow_collective(router, n, op, size, algorithm, cluster.collective_launch,
                                            col::NcclContext{&cluster, {}});
    row.config = cat(n, " GPUs ", size.count(), " B ", f.algorithm);
    row.predicted = static_cast<double>(size.count()) / f.time.seconds() / 1e9 * factor;
    out.flow.push_back(row);
  }
  return out;
}

std::pair<std::vector<Row>, std::vector<Row>> split_at_1mb(const std::vector<Row>& rows) {
  std::pair<std::vector<Row>, std::vector<Row>> out;
  for (const Row& r : rows) {
    const int64_t size = std::stoll(r.config.substr(r.config.find("GPUs ") + 5));
    (size >= (1 << 20) ? out.second : out.first).push_back(r);
  }
  return out;
}

TEST(NcclTests, AllReduce8xA100BusBandwidth) {
  const Curve c =
      run_curve("collectives_dev.json", "mle_a100_8gpu_allreduce_", "dgx-a100", col::CollectiveOp::kAllReduce, "auto");
  if (c.analytic.empty()) GTEST_SKIP() << "../shared/data/collectives_dev.json not present";
  ASSERT_EQ(c.analytic.size(), 20u);
  const auto [small, large] = split_at_1mb(c.analytic);
  const auto [flow_small, flow_large] = split_at_1mb(c.flow);
  print_table("nccl-tests all_reduce 8x A100, messages < 1 MB (busbw GB/s, analytic)", small, "GB/s");
  print_table("nccl-tests all_reduce 8x A100, messages >= 1 MB (busbw GB/s, analytic)", large, "GB/s");
  print_table("nccl-tests all_reduce 8x A100 on the flow network, < 1 MB (busbw GB/s)", flow_small, "GB/s");
  print_table("nccl-tests all_reduce 8x A100 on the flow network, >= 1 MB (busbw GB/s)", flow_large, "GB/s");
  // Targets: <= 12% below 1 MB, <= 8% from 1 MB. Observed 2026-11-27: analytic 0.4% / 0.4%
  // (max 24.4% at 8 MiB, where the measured curve dips), flow 0.4% / 0.5%: met.
  EXPECT_LE(stats(small).median_abs, 0.12);
  EXPECT_LE(stats(large).median_abs, 0.08);
  EXPECT_LE(stats(flow_small).median_abs, 0.12);
  expect_summary("nccl_a100_small", stats(flow_small));
  expect_summary("nccl_a100_large", stats(flow_large));
  EXPECT_LE(stats(flow_large).median_abs, 0.08);
}

TEST(NcclTests, H200CurvesBusBandwidth) {
  // The all-reduce curve (NCCL's default: ring LL up to 1 MiB, NVLS from 2 MiB per the record),
  // the 8 GiB points on 4-8 GPUs with NVLS on (default) and off (ring), and the 16 GiB ring
  // all-gather and reduce-scatter.
  std::vector<Row> analytic, flow;
  const auto add = [&](const Curve& c) {
    analytic.insert(analytic.end(), c.analytic.begin(), c.analytic.end());
    flow.insert(flow.end(), c.flow.begin(), c.flow.end());
  };
  const std::string file = "collectives_dev_h200.json";
  add(run_curve(file, "mle_h200_8gpu_allreduce_", "dgx-h200", col::CollectiveOp::kAllReduce, "auto"));
  if (analytic.empty()) GTEST_SKIP() << "../shared/data/collectives_dev_h200.json not present";
  for (int32_t n = 4; n <= 8; ++n) {
    add(run_curve(file, cat("mle_h200_", n, "gpu_allreduce_8GiB_default"), "dgx-h200", col::CollectiveOp::kAllReduce,
                  "auto", n));
    add(run_curve(file, cat("mle_h200_", n, "gpu_allreduce_8GiB_nvls_off"), "dgx-h200", col::CollectiveOp::kAllReduce,
                  "ring", n));
  }
  add(run_curve(file, "mle_h200_8gpu_all_reduce_16GiB_nvls", "dgx-h200", col::CollectiveOp::kAllReduce, "auto"));
  add(run_curve(file, "mle_h200_8gpu_all_reduce_16GiB_ring", "dgx-h200", col::CollectiveOp::kAllReduce, "ring"));
  add(run_curve(file, "mle_h200_8gpu_allreduce_16GiB_torch_ring", "dgx-h200", col::CollectiveOp::kAllReduce, "ring"));
  add(run_curve(file, "mle_h200_8gpu_all_gather_16GiB_ring", "dgx-h200", col::CollectiveOp::kAllGather, "ring"));
  add(run_curve(file, "mle_h200_8gpu_reduce_scatter_16GiB_ring", "dgx-h200", col::CollectiveOp::kReduceScatter,
                "ring"));
  print_table("nccl-tests 8x H200 (busbw GB/s, analytic)", analytic, "GB/s");
  print_table("nccl-tests 8x H200 on the flow network (busbw GB/s)", flow, "GB/s");
  // Target: median <= 10% across the curve. Observed 2026-11-27 over 35 points: analytic 1.6%,
  // flow 1.3% (max 22.7%: NVLS at 16-32 MiB, whose slow ramp the model's latency + bandwidth
  // form does not follow): met.
  EXPECT_LE(stats(analytic).median_abs, 0.10);
  EXPECT_LE(stats(flow).median_abs, 0.10);
}

// The 8 x B200 curve (NVLink5, NCCL 2.27.7; ml-engineering all_reduce_bench.py, 32 KiB to 16 GiB)
// and the 4-8 GPU sweep at 8 GiB with NVLS on (NCCL's default) and off (ring). The dgx-b200
// preset's `nccl` scales are fitted to these rows (docs/tools/fit_nccl_protocols.py blackwell), so
// they check the fit and the plumbing on both networks; GB200 NVL72 across racks is checked
// against published nccl-tests in docs/network.md.
TEST(NcclTests, B200CurvesBusBandwidth) {
  const std::string file = "collectives_dev_b200.json";
  const Curve curve = run_curve(file, "mle_b200_1node_allreduce_", "dgx-b200", col::CollectiveOp::kAllReduce, "auto");
  if (curve.analytic.empty()) GTEST_SKIP() << "../shared/data/collectives_dev_b200.json not present";
  ASSERT_EQ(curve.analytic.size(), 20u);
  const auto [small, large] = split_at_1mb(curve.analytic);
  const auto [flow_small, flow_large] = split_at_1mb(curve.flow);
  print_table("nccl-tests all_reduce 8x B200, messages < 1 MB (busbw GB/s, analytic)", small, "GB/s");
  print_table("nccl-tests all_reduce 8x B200, messages >= 1 MB (busbw GB/s, analytic)", large, "GB/s");
  print_table("nccl-tests all_reduce 8x B200 on the flow network, >= 1 MB (busbw GB/s)", flow_large, "GB/s");
  std::vector<Row> sweep, flow_sweep;
  for (int32_t n = 4; n <= 8; ++n) {
    const std::string id = cat("mle_b200_", n, "gpu_allreduce_8GiB_default");
    for (const auto& [algo, field] : {std::pair<std::string, std::string>{"auto", "busbw_GBps"},
                                      std::pair<std::string, std::string>{"ring", "busbw_nvls_off_GBps"}}) {
      const Curve c = run_curve(file, id, "dgx-b200", col::CollectiveOp::kAllReduce, algo, n, field);
      sweep.insert(sweep.end(), c.analytic.begin(), c.analytic.end());
      flow_sweep.insert(flow_sweep.end(), c.flow.begin(), c.flow.end());
    }
  }
  ASSERT_EQ(sweep.size(), 10u);
  print_table("nccl-tests all_reduce 4-8 B200 at 8 GiB, NVLS on and off (busbw GB/s, analytic)", sweep, "GB/s");
  print_table("nccl-tests all_reduce 4-8 B200 at 8 GiB on the flow network (busbw GB/s)", flow_sweep, "GB/s");
  // Target (issue 32): median <= 10% from 1 MB. Observed 2026-11-28 (15 points from 1 MB):
  // analytic 7.9%, flow 8.7%: met. The curve ramps more slowly between 4 and 64 MiB than latency +
  // bytes / bandwidth (up to +42% at 8 MiB) and jumps from 741 GB/s at 4 GiB to 839 at 8 GiB (-7%
  // there). Below 1 MB 0.7%. Sweep (10 rows): 0.7% on both; 6 and 7 GPUs run NVLS at 778-811
  // GB/s under NCCL 2.27.7, whose NVLS entry is 5/6 x channels x speed; NCCL 2.30.7's table,
  // which trainsim follows, puts 6 GPUs on the ring and 7 on NVLS at 681 (-13%, -16%).
  EXPECT_LE(stats(large).median_abs, 0.10);
  EXPECT_LE(stats(flow_large).median_abs, 0.10);
  EXPECT_LE(stats(small).median_abs, 0.10);
  EXPECT_LE(stats(sweep).median_abs, 0.10);
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
                                                            size, "auto", cluster.collective_launch,
                                                            models::collectives::NcclContext{&cluster, {}});
    Row row;
    row.id = id;
    row.config = cat(preset, " 16 GPUs 4 GiB ", f.algorithm);
    row.measured = measured;
    row.predicted = static_cast<double>(size.count()) / f.time.seconds() / 1e9 * 2.0 * 15.0 / 16.0;
    rows.push_back(row);
  }
  print_table("nccl-tests all_reduce across 2 nodes on the flow network (busbw GB/s)", rows, "GB/s");
  // Observed 2026-11-22: +11.6%, +5.5%, -0.1%. 2026-11-27 with NCCL's choice and protocols:
  // see the printed table (max 9.2%).
  EXPECT_LE(stats(rows).max_abs, 0.10);
  expect_summary("nccl_2node", stats(rows));
}

}  // namespace
}  // namespace trainsim::accuracy
