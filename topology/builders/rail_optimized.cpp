// Rail-optimized fabric (NVIDIA DGX SuperPOD): servers are grouped into scalable units; in each
// unit, GPU i of every server (through its NIC i) is cabled to rail leaf i of the unit, and every
// rail leaf is cabled to every spine. Same-rail traffic stays one leaf away; cross-rail traffic
// takes NVLink to the destination's rail first (NCCL's PXN) or a spine. The spine layer is
// modelled as `spines` switches sharing the leaves' uplink capacity, servers_per_unit x
// nic_bandwidth / oversubscription per leaf, evenly.
// `rails` < gpus_per_node puts several GPUs of a server on one rail (an NVL72 rack: GPU i of each
// 4-GPU tray on rail i). Closed forms (g GPUs, n = g / gpus_per_node servers, U units, R rails):
// leaves U R; cables = server cables + g NIC cables + U R spines (when n > 1). Bisection
// (halves of whole units): one unit (g/2) x nic; several (1/2) sum over leaves of
// min(GPUs on the leaf x nic, uplink), = (g/2) x nic / r for full units.
#include <algorithm>

#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  detail::ServerParams server;
  sim::Bandwidth nic_bandwidth;
  sim::Time link_latency;
  int64_t servers_per_unit = 32;
  int64_t spines = 8;
  double oversubscription = 1.0;
  int64_t gpus_per_tray = 0;
  int64_t rails = 0;
};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("rail_optimized", "Rail-optimized leaf/spine fabric (SuperPOD scalable units).");
    detail::add_server_fields(s);
    s.unit("nic_bandwidth", &Params::nic_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
           "Per-GPU NIC bandwidth per direction.")
        .unit("link_latency", &Params::link_latency, &sim::config::read_time, "duration", "1us",
              "Latency of one network hop (NIC-leaf, leaf-spine).")
        .integer("servers_per_unit", &Params::servers_per_unit, 1, 4096, 32,
                 "Servers per scalable unit (one rail leaf per GPU index per unit; DGX SuperPOD: 32).")
        .integer("spines", &Params::spines, 1, 4096, 8, "Spine switches (every rail leaf has one cable to each).")
        .number("oversubscription", &Params::oversubscription, 1.0, 64.0, 1.0,
                "Leaf downlink / uplink capacity ratio (1 = non-blocking).")
        .integer("gpus_per_tray", &Params::gpus_per_tray, 0, 1024, 0,
                 "GPUs per compute tray (host) inside a server that is a rack-scale NVLink domain (NVL72: 4); "
                 "must divide gpus_per_node. 0: a server is one host. Drawing and naming only.")
        .integer("rails", &Params::rails, 0, 1024, 0,
                 "Rails (rail leaves per scalable unit): GPU i of a server is on rail i mod rails. 0: one rail per "
                 "GPU of a server (a DGX's 8). An NVL72 rack has 4: the NIC of GPU i of each 4-GPU compute tray "
                 "goes to rail leaf i, 18 trays x 8 racks per leaf.");
    return s;
  }();
  return s;
}

std::vector<ParamDoc> docs() { return param_docs(schema()); }

Topology build(const sim::config::Json& j, int64_t gpus, const std::string& path) {
  Params p;
  schema().parse(j, path, p);
  const ServerFabric fabric = detail::resolve_servers(p.server, path);
  detail::check_whole_servers(gpus, fabric);
  if (p.gpus_per_tray > 0 && fabric.gpus_per_node % p.gpus_per_tray != 0)
    throw ConfigError(path + ".gpus_per_tray",
                      std::to_string(p.gpus_per_tray) + " does not divide the " + std::to_string(fabric.gpus_per_node) +
                          " GPUs of a server",
                      "use a divisor of gpus_per_node (4 for an NVL72 rack), or 0");
  Topology t;
  t.set_gpus_per_tray(p.gpus_per_tray);
  const auto servers = detail::add_servers(t, fabric, gpus);
  const auto n = static_cast<int64_t>(servers.size());
  if (p.rails > 0 && fabric.gpus_per_node % p.rails != 0)
    throw ConfigError(
        path + ".rails",
        std::to_string(p.rails) + " does not divide the " + std::to_string(fabric.gpus_per_node) + " GPUs of a server",
        "use a divisor of gpus_per_node, or 0 for one rail per GPU");
  const int64_t rails = p.rails > 0 ? p.rails : fabric.gpus_per_node;
  const int64_t per_rail = fabric.gpus_per_node / rails;  // GPUs of one server on one rail
  const int64_t units = (n + p.servers_per_unit - 1) / p.servers_per_unit;
  const bool with_spines = n > 1 && units * rails > 1;
  const sim::Bandwidth uplink =
      p.nic_bandwidth * (static_cast<double>(p.servers_per_unit * per_rail) / p.oversubscription);
  std::vector<Vertex> spine;
  for (int64_t s = 0; s < p.spines && with_spines; ++s)
    spine.push_back(t.add_node(NodeKind::kSpine, detail::numbered("spine", s)));
  double cross = 0.0;  // sum over leaves of min(down, up) in bytes/s
  for (int64_t u = 0; u < units; ++u)
    for (int64_t rail = 0; rail < rails; ++rail) {
      const Vertex leaf = t.add_node(NodeKind::kLeaf, detail::numbered("rail_leaf", u * rails + rail));
      const int64_t last = std::min((u + 1) * p.servers_per_unit, n);
      for (int64_t s = u * p.servers_per_unit; s < last; ++s)
        for (int64_t g = rail; g < fabric.gpus_per_node; g += rails)
          t.add_cable(servers[static_cast<size_t>(s)][static_cast<size_t>(g)], leaf, p.nic_bandwidth, p.link_latency,
                      "ib");
      for (const Vertex sp : spine) t.add_cable(leaf, sp, uplink / static_cast<double>(p.spines), p.link_latency, "ib");
      const double down =
          p.nic_bandwidth.bytes_per_second() * static_cast<double>((last - u * p.servers_per_unit) * per_rail);
      cross += std::min(down, uplink.bytes_per_second());
    }
  if (n > 1)
    t.set_bisection(units == 1 ? p.nic_bandwidth * static_cast<double>(gpus / 2)
                               : sim::Bandwidth::bytes_per_s(cross / 2.0));
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(rail_optimized, "rail_optimized",
                           "Rail-optimized leaf/spine fabric: GPU i of each server on rail leaf i (SuperPOD)",
                           ::trainsim::topology::docs, ::trainsim::topology::build)
