#pragma once
// A cluster's "network" description:
//   {"builder": NAME, ...that builder's parameters (closed schema),
//    "faults": [{"a": NODE, "b": NODE, "factor": 0..1, "direction": "both"|"a_to_b"}, ...],
//    "routing": {"mode": "ecmp"|"spray"|"dimension_order"|"shortest", "flows_per_connection": K, ...}}
// `faults` degrade (factor < 1) or fail (factor 0) the cables between two named nodes, so traffic
// reroutes; `routing` configures the Router (routing.hpp).

#include <cstdint>
#include <string>

#include "sim/config/schema.hpp"
#include "topology/fwd.hpp"

namespace trainsim::topology {

// Builds the topology for `gpus` GPUs, applies its faults and checks that every GPU can reach
// every other; throws ConfigError naming the field (under `path`) otherwise.
Topology build_topology(const sim::config::Json& spec, int64_t gpus, const std::string& path);

// The spec's "routing" object (defaults when absent), validated against `t`.
RoutingParams routing_params(const sim::config::Json& spec, const Topology& t, const std::string& path);

}  // namespace trainsim::topology
