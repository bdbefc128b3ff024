// Chakra JSON parsing (traces/chakra/trace.*): the chakra_jsonizer form of the hand-written
// example, the other accepted forms (proto field names, numbers for 64-bit integers, enums by
// value, a JSON array, {"nodes": [...]}) giving the same nodes, and every structural error.
#include "traces/chakra/trace.hpp"

#include <gtest/gtest.h>

#include "chakra_test_util.hpp"

namespace trainsim::traces::chakra {
namespace {

using test::example;
using test::expect_config_error;

TEST(ChakraTrace, ReadsTheJsonizerForm) {
  const Trace t = read_trace(example("hand-dp2"), "--chakra");
  ASSERT_EQ(t.ranks.size(), 2u);
  const RankTrace& r0 = t.ranks[0];
  EXPECT_EQ(r0.metadata.at("schema").s, "1.0.2-chakra.0.0.4");
  ASSERT_EQ(r0.nodes.size(), 6u);
  // Node 0 has no "id" key (MessageToJson leaves defaults out): id 0.
  EXPECT_EQ(r0.nodes[0].id, 0u);
  EXPECT_EQ(r0.nodes[0].type, NodeType::kMetadata);
  const Node& gemm = r0.nodes[2];
  EXPECT_EQ(gemm.type, NodeType::kComp);
  EXPECT_EQ(gemm.duration_micros, 410u);
  EXPECT_EQ(gemm.ctrl_deps, std::vector<uint64_t>{1});
  EXPECT_EQ(gemm.data_deps, std::vector<uint64_t>{1});
  EXPECT_EQ(gemm.int_attr("num_ops"), 68719476736);
  EXPECT_EQ(gemm.int_attr("tensor_size"), 50331648);
  EXPECT_EQ(gemm.bool_attr("is_cpu_op"), false);
  EXPECT_FALSE(gemm.int_attr("comm_size").has_value());
  const Node& ar = r0.nodes[3];
  EXPECT_EQ(ar.type, NodeType::kCommColl);
  EXPECT_EQ(ar.int_attr("comm_type"), 0);
  EXPECT_EQ(ar.string_attr("pg_name"), "0");
  EXPECT_EQ(t.ranks[1].nodes[4].type, NodeType::kCommRecv);
  EXPECT_EQ(t.ranks[1].nodes[4].int_attr("comm_src"), 0);
}

TEST(ChakraTrace, OtherFormsReadTheSame) {
  const std::string jsonizer = R"({"attr": [{"name": "schema", "stringVal": "x"}]}{
      "id": "3", "name": "gemm", "type": "COMP_NODE", "durationMicros": "5",
      "attr": [{"name": "num_ops", "int64Val": "1000"}]}{
      "id": "4", "name": "ar", "type": "COMM_COLL_NODE", "dataDeps": ["3"],
      "attr": [{"name": "comm_type", "int64Val": "0"}, {"name": "comm_size", "int64Val": "64"}]})";
  // Proto field names, numbers for 64-bit integers and enums by value, as ProtoJSON parsers accept.
  const std::string snake = R"({"version": "", "attr": [{"name": "schema", "string_val": "x"}]}
      {"id": 3, "name": "gemm", "type": 4, "duration_micros": 5, "attr": [{"name": "num_ops", "int64_val": 1000}]}
      {"id": 4, "name": "ar", "type": 7, "data_deps": [3],
       "attr": [{"name": "comm_type", "int64_val": 0}, {"name": "comm_size", "int64_val": 64}]})";
  const std::string array = R"([{"attr": [{"name": "schema", "stringVal": "x"}]},
      {"id": "3", "name": "gemm", "type": "COMP_NODE", "durationMicros": "5", "attr": [{"name": "num_ops", "int64Val": "1000"}]},
      {"id": "4", "name": "ar", "type": "COMM_COLL_NODE", "dataDeps": ["3"],
       "attr": [{"name": "comm_type", "int64Val": "0"}, {"name": "comm_size", "int64Val": "64"}]}])";
  const std::string object = R"({"metadata": {"attr": [{"name": "schema", "stringVal": "x"}]}, "nodes": [
      {"id": "3", "name": "gemm", "type": "COMP_NODE", "durationMicros": "5", "attr": [{"name": "num_ops", "int64Val": "1000"}]},
      {"id": "4", "name": "ar", "type": "COMM_COLL_NODE", "dataDeps": ["3"],
       "attr": [{"name": "comm_type", "int64Val": "0"}, {"name": "comm_size", "int64Val": "64"}]}]})";
  for (const std::string* text : {&jsonizer, &snake, &array, &object}) {
    const RankTrace t = parse_rank_trace(*text, "f.json");
    EXPECT_EQ(t.metadata.at("schema").s, "x");
    ASSERT_EQ(t.nodes.size(), 2u);
    EXPECT_EQ(t.nodes[0].id, 3u);
    EXPECT_EQ(t.nodes[0].type, NodeType::kComp);
    EXPECT_EQ(t.nodes[0].duration_micros, 5u);
    EXPECT_EQ(t.nodes[0].int_attr("num_ops"), 1000);
    EXPECT_EQ(t.nodes[1].type, NodeType::kCommColl);
    EXPECT_EQ(t.nodes[1].data_deps, std::vector<uint64_t>{3});
    EXPECT_EQ(t.nodes[1].int_attr("comm_size"), 64);
    EXPECT_EQ(t.nodes[1].path, "f.json:id 4");
  }
}

