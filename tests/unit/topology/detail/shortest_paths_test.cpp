// Bidirectional equal-cost path search (topology/detail/shortest_paths.cpp), checked against a
// plain single-source search on the same costs.
#include "topology/detail/shortest_paths.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <functional>

#include "test_support.hpp"

namespace trainsim::topology::detail {
namespace {

using testing::build;
using testing::Json;

// Reference: Dijkstra-like pass over costs 1 and 2 from `s` (bucket queue), counting paths.
std::pair<int32_t, double> reference(const Adjacency& adj, Vertex s, Vertex d) {
  const size_t n = adj.vertex_count();
  std::vector<int32_t> dist(n, -1);
  std::vector<double> count(n, 0);
  std::vector<std::vector<Vertex>> buckets(1, {s});
  dist[s] = 0;
  count[s] = 1;
  std::vector<uint8_t> done(n, 0);
  for (size_t c = 0; c < buckets.size(); ++c)
    for (size_t i = 0; i < buckets[c].size(); ++i) {
      const Vertex v = buckets[c][i];
      if (done[v] || dist[v] != static_cast<int32_t>(c)) continue;
      done[v] = 1;
      for (const LinkId l : adj.out_links(v)) {
        const Vertex w = adj.dst(l);
        const int32_t nd = dist[v] + adj.cost(l);
        if (dist[w] < 0 || nd < dist[w]) {
          dist[w] = nd;
          count[w] = count[v];
          if (buckets.size() <= static_cast<size_t>(nd)) buckets.resize(static_cast<size_t>(nd) + 1);
          buckets[static_cast<size_t>(nd)].push_back(w);
        } else if (nd == dist[w]) {
          count[w] += count[v];
        }
      }
    }
  return {dist[d], count[d]};
}

// Paths through the DAG from s to d, checking every link is on a minimum-cost path.
double dag_paths(const PathDag& g, const Adjacency& adj, Vertex v, Vertex d) {
  if (v == d) return 1.0;
  double n = 0;
  for (const LinkId l : g.next_links(v)) n += dag_paths(g, adj, adj.dst(l), d);
  return n;
}

int32_t dag_cost(const PathDag& g, const Adjacency& adj, Vertex s, Vertex d) {
  int32_t c = 0;
  for (Vertex v = s; v != d;) {
    const LinkId l = g.next_links(v)[0];
    c += adj.cost(l);
    v = adj.dst(l);
  }
  return c;
}

void check_all_pairs(const Topology& t) {
  const Adjacency adj(t);
  DagFinder finder(adj);
  for (size_t a = 0; a < t.gpu_count(); ++a)
    for (size_t b = 0; b < t.gpu_count(); ++b) {
      const Vertex s = t.gpu_node(a), d = t.gpu_node(b);
      const auto [cost, count] = reference(adj, s, d);
      const PathDag g = finder.find(s, d);
      ASSERT_EQ(g.cost(), cost) << t.builder() << " " << a << " -> " << b;
      if (a == b) continue;
      EXPECT_EQ(dag_cost(g, adj, s, d), cost);
      EXPECT_DOUBLE_EQ(dag_paths(g, adj, s, d), count) << t.builder() << " " << a << " -> " << b;
    }
}

TEST(ShortestPaths, RoutingCostsFabricLinksDouble) {
  const Topology t = build(
      Json{
          {"builder", "rail_only"}, {"gpus_per_node", 2}, {"nvlink_bandwidth", "450GBps"}, {"nic_bandwidth", "50GBps"}},
      4);
  for (LinkId id = 0; id < t.link_count(); ++id) EXPECT_EQ(routing_cost(t, id), t.link(id).kind == "ib" ? 2 : 1);
}

TEST(ShortestPaths, MatchAReferenceSearchOnEveryBuilder) {
  const Json servers{{"gpus_per_node", 4}, {"nvlink_bandwidth", "100GBps"}};
  auto with = [&](Json j) {
    j.update(servers);
    return j;
  };
  check_all_pairs(build(
      with(Json{{"builder", "rail_optimized"}, {"nic_bandwidth", "25GBps"}, {"servers_per_unit", 2}, {"spines", 3}}),
      24));
  check_all_pairs(
      build(with(Json{{"builder", "fat_tree"}, {"nic_bandwidth", "25GBps"}, {"radix", 8}, {"tiers", 3}}), 48));
  check_all_pairs(build(with(Json{{"builder", "rail_only"}, {"nic_bandwidth", "25GBps"}}), 16));
  check_all_pairs(build(with(Json{{"builder", "dragonfly_plus"}, {"nic_bandwidth", "25GBps"}, {"radix", 8}}), 48));
  check_all_pairs(build(Json{{"builder", "torus"}, {"shape", {3, 4, 2}}, {"link_bandwidth", "10GBps"}}, 24));
  check_all_pairs(build(Json{{"builder", "dgx1_cube_mesh"}}, 8));
  check_all_pairs(build(Json{{"builder", "pcie_tree"}, {"pcie_bandwidth", "25GBps"}}, 8));
}

TEST(ShortestPaths, FailedLinksAreLeftOut) {
  Topology t = build(Json{{"builder", "torus"}, {"shape", {5, 1}}, {"link_bandwidth", "10GBps"}}, 5);  // a ring
  const LinkId l = t.link_count() - 2;  // gpu4 -> gpu0, on the wraparound cable
  t.degrade(l, 0.0);
  const Adjacency adj(t);
  DagFinder finder(adj);
  EXPECT_EQ(finder.find(t.gpu_node(0), t.gpu_node(4)).cost(), 1);  // the other direction still works
  EXPECT_EQ(finder.find(t.gpu_node(4), t.gpu_node(0)).cost(), 4);  // the long way round
  t.degrade(Topology::reverse(l), 0.0);
  t.degrade(0, 0.0);  // gpu0 -> gpu1 as well: gpu0 is cut off outwards
  const Adjacency cut(t);
  DagFinder f2(cut);
  EXPECT_FALSE(f2.find(t.gpu_node(0), t.gpu_node(2)).reachable());
}

}  // namespace
}  // namespace trainsim::topology::detail
