// explicit (topology/builders/explicit.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

Json node(const char* name, const char* kind) { return Json{{"name", name}, {"kind", kind}}; }
Json link(const char* a, const char* b, const char* bw = "50GBps") {
  return Json{{"a", a}, {"b", b}, {"bandwidth", bw}, {"latency", "1us"}};
}

Json two_servers() {
  // g0, g1 on sw0; g2, g3 on sw1; both switches on leaf.
  Json j{{"builder", "explicit"}};
  j["nodes"] = Json::array({node("g0", "gpu"), node("g1", "gpu"), Json{{"name", "g2"}, {"kind", "gpu"}, {"server", 1}},
                            Json{{"name", "g3"}, {"kind", "gpu"}, {"server", 1}}, node("sw0", "nvswitch"),
                            Json{{"name", "sw1"}, {"kind", "nvswitch"}, {"server", 1}}, node("leaf", "leaf")});
  j["links"] = Json::array({link("g0", "sw0", "300GBps"), link("g1", "sw0", "300GBps"), link("g2", "sw1", "300GBps"),
                            link("g3", "sw1", "300GBps"), link("sw0", "leaf"), link("sw1", "leaf")});
  return j;
}

TEST(Explicit, BuildsTheListedGraph) {
  const Topology t = build(two_servers(), 4);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 7u);
  EXPECT_EQ(s.cables, 6u);
  EXPECT_EQ(s.diameter, 4);
  EXPECT_FALSE(s.bisection_closed_form);
  EXPECT_NEAR(s.bisection.gbyte_per_second(), 50.0, 1e-6);  // max flow: the sw0 - leaf cable
  EXPECT_EQ(t.server_of(2), 1);
  EXPECT_EQ(t.node(t.gpu_node(3)).local, 1);
  EXPECT_EQ(t.node(*t.find_node("leaf")).server, -1);
  EXPECT_EQ(t.gpus_per_server(), 2);
  EXPECT_EQ(t.link(0).kind, "link");
  EXPECT_EQ(Router(t, RoutingParams{}).hops(0, 3), 4);
}

TEST(Explicit, DisconnectedGraphsAreRejected) {
  Json j = two_servers();
  j["links"].erase(5);  // sw1 - leaf
  EXPECT_EQ(config_error([&] { build(j, 4); }),
            "cluster.network.links: the topology is disconnected: GPU 2 (\"g2\") cannot reach GPU 0 (\"g0\") (check "
            "the links of the network description and its faults)");
}

TEST(Explicit, BadInputNamesTheField) {
  EXPECT_EQ(config_error([] { build(two_servers(), 8); }),
            "cluster.network.nodes: lists 4 GPUs (nodes of kind gpu), but 8 are asked for (use 4 GPUs or list 8)");
  Json j = two_servers();
  j["links"][1]["a"] = "g7";
  EXPECT_EQ(config_error([&] { build(j, 4); }),
            "cluster.network.links[1].a: no node named \"g7\" (did you mean \"g0\"?)");
  j = two_servers();
  j["links"][1]["b"] = "g1";
  EXPECT_EQ(config_error([&] { build(j, 4); }),
            "cluster.network.links[1].b: a link from \"g1\" to itself (name two different nodes)");
  j = two_servers();
  j["nodes"][5]["name"] = "sw0";
  EXPECT_EQ(config_error([&] { build(j, 4); }),
            "cluster.network.nodes[5].name: duplicate node name \"sw0\" (give every node a unique name)");
  j = two_servers();
  j["links"][0]["bandwidth"] = "0GBps";
  EXPECT_EQ(config_error([&] { build(j, 4); }),
            "cluster.network.links[0].bandwidth: expected a positive bandwidth like \"400Gbps\" or \"50GBps\", got "
            "\"0GBps\"");
  j["links"][0]["bandwidth"] = "-1GBps";
  EXPECT_EQ(config_error([&] { build(j, 4); }),
            "cluster.network.links[0].bandwidth: expected a positive bandwidth like \"400Gbps\" or \"50GBps\", got "
            "\"-1GBps\"");
  j = two_servers();
  j["links"][0].erase("bandwidth");
  j["links"][0]["bandwith"] = "1GBps";
  EXPECT_EQ(config_error([&] { build(j, 4); }),
            "cluster.network.links[0].bandwith: unknown key in explicit link (did you mean \"bandwidth\"?)");
  j = two_servers();
  j["nodes"][0]["kind"] = "gpus";
  EXPECT_EQ(config_error([&] { build(j, 4); }).rfind("cluster.network.nodes[0].kind: ", 0), 0u);
}

}  // namespace
}  // namespace trainsim::topology
