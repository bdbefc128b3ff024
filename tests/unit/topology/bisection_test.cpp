// Bisection (topology/bisection.cpp): max flow between GPU halves against closed forms.
#include "topology/bisection.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::Json;

double min_cut(const Json& j, int64_t gpus) { return index_halves_min_cut(build(j, gpus)).gbyte_per_second(); }
double closed(const Json& j, int64_t gpus) { return build(j, gpus).bisection()->gbyte_per_second(); }

TEST(Bisection, MaxFlowOfNodeFabrics) {
  // NVSwitch: 4 GPUs on each side, each 450 GB/s into the switch: 4 x 450.
  EXPECT_NEAR(min_cut(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "450GBps"}}, 8), 1800.0, 1e-6);
  // Full mesh of 8: 4 x 4 pairs across, 64 GB/s each.
  EXPECT_NEAR(min_cut(Json{{"builder", "p2p_full_mesh"}, {"link_bandwidth", "64GBps"}}, 8), 1024.0, 1e-6);
  // Odd count: GPUs {0} against {1, 2}: 2 links.
  EXPECT_NEAR(min_cut(Json{{"builder", "p2p_full_mesh"}, {"link_bandwidth", "64GBps"}}, 3), 128.0, 1e-6);
  EXPECT_DOUBLE_EQ(index_halves_min_cut(build(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "1GBps"}}, 1))
                       .gbyte_per_second(),
                   0.0);
}

TEST(Bisection, ClosedFormsMatchTheMaxFlowWhereHalvesAreUnits) {
  // Fat tree, radix 8, 2-GPU servers: 4 leaves of 4 GPUs, halves = 2 leaves each: 8 x 25.
  const Json fat{{"builder", "fat_tree"},
                 {"gpus_per_node", 2},
                 {"nvlink_bandwidth", "100GBps"},
                 {"nic_bandwidth", "25GBps"},
                 {"radix", 8}};
  EXPECT_NEAR(closed(fat, 16), 200.0, 1e-6);
  EXPECT_NEAR(min_cut(fat, 16), 200.0, 1e-6);
  // Rail-optimized, 2 units at 2:1: each leaf's uplink is 4 x 50 / 2 = 100; 8 leaves per unit.
  const Json rail{{"builder", "rail_optimized"},
                  {"nvlink_bandwidth", "450GBps"},
                  {"nic_bandwidth", "50GBps"},
                  {"servers_per_unit", 4},
                  {"spines", 2},
                  {"oversubscription", 2.0}};
  EXPECT_NEAR(closed(rail, 64), 800.0, 1e-6);
  EXPECT_NEAR(min_cut(rail, 64), 800.0, 1e-6);
  // Torus 4x4: GPUs 0-7 are rows y = 0, 1; the cut crosses 2 x 4 vertical links of 10 GB/s.
  const Json torus{{"builder", "torus"}, {"shape", {4, 4}}, {"link_bandwidth", "10GBps"}};
  EXPECT_NEAR(closed(torus, 16), 80.0, 1e-6);
  EXPECT_NEAR(min_cut(torus, 16), 80.0, 1e-6);
  // Dragonfly+, radix 8, 2 groups of 16 GPUs, 16 global cables at 10 GB/s (global-bound).
  const Json dfly{{"builder", "dragonfly_plus"}, {"gpus_per_node", 2},           {"nvlink_bandwidth", "100GBps"},
                  {"nic_bandwidth", "25GBps"},   {"global_bandwidth", "10GBps"}, {"radix", 8}};
  EXPECT_NEAR(closed(dfly, 32), 160.0, 1e-6);
  EXPECT_NEAR(min_cut(dfly, 32), 160.0, 1e-6);
}

TEST(Bisection, ClosedFormWinsOverMaxFlow) {
  const Topology t =
      build(Json{{"builder", "rail_only"}, {"nvlink_bandwidth", "450GBps"}, {"nic_bandwidth", "50GBps"}}, 32);
  EXPECT_DOUBLE_EQ(bisection_bandwidth(t).gbyte_per_second(), 16 * 50.0);
  const Topology single = build(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "450GBps"}}, 8);
  EXPECT_FALSE(single.bisection().has_value());
  EXPECT_NEAR(bisection_bandwidth(single).gbyte_per_second(), 1800.0, 1e-6);
}

}  // namespace
}  // namespace trainsim::topology
