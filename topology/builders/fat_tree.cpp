// Fat tree (folded Clos) of radix-k switches, two or three tiers, servers under leaves. Each GPU
// has one NIC port of `nic_bandwidth` on its server's leaf (a plain fat tree: every GPU of a
// server on the same leaf; see rail_optimized for rails). A leaf's k ports split into d down
// and u = k - d up with d / u = the oversubscription ratio r (d = round(k r / (r + 1))).
//   2 tiers: u spines, each cabled once to every leaf; at most k leaves.
//   3 tiers: pods of k/2 leaves and u aggregation switches (every leaf of a pod cabled to every
//            aggregation switch of the pod); aggregation switch j of every pod cabled to each of
//            the k/2 core switches of core group j; at most k pods.
// Every switch-switch cable carries one port of `nic_bandwidth`.
// Bisection (halves of whole leaves or pods): with one leaf (g/2) x nic_bandwidth; otherwise
// (1/2) sum over leaves of min(GPUs on the leaf, u) x nic_bandwidth, = (g/2) x nic / r when the
// leaves are full. A single server has no closed form (max-flow fallback).
#include <algorithm>
#include <sstream>

#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  detail::ServerParams server;
  sim::Bandwidth nic_bandwidth;
  sim::Time link_latency;
  int64_t tiers = 2;
  int64_t radix = 64;
  double oversubscription = 1.0;
};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("fat_tree", "Two- or three-tier fat tree of radix-k switches.");
    detail::add_server_fields(s);
    s.unit("nic_bandwidth", &Params::nic_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
           "Per-GPU NIC bandwidth per direction, also the speed of every switch port.")
        .unit("link_latency", &Params::link_latency, &sim::config::read_time, "duration", "1us",
              "Latency of one network hop (NIC-leaf, leaf-spine, ...).")
        .integer("tiers", &Params::tiers, 2, 3, 2, "Switch tiers: 2 (leaf/spine) or 3 (leaf/aggregation/core).")
        .integer("radix", &Params::radix, 4, 1024, 64, "Ports per switch (Quantum-2 QM9700: 64 x 400 Gb/s).")
        .number("oversubscription", &Params::oversubscription, 1.0, 64.0, 1.0,
                "Leaf down/up port ratio (1 = non-blocking).");
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
  const int64_t k = p.radix, gpn = fabric.gpus_per_node;
  const int64_t down = std::clamp<int64_t>(
      std::llround(static_cast<double>(k) * p.oversubscription / (p.oversubscription + 1.0)), 1, k - 1);
  const int64_t up = k - down, per_leaf = down / gpn;
  if (per_leaf == 0) {
    std::ostringstream msg;
    msg << "a leaf of " << k << " ports at " << p.oversubscription << ":1 has " << down << " GPU ports, fewer than one "
        << gpn << "-GPU server";
    throw ConfigError(path + ".radix", msg.str(), "use a larger radix");
  }
  const int64_t servers = gpus / gpn, leaves = (servers + per_leaf - 1) / per_leaf;
  const int64_t leaves_per_pod = k / 2, pods = (leaves + leaves_per_pod - 1) / leaves_per_pod;
  if ((p.tiers == 2 && leaves > k) || (p.tiers == 3 && pods > k)) {
    std::ostringstream msg, hint;
    const int64_t max_gpus = (p.tiers == 2 ? k : k * leaves_per_pod) * per_leaf * gpn;
    msg << gpus << " GPUs do not fit a " << p.tiers << "-tier fat tree of radix-" << k << " switches (at most "
        << max_gpus << " GPUs)";
    hint << (p.tiers == 2 ? "use \"tiers\": 3 or a larger radix" : "use a larger radix");
    throw ConfigError(path + (p.tiers == 2 ? ".tiers" : ".radix"), msg.str(), hint.str());
  }

  Topology t;
  const auto server_gpus = detail::add_servers(t, fabric, gpus);
  const sim::Bandwidth bw = p.nic_bandwidth;
  std::vector<Vertex> leaf;
  double cross = 0.0;  // sum over leaves of min(GPUs on the leaf, u)
  for (int64_t l = 0; l < leaves; ++l) {
    leaf.push_back(t.add_node(NodeKind::kLeaf, detail::numbered("leaf", l)));
    int64_t on_leaf = 0;
    for (int64_t s = l * per_leaf; s < std::min(servers, (l + 1) * per_leaf); ++s)
      for (const Vertex g : server_gpus[static_cast<size_t>(s)]) {
        t.add_cable(g, leaf.back(), bw, p.link_latency, "ib");
        ++on_leaf;
      }
    cross += static_cast<double>(std::min(on_leaf, up));
  }
  if (leaves > 1 && p.tiers == 2) {
    for (int64_t s = 0; s < up; ++s) {
      const Vertex spine = t.add_node(NodeKind::kSpine, detail::numbered("spine", s));
      for (const Vertex l : leaf) t.add_cable(l, spine, bw, p.link_latency, "ib");
    }
  } else if (leaves > 1) {
    std::vector<std::vector<Vertex>> agg(static_cast<size_t>(pods));
    for (int64_t pod = 0; pod < pods; ++pod)
      for (int64_t a = 0; a < up; ++a) {
        agg[static_cast<size_t>(pod)].push_back(t.add_node(NodeKind::kSpine, detail::numbered("agg", pod, a)));
        for (int64_t l = pod * leaves_per_pod; l < std::min(leaves, (pod + 1) * leaves_per_pod); ++l)
          t.add_cable(leaf[static_cast<size_t>(l)], agg[static_cast<size_t>(pod)].back(), bw, p.link_latency, "ib");
      }
    if (pods > 1)
      for (int64_t a = 0; a < up; ++a)
        for (int64_t c = 0; c < k / 2; ++c) {
          const Vertex core = t.add_node(NodeKind::kCore, detail::numbered("core", a, c));
          for (int64_t pod = 0; pod < pods; ++pod)
            t.add_cable(agg[static_cast<size_t>(pod)][static_cast<size_t>(a)], core, bw, p.link_latency, "ib");
        }
  }
  if (servers > 1) t.set_bisection(leaves == 1 ? bw * static_cast<double>(gpus / 2) : bw * (cross / 2.0));
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(fat_tree, "fat_tree",
                           "Two- or three-tier fat tree (Clos) of radix-k switches with leaf oversubscription",
                           ::trainsim::topology::docs, ::trainsim::topology::build)
