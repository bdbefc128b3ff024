// Unit tests for sim/config/schema: closed, typed, unit-aware parsing with exact one-line errors
// (conv. 11 and 12). Each expected message is the full ConfigError::what() a user would see.

#include "sim/config/schema.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "sim/error.hpp"
#include "sim/units.hpp"

namespace trainsim::sim {
// Readable failure messages: GoogleTest finds these printers by argument-dependent lookup.
inline void PrintTo(Time t, std::ostream* os) { *os << t.count_ns() << " ns"; }
inline void PrintTo(Bytes b, std::ostream* os) { *os << b.count() << " B"; }
inline void PrintTo(Bandwidth bw, std::ostream* os) { *os << bw.bytes_per_second() << " B/s"; }
}  // namespace trainsim::sim

namespace trainsim::sim::config {
namespace {

using namespace sim::literals;

struct TestCluster {
  int64_t nodes = 0;
  int64_t offset = 0;
  std::optional<int64_t> max_steps = 7;  // overwritten: the schema's documented default (null) applies
  double efficiency = 0.9;
  bool overlap = true;
  std::string name = "default";
  std::string algorithm = "ring";
  Bandwidth nic_bandwidth = 400_Gbps;
  Bytes memory = 80_GiB;
  Time latency = 2_us;
};

Schema<TestCluster> cluster_schema() {
  Schema<TestCluster> s("cluster", "A test cluster.");
  s.integer("nodes", &TestCluster::nodes, 1, 100'000, std::nullopt, "Number of nodes.")
      .integer("offset", &TestCluster::offset, -10, 10, 0, "Signed offset.")
      .nullable_integer("max_steps", &TestCluster::max_steps, 1, 1'000, "Stop after this many steps.")
      .number("efficiency", &TestCluster::efficiency, 0.0, 1.0, 0.9, "Achieved fraction of peak.")
      .boolean("overlap", &TestCluster::overlap, true, "Overlap communication with compute.")
      .string("name", &TestCluster::name, std::string("default"), "Display name.")
      .enumeration("algorithm", &TestCluster::algorithm, {"ring", "tree", "hierarchical"}, std::string("ring"),
                   "All-reduce algorithm.")
      .unit("nic_bandwidth", &TestCluster::nic_bandwidth, &read_bandwidth, "bandwidth", std::string("400Gbps"),
            "NIC bandwidth per GPU.")
      .unit("memory", &TestCluster::memory, &read_bytes, "size", std::string("80GiB"), "GPU memory.")
      .unit("latency", &TestCluster::latency, &read_time, "duration", std::string("2us"), "Link latency.");
  return s;
}

TestCluster parse(const Json& j) {
  TestCluster out;
  cluster_schema().parse(j, "cluster", out);
  return out;
}

// The one-line message a bad document produces ("" and a test failure if it parses).
std::string error_of(const Json& j) {
  try {
    parse(j);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError for " << j.dump();
  return "";
}

TEST(SchemaTest, ParsesEveryFieldType) {
  const TestCluster c = parse(Json::parse(R"({
    "nodes": 8, "offset": -3, "max_steps": 100, "efficiency": 0.5, "overlap": false, "name": "x",
    "algorithm": "tree", "nic_bandwidth": "200Gbps", "memory": "40GiB", "latency": "1.5us"})"));
  EXPECT_EQ(c.nodes, 8);
  EXPECT_EQ(c.offset, -3);
  EXPECT_EQ(c.max_steps, 100);
  EXPECT_DOUBLE_EQ(c.efficiency, 0.5);
  EXPECT_FALSE(c.overlap);
  EXPECT_EQ(c.name, "x");
  EXPECT_EQ(c.algorithm, "tree");
  EXPECT_EQ(c.nic_bandwidth, 25_GBps);  // 200 Gbit/s = 25 GB/s
  EXPECT_EQ(c.memory, 40_GiB);
  EXPECT_EQ(c.latency, Time::ns(1'500));
}

TEST(SchemaTest, MissingOptionalKeysKeepDefaults) {
  const TestCluster c = parse(Json::parse(R"({"nodes": 2})"));
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.offset, 0);
  EXPECT_EQ(c.max_steps, std::nullopt);  // the schema's default, not the struct's
  EXPECT_EQ(c.algorithm, "ring");
  EXPECT_EQ(c.nic_bandwidth, 400_Gbps);
  EXPECT_EQ(c.latency, 2_us);
}

TEST(SchemaTest, IntegralFloatIsAnInteger) { EXPECT_EQ(parse(Json::parse(R"({"nodes": 8.0})")).nodes, 8); }

TEST(SchemaTest, UnknownKeySuggestsTheNearestKey) {
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 8, "nodse": 8})")),
            "cluster.nodse: unknown key in cluster (did you mean \"nodes\"?)");
  // Case-insensitive distance: "NIC_Bandwith" is one edit from "nic_bandwidth".
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 8, "NIC_Bandwith": "1Gbps"})")),
            "cluster.NIC_Bandwith: unknown key in cluster (did you mean \"nic_bandwidth\"?)");
}

