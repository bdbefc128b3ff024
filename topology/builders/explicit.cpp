// A topology written out in full: a list of nodes {name, kind, server} and of full-duplex links
// {a, b, bandwidth, latency, kind}. GPUs are the nodes of kind "gpu", numbered in the order
// listed. No closed-form bisection: summaries use the max-flow between GPU halves by index.
#include <map>
#include <sstream>

#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct NodeSpec {
  std::string name, kind;
  std::optional<int64_t> server;
};

struct LinkSpec {
  std::string a, b, kind;
  sim::Bandwidth bandwidth;
  sim::Time latency;
};

struct Params {
  std::vector<NodeSpec> nodes;
  std::vector<LinkSpec> links;
  bool in_network_reduction = false;
};

const sim::config::Schema<NodeSpec>& node_schema() {
  static const sim::config::Schema<NodeSpec> s = [] {
    sim::config::Schema<NodeSpec> s("explicit node", "One node of an explicit topology.");
    s.string("name", &NodeSpec::name, std::nullopt, "Unique name, used by links and faults.")
        .enumeration("kind", &NodeSpec::kind, node_kind_names(), std::nullopt, "What the node is.")
        .nullable_integer("server", &NodeSpec::server, 0, 1 << 30,
                          "Server index; null = 0 for gpu, nvswitch, pcie_switch, cpu and nic, none for fabric "
                          "switches (leaf, spine, core, router).");
    return s;
  }();
  return s;
}

const sim::config::Schema<LinkSpec>& link_schema() {
  static const sim::config::Schema<LinkSpec> s = [] {
    sim::config::Schema<LinkSpec> s("explicit link", "One full-duplex link of an explicit topology.");
    s.string("a", &LinkSpec::a, std::nullopt, "Name of one end.")
        .string("b", &LinkSpec::b, std::nullopt, "Name of the other end.")
        .unit("bandwidth", &LinkSpec::bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
              "Per-direction bandwidth.")
        .unit("latency", &LinkSpec::latency, &sim::config::read_time, "duration", std::nullopt, "Latency of the hop.")
        .string("kind", &LinkSpec::kind, "link", "Label (\"nvlink\", \"pcie\", \"ib\", ...).");
    return s;
  }();
  return s;
}

template <typename T>
std::vector<T> parse_list(const sim::config::Json& j, const std::string& path, const sim::config::Schema<T>& s) {
  if (!j.is_array()) throw ConfigError(path, "expected a list, got " + sim::config::json_type_name(j));
  std::vector<T> out(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    std::ostringstream at;
    at << path << "[" << i << "]";
    s.parse(j[i], at.str(), out[i]);
  }
  return out;
}

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("explicit", "A topology listed node by node and link by link.");
    s.custom("nodes", "list of {name, kind, server}", std::nullopt,
             "Nodes; kinds: gpu, nvswitch, pcie_switch, cpu, nic, leaf, spine, core, router.",
             [](Params& p, const sim::config::Json& j, const std::string& path) {
               p.nodes = parse_list(j, path, node_schema());
             })
        .custom("links", "list of {a, b, bandwidth, latency, kind}", std::nullopt,
                "Full-duplex links between named nodes (each direction has the full bandwidth).",
                [](Params& p, const sim::config::Json& j, const std::string& path) {
                  p.links = parse_list(j, path, link_schema());
                })
        .boolean("in_network_reduction", &Params::in_network_reduction, false,
                 "The fabric reduces in the network (NVLink SHARP, InfiniBand SHARP).");
    return s;
  }();
  return s;
}

std::vector<ParamDoc> docs() { return param_docs(schema()); }

std::string at(const std::string& path, const char* list, size_t i, const char* key) {
  std::ostringstream out;
  out << path << "." << list << "[" << i << "]" << (key[0] ? "." : "") << key;
  return out.str();
}

Topology build(const sim::config::Json& j, int64_t gpus, const std::string& path) {
  Params p;
  schema().parse(j, path, p);
  Topology t;
  std::map<std::string, Vertex> by_name;
  std::map<int32_t, int64_t> gpus_per_server;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const NodeSpec& n = p.nodes[i];
    const NodeKind kind = *parse_node_kind(n.kind);
    const bool in_server = kind == NodeKind::kGpu || kind == NodeKind::kNvSwitch || kind == NodeKind::kPcieSwitch ||
                           kind == NodeKind::kCpu || kind == NodeKind::kNic;
    const auto server = static_cast<int32_t>(n.server.value_or(in_server ? 0 : -1));
    const int32_t local = kind == NodeKind::kGpu ? static_cast<int32_t>(gpus_per_server[server]++) : -1;
    if (by_name.contains(n.name)) {
      std::string msg = "duplicate node name \"";
      msg += n.name;
      msg += "\"";
      throw ConfigError(at(path, "nodes", i, "name"), msg, "give every node a unique name");
    }
    by_name.emplace(n.name, t.add_node(kind, n.name, server, local));
  }
  if (static_cast<int64_t>(t.gpu_count()) != gpus) {
    std::ostringstream msg, hint;
    msg << "lists " << t.gpu_count() << " GPUs (nodes of kind gpu), but " << gpus << " are asked for";
    hint << "use " << t.gpu_count() << " GPUs or list " << gpus;
    throw ConfigError(path + ".nodes", msg.str(), hint.str());
  }
  std::vector<std::string> names;
  for (const auto& [name, v] : by_name) names.push_back(name);
  auto find = [&](const std::string& name, const std::string& field) {
    if (const auto it = by_name.find(name); it != by_name.end()) return it->second;
    const std::string near = sim::config::did_you_mean(name, names);
    std::string msg = "no node named \"";
    msg += name;
    msg += "\"";
    throw ConfigError(field, msg, near.empty() ? "name a node of \"nodes\"" : "did you mean \"" + near + "\"?");
  };
  for (size_t i = 0; i < p.links.size(); ++i) {
    const LinkSpec& l = p.links[i];
    const Vertex a = find(l.a, at(path, "links", i, "a")), b = find(l.b, at(path, "links", i, "b"));
    if (a == b) {
      std::string msg = "a link from \"";
      msg += l.a;
      msg += "\" to itself";
      throw ConfigError(at(path, "links", i, "b"), msg, "name two different nodes");
    }
    t.add_cable(a, b, l.bandwidth, l.latency, l.kind);
  }
  int64_t widest = 1;
  for (const auto& [server, n] : gpus_per_server) widest = std::max(widest, n);
  t.set_gpus_per_server(widest);
  t.set_in_network_reduction(p.in_network_reduction);
  t.check_connected(path + ".links");
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(explicit_graph, "explicit", "Nodes and links listed one by one (GPUs in listed order)",
                           ::trainsim::topology::docs, ::trainsim::topology::build)
