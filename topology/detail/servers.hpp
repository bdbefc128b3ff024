#pragma once
// Servers of `gpus_per_node` GPUs joined by one NVSwitch (a non-blocking crossbar), shared by
// the multi-node builders.

#include <vector>

#include "sim/config/schema.hpp"
#include "topology/graph.hpp"

namespace trainsim::topology::detail {

struct ServerParams {
  int64_t gpus_per_node = 8;
  sim::Bandwidth nvlink_bandwidth;  // per GPU, per direction
  sim::Time nvlink_latency;
};

// Adds the schema fields of ServerParams to a builder's schema (T has a `server` member).
template <typename T>
void add_server_fields(sim::config::Schema<T>& s) {
  s.custom("gpus_per_node", "integer in [1, 1024]", std::string("8"), "GPUs per server.",
           [](T& t, const sim::config::Json& j, const std::string& p) {
             t.server.gpus_per_node = sim::config::read_int(j, p, 1, 1024);
           })
      .custom("nvlink_bandwidth", "bandwidth", std::nullopt,
              "Per-GPU, per-direction NVLink bandwidth into the NVSwitch.",
              [](T& t, const sim::config::Json& j, const std::string& p) {
                t.server.nvlink_bandwidth = sim::config::read_bandwidth(j, p);
              })
      .custom("nvlink_latency", "duration", std::string("\"1us\""), "Latency of a GPU-NVSwitch hop.",
              [](T& t, const sim::config::Json& j, const std::string& p) {
                t.server.nvlink_latency = sim::config::read_time(j, p);
              });
}

// Adds ceil(gpus / gpus_per_node) servers; returns each server's GPU vertices (GPU g is on
// server g / gpus_per_node, matching Megatron's rank order).
std::vector<std::vector<Vertex>> add_servers(Topology& t, int64_t gpus, const ServerParams& p);

// "prefix" + i without GCC 12's -Wrestrict false positive on string concatenation chains.
std::string numbered(const char* prefix, int64_t i);

// Throws when `gpus` is not a whole number of servers.
void check_whole_servers(int64_t gpus, int64_t gpus_per_node, const std::string& path);

}  // namespace trainsim::topology::detail
