#include "topology/bisection.hpp"

#include <cmath>
#include <vector>

#include <boost/graph/push_relabel_max_flow.hpp>

#include "topology/graph.hpp"

namespace trainsim::topology {

namespace {
using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, int64_t,
                    boost::property<boost::edge_residual_capacity_t, int64_t,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;
}  // namespace

sim::Bandwidth index_halves_min_cut(const Topology& t) {
  const size_t n = t.gpu_count();
  if (n < 2) return sim::Bandwidth();
  // Vertices of t, then a source and a sink; capacities in whole bytes per second (integers:
  // push-relabel's flow conservation is exact, which doubles would break by rounding).
  const size_t source = t.node_count(), sink = source + 1;
  FlowGraph f(t.node_count() + 2);
  auto capacity = boost::get(boost::edge_capacity, f);
  auto reverse = boost::get(boost::edge_reverse, f);
  auto add = [&](size_t a, size_t b, int64_t c) {
    const auto e = boost::add_edge(a, b, f).first;
    const auto r = boost::add_edge(b, a, f).first;
    capacity[e] = c;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  // A GPU's source (sink) edge carries at most what its links can send (receive): no bound.
  std::vector<int64_t> out(t.node_count(), 0), in(t.node_count(), 0);
  for (LinkId id = 0; id < t.link_count(); ++id) {
    const auto c = static_cast<int64_t>(std::llround(t.capacity(id).bytes_per_second()));
    if (c <= 0) continue;
    add(t.link_src(id), t.link_dst(id), c);
    out[t.link_src(id)] += c;
    in[t.link_dst(id)] += c;
  }
  for (size_t g = 0; g < n; ++g) {
    const Vertex v = t.gpu_node(g);
    if (g < n / 2)
      add(source, v, out[v]);
    else
      add(v, sink, in[v]);
  }
  const int64_t flow = boost::push_relabel_max_flow(f, source, sink);
  return sim::Bandwidth::bytes_per_s(static_cast<double>(flow));
}

sim::Bandwidth bisection_bandwidth(const Topology& t) {
  if (const auto b = t.bisection()) return *b;
  return index_halves_min_cut(t);
}

}  // namespace trainsim::topology
