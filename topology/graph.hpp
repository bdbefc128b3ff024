#pragma once
// A cluster's physical network as a Boost.Graph: GPUs and switches as vertices, every
// full-duplex cable as two directed links with consecutive ids (a->b is even, b->a is the next
// odd id), so the two directions never share bandwidth. Link ids are dense so the flow network
// can index its arrays by them. Builders (builders/*.cpp) fill a Topology; routing, summary and
// the flow network only read it, except for degrade().

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/units.hpp"
#include "topology/fwd.hpp"

namespace trainsim::topology {

enum class NodeKind : uint8_t { kGpu, kNvSwitch, kPcieSwitch, kCpu, kNic, kLeaf, kSpine, kCore, kRouter };
const char* to_string(NodeKind k);
// "gpu", "nvswitch", "pcie_switch", "cpu", "nic", "leaf", "spine", "core", "router".
std::optional<NodeKind> parse_node_kind(std::string_view name);
std::vector<std::string> node_kind_names();

struct NodeProps {
  NodeKind kind = NodeKind::kGpu;
  int32_t server = -1;  // server (node) index of GPUs and in-server devices; -1 for fabric switches
  int32_t local = -1;   // index inside the server (GPU local rank, switch number); -1 when none
  std::string name;     // unique
};

struct LinkProps {
  LinkId id = 0;
  sim::Bandwidth capacity;  // nominal, per direction
  sim::Time latency;
  std::string kind;     // "nvlink", "pcie", "ib", "xgmi", "ici", ...
  double factor = 1.0;  // degradation multiplier in [0, 1]; 0 = failed
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, NodeProps, LinkProps>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

class Topology {
 public:
  Topology() = default;
  // Copies and moves re-point the link index at the new graph's edges: an edge descriptor holds
  // a pointer to its properties inside one graph, and Boost's adjacency_list copies on move.
  Topology(const Topology& other);
  Topology& operator=(const Topology& other);
  Topology(Topology&& other);  // not noexcept: re-indexing allocates
  Topology& operator=(Topology&& other);
  ~Topology() = default;

  Vertex add_node(NodeKind kind, std::string name, int32_t server = -1, int32_t local = -1);
  // A full-duplex cable: two directed links of the same capacity and latency; returns the id of
  // a->b (b->a is that id + 1).
  LinkId add_cable(Vertex a, Vertex b, sim::Bandwidth capacity, sim::Time latency, std::string_view kind);

  const Graph& graph() const { return g_; }
  size_t node_count() const { return boost::num_vertices(g_); }
  const NodeProps& node(Vertex v) const { return g_[v]; }
  // The vertex named `name` (linear scan: meant for configuration, not hot paths).
  std::optional<Vertex> find_node(std::string_view name) const;

  // GPUs are numbered in the order builders add them (server-major, Megatron's rank order).
  size_t gpu_count() const { return gpus_.size(); }
  Vertex gpu_node(size_t gpu) const { return gpus_[gpu]; }
  int32_t server_of(size_t gpu) const { return g_[gpus_[gpu]].server; }
  int64_t gpus_per_server() const { return gpus_per_server_; }
  void set_gpus_per_server(int64_t n) { gpus_per_server_ = n; }
  // GPUs per host inside a server: the compute trays of a rack-scale NVLink domain (NVL72: 4 GPUs
  // on each of its 18 trays); gpus_per_server when a server is one host. Drawing and naming only:
  // the NVLink fabric joins every GPU of the server alike.
  int64_t gpus_per_tray() const { return gpus_per_tray_ > 0 ? gpus_per_tray_ : gpus_per_server_; }
  void set_gpus_per_tray(int64_t n) { gpus_per_tray_ = n; }

  size_t link_count() const { return links_.size(); }
  size_t cable_count() const { return links_.size() / 2; }
  const LinkProps& link(LinkId id) const { return g_[links_[id]]; }
  Vertex link_src(LinkId id) const { return boost::source(links_[id], g_); }
  Vertex link_dst(LinkId id) const { return boost::target(links_[id], g_); }
  static LinkId reverse(LinkId id) { return id ^ 1u; }
  // Effective capacity: nominal capacity x degradation factor.
  sim::Bandwidth capacity(LinkId id) const { return link(id).capacity * link(id).factor; }
  // Degradation (0 < factor < 1) or failure (factor 0) of one directed link; 1 restores it.
  void degrade(LinkId id, double factor);

  // In-network reduction (NVLink SHARP / NVLS, InfiniBand SHARP) offered by the fabric.
  bool supports_in_network_reduction() const { return in_network_reduction_; }
  void set_in_network_reduction(bool on) { in_network_reduction_ = on; }
  // Bisection bandwidth per direction from the builder's closed form (nullopt: none, see
  // bisection.hpp for the max-flow fallback).
  std::optional<sim::Bandwidth> bisection() const { return bisection_; }
  void set_bisection(sim::Bandwidth b) { bisection_ = b; }
  const std::string& builder() const { return builder_; }
  void set_builder(std::string name) { builder_ = std::move(name); }
  // Torus shape (dimension 0 varies fastest in GPU numbering); empty unless built by `torus`.
  const std::vector<int64_t>& torus_shape() const { return torus_shape_; }
  void set_torus_shape(std::vector<int64_t> shape) { torus_shape_ = std::move(shape); }

  // Throws ConfigError at `path` when some GPU cannot reach, or be reached from, GPU 0 over
  // working links (factor > 0).
  void check_connected(const std::string& path) const;
  // The first of GPUs 1 .. gpus - 1 that cannot reach GPU 0, or be reached from it, over working
  // links; nullopt when they are all connected (a fault that cuts a job in two).
  std::optional<size_t> disconnected_gpu(size_t gpus) const;

 private:
  void reindex_links();

  Graph g_;
  std::vector<Vertex> gpus_;
  std::vector<Edge> links_;
  int64_t gpus_per_server_ = 1;
  int64_t gpus_per_tray_ = 0;
  bool in_network_reduction_ = false;
  std::optional<sim::Bandwidth> bisection_;
  std::string builder_;
  std::vector<int64_t> torus_shape_;
};

// The node named `name`; throws ConfigError at `path` with a did-you-mean when there is none.
Vertex node_named(const Topology& t, std::string_view name, const std::string& path);

}  // namespace trainsim::topology
