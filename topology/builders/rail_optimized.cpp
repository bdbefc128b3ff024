// Rail-optimized fabric (NVIDIA SuperPOD): in each scalable unit, GPU i of every server hangs
// off rail leaf i; every rail leaf is cabled to every spine. Same-rail traffic stays one leaf
// hop away; cross-rail traffic goes through a spine or first over NVLink to the right rail.
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
};

Topology build(const sim::config::Json& j, int64_t gpus, const std::string& path) {
  static const sim::config::Schema<Params> schema = [] {
    sim::config::Schema<Params> s("rail_optimized", "Rail-optimized leaf/spine fabric (SuperPOD scalable units).");
    detail::add_server_fields(s);
    s.unit("nic_bandwidth", &Params::nic_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
           "Per-GPU NIC bandwidth per direction.")
        .unit("link_latency", &Params::link_latency, &sim::config::read_time, "duration", std::string("1us"),
              "Latency of one network hop (NIC-leaf, leaf-spine).")
        .integer("servers_per_unit", &Params::servers_per_unit, 1, 4096, 32,
                 "Servers per scalable unit (one rail leaf per GPU index per unit; DGX SuperPOD: 32).")
        .integer("spines", &Params::spines, 1, 4096, 8, "Spine switches (every rail leaf has one cable to each).")
        .number("oversubscription", &Params::oversubscription, 1.0, 64.0, 1.0,
                "Leaf downlink / uplink capacity ratio (1 = non-blocking).");
    return s;
  }();
  Params p;
  schema.parse(j, path, p);
  detail::check_whole_servers(gpus, p.server.gpus_per_node, path);
  Topology t;
  const auto servers = detail::add_servers(t, gpus, p.server);
  const int64_t units = (static_cast<int64_t>(servers.size()) + p.servers_per_unit - 1) / p.servers_per_unit;
  const bool multi_leaf = servers.size() > 1;
  std::vector<Vertex> spine;
  for (int64_t s = 0; s < p.spines && (units > 1 || p.server.gpus_per_node > 1) && multi_leaf; ++s)
    spine.push_back(t.add_node(NodeKind::kSpine, -1, detail::numbered("spine", s)));
  const sim::Bandwidth uplink = p.nic_bandwidth * (static_cast<double>(p.servers_per_unit) /
                                                   (p.oversubscription * static_cast<double>(p.spines)));
  for (int64_t u = 0; u < units; ++u)
    for (int64_t rail = 0; rail < p.server.gpus_per_node; ++rail) {
      const Vertex leaf =
          t.add_node(NodeKind::kLeaf, -1, detail::numbered("rail_leaf", u * p.server.gpus_per_node + rail));
      for (int64_t s = u * p.servers_per_unit;
           s < std::min<int64_t>((u + 1) * p.servers_per_unit, static_cast<int64_t>(servers.size())); ++s)
        t.add_cable(servers[static_cast<size_t>(s)][static_cast<size_t>(rail)], leaf, p.nic_bandwidth, p.link_latency,
                    "ib");
      for (const Vertex sp : spine) t.add_cable(leaf, sp, uplink, p.link_latency, "ib");
    }
  t.set_bisection(multi_leaf ? p.nic_bandwidth * (static_cast<double>(gpus) / 2.0 / p.oversubscription)
                             : p.server.nvlink_bandwidth * static_cast<double>(gpus / 2));
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(rail_optimized, "rail_optimized",
                           "Rail-optimized leaf/spine fabric: GPU i of each server on rail leaf i (SuperPOD)",
                           ::trainsim::topology::build)
