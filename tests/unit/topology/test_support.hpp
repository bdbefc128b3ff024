#pragma once
// Shared helpers of the topology unit tests.

#include <string>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"
#include "topology/graph.hpp"
#include "topology/spec.hpp"
#include "topology/summary.hpp"

namespace trainsim::topology::testing {

using sim::config::Json;

// The one-line message of the ConfigError `f` throws, or "(no error)".
template <typename F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

inline Topology build(const Json& spec, int64_t gpus) { return build_topology(spec, gpus, "cluster.network"); }

// Directed links from a node of kind `a` to a node of kind `b`.
inline size_t links_between(const Topology& t, NodeKind a, NodeKind b) {
  size_t n = 0;
  for (LinkId id = 0; id < t.link_count(); ++id)
    n += t.node(t.link_src(id)).kind == a && t.node(t.link_dst(id)).kind == b;
  return n;
}

// Sum of nominal capacities of the cables (one direction each), in GB/s.
inline double cable_capacity_gbps(const Topology& t) {
  double total = 0;
  for (LinkId id = 0; id < t.link_count(); id += 2) total += t.link(id).capacity.gbyte_per_second();
  return total;
}

}  // namespace trainsim::topology::testing
