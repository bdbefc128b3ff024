// A PCIe server without NVLink: GPUs behind PCIe switches, switches behind the CPUs' root
// complexes, CPUs joined by their socket interconnect (UPI / Infinity Fabric). GPU-to-GPU
// traffic under one switch stays there (P2P); across switches it crosses the root complex, and
// across sockets the socket link.
// Closed forms (s = gpus_per_switch, w = switches_per_cpu, c = cpus): GPUs s w c; nodes
// s w c + w c + c; cables s w c + w c + c (c - 1) / 2.
#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  int64_t gpus_per_switch = 2;
  int64_t switches_per_cpu = 2;
  int64_t cpus = 2;
  sim::Bandwidth pcie_bandwidth;
  std::optional<sim::Bandwidth> uplink_bandwidth;
  sim::Bandwidth cpu_interconnect_bandwidth;
  sim::Time pcie_latency;
};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("pcie_tree", "GPUs behind PCIe switches and CPU root complexes.");
    s.integer("gpus_per_switch", &Params::gpus_per_switch, 1, 64, 2, "GPUs under each PCIe switch.")
        .integer("switches_per_cpu", &Params::switches_per_cpu, 1, 64, 2, "PCIe switches under each CPU.")
        .integer("cpus", &Params::cpus, 1, 8, 2, "CPU sockets (root complexes), fully connected to each other.")
        .unit("pcie_bandwidth", &Params::pcie_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
              "Per-GPU, per-direction PCIe bandwidth (Gen4 x16: 32GBps raw, about 25GBps achieved).")
        .custom("uplink_bandwidth", "bandwidth or null", std::string("null"),
                "Per-direction bandwidth of a switch's uplink to its CPU; null = pcie_bandwidth.",
                [](Params& p, const sim::config::Json& j, const std::string& path) {
                  if (j.is_null())
                    p.uplink_bandwidth.reset();
                  else
                    p.uplink_bandwidth = sim::config::read_bandwidth(j, path);
                })
        .unit("cpu_interconnect_bandwidth", &Params::cpu_interconnect_bandwidth, &sim::config::read_bandwidth,
              "bandwidth", "62.4GBps",
              "Per-direction bandwidth between two sockets (3 UPI links at 10.4 GT/s: 62.4GBps).")
        .unit("pcie_latency", &Params::pcie_latency, &sim::config::read_time, "duration", "1us",
              "Latency of one hop (GPU-switch, switch-CPU, CPU-CPU).");
    return s;
  }();
  return s;
}

std::vector<ParamDoc> docs() { return param_docs(schema()); }

ServerFabric server(const sim::config::Json& j, const std::string& path) {
  Params p;
  schema().parse(j, path, p);
  ServerFabric f;
  f.gpus_per_node = p.gpus_per_switch * p.switches_per_cpu * p.cpus;
  f.shape_path = path + ".gpus_per_switch";
  f.add = [p](Topology& t, int32_t server, int64_t first_gpu, int64_t gpus) {
    const sim::Bandwidth uplink = p.uplink_bandwidth.value_or(p.pcie_bandwidth);
    std::vector<Vertex> out, cpus;
    for (int64_t c = 0; c < p.cpus; ++c) {
      cpus.push_back(t.add_node(NodeKind::kCpu, detail::numbered("cpu", server, c), server, static_cast<int32_t>(c)));
      for (size_t o = 0; o + 1 < cpus.size(); ++o)
        t.add_cable(cpus[o], cpus.back(), p.cpu_interconnect_bandwidth, p.pcie_latency, "upi");
    }
    for (int64_t c = 0; c < p.cpus; ++c)
      for (int64_t w = 0; w < p.switches_per_cpu; ++w) {
        const int64_t sw_index = c * p.switches_per_cpu + w;
        if (sw_index * p.gpus_per_switch >= gpus) break;
        const Vertex sw = t.add_node(NodeKind::kPcieSwitch, detail::numbered("pcie_switch", server, sw_index), server,
                                     static_cast<int32_t>(sw_index));
        t.add_cable(sw, cpus[static_cast<size_t>(c)], uplink, p.pcie_latency, "pcie");
        for (int64_t g = 0; g < p.gpus_per_switch; ++g) {
          const int64_t local = sw_index * p.gpus_per_switch + g;
          if (local >= gpus) break;
          out.push_back(t.add_node(NodeKind::kGpu, detail::numbered("gpu", first_gpu + local), server,
                                   static_cast<int32_t>(local)));
          t.add_cable(out.back(), sw, p.pcie_bandwidth, p.pcie_latency, "pcie");
        }
      }
    return out;
  };
  return f;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_NODE_TOPOLOGY(pcie_tree, "pcie_tree",
                                "PCIe server: GPUs behind PCIe switches and CPU root complexes (no NVLink)",
                                ::trainsim::topology::docs, ::trainsim::topology::server)
