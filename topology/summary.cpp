#include "topology/summary.hpp"

#include <algorithm>

#include "topology/routing.hpp"

namespace trainsim::topology {

Summary summarize(const Topology& t) {
  Summary s;
  s.nodes = t.node_count();
  s.cables = t.link_count() / 2;
  s.gpus = t.gpu_count();
  s.switches = s.nodes - s.gpus;
  s.bisection = t.bisection();
  if (t.gpu_count() > 1) {
    // BFS from GPU 0 over working links.
    const Graph& g = t.graph();
    std::vector<int32_t> d(boost::num_vertices(g), -1);
    std::vector<Vertex> queue{t.gpu(0)};
    d[t.gpu(0)] = 0;
    for (size_t q = 0; q < queue.size(); ++q)
      for (const Edge e : boost::make_iterator_range(boost::out_edges(queue[q], g))) {
        const Vertex n = boost::target(e, g);
        if (g[e].factor > 0.0 && d[n] < 0) d[n] = d[queue[q]] + 1, queue.push_back(n);
      }
    for (size_t i = 0; i < t.gpu_count(); ++i) s.diameter = std::max(s.diameter, d[t.gpu(i)]);
  }
  return s;
}

sim::config::Json Summary::to_json() const {
  return sim::config::Json{{"schema_version", 1},
                           {"nodes", nodes},
                           {"cables", cables},
                           {"gpus", gpus},
                           {"switches", switches},
                           {"diameter_hops", diameter},
                           {"bisection_GBps", bisection.gbyte_per_second()}};
}

void write_dot(const Topology& t, std::ostream& out) {
  const Graph& g = t.graph();
  out << "graph trainsim {\n  node [shape=box];\n";
  for (const Vertex v : boost::make_iterator_range(boost::vertices(g)))
    out << "  n" << v << " [label=\"" << g[v].name << "\", kind=\"" << to_string(g[v].kind) << "\"];\n";
  for (LinkId id = 0; id < t.link_count(); id += 2) {
    const LinkProps& l = t.link(id);
    char bw[32];
    std::snprintf(bw, sizeof bw, "%.1f", l.capacity.gbyte_per_second());
    out << "  n" << t.link_source(id) << " -- n" << t.link_target(id) << " [label=\"" << bw << " GB/s " << l.kind
        << "\"];\n";
  }
  out << "}\n";
}

}  // namespace trainsim::topology
