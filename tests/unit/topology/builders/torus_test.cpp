// torus (topology/builders/torus.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

Topology torus(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return build(Json{{"builder", "torus"}, {"shape", shape}, {"link_bandwidth", "50GBps"}}, n);
}

TEST(Torus, CablesPerShape) {
  // cables sum_k (N / n_k) c(n_k), c(n) = n for n >= 3, 1 for n = 2, 0 for n = 1.
  EXPECT_EQ(torus({4, 4}).cable_count(), 32u);      // 2 x 4 rings x 4
  EXPECT_EQ(torus({3, 5, 4}).cable_count(), 180u);  // 20 x 3 + 12 x 5 + 15 x 4
  EXPECT_EQ(torus({2, 2}).cable_count(), 4u);       // 2 x 1 + 2 x 1
  EXPECT_EQ(torus({4, 4, 4}).cable_count(), 192u);  // every GPU has 6 neighbours
  EXPECT_EQ(torus({8, 1}).cable_count(), 8u);       // a ring
  EXPECT_EQ(torus({4, 4, 4}).torus_shape(), (std::vector<int64_t>{4, 4, 4}));
}

TEST(Torus, BisectionAcrossTheLargestDimension) {
  // 2 N / n_max links: 4x4 -> 8; 2x8 -> 4; 4x4x8 -> 32; 2x2 -> N / 2 = 2.
  EXPECT_DOUBLE_EQ(torus({4, 4}).bisection()->gbyte_per_second(), 8 * 50.0);
  EXPECT_DOUBLE_EQ(torus({2, 8}).bisection()->gbyte_per_second(), 4 * 50.0);
  EXPECT_DOUBLE_EQ(torus({4, 4, 8}).bisection()->gbyte_per_second(), 32 * 50.0);
  EXPECT_DOUBLE_EQ(torus({2, 2}).bisection()->gbyte_per_second(), 2 * 50.0);
}

TEST(Torus, NeighboursWrapAround) {
  const Topology t = torus({4, 3});
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 3), 1);    // x wraps: (0,0) - (3,0)
  EXPECT_EQ(r.hops(0, 8), 1);    // y wraps: (0,0) - (0,2)
  EXPECT_EQ(r.hops(0, 6), 3);    // (2,1): 2 + 1
  EXPECT_EQ(t.server_of(7), 7);  // one GPU per host by default
}

TEST(Torus, ShapeErrors) {
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "torus"}, {"shape", {4, 4}}, {"link_bandwidth", "50GBps"}}, 12);
            }),
            "cluster.network.shape: a 4x4 torus holds 16 GPUs, got 12 (use 16 GPUs or a shape whose product is 12)");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "torus"}, {"shape", {4}}, {"link_bandwidth", "50GBps"}}, 4);
            }),
            "cluster.network.shape: expected a list of 2 or 3 dimensions, got [4] (write e.g. [4, 4] or [4, 4, 4])");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "torus"}, {"shape", {4, 0}}, {"link_bandwidth", "50GBps"}}, 4);
            }).rfind("cluster.network.shape[1]: ", 0),
            0u);
  EXPECT_EQ(
      config_error([] {
        build(Json{{"builder", "torus"}, {"shape", {4, 4}}, {"link_bandwidth", "50GBps"}, {"gpus_per_node", 3}}, 16);
      }),
      "cluster.network.gpus_per_node: 16 GPUs are not a whole number of 3-GPU hosts (use a divisor of the GPU "
      "count)");
}

}  // namespace
}  // namespace trainsim::topology
