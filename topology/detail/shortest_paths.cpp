#include "topology/detail/shortest_paths.hpp"

#include <algorithm>

namespace trainsim::topology::detail {

int32_t routing_cost(const Topology& t, LinkId link) {
  return t.node(t.link_src(link)).server >= 0 && t.node(t.link_dst(link)).server >= 0 ? 1 : 2;
}

Adjacency::Adjacency(const Topology& t) {
  const size_t v = t.node_count(), l = t.link_count();
  out_begin_.assign(v + 1, 0);
  in_begin_.assign(v + 1, 0);
  src_.resize(l);
  dst_.resize(l);
  cost_.assign(l, 0);
  for (LinkId id = 0; id < l; ++id) {
    src_[id] = t.link_src(id);
    dst_[id] = t.link_dst(id);
    if (t.link(id).factor <= 0.0) continue;
    cost_[id] = routing_cost(t, id);
    ++out_begin_[src_[id] + 1];
    ++in_begin_[dst_[id] + 1];
  }
  for (size_t i = 0; i < v; ++i) {
    out_begin_[i + 1] += out_begin_[i];
    in_begin_[i + 1] += in_begin_[i];
  }
  out_.resize(out_begin_[v]);
  in_.resize(in_begin_[v]);
  std::vector<uint32_t> out_at(out_begin_.begin(), out_begin_.end() - 1), in_at(in_begin_.begin(), in_begin_.end() - 1);
  for (LinkId id = 0; id < l; ++id) {  // link-id order within each row: deterministic
    if (cost_[id] == 0) continue;
    out_[out_at[src_[id]]++] = id;
    in_[in_at[dst_[id]]++] = id;
  }
}

size_t PathDag::index(Vertex v) const {
  const auto it = std::lower_bound(nodes_.begin(), nodes_.end(), v);
  return it == nodes_.end() || *it != v ? npos : static_cast<size_t>(it - nodes_.begin());
}

std::span<const LinkId> PathDag::next_links(Vertex v) const {
  const size_t i = index(v);
  return i == npos ? std::span<const LinkId>() : next_links_at(i);
}

DagFinder::DagFinder(const Adjacency& adj) : adj_(adj), vertices_(static_cast<uint32_t>(adj.vertex_count())) {
  const size_t states = adj.vertex_count() + adj.link_count();
  for (Side* s : {&fwd_, &bwd_}) {
    s->mark.assign(states, 0);
    s->good.assign(states, 0);
    s->dist.assign(states, 0);
  }
}

template <typename F>
void DagFinder::successors(State s, F&& f) const {
  if (is_vertex(s)) {
    for (const LinkId l : adj_.out_links(s)) f(adj_.cost(l) == 1 ? State(adj_.dst(l)) : vertices_ + l, l);
  } else {
    f(State(adj_.dst(s - vertices_)), kNoLink);
  }
}

template <typename F>
void DagFinder::predecessors(State s, F&& f) const {
  if (is_vertex(s)) {
    for (const LinkId l : adj_.in_links(s)) {
      if (adj_.cost(l) == 1)
        f(State(adj_.src(l)), l);
      else
        f(vertices_ + l, kNoLink);
    }
  } else {
    f(State(adj_.src(s - vertices_)), s - vertices_);
  }
}

size_t DagFinder::frontier_work(const Side& side, bool forward) const {
  size_t work = 0;
  for (size_t i = side.level_begin; i < side.visited.size(); ++i) {
    const State s = side.visited[i];
    work += !is_vertex(s) ? 1 : forward ? adj_.out_links(s).size() : adj_.in_links(s).size();
  }
  return work;
}

bool DagFinder::expand(Side& side, const Side& other, bool forward) {
  const size_t end = side.visited.size();
  bool met = false;
  for (size_t i = side.level_begin; i < end; ++i) {
    const State s = side.visited[i];
    auto visit = [&](State n, LinkId l) {
      if (side.mark[n] != epoch_) {
        side.mark[n] = epoch_;
        side.dist[n] = side.level + 1;
        side.visited.push_back(n);
        met = met || other.mark[n] == epoch_;
      }
      if (side.dist[n] == side.level + 1) side.steps.push_back(Step{s, n, l});
    };
    if (forward)
      successors(s, visit);
    else
      predecessors(s, visit);
  }
  side.level_begin = end;
  ++side.level;
  return met;
}

PathDag DagFinder::find(Vertex from, Vertex to) {
  PathDag out;
  if (from == to) {
    out.cost_ = 0;
    return out;
  }
  if (++epoch_ == 0) {  // stamps wrapped: clear them once every 2^32 searches
    for (Side* s : {&fwd_, &bwd_}) {
      std::fill(s->mark.begin(), s->mark.end(), 0);
      std::fill(s->good.begin(), s->good.end(), 0);
    }
    epoch_ = 1;
  }
  for (auto [side, start] : {std::pair{&fwd_, State(from)}, std::pair{&bwd_, State(to)}}) {
    side->visited.assign(1, start);
    side->steps.clear();
    side->mark[start] = epoch_;
    side->dist[start] = 0;
    side->level_begin = 0;
    side->level = 0;
  }
  for (;;) {
    if (fwd_.visited.size() == fwd_.level_begin || bwd_.visited.size() == bwd_.level_begin) return out;  // unreachable
    const bool forward = frontier_work(fwd_, true) <= frontier_work(bwd_, false);
    if (forward ? expand(fwd_, bwd_, true) : expand(bwd_, fwd_, false)) break;
  }
  out.cost_ = fwd_.level + bwd_.level;

  // The middle: states at both frontiers. Every shortest path crosses it exactly once.
  for (size_t i = fwd_.level_begin; i < fwd_.visited.size(); ++i) {
    const State s = fwd_.visited[i];
    if (bwd_.mark[s] == epoch_ && bwd_.dist[s] == bwd_.level) fwd_.good[s] = bwd_.good[s] = epoch_;
  }
  // States on shortest paths: those whose steps lead to the middle (forward side) or come from
  // it (backward side), taking the steps from the last level down.
  for (Side* side : {&fwd_, &bwd_})
    for (size_t i = side->steps.size(); i-- > 0;)
      if (side->good[side->steps[i].to] == epoch_) side->good[side->steps[i].from] = epoch_;

  // Next links of every vertex on the DAG, as (vertex, link) pairs.
  std::vector<std::pair<Vertex, LinkId>> pairs;
  for (const Step& st : fwd_.steps)
    if (st.link != kNoLink && fwd_.good[st.to] == epoch_) pairs.emplace_back(st.from, st.link);
  for (const Step& st : bwd_.steps)
    if (st.link != kNoLink && bwd_.good[st.to] == epoch_) pairs.emplace_back(st.to, st.link);
  std::sort(pairs.begin(), pairs.end());
  for (const auto& [v, l] : pairs) {
    if (out.nodes_.empty() || out.nodes_.back() != v) {
      out.nodes_.push_back(v);
      out.begin_.push_back(static_cast<uint32_t>(out.next_.size()));
    }
    out.next_.push_back(l);
  }
  out.begin_.push_back(static_cast<uint32_t>(out.next_.size()));
  return out;
}

}  // namespace trainsim::topology::detail
