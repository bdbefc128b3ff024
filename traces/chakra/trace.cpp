#include "traces/chakra/trace.hpp"

#include <sys/stat.h>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_set>

#include "sim/config/json_input.hpp"
#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::traces::chakra {

using sim::config::Json;

namespace {

constexpr std::array<const char*, 11> kNodeTypeNames = {
    "INVALID_NODE",   "METADATA_NODE",  "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE",      "COMM_SEND_NODE",
    "COMM_RECV_NODE", "COMM_COLL_NODE", "STORAGE_NODE",  "BATCH_NODE",     "CHECKPOINT_NODE"};
constexpr std::array<const char*, 10> kCommTypeNames = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

const char* kFormatHint =
    "a Chakra trace file holds chakra_jsonizer output: JSON objects (the global metadata, then one per node), a "
    "JSON array of nodes, or {\"nodes\": [...]}";

const char* kFixValue = "fix the value (et_def.proto gives each field's type)";

std::string str(const std::ostringstream& os) { return os.str(); }

// ProtoJSON accepts the proto field name and its lowerCamelCase JSON name: "data_deps" -> "dataDeps".
std::string camel(const std::string& key) {
  std::string out;
  out.reserve(key.size());
  bool up = false;
  for (const char c : key) {
    if (c == '_') {
      up = !out.empty();
      continue;
    }
    out.push_back(up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    up = false;
  }
  return out;
}

// Keys of `obj` in their camelCase form, each checked against `known`.
std::map<std::string, const Json*> keys_of(const Json& obj, const std::vector<std::string>& known,
                                           const std::string& path) {
  if (!obj.is_object()) {
    std::ostringstream m;
    m << "expected a JSON object, got " << sim::config::json_type_name(obj);
    throw ConfigError(path, str(m), kFormatHint);
  }
  std::map<std::string, const Json*> out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string k = camel(it.key());
    bool ok = false;
    for (const auto& n : known) ok = ok || n == k;
    if (!ok) {
      std::ostringstream m;
      m << "unknown key \"" << it.key() << "\"";
      const std::string near = sim::config::did_you_mean(k, known);
      throw ConfigError(path, str(m),
                        near.empty() ? "valid keys: " + sim::config::join(known) : "did you mean \"" + near + "\"?");
    }
    out[k] = &it.value();
  }
  return out;
}

// A ProtoJSON 64-bit integer: a string of digits or a JSON integer.
int64_t read_int(const Json& v, const std::string& path, bool non_negative) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw ConfigError(path, "integer too large", "ids and sizes must fit in 63 bits");
    const int64_t x = v.get<int64_t>();
    if (non_negative && x < 0) throw ConfigError(path, "must not be negative, got " + std::to_string(x), kFixValue);
    return x;
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
    bool digits = s.size() > i && s.size() - i <= 18;
    for (size_t k = i; k < s.size(); ++k) digits = digits && std::isdigit(static_cast<unsigned char>(s[k]));
    if (digits) {
      const int64_t x = std::stoll(s);
      if (non_negative && x < 0) throw ConfigError(path, "must not be negative, got " + s, kFixValue);
      return x;
    }
  }
  std::ostringstream m;
  m << "expected an integer (a JSON number or a string of digits), got " << sim::config::show(v);
  throw ConfigError(path, str(m), "ProtoJSON writes 64-bit integers as strings of digits, e.g. \"1024\"");
}

uint64_t read_uint(const Json& v, const std::string& path) { return static_cast<uint64_t>(read_int(v, path, true)); }

NodeType read_node_type(const Json& v, const std::string& path) {
  if (v.is_string())
    for (size_t i = 0; i < kNodeTypeNames.size(); ++i)
      if (v.get<std::string>() == kNodeTypeNames[i]) return static_cast<NodeType>(i);
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if (x >= 0 && x < static_cast<int64_t>(kNodeTypeNames.size())) return static_cast<NodeType>(x);
  }
  std::vector<std::string> names(kNodeTypeNames.begin(), kNodeTypeNames.end());
  std::ostringstream m;
  m << "unknown node type " << sim::config::show(v);
  throw ConfigError(path, str(m), "use one of " + sim::config::join(names) + " (et_def.proto NodeType)");
}

