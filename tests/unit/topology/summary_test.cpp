// Summary and Graphviz (topology/summary.cpp).
#include "topology/summary.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "test_support.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::Json;

TEST(Summary, CountsDiameterBisection) {
  // rail_optimized, 64 GPUs = 8 servers = 2 units of 4: nodes 64 GPUs + 8 NVSwitches + 16 rail
  // leaves + 2 spines; cables 64 NVLink + 64 NIC + 16 leaves x 2 spines.
  const Json j{{"builder", "rail_optimized"},
               {"nvlink_bandwidth", "450GBps"},
               {"nic_bandwidth", "50GBps"},
               {"servers_per_unit", 4},
               {"spines", 2}};
  const Summary s = summarize(build(j, 64));
  EXPECT_EQ(s.gpus, 64u);
  EXPECT_EQ(s.nodes, 90u);
  EXPECT_EQ(s.switches, 26u);
  EXPECT_EQ(s.cables, 160u);
  EXPECT_EQ(s.nodes_by_kind.at("leaf"), 16u);
  EXPECT_EQ(s.nodes_by_kind.at("spine"), 2u);
  EXPECT_EQ(s.diameter, 4);  // GPU - leaf - spine - leaf - GPU
  EXPECT_TRUE(s.diameter_exact);
  EXPECT_DOUBLE_EQ(s.bisection.gbyte_per_second(), 32 * 50.0);
  EXPECT_TRUE(s.bisection_closed_form);
  const Json out = s.to_json();
  EXPECT_EQ(out["schema_version"], 1);
  EXPECT_EQ(out["cables"], 160);
  EXPECT_EQ(out["node_kinds"]["nvswitch"], 8);
  EXPECT_EQ(out["diameter_hops"], 4);
}

TEST(Summary, TorusDiameterIsTheSumOfHalfDimensions) {
  // Diameter sum_k floor(n_k / 2).
  for (const auto& [shape, diameter] : std::vector<std::pair<std::vector<int64_t>, int32_t>>{
           {{4, 4}, 4}, {{3, 5, 4}, 5}, {{2, 2}, 2}, {{8, 1}, 4}, {{6, 6, 6}, 9}}) {
    int64_t n = 1;
    for (const int64_t d : shape) n *= d;
    const Summary s = summarize(build(Json{{"builder", "torus"}, {"shape", shape}, {"link_bandwidth", "50GBps"}}, n));
    EXPECT_EQ(s.diameter, diameter) << Json(shape).dump();
  }
}

TEST(Summary, LargeGraphsSampleTheDiameter) {
  const Json j{{"builder", "torus"}, {"shape", {16, 16, 16}}, {"link_bandwidth", "50GBps"}};
  const Summary s = summarize(build(j, 4096));  // 4096 x (4096 + 24576) > 5e7: sampled
  EXPECT_FALSE(s.diameter_exact);
  EXPECT_EQ(s.diameter, 24);  // vertex-transitive: every GPU's eccentricity is the diameter
}

TEST(Summary, DotIsDeterministicAndMarksFaults) {
  Json j{{"builder", "nvswitch_node"}, {"gpus_per_node", 2}, {"nvlink_bandwidth", "450GBps"}};
  j["faults"] = Json::array({Json{{"a", "gpu1"}, {"b", "nvswitch0"}, {"factor", 0.5}}});
  const Topology t = build(j, 2);
  std::ostringstream a, b;
  write_dot(t, a);
  write_dot(t, b);
  EXPECT_EQ(a.str(), b.str());
  EXPECT_EQ(a.str(),
            "graph trainsim {\n"
            "  node [fontsize=10];\n"
            "  subgraph cluster_server0 {\n"
            "    label=\"server 0\";\n"
            "    n0 [label=\"nvswitch0\", shape=ellipse];\n"
            "    n1 [label=\"gpu0\", shape=box];\n"
            "    n2 [label=\"gpu1\", shape=box];\n"
            "  }\n"
            "  n1 -- n0 [label=\"450.0 GB/s nvlink\"];\n"
            "  n2 -- n0 [label=\"450.0 GB/s nvlink\", style=dashed, xlabel=\"x0.5/0.5\"];\n"
            "}\n");
}

}  // namespace
}  // namespace trainsim::topology
