#include "topology/detail/servers.hpp"

namespace trainsim::topology::detail {

std::string numbered(const char* prefix, int64_t i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

std::vector<std::vector<Vertex>> add_servers(Topology& t, int64_t gpus, const ServerParams& p) {
  std::vector<std::vector<Vertex>> servers;
  const int64_t n = (gpus + p.gpus_per_node - 1) / p.gpus_per_node;
  for (int64_t s = 0; s < n; ++s) {
    const auto server = static_cast<int32_t>(s);
    const Vertex sw = t.add_node(NodeKind::kNvSwitch, server, numbered("nvswitch", s));
    servers.emplace_back();
    for (int64_t l = 0; l < p.gpus_per_node && s * p.gpus_per_node + l < gpus; ++l) {
      const Vertex g = t.add_node(NodeKind::kGpu, server, numbered("gpu", s * p.gpus_per_node + l));
      t.add_cable(g, sw, p.nvlink_bandwidth, p.nvlink_latency, "nvlink");
      servers.back().push_back(g);
    }
  }
  return servers;
}

void check_whole_servers(int64_t gpus, int64_t gpus_per_node, const std::string& path) {
  if (gpus % gpus_per_node != 0) {
    std::string msg = std::to_string(gpus);
    msg += " GPUs are not a whole number of ";
    msg += std::to_string(gpus_per_node);
    msg += "-GPU servers";
    throw ConfigError(path + ".gpus_per_node", msg, "use a multiple of " + std::to_string(gpus_per_node) + " GPUs");
  }
}

}  // namespace trainsim::topology::detail
