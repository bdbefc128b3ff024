#pragma once
// Routes between GPUs over minimum-cost paths of working links (failed links, factor 0, are
// left out, so traffic reroutes). Costs count hops, links into the network fabric counting two:
// see detail::routing_cost. Modes:
//   ecmp             each connection is `flows_per_connection` sub-flows (Llama 3 used 16); every
//                    sub-flow follows one equal-cost path, picked hop by hop by a deterministic
//                    seeded hash of (flow id, sub-flow, source, destination), salted per switch
//   spray            ideal packet spraying: one flow split evenly over every equal-cost path
//                    (at most max_spray_paths of them, then a deterministic uniform sample)
//   dimension_order  tori only: dimension 0 first, then 1, 2, each the short way around the
//                    ring (ties: the + direction); falls back to ecmp around failed links
//   shortest         one fixed path per pair (lowest link ids), like a static routing table
// Sub-flows of the deterministic modes repeat the same route (they still count as flows).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/schema.hpp"
#include "topology/graph.hpp"

namespace trainsim::topology {

struct RoutingParams {
  enum class Mode : uint8_t { kEcmp, kSpray, kDimensionOrder, kShortest };
  Mode mode = Mode::kEcmp;
  int32_t flows_per_connection = 1;
  uint64_t seed = 0;
  int32_t max_spray_paths = 64;
  // NCCL's PXN: a connection to a GPU of another server on a different rail first crosses
  // NVLink to the source server's GPU on the destination's rail, then takes that rail, whenever
  // that path is of minimum cost (it ties with crossing the rail first on rail-optimized
  // fabrics; NCCL always picks the NVLink-first one).
  bool pxn = true;
};
const char* to_string(RoutingParams::Mode m);

// Parses {"mode", "flows_per_connection", "seed", "max_spray_paths"} (closed schema) and checks
// that the mode suits `t` (dimension_order needs a torus).
RoutingParams parse_routing(const sim::config::Json& j, const Topology& t, const std::string& path);
// The closed schema of the "routing" object (docs: routing_schema().markdown()).
const sim::config::Schema<RoutingParams>& routing_schema();

struct Route {
  std::vector<LinkId> links;  // directed link ids, source to destination
  double fraction = 1.0;      // share of the connection's bytes on this route
};

// Routes on a snapshot of `t`'s working links taken at construction (degrade first, then build
// the Router). Caches each pair's equal-cost paths; not thread-safe: one Router per thread.
class Router {
 public:
  Router(const Topology& t, RoutingParams params);
  ~Router();
  Router(Router&&) noexcept;
  Router& operator=(Router&&) = delete;

  // Appends to `out` the routes of connection `flow_id` from GPU `src` to GPU `dst`; their
  // fractions sum to 1. Appends nothing when src == dst.
  void routes(uint32_t src, uint32_t dst, uint64_t flow_id, std::vector<Route>& out) const;
  std::vector<Route> routes(uint32_t src, uint32_t dst, uint64_t flow_id) const;
  // Finds now, on up to `threads` threads, the equal-cost paths routes() will take between these
  // GPU pairs (PXN's two legs included) and caches them, as far as the cache holds. Routes do
  // not depend on it: each pair's paths are a function of its two ends.
  void prefetch(std::span<const std::pair<uint32_t, uint32_t>> pairs, int threads) const;
  // Links on the shortest minimum-cost path (-1 when unreachable, 0 when src == dst).
  int32_t hops(uint32_t src, uint32_t dst) const;
  // Number of equal-cost paths (a double: it can exceed 2^64 on large tori).
  double path_count(uint32_t src, uint32_t dst) const;
  const RoutingParams& params() const { return params_; }
  const Topology& topology() const { return t_; }

 private:
  struct Impl;
  // The GPU of src's server on dst's rail, through which NCCL's PXN takes a connection to another
  // server (-1: none, the two on the same server or rail).
  int64_t pxn_mid(uint32_t src, uint32_t dst) const;
  const Topology& t_;
  RoutingParams params_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainsim::topology
