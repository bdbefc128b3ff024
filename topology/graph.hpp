#pragma once
// A cluster's physical network as a Boost.Graph: GPUs and switches as vertices, every
// full-duplex cable as two directed links (the two directions never share bandwidth). Link ids
// are dense so the flow network can index its arrays by them.

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/units.hpp"

namespace trainsim::topology {

enum class NodeKind : uint8_t { kGpu, kNvSwitch, kLeaf, kSpine };
const char* to_string(NodeKind k);

struct NodeProps {
  NodeKind kind = NodeKind::kGpu;
  int32_t server = -1;  // server of a GPU or in-server switch; -1 for fabric switches
  std::string name;
};

struct LinkProps {
  uint32_t id = 0;
  sim::Bandwidth capacity;
  sim::Time latency;
  std::string kind;     // "nvlink", "ib", ...
  double factor = 1.0;  // degradation multiplier; 0 = failed
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, NodeProps, LinkProps>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;
using LinkId = uint32_t;

class Topology {
 public:
  Vertex add_node(NodeKind kind, int32_t server, std::string name);
  // A full-duplex cable: two directed links of the same capacity and latency.
  void add_cable(Vertex a, Vertex b, sim::Bandwidth capacity, sim::Time latency, const std::string& kind);

  const Graph& graph() const { return g_; }
  size_t node_count() const { return boost::num_vertices(g_); }
  size_t gpu_count() const { return gpus_.size(); }
  Vertex gpu(size_t i) const { return gpus_[i]; }
  size_t link_count() const { return links_.size(); }
  const LinkProps& link(LinkId id) const { return g_[links_[id]]; }
  Vertex link_source(LinkId id) const { return boost::source(links_[id], g_); }
  Vertex link_target(LinkId id) const { return boost::target(links_[id], g_); }
  // Effective capacity (capacity x factor).
  sim::Bandwidth capacity(LinkId id) const { return link(id).capacity * link(id).factor; }
  // Degradation (0 < factor < 1) or failure (factor 0) of one directed link.
  void degrade(LinkId id, double factor);

  // Closed-form bisection bandwidth per direction set by the builder.
  sim::Bandwidth bisection() const { return bisection_; }
  void set_bisection(sim::Bandwidth b) { bisection_ = b; }
  const std::string& builder() const { return builder_; }
  void set_builder(std::string name) { builder_ = std::move(name); }

  // Throws ConfigError at `path` when some GPU cannot reach GPU 0 over working links.
  void check_connected(const std::string& path) const;

 private:
  Graph g_;
  std::vector<Vertex> gpus_;
  std::vector<Edge> links_;
  sim::Bandwidth bisection_;
  std::string builder_;
};

}  // namespace trainsim::topology