std::vector<uint64_t> read_ids(const Json& v, const std::string& path) {
  if (!v.is_array())
    throw ConfigError(path, "expected a list of node ids, got " + sim::config::json_type_name(v),
                      "write [\"1\", \"2\"]");
  std::vector<uint64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) out.push_back(read_uint(v[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

const std::vector<std::string>& attr_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"name", "docString"};
    for (const char* t : {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
                          "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"}) {
      k.push_back(std::string(t) + "Val");
      k.push_back(std::string(t) + "List");
    }
    return k;
  }();
  return keys;
}

// attr: [{"name": ..., "<kind>Val": ...}] into a map by name.
std::map<std::string, AttrValue> read_attrs(const Json& v, const std::string& path) {
  if (!v.is_array())
    throw ConfigError(path, "expected a list of attributes, got " + sim::config::json_type_name(v),
                      "write [{\"name\": \"comm_size\", \"int64Val\": \"1024\"}]");
  std::map<std::string, AttrValue> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const auto keys = keys_of(v[i], attr_keys(), p);
    const auto name = keys.find("name");
    if (name == keys.end() || !name->second->is_string() || name->second->get<std::string>().empty())
      throw ConfigError(p + ".name", "every attribute needs a name", "add \"name\": \"comm_size\" or similar");
    AttrValue a;
    int values = 0;
    for (const auto& [k, val] : keys) {
      if (k == "name" || k == "docString") continue;
      ++values;
      const std::string vp = p + "." + k;
      if (k == "boolVal") {
        if (!val->is_boolean()) throw ConfigError(vp, "expected true or false, got " + val->dump(), kFixValue);
        a.kind = AttrValue::Kind::kBool;
        a.b = val->get<bool>();
      } else if (k == "stringVal") {
        if (!val->is_string()) throw ConfigError(vp, "expected a string, got " + val->dump(), kFixValue);
        a.kind = AttrValue::Kind::kString;
        a.s = val->get<std::string>();
      } else if (k == "doubleVal" || k == "floatVal") {
        // ProtoJSON writes non-finite values as "NaN" / "Infinity": not meaningful for any attribute read here.
        if (!val->is_number()) throw ConfigError(vp, "expected a number, got " + val->dump(), kFixValue);
        a.kind = AttrValue::Kind::kDouble;
        a.d = val->get<double>();
      } else if (k.size() > 3 && k.compare(k.size() - 3, 3, "Val") == 0 && k != "bytesVal") {
        a.kind = AttrValue::Kind::kInt;
        a.i = read_int(*val, vp, k[0] == 'u' || k == "fixed32Val" || k == "fixed64Val");
      } else {
        a.kind = AttrValue::Kind::kOther;  // lists and bytes
      }
    }
    if (values > 1) throw ConfigError(p, "an attribute holds one value", "keep one of its *Val / *List keys");
    out[name->second->get<std::string>()] = std::move(a);
  }
  return out;
}

Node read_node(const Json& j, const std::string& file, size_t index) {
  static const std::vector<std::string> known = {
      "id",     "name",    "type", "ctrlDeps", "dataDeps", "startTimeMicros", "durationMicros",
      "inputs", "outputs", "attr", "storage"};
  std::ostringstream where;
  where << file << ":node " << index;
  const auto keys = keys_of(j, known, where.str());
  Node n;
  if (const auto it = keys.find("id"); it != keys.end()) n.id = read_uint(*it->second, where.str() + ".id");
  std::ostringstream p;
  p << file << ":id " << n.id;
  n.path = p.str();
  for (const auto& [k, v] : keys) {
    const std::string vp = n.path + "." + k;
    if (k == "name") {
      if (!v->is_string()) throw ConfigError(vp, "expected a string, got " + v->dump(), kFixValue);
      n.name = v->get<std::string>();
    } else if (k == "type") {
      n.type = read_node_type(*v, vp);
    } else if (k == "ctrlDeps") {
      n.ctrl_deps = read_ids(*v, vp);
    } else if (k == "dataDeps") {
      n.data_deps = read_ids(*v, vp);
    } else if (k == "startTimeMicros") {
      n.start_time_micros = read_uint(*v, vp);
    } else if (k == "durationMicros") {
      n.duration_micros = read_uint(*v, vp);
    } else if (k == "attr") {
      n.attrs = read_attrs(*v, vp);
    } else if (k == "inputs" || k == "outputs" || k == "storage") {
      if (!v->is_object())
        throw ConfigError(vp, "expected an object, got " + sim::config::json_type_name(*v), kFixValue);
    }
  }
  return n;
}

