#pragma once
// What `trainsim topology` prints: counts, GPU-to-GPU diameter, bisection bandwidth; Graphviz.

#include <ostream>

#include "sim/config/schema.hpp"
#include "topology/graph.hpp"

namespace trainsim::topology {

struct Summary {
  size_t nodes = 0, cables = 0, gpus = 0, switches = 0;
  int32_t diameter = 0;      // hops between the two farthest GPUs
  sim::Bandwidth bisection;  // per direction, builder's closed form
  sim::config::Json to_json() const;
};

// Diameter: the eccentricity of GPU 0 among GPUs, which equals the GPU diameter for the
// builders here (every GPU sees the same fabric); O(nodes + links).
Summary summarize(const Topology& t);
void write_dot(const Topology& t, std::ostream& out);

}  // namespace trainsim::topology
