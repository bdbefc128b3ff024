// pcie_tree (topology/builders/pcie_tree.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::Json;

TEST(PcieTree, CountsAndHops) {
  // s = 2 GPUs per switch, w = 2 switches per CPU, c = 2 CPUs: 8 GPUs; nodes 8 + 4 + 2 = 14;
  // cables 8 + 4 + 1 = 13.
  const Topology t = build(Json{{"builder", "pcie_tree"}, {"pcie_bandwidth", "25GBps"}}, 8);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 14u);
  EXPECT_EQ(s.cables, 13u);
  EXPECT_EQ(s.nodes_by_kind.at("pcie_switch"), 4u);
  EXPECT_EQ(s.nodes_by_kind.at("cpu"), 2u);
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 1), 2);  // same switch
  EXPECT_EQ(r.hops(0, 2), 4);  // GPU - switch - CPU - switch - GPU
  EXPECT_EQ(r.hops(0, 4), 5);  // and across the sockets
  EXPECT_EQ(s.diameter, 5);
  // Halves are the sockets: min(2 uplinks x 25, 62.4 UPI) = 50 GB/s.
  EXPECT_NEAR(s.bisection.gbyte_per_second(), 50.0, 1e-6);
  // With Gen5 uplinks the socket link binds: 62.4 GB/s.
  EXPECT_NEAR(
      summarize(build(Json{{"builder", "pcie_tree"}, {"pcie_bandwidth", "25GBps"}, {"uplink_bandwidth", "64GBps"}}, 8))
          .bisection.gbyte_per_second(),
      62.4, 1e-6);
}

TEST(PcieTree, OneSocket) {
  const Topology t = build(Json{{"builder", "pcie_tree"},
                                {"pcie_bandwidth", "25GBps"},
                                {"cpus", 1},
                                {"gpus_per_switch", 4},
                                {"switches_per_cpu", 1}},
                           4);
  EXPECT_EQ(summarize(t).cables, 4u + 1u);
  EXPECT_EQ(summarize(t).diameter, 2);
}

}  // namespace
}  // namespace trainsim::topology
