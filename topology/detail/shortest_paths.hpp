#pragma once
// Equal-cost shortest paths between two vertices, for the Router. Costs are small integers
// (routing_cost below), so a search is a level-synchronous BFS over the graph in which every
// cost-2 link has an implicit midpoint. The search runs from both ends at once and stops where
// they meet, so its work is two balls of half the distance: a few hundred vertices on the
// fabrics here even at 16,384 GPUs, where a BFS from each destination would touch the whole
// graph.

#include <cstdint>
#include <span>
#include <vector>

#include "topology/graph.hpp"

namespace trainsim::topology::detail {

// 1 for a link inside a server (both ends have a server index), 2 for a link into the fabric (an
// end without one): traffic never leaves a server when its internal fabric is as short, and
// cross-rail traffic takes NVLink to the destination's rail (NCCL's PXN) rather than a spine.
int32_t routing_cost(const Topology& t, LinkId link);

// The working links (factor > 0) of a topology in compressed rows, taken when constructed.
class Adjacency {
 public:
  explicit Adjacency(const Topology& t);
  size_t vertex_count() const { return out_begin_.size() - 1; }
  size_t link_count() const { return cost_.size(); }
  std::span<const LinkId> out_links(Vertex v) const {
    return {out_.data() + out_begin_[v], out_.data() + out_begin_[v + 1]};
  }
  std::span<const LinkId> in_links(Vertex v) const {
    return {in_.data() + in_begin_[v], in_.data() + in_begin_[v + 1]};
  }
  Vertex src(LinkId l) const { return src_[l]; }
  Vertex dst(LinkId l) const { return dst_[l]; }
  int32_t cost(LinkId l) const { return cost_[l]; }

 private:
  std::vector<uint32_t> out_begin_, in_begin_;
  std::vector<LinkId> out_, in_;
  std::vector<Vertex> src_, dst_;
  std::vector<int32_t> cost_;  // 0 for failed links (never listed)
};

// Every shortest path from one vertex to another as a DAG: the equal-cost next links of each
// vertex on such a path.
class PathDag {
 public:
  bool reachable() const { return cost_ >= 0; }
  int32_t cost() const { return cost_; }
  // Next links of `v` toward the destination (empty at the destination or off the DAG).
  std::span<const LinkId> next_links(Vertex v) const;
  // Vertices with next links, sorted; index(v) is v's position (npos when absent).
  size_t vertex_count() const { return nodes_.size(); }
  size_t link_count() const { return next_.size(); }
  static constexpr size_t npos = static_cast<size_t>(-1);
  size_t index(Vertex v) const;
  std::span<const LinkId> next_links_at(size_t i) const {
    return {next_.data() + begin_[i], next_.data() + begin_[i + 1]};
  }

 private:
  friend class DagFinder;
  int32_t cost_ = -1;
  std::vector<Vertex> nodes_;    // sorted
  std::vector<uint32_t> begin_;  // next links of nodes_[i]: next_[begin_[i], begin_[i + 1])
  std::vector<LinkId> next_;
};

// Bidirectional level-synchronous search (each step expands the side whose frontier has fewer
// links to scan); keeps its scratch space between calls.
class DagFinder {
 public:
  explicit DagFinder(const Adjacency& adj);
  PathDag find(Vertex from, Vertex to);

 private:
  // A search state: a vertex (< V) or the midpoint of cost-2 link l (V + l).
  using State = uint32_t;
  static constexpr LinkId kNoLink = ~LinkId{0};
  // A step of the search from a state at one level to a state at the next (forward: along the
  // link; backward: against it), with the link it belongs to in the graph (kNoLink for the half
  // of a cost-2 link that does not start at a vertex).
  struct Step {
    State from, to;
    LinkId link;
  };
  struct Side {
    std::vector<uint32_t> mark, good;  // epoch stamps
    std::vector<int32_t> dist;
    std::vector<State> visited;  // in BFS order
    std::vector<Step> steps;     // in level order
    size_t level_begin = 0;      // current frontier: visited[level_begin, end)
    int32_t level = 0;
  };
  bool is_vertex(State s) const { return s < vertices_; }
  // Links the next expansion of `side` would scan (its frontier's out- or in-degrees).
  size_t frontier_work(const Side& side, bool forward) const;
  // Expands one level of `side` (forward: along links; backward: against them); true when it
  // reached a state the other side has seen.
  bool expand(Side& side, const Side& other, bool forward);
  template <typename F>
  void successors(State s, F&& f) const;  // f(next state, link of s or kNoLink)
  template <typename F>
  void predecessors(State s, F&& f) const;  // f(previous state, link of that state or kNoLink)

  const Adjacency& adj_;
  uint32_t vertices_;
  uint32_t epoch_ = 0;
  Side fwd_, bwd_;
};

}  // namespace trainsim::topology::detail
