#pragma once
// Servers for the multi-node builders: the server fabric comes from "intra" (an object naming a
// node builder) or, as a shorthand, from nvswitch_node's keys written at the top level.

#include <string>
#include <vector>

#include "sim/config/schema.hpp"
#include "topology/builder.hpp"
#include "topology/graph.hpp"

namespace trainsim::topology::detail {

// "prefix" + i (+ "_" + j), without GCC 12's -Wrestrict false positive on concatenation chains.
std::string numbered(const char* prefix, int64_t i);
std::string numbered(const char* prefix, int64_t i, int64_t j);

struct ServerParams {
  sim::config::Json intra;                                    // null unless given
  sim::config::Json shorthand = sim::config::Json::object();  // nvswitch_node keys given at the top
};

// The nvswitch_node keys accepted at the top level of multi-node builders.
inline const std::vector<std::string>& shorthand_keys() {
  static const std::vector<std::string> keys{"gpus_per_node", "nvlink_bandwidth", "nvlink_latency", "sharp"};
  return keys;
}

// Adds "intra" and the shorthand keys to a multi-node builder's schema (T has `ServerParams server`).
template <typename T>
void add_server_fields(sim::config::Schema<T>& s) {
  s.custom("intra", "object or null", std::string("null"),
           "Server fabric: {\"builder\": NODE_BUILDER, ...its parameters} (dgx1_cube_mesh, nvswitch_node, "
           "p2p_full_mesh, pcie_tree); null = nvswitch_node from the keys below.",
           [](T& t, const sim::config::Json& j, const std::string& p) {
             if (!j.is_null() && !j.is_object())
               throw ConfigError(p, "expected an object {\"builder\": NODE_BUILDER, ...} or null, got " +
                                        sim::config::json_type_name(j));
             t.server.intra = j;
           });
  const char* docs[] = {"GPUs per server (nvswitch_node shorthand; default 8).",
                        ("Per-GPU, per-direction NVLink bandwidth into the NVSwitch (nvswitch_node shorthand; "
                         "required without \"intra\")."),
                        "Latency of a GPU-NVSwitch hop (nvswitch_node shorthand; default \"1us\").",
                        "NVLink SHARP (NVLS) in-network reduction (nvswitch_node shorthand; default false)."};
  const char* types[] = {"integer in [1, 1024]", "bandwidth", "duration", "boolean"};
  for (size_t i = 0; i < shorthand_keys().size(); ++i) {
    const std::string key = shorthand_keys()[i];
    s.custom(key, types[i], std::string(), docs[i],
             [key](T& t, const sim::config::Json& j, const std::string&) { t.server.shorthand[key] = j; });
  }
}

// The server fabric named by `p` (errors name fields under `path`).
ServerFabric resolve_servers(const ServerParams& p, const std::string& path);

// Throws ConfigError at the fabric's shape field when `gpus` is not a whole number of servers.
void check_whole_servers(int64_t gpus, const ServerFabric& f);

// Adds gpus / gpus_per_node servers; returns each server's GPU vertices (GPU g is on server
// g / gpus_per_node, matching Megatron's rank order). Sets gpus_per_server and the in-network
// reduction flag of `t`.
std::vector<std::vector<Vertex>> add_servers(Topology& t, const ServerFabric& f, int64_t gpus);

}  // namespace trainsim::topology::detail
