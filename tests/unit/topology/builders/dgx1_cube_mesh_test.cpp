// dgx1_cube_mesh (topology/builders/dgx1_cube_mesh.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

TEST(Dgx1CubeMesh, NvlinkTwo) {
  // 16 GPU pairs; 24 NVLinks of 25 GB/s (8 pairs doubled); every GPU has 6 links = 150 GB/s.
  const Topology t = build(Json{{"builder", "dgx1_cube_mesh"}}, 8);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 8u);
  EXPECT_EQ(s.cables, 16u);
  EXPECT_DOUBLE_EQ(testing::cable_capacity_gbps(t), 24 * 25.0);
  for (size_t g = 0; g < 8; ++g) {
    double out = 0;
    for (const Edge e : boost::make_iterator_range(boost::out_edges(t.gpu_node(g), t.graph())))
      out += t.graph()[e].capacity.gbyte_per_second();
    EXPECT_DOUBLE_EQ(out, 6 * 25.0) << g;
  }
  EXPECT_EQ(s.diameter, 2);  // GPU 0 to GPU 5: through GPU 1 or GPU 4
  // Bisection between the quads: 0-4 and 1-5 doubled, 2-6 and 3-7 single = 6 links.
  EXPECT_NEAR(s.bisection.gbyte_per_second(), 6 * 25.0, 1e-6);
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 5), 2);
  EXPECT_DOUBLE_EQ(r.path_count(0, 5), 2.0);
}

TEST(Dgx1CubeMesh, NvlinkOne) {
  // 16 single links of 20 GB/s; 4 per GPU; 4 links between the quads.
  const Topology t = build(Json{{"builder", "dgx1_cube_mesh"}, {"nvlink_gen", 1}}, 8);
  EXPECT_DOUBLE_EQ(testing::cable_capacity_gbps(t), 16 * 20.0);
  EXPECT_NEAR(summarize(t).bisection.gbyte_per_second(), 4 * 20.0, 1e-6);
  EXPECT_NEAR(summarize(build(Json{{"builder", "dgx1_cube_mesh"}, {"nvlink_gen", 1}, {"link_bandwidth", "10GBps"}}, 8))
                  .bisection.gbyte_per_second(),
              40.0, 1e-6);
}

TEST(Dgx1CubeMesh, Shape) {
  EXPECT_EQ(summarize(build(Json{{"builder", "dgx1_cube_mesh"}}, 4)).cables, 6u);  // one quad: 4 x 3 / 2
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "dgx1_cube_mesh"}}, 16);
            }),
            "cluster.network: 16 GPUs do not fit one dgx1_cube_mesh server of 8 GPUs (use at most 8 GPUs, or a "
            "multi-node builder (fat_tree, rail_optimized, rail_only, dragonfly_plus) with \"intra\": {\"builder\": "
            "\"dgx1_cube_mesh\", ...})");
}

}  // namespace
}  // namespace trainsim::topology
