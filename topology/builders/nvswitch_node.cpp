// One server: GPUs on an NVSwitch crossbar (DGX/HGX A100, H100, H200). Bisection: half the GPUs'
// NVLink bandwidth.
#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  detail::ServerParams server;
};

Topology build(const sim::config::Json& j, int64_t gpus, const std::string& path) {
  static const sim::config::Schema<Params> schema = [] {
    sim::config::Schema<Params> s("nvswitch_node", "One server of GPUs on an NVSwitch crossbar.");
    detail::add_server_fields(s);
    return s;
  }();
  Params p;
  schema.parse(j, path, p);
  if (gpus > p.server.gpus_per_node) {
    std::string msg = std::to_string(gpus);
    msg += " GPUs do not fit one NVSwitch node of ";
    msg += std::to_string(p.server.gpus_per_node);
    throw ConfigError(path + ".gpus_per_node", msg, "use fat_tree or rail_optimized for several nodes");
  }
  Topology t;
  detail::add_servers(t, gpus, p.server);
  t.set_bisection(p.server.nvlink_bandwidth * static_cast<double>(gpus / 2));
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(nvswitch_node, "nvswitch_node", "One server of GPUs on an NVSwitch crossbar (DGX/HGX)",
                           ::trainsim::topology::build)
