#pragma once
// MLCommons Chakra execution traces in the JSON form `chakra_jsonizer` writes: the protobuf
// messages of schema/protobuf/et_def.proto printed by google.protobuf.json_format.MessageToJson,
// one file per rank. Such a file is a run of JSON objects, the GlobalMetadata first and then one
// per Node, with lowerCamelCase keys (`dataDeps`, `durationMicros`, `int64Val`), 64-bit integers as
// strings ("1024"), enums by name ("COMP_NODE") and fields at their default value left out (a node
// with id 0 has no "id"). Proto field names (`data_deps`), integers as numbers and enums by value
// are read too (ProtoJSON parsers accept both), and so are a JSON array of nodes and an object
// {"metadata": {...}, "nodes": [...]}. Parsing checks the structure (known keys only, value types,
// unique ids, every dependency naming a node of the file); docs/traces.md has the mapping.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainsim::traces::chakra {

// NodeType of et_def.proto, same values.
enum class NodeType : uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
  kStorage = 8,
  kBatch = 9,
  kCheckpoint = 10,
};
const char* to_string(NodeType t);  // "COMP_NODE"

// CollectiveCommType of et_def.proto, same values (the `comm_type` attribute).
enum class CommType : uint8_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
const char* to_string(CommType t);  // "ALL_REDUCE"

// One AttributeProto value: integer kinds (int32/int64/uint32/uint64/sint*/fixed*) read as
// int64, double and float as double; lists and bytes are kept as kOther (never interpreted).
struct AttrValue {
  enum class Kind : uint8_t { kInt, kDouble, kBool, kString, kOther };
  Kind kind = Kind::kOther;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;
};

struct Node {
  uint64_t id = 0;
  std::string name;
  NodeType type = NodeType::kInvalid;
  std::vector<uint64_t> ctrl_deps, data_deps;
  uint64_t start_time_micros = 0, duration_micros = 0;
  std::map<std::string, AttrValue> attrs;  // by attribute name (a repeated name: the last one)
  std::string path;                        // "FILE:id 12" for error messages

  // Typed attribute readers: nullopt when absent; ConfigError at "<path>.attr.NAME" when the
  // attribute holds another kind (a double is accepted as an integer when it is whole).
  std::optional<int64_t> int_attr(const std::string& name) const;
  std::optional<bool> bool_attr(const std::string& name) const;
  std::optional<std::string> string_attr(const std::string& name) const;
};

// One rank's file.
struct RankTrace {
  std::string file;
  std::string version;                        // GlobalMetadata.version ("" when absent)
  std::map<std::string, AttrValue> metadata;  // GlobalMetadata.attr by name
  std::vector<Node> nodes;                    // in file order
};

struct Trace {
  std::string source;  // the path or prefix it was read from
  std::vector<RankTrace> ranks;
};

// Parses one file's text; `file` names it in errors. Throws ConfigError (invalid JSON with the
// byte offset, unknown keys, wrong value types, unknown node types, duplicate ids, dependencies
// on ids not in the file).
RankTrace parse_rank_trace(const std::string& text, const std::string& file);
RankTrace read_rank_trace(const std::string& file);

// The files of a trace: `path` itself when it is a file (one rank), else PATH.0.json,
// PATH.1.json, ... up to the first missing one (the names the exporter writes). ConfigError at
// `flag` when neither exists.
std::vector<std::string> trace_files(const std::string& path, const std::string& flag);
// Every file of trace_files(), parsed; rank r is file r.
Trace read_trace(const std::string& path, const std::string& flag);

}  // namespace trainsim::traces::chakra
