#pragma once
// Routes between GPUs over shortest (hop-count) paths of working links. ECMP picks one
// equal-cost next hop per switch by a deterministic seeded hash of (flow, sub-flow, source,
// destination, hop); a connection may be spread over several sub-flows (Llama 3 used 16);
// "spray" splits a flow over every equal-cost path (ideal packet spraying). Distances toward
// each destination are computed once (BFS over reversed links) and cached.

#include <cstdint>
#include <map>
#include <vector>

#include "topology/graph.hpp"

namespace trainsim::topology {

struct RoutingParams {
  enum class Mode : uint8_t { kEcmp, kSpray };
  Mode mode = Mode::kEcmp;
  int32_t flows_per_connection = 1;
  uint64_t seed = 0;
};

struct Route {
  std::vector<LinkId> links;
  double fraction = 1.0;  // share of the connection's bytes on this route
};

class Router {
 public:
  Router(const Topology& t, RoutingParams params) : t_(t), p_(params) {}
  // Routes from GPU `src` to GPU `dst`; fractions sum to 1. Empty when src == dst.
  std::vector<Route> routes(size_t src, size_t dst, uint64_t flow_id) const;
  // Hop distance between two GPUs over working links (-1 when unreachable).
  int32_t hops(size_t src, size_t dst) const;

 private:
  const std::vector<int32_t>& distances_to(Vertex dst) const;
  // Equal-cost next links from `v` toward the destination with distance table `d`.
  void next_links(Vertex v, const std::vector<int32_t>& d, std::vector<LinkId>& out) const;

  const Topology& t_;
  RoutingParams p_;
  mutable std::map<Vertex, std::vector<int32_t>> dist_;
};

}  // namespace trainsim::topology
