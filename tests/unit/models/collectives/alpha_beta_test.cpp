#include "models/collectives/alpha_beta.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::collectives {
namespace {

TEST(AlphaBeta, RingAllReduceInsideANode) {
  const auto c = testing::cluster("dgx-a100");
  const AlphaBetaModel m(c);
  const GroupPlacement g{8, 8};
  const sim::Bytes s(1 << 30);
  // launch + 2(n-1) steps x nvlink latency + 2(n-1)/n x S / (nvlink x efficiency)
  const double expected =
      c.collective_launch.seconds() + 14 * c.nvlink_latency.seconds() +
      2.0 * 7 / 8 * static_cast<double>(s.count()) / (c.nvlink_bandwidth.bytes_per_second() * c.nvlink_efficiency);
  EXPECT_NEAR(m.collective(CollectiveOp::kAllReduce, s, g).seconds(), expected, 2e-9);
  EXPECT_EQ(m.algorithm(CollectiveOp::kAllReduce, s, g), "ring");
}

TEST(AlphaBeta, AcrossNodesOneRankPerNodeUsesOneRail) {
  const auto c = testing::cluster("dgx-h100");
  const AlphaBetaModel m(c);
  // One rank per node (TP 8): the ring crosses a NIC at every hop; each GPU owns one of 8 NICs.
  EXPECT_DOUBLE_EQ(m.ring_bus_bandwidth(GroupPlacement{16, 1}).bytes_per_second(),
                   c.nic_bandwidth.bytes_per_second() * c.nic_efficiency);
  // Eight ranks per node: eight rails, capped by NVLink.
  const double eight = std::min(8 * c.nic_bandwidth.bytes_per_second() * c.nic_efficiency,
                                c.nvlink_bandwidth.bytes_per_second() * c.nvlink_efficiency);
  EXPECT_DOUBLE_EQ(m.ring_bus_bandwidth(GroupPlacement{64, 8}).bytes_per_second(), eight);
}

TEST(AlphaBeta, NodesWithFewerNicsThanGpusShareThem) {
  const auto c = testing::cluster("vtrain-a100");  // 4 NICs for 8 GPUs
  const AlphaBetaModel m(c);
  EXPECT_DOUBLE_EQ(m.ring_bus_bandwidth(GroupPlacement{16, 1}).bytes_per_second(),
                   0.5 * c.nic_bandwidth.bytes_per_second() * c.nic_efficiency);
}

TEST(AlphaBeta, TreeWinsForSmallMessagesOverManyNodes) {
  const AlphaBetaModel m(testing::cluster("dgx-h100"));
  const GroupPlacement g{1024, 1};  // 1024 nodes: a ring pays 2046 latencies, a tree 2 log2(1024)
  EXPECT_EQ(m.algorithm(CollectiveOp::kAllReduce, sim::Bytes(65536), g), "tree");
  EXPECT_LT(m.collective(CollectiveOp::kAllReduce, sim::Bytes(65536), g),
            m.ring_time(CollectiveOp::kAllReduce, sim::Bytes(65536), g));
}

TEST(AlphaBeta, AllGatherMovesHalfAnAllReduce) {
  const AlphaBetaModel m(testing::cluster("dgx-a100"));
  const GroupPlacement g{8, 8};
  const sim::Bytes s(int64_t{4} << 30);
  const double ar = m.collective(CollectiveOp::kAllReduce, s, g).seconds();
  const double ag = m.collective(CollectiveOp::kAllGather, s, g).seconds();
  EXPECT_NEAR(ag / ar, 0.5, 0.001);  // bandwidth terms dominate at 4 GiB
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kAllGather, 8), 0.875);
}

}  // namespace
}  // namespace trainsim::models::collectives
