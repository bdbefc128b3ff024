#include "topology/graph.hpp"

#include "sim/error.hpp"

namespace trainsim::topology {

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::kGpu: return "gpu";
    case NodeKind::kNvSwitch: return "nvswitch";
    case NodeKind::kLeaf: return "leaf";
    case NodeKind::kSpine: return "spine";
  }
  return "?";
}

Vertex Topology::add_node(NodeKind kind, int32_t server, std::string name) {
  const Vertex v = boost::add_vertex(NodeProps{kind, server, std::move(name)}, g_);
  if (kind == NodeKind::kGpu) gpus_.push_back(v);
  return v;
}

void Topology::add_cable(Vertex a, Vertex b, sim::Bandwidth capacity, sim::Time latency, const std::string& kind) {
  for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    const auto id = static_cast<LinkId>(links_.size());
    links_.push_back(boost::add_edge(from, to, LinkProps{id, capacity, latency, kind, 1.0}, g_).first);
  }
}

void Topology::degrade(LinkId id, double factor) {
  TRAINSIM_ASSERT(id < links_.size(), "unknown link ", id);
  TRAINSIM_ASSERT(factor >= 0.0 && factor <= 1.0, "degradation factor outside [0, 1]");
  g_[links_[id]].factor = factor;
}

void Topology::check_connected(const std::string& path) const {
  if (gpus_.empty()) return;
  std::vector<uint8_t> seen(boost::num_vertices(g_), 0);
  std::vector<Vertex> queue{gpus_[0]};
  seen[gpus_[0]] = 1;
  for (size_t q = 0; q < queue.size(); ++q)
    for (const Edge e : boost::make_iterator_range(boost::out_edges(queue[q], g_))) {
      const Vertex t = boost::target(e, g_);
      if (g_[e].factor > 0.0 && !seen[t]) seen[t] = 1, queue.push_back(t);
    }
  for (size_t i = 0; i < gpus_.size(); ++i)
    if (!seen[gpus_[i]]) {
      std::string msg = "the topology is disconnected: GPU ";
      msg += std::to_string(i);
      msg += " cannot reach GPU 0";
      throw ConfigError(path, msg, "check the links of the network description");
    }
}

}  // namespace trainsim::topology
