// Dragonfly+ (Shpiner et al., HOTI 2017): groups of radix-k switches, each group a two-level
// fat tree of k/2 leaves and k/2 spines (every leaf cabled to every spine of its group); a leaf
// has k/2 GPU ports, a spine k/2 global ports. Global cables join the spines of every pair of
// groups: with G groups and h = (k/2)^2 global ports per group, each pair gets m = h / (G - 1)
// cables, dealt to the spines of each group round-robin (parallel cables between two spines are
// one cable of their total bandwidth). At most h + 1 groups. Minimal routing: leaf, spine,
// global cable, spine, leaf (non-minimal Valiant routing is not modelled).
// Bisection (halves of whole groups): one group (g/2) x nic; G groups
// min((g/2) x nic, floor(G/2) ceil(G/2) m x global_bandwidth).
#include <algorithm>
#include <map>
#include <sstream>

#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  detail::ServerParams server;
  sim::Bandwidth nic_bandwidth;
  std::optional<sim::Bandwidth> global_bandwidth;
  sim::Time link_latency, global_latency;
  int64_t radix = 32;
};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("dragonfly_plus", "Dragonfly+ groups of leaves and spines.");
    detail::add_server_fields(s);
    s.unit("nic_bandwidth", &Params::nic_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
           "Per-GPU NIC bandwidth per direction, also the speed of local switch ports.")
        .custom("global_bandwidth", "bandwidth or null", std::string("null"),
                "Per-direction bandwidth of one global cable; null = nic_bandwidth.",
                [](Params& p, const sim::config::Json& j, const std::string& path) {
                  if (j.is_null())
                    p.global_bandwidth.reset();
                  else
                    p.global_bandwidth = sim::config::read_bandwidth(j, path);
                })
        .unit("link_latency", &Params::link_latency, &sim::config::read_time, "duration", "1us",
              "Latency of one hop inside a group (NIC-leaf, leaf-spine).")
        .unit("global_latency", &Params::global_latency, &sim::config::read_time, "duration", "1us",
              "Latency of one global (inter-group) cable.")
        .integer("radix", &Params::radix, 4, 1024, 32, "Ports per switch (k/2 down, k/2 up).");
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
  const int64_t half = p.radix / 2, gpn = fabric.gpus_per_node, per_leaf = half / gpn;
  if (per_leaf == 0) {
    std::ostringstream msg;
    msg << "a leaf of radix " << p.radix << " has " << half << " GPU ports, fewer than one " << gpn << "-GPU server";
    throw ConfigError(path + ".radix", msg.str(), "use a larger radix");
  }
  const int64_t servers = gpus / gpn, leaves = (servers + per_leaf - 1) / per_leaf;
  const int64_t groups = (leaves + half - 1) / half, global_ports = half * half;
  if (groups - 1 > global_ports) {
    std::ostringstream msg;
    msg << gpus << " GPUs need " << groups << " groups, but radix-" << p.radix << " switches join at most "
        << global_ports + 1;
    throw ConfigError(path + ".radix", msg.str(), "use a larger radix");
  }
  const sim::Bandwidth global = p.global_bandwidth.value_or(p.nic_bandwidth);

  Topology t;
  const auto server_gpus = detail::add_servers(t, fabric, gpus);
  std::vector<std::vector<Vertex>> spines(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) {
    auto& group = spines[static_cast<size_t>(g)];
    for (int64_t s = 0; s < half && servers > 1; ++s)
      group.push_back(t.add_node(NodeKind::kSpine, detail::numbered("spine", g, s)));
    for (int64_t l = g * half; l < std::min(leaves, (g + 1) * half); ++l) {
      const Vertex leaf = t.add_node(NodeKind::kLeaf, detail::numbered("leaf", g, l - g * half));
      for (int64_t s = l * per_leaf; s < std::min(servers, (l + 1) * per_leaf); ++s)
        for (const Vertex gpu : server_gpus[static_cast<size_t>(s)])
          t.add_cable(gpu, leaf, p.nic_bandwidth, p.link_latency, "ib");
      for (const Vertex sp : group) t.add_cable(leaf, sp, p.nic_bandwidth, p.link_latency, "ib");
    }
  }
  const int64_t per_pair = groups > 1 ? global_ports / (groups - 1) : 0;
  std::vector<int64_t> next(static_cast<size_t>(groups), 0);
  std::map<std::pair<Vertex, Vertex>, int64_t> cables;  // (spine, spine) -> parallel cables
  for (int64_t a = 0; a < groups; ++a)
    for (int64_t b = a + 1; b < groups; ++b)
      for (int64_t c = 0; c < per_pair; ++c) {
        const Vertex sa = spines[static_cast<size_t>(a)][static_cast<size_t>(next[static_cast<size_t>(a)]++ % half)];
        const Vertex sb = spines[static_cast<size_t>(b)][static_cast<size_t>(next[static_cast<size_t>(b)]++ % half)];
        ++cables[{sa, sb}];
      }
  for (const auto& [ends, count] : cables)
    t.add_cable(ends.first, ends.second, global * static_cast<double>(count), p.global_latency, "ib_global");
  if (servers > 1) {
    const sim::Bandwidth injection = p.nic_bandwidth * static_cast<double>(gpus / 2);
    const sim::Bandwidth across = global * static_cast<double>((groups / 2) * ((groups + 1) / 2) * per_pair);
    t.set_bisection(groups == 1 ? injection : std::min(injection, across));
  }
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(dragonfly_plus, "dragonfly_plus",
                           "Dragonfly+: fat-tree groups of leaves and spines, spines joined by global links",
                           ::trainsim::topology::docs, ::trainsim::topology::build)
