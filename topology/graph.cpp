#include "topology/graph.hpp"

#include <algorithm>
#include <array>
#include <sstream>

#include <boost/range/iterator_range.hpp>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::topology {

namespace {
constexpr std::array<std::pair<NodeKind, const char*>, 9> kKindNames{{{NodeKind::kGpu, "gpu"},
                                                                      {NodeKind::kNvSwitch, "nvswitch"},
                                                                      {NodeKind::kPcieSwitch, "pcie_switch"},
                                                                      {NodeKind::kCpu, "cpu"},
                                                                      {NodeKind::kNic, "nic"},
                                                                      {NodeKind::kLeaf, "leaf"},
                                                                      {NodeKind::kSpine, "spine"},
                                                                      {NodeKind::kCore, "core"},
                                                                      {NodeKind::kRouter, "router"}}};

// Marks the vertices reachable from `from` over working links, forward or backward.
std::vector<uint8_t> reachable(const Graph& g, Vertex from, bool forward) {
  std::vector<uint8_t> seen(boost::num_vertices(g), 0);
  std::vector<Vertex> queue{from};
  seen[from] = 1;
  for (size_t q = 0; q < queue.size(); ++q) {
    auto visit = [&](Vertex n, const LinkProps& l) {
      if (l.factor > 0.0 && !seen[n]) {
        seen[n] = 1;
        queue.push_back(n);
      }
    };
    if (forward) {
      for (const Edge e : boost::make_iterator_range(boost::out_edges(queue[q], g))) visit(boost::target(e, g), g[e]);
    } else {
      for (const Edge e : boost::make_iterator_range(boost::in_edges(queue[q], g))) visit(boost::source(e, g), g[e]);
    }
  }
  return seen;
}
}  // namespace

const char* to_string(NodeKind k) {
  for (const auto& [kind, name] : kKindNames)
    if (kind == k) return name;
  return "?";
}

std::optional<NodeKind> parse_node_kind(std::string_view name) {
  for (const auto& [kind, n] : kKindNames)
    if (name == n) return kind;
  return std::nullopt;
}

std::vector<std::string> node_kind_names() {
  std::vector<std::string> out;
  for (const auto& kv : kKindNames) out.emplace_back(kv.second);
  return out;
}

Topology::Topology(const Topology& other)
    : g_(other.g_),
      gpus_(other.gpus_),
      gpus_per_server_(other.gpus_per_server_),
      gpus_per_tray_(other.gpus_per_tray_),
      in_network_reduction_(other.in_network_reduction_),
      bisection_(other.bisection_),
      builder_(other.builder_),
      torus_shape_(other.torus_shape_) {
  reindex_links();
}

Topology& Topology::operator=(const Topology& other) {
  if (this != &other) {
    Topology copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Topology::Topology(Topology&& other)
    : g_(std::move(other.g_)),
      gpus_(std::move(other.gpus_)),
      gpus_per_server_(other.gpus_per_server_),
      gpus_per_tray_(other.gpus_per_tray_),
      in_network_reduction_(other.in_network_reduction_),
      bisection_(other.bisection_),
      builder_(std::move(other.builder_)),
      torus_shape_(std::move(other.torus_shape_)) {
  reindex_links();
  other.links_.clear();
}

Topology& Topology::operator=(Topology&& other) {
  if (this != &other) {
    g_ = std::move(other.g_);
    gpus_ = std::move(other.gpus_);
    gpus_per_server_ = other.gpus_per_server_;
    gpus_per_tray_ = other.gpus_per_tray_;
    in_network_reduction_ = other.in_network_reduction_;
    bisection_ = other.bisection_;
    builder_ = std::move(other.builder_);
    torus_shape_ = std::move(other.torus_shape_);
    reindex_links();
    other.links_.clear();
  }
  return *this;
}

void Topology::reindex_links() {
  links_.assign(boost::num_edges(g_), Edge{});
  for (const Edge e : boost::make_iterator_range(boost::edges(g_))) links_[g_[e].id] = e;
}

Vertex Topology::add_node(NodeKind kind, std::string name, int32_t server, int32_t local) {
  const Vertex v = boost::add_vertex(NodeProps{kind, server, local, std::move(name)}, g_);
  if (kind == NodeKind::kGpu) gpus_.push_back(v);
  return v;
}

LinkId Topology::add_cable(Vertex a, Vertex b, sim::Bandwidth capacity, sim::Time latency, std::string_view kind) {
  TRAINSIM_ASSERT(a != b, "a cable from a node to itself");
  TRAINSIM_ASSERT(capacity > sim::Bandwidth(), "a cable without bandwidth");
  const auto first = static_cast<LinkId>(links_.size());
  for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    const auto id = static_cast<LinkId>(links_.size());
    links_.push_back(boost::add_edge(from, to, LinkProps{id, capacity, latency, std::string(kind), 1.0}, g_).first);
  }
  return first;
}

std::optional<Vertex> Topology::find_node(std::string_view name) const {
  for (const Vertex v : boost::make_iterator_range(boost::vertices(g_)))
    if (g_[v].name == name) return v;
  return std::nullopt;
}

void Topology::degrade(LinkId id, double factor) {
  TRAINSIM_ASSERT(id < links_.size(), "unknown link ", id);
  TRAINSIM_ASSERT(factor >= 0.0 && factor <= 1.0, "degradation factor ", factor, " outside [0, 1]");
  g_[links_[id]].factor = factor;
}

void Topology::check_connected(const std::string& path) const {
  if (gpus_.size() < 2) return;
  const auto from0 = reachable(g_, gpus_[0], true);
  const auto to0 = reachable(g_, gpus_[0], false);
  for (size_t i = 1; i < gpus_.size(); ++i) {
    if (from0[gpus_[i]] && to0[gpus_[i]]) continue;
    std::ostringstream msg;
    if (!to0[gpus_[i]])
      msg << "the topology is disconnected: GPU " << i << " (\"" << g_[gpus_[i]].name << "\") cannot reach GPU 0 (\""
          << g_[gpus_[0]].name << "\")";
    else
      msg << "the topology is disconnected: GPU 0 (\"" << g_[gpus_[0]].name << "\") cannot reach GPU " << i << " (\""
          << g_[gpus_[i]].name << "\")";
    throw ConfigError(path, msg.str(), "check the links of the network description and its faults");
  }
}

std::optional<size_t> Topology::disconnected_gpu(size_t gpus) const {
  gpus = std::min(gpus, gpus_.size());
  if (gpus < 2) return std::nullopt;
  const auto from0 = reachable(g_, gpus_[0], true);
  const auto to0 = reachable(g_, gpus_[0], false);
  for (size_t i = 1; i < gpus; ++i)
    if (!from0[gpus_[i]] || !to0[gpus_[i]]) return i;
  return std::nullopt;
}

Vertex node_named(const Topology& t, std::string_view name, const std::string& path) {
  if (const auto v = t.find_node(name)) return *v;
  std::vector<std::string> names;
  names.reserve(t.node_count());
  for (const Vertex v : boost::make_iterator_range(boost::vertices(t.graph()))) names.push_back(t.node(v).name);
  const std::string near = sim::config::did_you_mean(std::string(name), names);
  std::string msg = "no node named \"";
  msg += name;
  msg += "\"";
  throw ConfigError(
      path, msg, near.empty() ? "see the node names with `trainsim topology --dot`" : "did you mean \"" + near + "\"?");
}

}  // namespace trainsim::topology