bool is_metadata(const Json& j) {
  if (!j.is_object()) return false;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "version" && it.key() != "attr") return false;
  return true;
}

void read_metadata(const Json& j, const std::string& file, RankTrace& out) {
  const std::string path = file + ":metadata";
  const auto keys = keys_of(j, {"version", "attr"}, path);
  if (const auto it = keys.find("version"); it != keys.end()) {
    if (!it->second->is_string()) throw ConfigError(path + ".version", "expected a string", kFixValue);
    out.version = it->second->get<std::string>();
  }
  if (const auto it = keys.find("attr"); it != keys.end()) out.metadata = read_attrs(*it->second, path + ".attr");
}

// The top-level JSON values of `text` in order (chakra_jsonizer concatenates objects with no
// separator), with the byte offset each starts at.
std::vector<std::pair<size_t, Json>> json_values(const std::string& text, const std::string& file) {
  std::vector<std::pair<size_t, Json>> out;
  size_t i = 0;
  const size_t n = text.size();
  while (true) {
    while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == n) break;
    const size_t begin = i;
    if (text[i] != '{' && text[i] != '[') {
      std::ostringstream m;
      m << "not valid JSON at byte " << i << ": expected '{' or '['";
      throw ConfigError(file, str(m), kFormatHint);
    }
    int depth = 0;
    bool in_string = false;
    for (; i < n; ++i) {
      const char c = text[i];
      if (in_string) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) break;
      }
    }
    if (i >= n) {
      std::ostringstream m;
      m << "not valid JSON: the value starting at byte " << begin << " is not closed";
      throw ConfigError(file, str(m), "the file is cut short; export or jsonize it again");
    }
    ++i;
    try {
      out.emplace_back(begin, Json::parse(text.begin() + static_cast<std::ptrdiff_t>(begin),
                                          text.begin() + static_cast<std::ptrdiff_t>(i)));
    } catch (const Json::parse_error& e) {
      std::ostringstream m;
      m << "not valid JSON at byte " << begin + (e.byte > 0 ? e.byte - 1 : 0);
      throw ConfigError(file, str(m), kFormatHint);
    } catch (const Json::exception& e) {  // a number beyond a double (1e400), invalid UTF-8
      std::ostringstream m;
      const std::string what = e.what();
      const auto text = what.find("] ");
      m << "the value starting at byte " << begin << ": " << (text == std::string::npos ? what : what.substr(text + 2));
      throw ConfigError(file, str(m), kFormatHint);
    }
  }
  return out;
}