TEST(SchemaTest, UnknownKeyFarFromAllListsTheValidKeys) {
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 8, "zzz": 1})")),
            "cluster.zzz: unknown key in cluster (valid keys: nodes, offset, max_steps, efficiency, overlap, name, "
            "algorithm, nic_bandwidth, memory, latency)");
}

TEST(SchemaTest, UnknownKeysAreReportedBeforeBadValues) {
  // The schema is closed: a typo is the likelier cause than the bad value next to it.
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": "eight", "ovrlap": true})")),
            "cluster.ovrlap: unknown key in cluster (did you mean \"overlap\"?)");
}

TEST(SchemaTest, MissingRequiredKey) {
  EXPECT_EQ(error_of(Json::object()), "cluster.nodes: missing required key (add \"nodes\": integer in [1, 100000])");
}

TEST(SchemaTest, WrongTypes) {
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": "eight"})")),
            "cluster.nodes: expected an integer, got \"eight\" (write a whole number such as 1)");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 2.5})")),
            "cluster.nodes: expected an integer, got 2.5 (write a whole number such as 1)");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "overlap": 1})")), "cluster.overlap: expected true or false, got 1");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "efficiency": "high"})")),
            "cluster.efficiency: expected a number, got \"high\"");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "name": 5})")), "cluster.name: expected a string, got 5");
  EXPECT_EQ(error_of(Json::parse(R"([1, 2])")), "cluster: expected a JSON object, got an array");
}

TEST(SchemaTest, OutOfRange) {
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 0})")), "cluster.nodes: must be between 1 and 100000, got 0");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "efficiency": 1.5})")),
            "cluster.efficiency: must be between 0.0 and 1.0, got 1.5");
}

TEST(SchemaTest, HugeUnsignedIntegerIsOutOfRangeNotWrapped) {
  // 2^64 - 1 does not fit int64. Read as int64 it would wrap to -1, which is inside [-10, 10].
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "offset": 18446744073709551615})")),
            "cluster.offset: must be between -10 and 10, got 18446744073709551615");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 18446744073709551615})")),
            "cluster.nodes: must be between 1 and 100000, got 18446744073709551615");
}

TEST(SchemaTest, EnumSuggestsTheNearestValue) {
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "algorithm": "rng"})")),
            "cluster.algorithm: unknown value \"rng\" (did you mean \"ring\"?)");
  // Matching is exact; the suggestion is case-insensitive.
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "algorithm": "Ring"})")),
            "cluster.algorithm: unknown value \"Ring\" (did you mean \"ring\"?)");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "algorithm": "butterfly"})")),
            "cluster.algorithm: unknown value \"butterfly\" (expected one of ring|tree|hierarchical)");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "algorithm": 3})")),
            "cluster.algorithm: expected one of ring|tree|hierarchical, got 3");
}

