// Two-tier fat tree (Clos): NVSwitch servers, every GPU's NIC on the leaf of its server group,
// every leaf cabled to every spine. Oversubscription r divides each leaf's uplink capacity by r,
// so the bisection is (GPUs / 2) x NIC bandwidth / r once there are two or more leaves.
#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  detail::ServerParams server;
  sim::Bandwidth nic_bandwidth;
  sim::Time link_latency;
  int64_t servers_per_leaf = 4;
  int64_t spines = 8;
  double oversubscription = 1.0;
};

Topology build(const sim::config::Json& j, int64_t gpus, const std::string& path) {
  static const sim::config::Schema<Params> schema = [] {
    sim::config::Schema<Params> s("fat_tree", "Two-tier leaf/spine fat tree of NVSwitch servers.");
    detail::add_server_fields(s);
    s.unit("nic_bandwidth", &Params::nic_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
           "Per-GPU NIC bandwidth per direction.")
        .unit("link_latency", &Params::link_latency, &sim::config::read_time, "duration", std::string("1us"),
              "Latency of one network hop (NIC-leaf, leaf-spine).")
        .integer("servers_per_leaf", &Params::servers_per_leaf, 1, 4096, 4, "Servers under one leaf switch.")
        .integer("spines", &Params::spines, 1, 4096, 8, "Spine switches (every leaf has one cable to each).")
        .number("oversubscription", &Params::oversubscription, 1.0, 64.0, 1.0,
                "Leaf downlink / uplink capacity ratio (1 = non-blocking).");
    return s;
  }();
  Params p;
  schema.parse(j, path, p);
  detail::check_whole_servers(gpus, p.server.gpus_per_node, path);
  Topology t;
  const auto servers = detail::add_servers(t, gpus, p.server);
  const int64_t leaves = (static_cast<int64_t>(servers.size()) + p.servers_per_leaf - 1) / p.servers_per_leaf;
  std::vector<Vertex> spine;
  for (int64_t s = 0; s < p.spines && leaves > 1; ++s)
    spine.push_back(t.add_node(NodeKind::kSpine, -1, detail::numbered("spine", s)));
  const double down_per_leaf = static_cast<double>(p.servers_per_leaf * p.server.gpus_per_node);
  const sim::Bandwidth uplink =
      p.nic_bandwidth * (down_per_leaf / (p.oversubscription * static_cast<double>(p.spines)));
  for (int64_t l = 0; l < leaves; ++l) {
    const Vertex leaf = t.add_node(NodeKind::kLeaf, -1, detail::numbered("leaf", l));
    for (int64_t s = l * p.servers_per_leaf;
         s < std::min<int64_t>((l + 1) * p.servers_per_leaf, static_cast<int64_t>(servers.size())); ++s)
      for (const Vertex g : servers[static_cast<size_t>(s)])
        t.add_cable(g, leaf, p.nic_bandwidth, p.link_latency, "ib");
    for (const Vertex sp : spine) t.add_cable(leaf, sp, uplink, p.link_latency, "ib");
  }
  t.set_bisection(leaves > 1 ? p.nic_bandwidth * (static_cast<double>(gpus) / 2.0 / p.oversubscription)
                             : p.server.nvlink_bandwidth * static_cast<double>(gpus / 2));
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(fat_tree, "fat_tree",
                           "Two-tier leaf/spine fat tree of NVSwitch servers, optional oversubscription",
                           ::trainsim::topology::build)
