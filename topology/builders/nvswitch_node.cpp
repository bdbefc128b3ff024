// One server of GPUs on an NVSwitch crossbar (DGX/HGX A100, H100, H200, B200). The NVSwitch chips
// of a baseboard (6 on A100, 4 on H100/H200) are non-blocking together, so they are one logical
// switch here: each GPU has one cable of its full NVLink bandwidth to it. `sharp` marks NVLink
// SHARP (NVLS, third-generation NVSwitch: H100, H200) for in-network reductions.
// Closed forms: nodes = g + 1, cables = g, GPU diameter 2, bisection floor(g/2) x nvlink_bandwidth.
#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  int64_t gpus_per_node = 8;
  sim::Bandwidth nvlink_bandwidth;
  sim::Time nvlink_latency;
  bool sharp = false;
};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("nvswitch_node", "One server of GPUs on an NVSwitch crossbar.");
    s.integer("gpus_per_node", &Params::gpus_per_node, 1, 1024, 8, "GPUs per server.")
        .unit("nvlink_bandwidth", &Params::nvlink_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
              "Per-GPU, per-direction NVLink bandwidth into the NVSwitch (H100: 450GBps).")
        .unit("nvlink_latency", &Params::nvlink_latency, &sim::config::read_time, "duration", "1us",
              "Latency of a GPU-NVSwitch hop.")
        .boolean("sharp", &Params::sharp, false, "NVLink SHARP (NVLS) in-network reduction (H100, H200).");
    return s;
  }();
  return s;
}

std::vector<ParamDoc> docs() { return param_docs(schema()); }

ServerFabric server(const sim::config::Json& j, const std::string& path) {
  Params p;
  schema().parse(j, path, p);
  ServerFabric f;
  f.gpus_per_node = p.gpus_per_node;
  f.shape_path = path + ".gpus_per_node";
  f.in_network_reduction = p.sharp;
  f.add = [p](Topology& t, int32_t server, int64_t first_gpu, int64_t gpus) {
    const Vertex sw = t.add_node(NodeKind::kNvSwitch, detail::numbered("nvswitch", server), server, 0);
    std::vector<Vertex> out;
    for (int64_t l = 0; l < gpus; ++l) {
      out.push_back(
          t.add_node(NodeKind::kGpu, detail::numbered("gpu", first_gpu + l), server, static_cast<int32_t>(l)));
      t.add_cable(out.back(), sw, p.nvlink_bandwidth, p.nvlink_latency, "nvlink");
    }
    return out;
  };
  return f;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_NODE_TOPOLOGY(nvswitch_node, "nvswitch_node",
                                "One server of GPUs on an NVSwitch crossbar (DGX/HGX A100, H100, H200), optional "
                                "NVLink SHARP",
                                ::trainsim::topology::docs, ::trainsim::topology::server)
