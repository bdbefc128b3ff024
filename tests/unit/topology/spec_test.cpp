// The network spec (topology/spec.cpp): builder dispatch, closed schemas, faults, routing.
#include "topology/spec.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

Json rail() {
  return Json{{"builder", "rail_optimized"}, {"gpus_per_node", 8},    {"nvlink_bandwidth", "450GBps"},
              {"nic_bandwidth", "50GBps"},   {"servers_per_unit", 4}, {"spines", 2}};
}

TEST(Spec, BuildsAndNamesTheBuilder) {
  const Topology t = build(rail(), 64);
  EXPECT_EQ(t.builder(), "rail_optimized");
  EXPECT_EQ(t.gpu_count(), 64u);
}

TEST(Spec, ShapeOfTheSpecIsChecked) {
  EXPECT_EQ(config_error([] { build(Json::array(), 8); }),
            "cluster.network: expected an object {\"builder\": NAME, ...parameters}, got an array");
  EXPECT_EQ(config_error([] {
              build(Json{{"nic_bandwidth", "50GBps"}}, 8);
            }),
            "cluster.network.builder: missing required key (name a topology builder: dgx1_cube_mesh, dragonfly_plus, "
            "explicit, fat_tree, nvswitch_node, p2p_full_mesh, pcie_tree, rail_only, rail_optimized, torus)");
  Json j = rail();
  j["spine"] = 4;  // closed schema: unknown keys are errors with a did-you-mean
  EXPECT_EQ(config_error([&] { build(j, 64); }),
            "cluster.network.spine: unknown key in rail_optimized (did you mean \"spines\"?)");
  j = rail();
  j["nic_bandwidth"] = "-5GBps";
  EXPECT_EQ(config_error([&] { build(j, 64); }),
            "cluster.network.nic_bandwidth: expected a positive bandwidth like \"400Gbps\" or \"50GBps\", got "
            "\"-5GBps\"");
}

TEST(Spec, FaultsDegradeOrFailCables) {
  Json j = rail();
  j["faults"] = Json::array({Json{{"a", "gpu0"}, {"b", "rail_leaf0"}, {"factor", 0}},
                             Json{{"a", "rail_leaf1"}, {"b", "spine0"}, {"factor", 0.5}, {"direction", "a_to_b"}}});
  const Topology t = build(j, 64);
  const Summary s = summarize(t);
  EXPECT_EQ(s.failed_links, 2u);    // both directions of gpu0 - rail_leaf0
  EXPECT_EQ(s.degraded_links, 1u);  // rail_leaf1 -> spine0 only
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 8), 6);  // GPU 0 reaches its rail through GPU 1: NVLink, rail 1, NVLink
}

TEST(Spec, FaultErrorsNameTheFault) {
  Json j = rail();
  j["faults"] = Json::array({Json{{"a", "gpu0"}, {"b", "rail_leaf9"}, {"factor", 0}}});
  EXPECT_EQ(
      config_error([&] { build(j, 64); }),
      "cluster.network.faults[0]: no link between \"gpu0\" and \"rail_leaf9\" (name two nodes joined by a cable)");
  j["faults"][0]["b"] = "rail_lef0";
  EXPECT_EQ(config_error([&] { build(j, 64); }),
            "cluster.network.faults[0].b: no node named \"rail_lef0\" (did you mean \"rail_leaf0\"?)");
  j["faults"][0]["b"] = "rail_leaf0";
  j["faults"][0]["factor"] = 1.5;
  EXPECT_EQ(config_error([&] { build(j, 64); }).rfind("cluster.network.faults[0].factor: ", 0), 0u);
  // Failing every cable of GPU 0 disconnects it.
  j["faults"] = Json::array({Json{{"a", "gpu0"}, {"b", "rail_leaf0"}, {"factor", 0}},
                             Json{{"a", "gpu0"}, {"b", "nvswitch0"}, {"factor", 0}}});
  EXPECT_EQ(config_error([&] { build(j, 64); }),
            "cluster.network: the topology is disconnected: GPU 1 (\"gpu1\") cannot reach GPU 0 (\"gpu0\") (check the "
            "links of the network description and its faults)");
}

TEST(Spec, RoutingIsParsedAndValidated) {
  Json j = rail();
  j["routing"] = Json{{"mode", "spray"}, {"flows_per_connection", 4}};
  const Topology t = build(j, 64);
  const RoutingParams r = routing_params(j, t, "cluster.network");
  EXPECT_EQ(r.mode, RoutingParams::Mode::kSpray);
  EXPECT_EQ(r.flows_per_connection, 4);
  EXPECT_EQ(routing_params(rail(), t, "cluster.network").mode, RoutingParams::Mode::kEcmp);  // defaults
  j["routing"] = Json{{"mode", "dimension_order"}};
  EXPECT_EQ(config_error([&] { build(j, 64); }),
            "cluster.network.routing.mode: dimension_order routing needs a torus, got \"rail_optimized\" (use ecmp, "
            "spray or shortest)");
  j["routing"] = Json{{"flows_per_conection", 16}};
  EXPECT_EQ(config_error([&] { build(j, 64); }),
            "cluster.network.routing.flows_per_conection: unknown key in routing (did you mean "
            "\"flows_per_connection\"?)");
  j["routing"] = Json{{"flows_per_connection", 0}};
  EXPECT_EQ(config_error([&] { build(j, 64); }).rfind("cluster.network.routing.flows_per_connection: ", 0), 0u);
}

}  // namespace
}  // namespace trainsim::topology