TEST(SchemaTest, NullableInteger) {
  EXPECT_EQ(parse(Json::parse(R"({"nodes": 1, "max_steps": null})")).max_steps, std::nullopt);
  EXPECT_EQ(parse(Json::parse(R"({"nodes": 1, "max_steps": 5})")).max_steps, 5);
  EXPECT_EQ(parse(Json::parse(R"({"nodes": 1})")).max_steps, std::nullopt);  // missing = documented default
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "max_steps": 0})")),
            "cluster.max_steps: must be between 1 and 1000, got 0");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "max_steps": "x"})")),
            "cluster.max_steps: expected an integer, got \"x\" (write a whole number such as 1)");
}

TEST(SchemaTest, UnitFieldsNeedAUnit) {
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "nic_bandwidth": 400})")),
            "cluster.nic_bandwidth: expected a string like \"400Gbps\", got 400 (add a unit)");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "nic_bandwidth": "400"})")),
            "cluster.nic_bandwidth: expected a bandwidth like \"400Gbps\" or \"50GBps\", got \"400\" "
            "(add a unit: bps/Kbps/Mbps/Gbps/Tbps for bits, Bps/KBps/MBps/GBps/TBps for bytes)");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "latency": true})")),
            "cluster.latency: expected a string like \"2us\", got true");
  EXPECT_EQ(error_of(Json::parse(R"({"nodes": 1, "memory": 80})")),
            "cluster.memory: expected a string like \"80GiB\", got 80 (add a unit)");
}

TEST(SchemaTest, NestedPathPrefixesErrors) {
  TestCluster out;
  try {
    cluster_schema().parse(Json::parse(R"({"nodes": 1, "latency": "5"})"), "clusters[2]", out);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "clusters[2].latency");
    EXPECT_EQ(e.hint(), "add a unit: ns, us, ms, s, min, h or d");
  }
}

TEST(SchemaTest, DidYouMean) {
  const std::vector<std::string> keys = {"bandwidth", "latency", "nic_bandwidth"};
  EXPECT_EQ(did_you_mean("bandwith", keys), "bandwidth");  // one deletion
  EXPECT_EQ(did_you_mean("LATENCY", keys), "latency");     // case-insensitive
  EXPECT_EQ(did_you_mean("nic", keys), "nic_bandwidth");   // too far by edits, but a prefix
  EXPECT_EQ(did_you_mean("xyz", keys), "");
  // Non-ASCII bytes are compared safely: "nödes" is 6 bytes, 2 edits from "nodes".
  EXPECT_EQ(did_you_mean("n\xc3\xb6"
                         "des",
                         {"nodes", "name"}),
            "nodes");
}

TEST(SchemaTest, JsonTypeNames) {
  EXPECT_EQ(json_type_name(Json()), "null");
  EXPECT_EQ(json_type_name(Json(true)), "a boolean");
  EXPECT_EQ(json_type_name(Json(3)), "an integer");
  EXPECT_EQ(json_type_name(Json(3u)), "an integer");
  EXPECT_EQ(json_type_name(Json(2.5)), "a number");
  EXPECT_EQ(json_type_name(Json("s")), "a string");
  EXPECT_EQ(json_type_name(Json::array()), "an array");
  EXPECT_EQ(json_type_name(Json::object()), "an object");
}

TEST(SchemaTest, MarkdownTableOneRowPerField) {
  const std::string md = cluster_schema().markdown();
  EXPECT_EQ(md.rfind("## cluster\n\nA test cluster.\n\n| key | type | default | description |\n|---|---|---|---|\n", 0),
            0u)
      << md;
  EXPECT_NE(md.find("| `nodes` | integer in [1, 100000] | required | Number of nodes. |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| `max_steps` | integer or null | `null` | Stop after this many steps. |\n"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| `nic_bandwidth` | bandwidth | `\"400Gbps\"` | NIC bandwidth per GPU. |\n"), std::string::npos)
      << md;
  // The '|' of an enum's type is escaped, or it would split the Markdown cell in two.
  EXPECT_NE(md.find("| `algorithm` | one of ring\\|tree\\|hierarchical | `\"ring\"` | All-reduce algorithm. |\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(cluster_schema().fields().size(), 10u);
  EXPECT_EQ(cluster_schema().name(), "cluster");
}

}  // namespace
}  // namespace trainsim::sim::config
