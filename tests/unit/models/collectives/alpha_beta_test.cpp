#include "models/collectives/alpha_beta.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../test_support.hpp"

namespace trainsim::models::collectives {
namespace {

double bytes_per_s(sim::Bandwidth b) { return b.bytes_per_second(); }

TEST(AlphaBeta, AllToAllAcrossNodesIsBoundByEachGpusNic) {
  // 16 H100s on 2 DGX nodes: each rank sends half its buffer to the other node through its own
  // NIC (a ring model would spread it over the node's 8 NICs: 8 times too fast).
  const auto c = testing::cluster("dgx-h100");
  const AlphaBetaModel m(c);
  const sim::Bytes s(int64_t{1} << 30);
  const double nic = bytes_per_s(c.nic_bandwidth) * c.nic_efficiency;
  const double expected = c.collective_launch.seconds() + c.nic_latency.seconds() + 0.5 * std::pow(2.0, 30) / nic;
  EXPECT_NEAR(m.collective(CollectiveOp::kAllToAll, s, GroupPlacement{16, 8}).seconds(), expected, 2e-9);
  EXPECT_EQ(m.algorithm(CollectiveOp::kAllToAll, s, GroupPlacement{16, 8}), "all_to_all_direct");
  // Inside a node: 7/8 of the buffer over NVLink.
  const double nvl = bytes_per_s(c.nvlink_bandwidth) * c.nvlink_efficiency;
  EXPECT_NEAR(m.collective(CollectiveOp::kAllToAll, s, GroupPlacement{8, 8}).seconds(),
              c.collective_launch.seconds() + c.nvlink_latency.seconds() + 7.0 / 8 * std::pow(2.0, 30) / nvl, 2e-9);
}

TEST(AlphaBeta, RingAllReduceInsideANode) {
  const auto c = testing::cluster("dgx-a100");
  const AlphaBetaModel m(c);
  const GroupPlacement g{8, 8};
  for (const int64_t size : {int64_t{1} << 20, int64_t{1} << 30, int64_t{3} << 28}) {
    const sim::Bytes s(size);
    // launch + 2(n-1) steps x nvlink latency + 2(n-1)/n x S / (nvlink x efficiency)
    const double expected =
        c.collective_launch.seconds() + 14 * c.nvlink_latency.seconds() +
        2.0 * 7 / 8 * static_cast<double>(size) / (bytes_per_s(c.nvlink_bandwidth) * c.nvlink_efficiency);
    EXPECT_NEAR(m.collective(CollectiveOp::kAllReduce, s, g).seconds(), expected, 2e-9) << size;
    EXPECT_EQ(m.algorithm(CollectiveOp::kAllReduce, s, g), "ring");  // one node: never a tree
  }
  // 1 GiB on 8 A100s: 17 us + 14 x 1.9 us + 1.75 GiB / (300 GB/s x 0.78) = 8.07 ms, i.e. the
  // nccl-tests bus bandwidth of ~234 GB/s the preset is calibrated on.
  EXPECT_NEAR(m.collective(CollectiveOp::kAllReduce, sim::Bytes(int64_t{1} << 30), g).seconds(), 8.07e-3, 0.01e-3);
}

TEST(AlphaBeta, BusBandwidthInsideANodeIsNvlinkTimesEfficiency) {
  const auto c = testing::cluster("dgx-h100");
  const AlphaBetaModel m(c);
  for (const int64_t n : {2, 4, 8})
    EXPECT_DOUBLE_EQ(bytes_per_s(m.ring_bus_bandwidth(GroupPlacement{n, n})),
                     bytes_per_s(c.nvlink_bandwidth) * c.nvlink_efficiency);
}

TEST(AlphaBeta, AcrossNodesOneRankPerNodeUsesOneRail) {
  const auto c = testing::cluster("dgx-h100");
  const AlphaBetaModel m(c);
  // One rank per node (TP 8): the ring crosses a NIC at every hop; each GPU owns one of 8 NICs.
  EXPECT_DOUBLE_EQ(bytes_per_s(m.ring_bus_bandwidth(GroupPlacement{16, 1})),
                   bytes_per_s(c.nic_bandwidth) * c.nic_efficiency);
  // Two ranks per node drive two rails.
  EXPECT_DOUBLE_EQ(bytes_per_s(m.ring_bus_bandwidth(GroupPlacement{16, 2})),
                   2 * bytes_per_s(c.nic_bandwidth) * c.nic_efficiency);
  // Eight ranks per node: eight rails, capped by NVLink.
  const double eight = std::min(8 * bytes_per_s(c.nic_bandwidth) * c.nic_efficiency,
                                bytes_per_s(c.nvlink_bandwidth) * c.nvlink_efficiency);
  EXPECT_DOUBLE_EQ(bytes_per_s(m.ring_bus_bandwidth(GroupPlacement{64, 8})), eight);
}

TEST(AlphaBeta, RingAcrossNodesPaysNicLatencyOnTheHopsThatLeaveANode) {
  const auto c = testing::cluster("dgx-h100");
  const AlphaBetaModel m(c);
  // 4 ranks, one per node: all 2(n-1) = 6 steps cross a node boundary (6 * 4 / 4 = 6).
  const sim::Bytes s(int64_t{256} << 20);
  const double busbw = bytes_per_s(c.nic_bandwidth) * c.nic_efficiency;
  const double expected =
      c.collective_launch.seconds() + 6 * c.nic_latency.seconds() + 1.5 * static_cast<double>(s.count()) / busbw;
  EXPECT_NEAR(m.ring_time(CollectiveOp::kAllReduce, s, GroupPlacement{4, 1}).seconds(), expected, 2e-9);
  // 16 ranks, 8 per node (2 nodes): of the 30 steps, 30 * 2 / 16 = 3 (rounded down) pay the NIC
  // latency and 27 the NVLink latency; bandwidth is min(8 rails, NVLink).
  const double bw16 = std::min(8 * busbw, bytes_per_s(c.nvlink_bandwidth) * c.nvlink_efficiency);
  const double expected16 = c.collective_launch.seconds() + 3 * c.nic_latency.seconds() +
                            27 * c.nvlink_latency.seconds() + 30.0 / 16 * static_cast<double>(s.count()) / bw16;
  EXPECT_NEAR(m.ring_time(CollectiveOp::kAllReduce, s, GroupPlacement{16, 8}).seconds(), expected16, 2e-9);
}

TEST(AlphaBeta, NodesWithFewerNicsThanGpusShareThem) {
  const auto c = testing::cluster("vtrain-a100");  // 4 NICs for 8 GPUs
  const AlphaBetaModel m(c);
  EXPECT_DOUBLE_EQ(bytes_per_s(m.ring_bus_bandwidth(GroupPlacement{16, 1})),
                   0.5 * bytes_per_s(c.nic_bandwidth) * c.nic_efficiency);
}

TEST(AlphaBeta, TreeWinsForSmallMessagesOverManyNodes) {
  const auto c = testing::cluster("dgx-h100");
  const AlphaBetaModel m(c);
  const GroupPlacement g{1024, 1};  // 1024 nodes: a ring pays 2046 latencies, a tree 2 log2(1024)
  const sim::Bytes small(65536);
  EXPECT_EQ(m.algorithm(CollectiveOp::kAllReduce, small, g), "tree");
  EXPECT_LT(m.collective(CollectiveOp::kAllReduce, small, g), m.ring_time(CollectiveOp::kAllReduce, small, g));
  EXPECT_EQ(m.collective(CollectiveOp::kAllReduce, small, g), m.tree_time(CollectiveOp::kAllReduce, small, g));
  // Tree: launch + 2 x 10 NIC latencies + 2 x S / busbw (one rank per node: no NVLink chain).
  const double tree = c.collective_launch.seconds() + 20 * c.nic_latency.seconds() +
                      2.0 * 65536 / (bytes_per_s(c.nic_bandwidth) * c.nic_efficiency);
  EXPECT_NEAR(m.tree_time(CollectiveOp::kAllReduce, small, g).seconds(), tree, 2e-9);
  // A large message over two nodes is bandwidth-bound: the ring's 2(n-1)/n < the tree's 2.
  const sim::Bytes big(int64_t{1} << 30);
  EXPECT_EQ(m.algorithm(CollectiveOp::kAllReduce, big, GroupPlacement{16, 8}), "ring");
  // Other collectives have no tree.
  EXPECT_EQ(m.algorithm(CollectiveOp::kAllGather, small, g), "ring");
}

TEST(AlphaBeta, AllGatherMovesHalfAnAllReduce) {
  const auto c = testing::cluster("dgx-a100");
  const AlphaBetaModel m(c);
  const GroupPlacement g{8, 8};
  const sim::Bytes s(int64_t{4} << 30);
  const double ar = m.collective(CollectiveOp::kAllReduce, s, g).seconds();
  const double ag = m.collective(CollectiveOp::kAllGather, s, g).seconds();
  EXPECT_NEAR(ag / ar, 0.5, 0.001);  // bandwidth terms dominate at 4 GiB
  // Exactly: launch + (n-1) latencies + (n-1)/n S / busbw, reduce-scatter alike.
  const double busbw = bytes_per_s(c.nvlink_bandwidth) * c.nvlink_efficiency;
  const double expected =
      c.collective_launch.seconds() + 7 * c.nvlink_latency.seconds() + 7.0 / 8 * static_cast<double>(s.count()) / busbw;
  EXPECT_NEAR(ag, expected, 2e-9);
  EXPECT_EQ(m.collective(CollectiveOp::kReduceScatter, s, g), m.collective(CollectiveOp::kAllGather, s, g));
}

TEST(AlphaBeta, TrivialGroupsCostNothing) {
  const AlphaBetaModel m(testing::cluster("dgx-h100"));
  EXPECT_EQ(m.collective(CollectiveOp::kAllReduce, sim::Bytes(1 << 20), GroupPlacement{1, 1}), sim::Time::zero());
  EXPECT_EQ(m.collective(CollectiveOp::kAllReduce, sim::Bytes(0), GroupPlacement{8, 8}), sim::Time::zero());
  EXPECT_EQ(m.p2p(sim::Bytes(0), true), sim::Time::zero());
}

TEST(AlphaBeta, PointToPoint) {
  const auto c = testing::cluster("vtrain-a100");
  const AlphaBetaModel m(c);
  const sim::Bytes s(64 << 20);
  // Across nodes: launch + NIC latency + S / (NIC x efficiency x the GPU's NIC share (4/8)).
  EXPECT_NEAR(m.p2p(s, true).seconds(),
              c.collective_launch.seconds() + c.nic_latency.seconds() +
                  static_cast<double>(s.count()) / (0.5 * bytes_per_s(c.nic_bandwidth) * c.nic_efficiency),
              2e-9);
  // Inside a node: NVLink.
  EXPECT_NEAR(m.p2p(s, false).seconds(),
              c.collective_launch.seconds() + c.nvlink_latency.seconds() +
                  static_cast<double>(s.count()) / (bytes_per_s(c.nvlink_bandwidth) * c.nvlink_efficiency),
              2e-9);
}

TEST(AlphaBeta, BusBandwidthFactorsAndNames) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kSendRecv, 2), 1.0);
  for (const CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll,
        CollectiveOp::kBroadcast, CollectiveOp::kReduce, CollectiveOp::kSendRecv})
    EXPECT_EQ(parse_collective_op(to_string(op), "op"), op);
  EXPECT_EQ(testing::config_error([] { parse_collective_op("allreduce", "--op"); }),
            "--op: unknown value \"allreduce\" (did you mean \"all_reduce\"?)");
  EXPECT_EQ((GroupPlacement{16, 8}.nodes()), 2);
  EXPECT_EQ((GroupPlacement{12, 8}.nodes()), 2);
}

}  // namespace
}  // namespace trainsim::models::collectives
