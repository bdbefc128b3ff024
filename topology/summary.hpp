#pragma once
// What `trainsim topology` prints: counts, GPU-to-GPU diameter, bisection bandwidth; Graphviz.

#include <map>
#include <ostream>
#include <string>

#include "sim/config/schema.hpp"
#include "topology/graph.hpp"

namespace trainsim::topology {

struct Summary {
  size_t nodes = 0, cables = 0, gpus = 0, switches = 0;
  std::map<std::string, size_t> nodes_by_kind;  // "gpu" -> count, ...
  int32_t diameter = 0;                         // hops between the two farthest GPUs
  bool diameter_exact = true;                   // false: largest eccentricity of sampled GPUs
  sim::Bandwidth bisection;                     // per direction (bisection.hpp)
  bool bisection_closed_form = true;            // false: max flow between GPU halves by index
  size_t failed_links = 0, degraded_links = 0;  // directed links with factor 0 / in (0, 1)
  bool in_network_reduction = false;
  sim::config::Json to_json() const;
};

// Diameter over working links, in hops: exact (a BFS from every GPU) when GPUs x (nodes + links)
// is at most 5e7, otherwise the largest eccentricity of 16 evenly spaced GPUs (first and last
// included), which is exact for the builders here, whose GPUs see the same fabric.
Summary summarize(const Topology& t);

// Graphviz (undirected, one edge per cable, servers as clusters), deterministic.
void write_dot(const Topology& t, std::ostream& out);

}  // namespace trainsim::topology
