#include "topology/routing.hpp"

#include "sim/error.hpp"

namespace trainsim::topology {

namespace {
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
constexpr size_t kMaxSprayPaths = 64;
}  // namespace

const std::vector<int32_t>& Router::distances_to(Vertex dst) const {
  auto it = dist_.find(dst);
  if (it != dist_.end()) return it->second;
  const Graph& g = t_.graph();
  std::vector<int32_t> d(boost::num_vertices(g), -1);
  std::vector<Vertex> queue{dst};
  d[dst] = 0;
  for (size_t q = 0; q < queue.size(); ++q)
    for (const Edge e : boost::make_iterator_range(boost::in_edges(queue[q], g))) {
      const Vertex s = boost::source(e, g);
      if (g[e].factor > 0.0 && d[s] < 0) d[s] = d[queue[q]] + 1, queue.push_back(s);
    }
  return dist_.emplace(dst, std::move(d)).first->second;
}

void Router::next_links(Vertex v, const std::vector<int32_t>& d, std::vector<LinkId>& out) const {
  const Graph& g = t_.graph();
  out.clear();
  for (const Edge e : boost::make_iterator_range(boost::out_edges(v, g))) {
    const Vertex n = boost::target(e, g);
    if (g[e].factor > 0.0 && d[n] >= 0 && d[n] == d[v] - 1) out.push_back(g[e].id);
  }
}

int32_t Router::hops(size_t src, size_t dst) const { return distances_to(t_.gpu(dst))[t_.gpu(src)]; }

std::vector<Route> Router::routes(size_t src, size_t dst, uint64_t flow_id) const {
  std::vector<Route> out;
  if (src == dst) return out;
  const Vertex s = t_.gpu(src), target = t_.gpu(dst);
  const auto& d = distances_to(target);
  TRAINSIM_ASSERT(d[s] >= 0, "no route from GPU ", src, " to GPU ", dst);
  std::vector<LinkId> choices;
  if (p_.mode == RoutingParams::Mode::kSpray) {
    // Depth-first over equal-cost next hops, splitting the fraction evenly at every branch.
    struct Partial {
      Vertex at;
      Route r;
    };
    std::vector<Partial> stack{{s, Route{}}};
    while (!stack.empty()) {
      Partial cur = std::move(stack.back());
      stack.pop_back();
      if (cur.at == target) {
        out.push_back(std::move(cur.r));
        continue;
      }
      next_links(cur.at, d, choices);
      // Cap the enumeration: beyond kMaxSprayPaths keep the first branches (deterministic order).
      const size_t take = out.size() + stack.size() + choices.size() > kMaxSprayPaths ? 1 : choices.size();
      for (size_t k = take; k-- > 0;) {
        Partial next{t_.link_target(choices[k]), cur.r};
        next.r.links.push_back(choices[k]);
        next.r.fraction /= static_cast<double>(take);
        stack.push_back(std::move(next));
      }
    }
    return out;
  }
  const int32_t n = std::max<int32_t>(1, p_.flows_per_connection);
  for (int32_t sub = 0; sub < n; ++sub) {
    Route r;
    r.fraction = 1.0 / static_cast<double>(n);
    Vertex at = s;
    for (int32_t hop = 0; at != target; ++hop) {
      next_links(at, d, choices);
      const uint64_t h =
          mix(p_.seed ^ mix(flow_id * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(sub)) ^
              mix((static_cast<uint64_t>(src) << 32) ^ static_cast<uint64_t>(dst)) ^ static_cast<uint64_t>(hop));
      const LinkId l = choices[h % choices.size()];
      r.links.push_back(l);
      at = t_.link_target(l);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace trainsim::topology