void check_ids(RankTrace& t) {
  std::unordered_set<uint64_t> ids;
  ids.reserve(t.nodes.size());
  for (const Node& n : t.nodes)
    if (!ids.insert(n.id).second)
      throw ConfigError(n.path, "duplicate node id",
                        "node ids must be unique within a rank's file (a node without \"id\" has id 0)");
  for (const Node& n : t.nodes)
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
      for (const uint64_t d : *deps)
        if (!ids.count(d)) {
          std::ostringstream m;
          m << "depends on node " << d << ", which is not in the file";
          throw ConfigError(n.path + (deps == &n.data_deps ? ".dataDeps" : ".ctrlDeps"), str(m),
                            "every dependency must name a node of the same rank's file");
        }
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

const char* to_string(NodeType t) { return kNodeTypeNames[static_cast<size_t>(t)]; }
const char* to_string(CommType t) { return kCommTypeNames[static_cast<size_t>(t)]; }

std::optional<int64_t> Node::int_attr(const std::string& key) const {
  const auto it = attrs.find(key);
  if (it == attrs.end()) return std::nullopt;
  const AttrValue& a = it->second;
  if (a.kind == AttrValue::Kind::kInt) return a.i;
  if (a.kind == AttrValue::Kind::kDouble && std::isfinite(a.d) && a.d == std::floor(a.d) && std::fabs(a.d) < 9e18)
    return static_cast<int64_t>(a.d);
  throw ConfigError(path + ".attr." + key, "expected an integer value (int64Val)",
                    "write {\"name\": \"" + key + "\", \"int64Val\": \"...\"}");
}

std::optional<bool> Node::bool_attr(const std::string& key) const {
  const auto it = attrs.find(key);
  if (it == attrs.end()) return std::nullopt;
  if (it->second.kind != AttrValue::Kind::kBool)
    throw ConfigError(path + ".attr." + key, "expected a boolean value (boolVal)",
                      "write {\"name\": \"" + key + "\", \"boolVal\": true}");
  return it->second.b;
}

std::optional<std::string> Node::string_attr(const std::string& key) const {
  const auto it = attrs.find(key);
  if (it == attrs.end()) return std::nullopt;
  if (it->second.kind != AttrValue::Kind::kString)
    throw ConfigError(path + ".attr." + key, "expected a string value (stringVal)",
                      "write {\"name\": \"" + key + "\", \"stringVal\": \"...\"}");
  return it->second.s;
}

RankTrace parse_rank_trace(const std::string& text, const std::string& file) {
  RankTrace t;
  t.file = file;
  sim::config::check_json_depth(text, file);
  const auto values = json_values(text, file);
  if (values.empty()) throw ConfigError(file, "the file is empty", kFormatHint);
  std::vector<const Json*> nodes;
  const Json& first = values.front().second;
  if (values.size() == 1 && first.is_array()) {
    for (size_t i = 0; i < first.size(); ++i) {
      if (i == 0 && is_metadata(first[i]))
        read_metadata(first[i], file, t);
      else
        nodes.push_back(&first[i]);
    }
  } else if (values.size() == 1 && first.is_object() && first.contains("nodes")) {
    const auto keys = keys_of(first, {"metadata", "nodes"}, file);
    if (const auto it = keys.find("metadata"); it != keys.end()) read_metadata(*it->second, file, t);
    const Json& list = *keys.at("nodes");
    if (!list.is_array()) throw ConfigError(file + ":nodes", "expected a list of nodes", kFormatHint);
    for (const auto& n : list) nodes.push_back(&n);
  } else {
    // chakra_jsonizer: the GlobalMetadata object first (empty, or with version / attr), then nodes.
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].second.is_object()) {
        std::ostringstream m;
        m << "expected a JSON object at byte " << values[i].first << ", got an array";
        throw ConfigError(file, str(m), kFormatHint);
      }
      if (i == 0 && is_metadata(values[i].second))
        read_metadata(values[i].second, file, t);
      else
        nodes.push_back(&values[i].second);
    }
  }
  t.nodes.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) t.nodes.push_back(read_node(*nodes[i], file, i));
  if (t.nodes.empty()) throw ConfigError(file, "the trace has no nodes", kFormatHint);
  check_ids(t);
  return t;
}

RankTrace read_rank_trace(const std::string& file) {
  return parse_rank_trace(sim::config::read_input_file(file, file), file);
}

std::vector<std::string> trace_files(const std::string& path, const std::string& flag) {
  if (is_file(path)) return {path};
  std::vector<std::string> out;
  for (int r = 0;; ++r) {
    std::ostringstream f;
    f << path << "." << r << ".json";
    if (!is_file(f.str())) break;
    out.push_back(f.str());
  }
  if (out.empty()) {
    std::ostringstream m;
    m << "no file \"" << path << "\" and no \"" << path << ".0.json\"";
    throw ConfigError(flag, str(m),
                      "give a Chakra JSON file, or the prefix P of the per-rank files P.0.json, P.1.json, ...");
  }
  return out;
}

Trace read_trace(const std::string& path, const std::string& flag) {
  Trace t;
  t.source = path;
  for (const std::string& f : trace_files(path, flag)) t.ranks.push_back(read_rank_trace(f));
  return t;
}

}  // namespace trainsim::traces::chakra