TEST(ChakraTrace, StructuralErrorsNameTheField) {
  auto parse = [](const std::string& text) { return [text] { parse_rank_trace(text, "f.json"); }; };
  expect_config_error(parse(R"({"id": "1", "type": "COMP_NODE",})"), "f.json", "not valid JSON at byte");
  expect_config_error(parse(R"({"id": "1", "type": "COMP_NODE")"), "f.json", "is not closed");
  expect_config_error(parse(""), "f.json", "the file is empty");
  expect_config_error(parse(R"({"attr": []})"), "f.json", "the trace has no nodes");
  expect_config_error(parse(R"({"id": "1", "type": "COMP_NODE", "dataDep": ["0"]})"), "f.json:node 0",
                      "unknown key \"dataDep\"");
  expect_config_error(parse(R"({"id": "1", "type": "GPU_NODE"})"), "f.json:id 1.type",
                      "unknown node type \"GPU_NODE\"");
  expect_config_error(parse(R"({"id": "1", "type": 42})"), "f.json:id 1.type", "unknown node type 42");
  expect_config_error(parse(R"({"id": "1", "type": "COMP_NODE"}{"id": "1", "type": "COMP_NODE"})"), "f.json:id 1",
                      "duplicate node id");
  expect_config_error(parse(R"({"id": "1", "type": "COMP_NODE", "dataDeps": ["7"]})"), "f.json:id 1.dataDeps",
                      "depends on node 7, which is not in the file");
  expect_config_error(parse(R"({"id": "1", "type": "COMP_NODE", "ctrlDeps": ["7"]})"), "f.json:id 1.ctrlDeps",
                      "depends on node 7, which is not in the file");
  expect_config_error(parse(R"({"id": "x1", "type": "COMP_NODE"})"), "f.json:node 0.id", "expected an integer");
  expect_config_error(parse(R"({"id": "-1", "type": "COMP_NODE"})"), "f.json:node 0.id", "must not be negative");
  expect_config_error(parse(R"({"id": "1", "type": "COMP_NODE", "attr": [{"int64Val": "3"}]})"),
                      "f.json:id 1.attr[0].name", "every attribute needs a name");
  expect_config_error(parse(R"({"id": "1", "type": "COMP_NODE", "attr": [{"name": "a", "boolVal": 1}]})"),
                      "f.json:id 1.attr[0].boolVal", "expected true or false");
  expect_config_error(
      parse(R"({"id": "1", "type": "COMP_NODE", "attr": [{"name": "a", "int64Val": "1", "boolVal": true}]})"),
      "f.json:id 1.attr[0]", "an attribute holds one value");
  // A typed reader on another kind of value.
  const RankTrace t = parse_rank_trace(
      R"({"id": "1", "type": "COMP_NODE", "attr": [{"name": "num_ops", "stringVal": "many"}]})", "f.json");
  expect_config_error([&] { (void)t.nodes[0].int_attr("num_ops"); }, "f.json:id 1.attr.num_ops",
                      "expected an integer value");
}

TEST(ChakraTrace, FilesOfAPrefix) {
  EXPECT_EQ(trace_files(example("hand-dp2"), "--chakra").size(), 2u);
  EXPECT_EQ(trace_files(example("hand-dp2.1.json"), "--chakra"), std::vector<std::string>{example("hand-dp2.1.json")});
  expect_config_error(
      [] { trace_files(example("no-such-trace"), "--chakra"); }, "--chakra",
      "no file \"" + example("no-such-trace") + "\" and no \"" + example("no-such-trace") + ".0.json\"");
}

}  // namespace
}  // namespace trainsim::traces::chakra
