#include "topology/summary.hpp"

#include <algorithm>
#include <cstdio>

#include "topology/bisection.hpp"

namespace trainsim::topology {

namespace {

constexpr double kExactDiameterWork = 5e7;
constexpr size_t kDiameterSamples = 16;

// Largest hop distance from GPU `from` to any GPU over working links (-1: some unreachable).
int32_t eccentricity(const Topology& t, size_t from, std::vector<int32_t>& d, std::vector<Vertex>& queue) {
  const Graph& g = t.graph();
  std::fill(d.begin(), d.end(), -1);
  queue.assign(1, t.gpu_node(from));
  d[queue[0]] = 0;
  for (size_t q = 0; q < queue.size(); ++q)
    for (const Edge e : boost::make_iterator_range(boost::out_edges(queue[q], g))) {
      const Vertex n = boost::target(e, g);
      if (g[e].factor > 0.0 && d[n] < 0) {
        d[n] = d[queue[q]] + 1;
        queue.push_back(n);
      }
    }
  int32_t far = 0;
  for (size_t i = 0; i < t.gpu_count(); ++i) {
    if (d[t.gpu_node(i)] < 0) return -1;
    far = std::max(far, d[t.gpu_node(i)]);
  }
  return far;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

const char* shape(NodeKind k) {
  switch (k) {
    case NodeKind::kGpu: return "box";
    case NodeKind::kNic: return "hexagon";
    case NodeKind::kCpu: return "octagon";
    default: return "ellipse";
  }
}

}  // namespace

Summary summarize(const Topology& t) {
  Summary s;
  s.nodes = t.node_count();
  s.cables = t.cable_count();
  s.gpus = t.gpu_count();
  s.switches = s.nodes - s.gpus;
  for (const Vertex v : boost::make_iterator_range(boost::vertices(t.graph())))
    ++s.nodes_by_kind[to_string(t.node(v).kind)];
  for (LinkId id = 0; id < t.link_count(); ++id) {
    const double f = t.link(id).factor;
    s.failed_links += f == 0.0;
    s.degraded_links += f > 0.0 && f < 1.0;
  }
  s.bisection_closed_form = t.bisection().has_value();
  s.bisection = bisection_bandwidth(t);
  s.in_network_reduction = t.supports_in_network_reduction();
  if (t.gpu_count() > 1) {
    const double work = static_cast<double>(t.gpu_count()) * static_cast<double>(t.node_count() + t.link_count());
    s.diameter_exact = work <= kExactDiameterWork;
    std::vector<size_t> from;
    if (s.diameter_exact) {
      for (size_t i = 0; i < t.gpu_count(); ++i) from.push_back(i);
    } else {
      for (size_t k = 0; k < kDiameterSamples; ++k) from.push_back(k * (t.gpu_count() - 1) / (kDiameterSamples - 1));
    }
    std::vector<int32_t> d(t.node_count());
    std::vector<Vertex> queue;
    for (const size_t g : from) {
      const int32_t e = eccentricity(t, g, d, queue);
      s.diameter = e < 0 ? -1 : std::max(s.diameter, e);
      if (e < 0) break;
    }
  }
  return s;
}

sim::config::Json Summary::to_json() const {
  sim::config::Json kinds = sim::config::Json::object();
  for (const auto& [k, n] : nodes_by_kind) kinds[k] = n;
  return sim::config::Json{{"schema_version", 1},
                           {"nodes", nodes},
                           {"node_kinds", kinds},
                           {"cables", cables},
                           {"gpus", gpus},
                           {"switches", switches},
                           {"diameter_hops", diameter},
                           {"diameter_exact", diameter_exact},
                           {"bisection_GBps", bisection.gbyte_per_second()},
                           {"bisection_closed_form", bisection_closed_form},
                           {"failed_links", failed_links},
                           {"degraded_links", degraded_links},
                           {"in_network_reduction", in_network_reduction}};
}

void write_dot(const Topology& t, std::ostream& out) {
  const Graph& g = t.graph();
  out << "graph trainsim {\n  node [fontsize=10];\n";
  // Servers as clusters, then fabric nodes.
  std::map<int32_t, std::vector<Vertex>> servers;
  for (const Vertex v : boost::make_iterator_range(boost::vertices(g))) servers[g[v].server].push_back(v);
  for (const auto& [server, members] : servers) {
    const bool cluster = server >= 0;
    const char* indent = cluster ? "    " : "  ";
    if (cluster) out << "  subgraph cluster_server" << server << " {\n    label=\"server " << server << "\";\n";
    for (const Vertex v : members)
      out << indent << "n" << v << " [label=" << quoted(g[v].name) << ", shape=" << shape(g[v].kind) << "];\n";
    if (cluster) out << "  }\n";
  }
  char bw[64];
  for (LinkId id = 0; id < t.link_count(); id += 2) {
    const LinkProps& l = t.link(id);
    const double f = l.factor, back = t.link(Topology::reverse(id)).factor;
    std::snprintf(bw, sizeof bw, "%.1f GB/s", l.capacity.gbyte_per_second());
    out << "  n" << t.link_src(id) << " -- n" << t.link_dst(id) << " [label=" << quoted(std::string(bw) + " " + l.kind);
    if (f == 0.0 && back == 0.0) {
      out << ", style=dotted, color=red";
    } else if (f < 1.0 || back < 1.0) {
      std::snprintf(bw, sizeof bw, "%.3g/%.3g", f, back);
      out << ", style=dashed, xlabel=" << quoted(std::string("x") + bw);
    }
    out << "];\n";
  }
  out << "}\n";
}

}  // namespace trainsim::topology
