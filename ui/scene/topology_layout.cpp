#include "ui/scene/topology_layout.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "ui/scene/rack_layout.hpp"

namespace trainsim::ui {

using topology::NodeKind;

namespace {

// Tier (0 = bottom) of a node kind in a switched fabric.
int tier(NodeKind k) {
  switch (k) {
    case NodeKind::kGpu: return 0;
    case NodeKind::kCpu:
    case NodeKind::kNvSwitch:
    case NodeKind::kPcieSwitch: return 1;
    case NodeKind::kNic: return 2;
    case NodeKind::kLeaf: return 3;
    case NodeKind::kRouter:
    case NodeKind::kSpine: return 4;
    case NodeKind::kCore: return 6;
  }
  return 0;
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

using SortKey = std::tuple<int32_t, int32_t, size_t>;  // (server, local, graph node) of a drawn node's first member

// Lays `nodes` out in tiers, spread evenly along x; used tiers only, the top one at y = top and the
// bottom one at y = bottom (a single tier at y = single).
void place_tiers(TopologyLayout& out, const std::vector<int>& node_tier, const std::vector<SortKey>& sort_key,
                 const std::vector<uint32_t>& nodes, float top, float bottom, float single) {
  std::vector<int> used;
  for (uint32_t i : nodes) used.push_back(node_tier[i]);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  for (size_t level = 0; level < used.size(); ++level) {
    std::vector<uint32_t> members;
    for (uint32_t i : nodes)
      if (node_tier[i] == used[level]) members.push_back(i);
    std::stable_sort(members.begin(), members.end(), [&](uint32_t a, uint32_t b) { return sort_key[a] < sort_key[b]; });
    const float y = used.size() == 1
                        ? single
                        : bottom - (bottom - top) * static_cast<float>(level) / static_cast<float>(used.size() - 1);
    for (size_t k = 0; k < members.size(); ++k) {
      out.nodes[members[k]].x =
          static_cast<float>((static_cast<double>(k) + 0.5) / static_cast<double>(members.size()));
      out.nodes[members[k]].y = y;
    }
  }
}

// GPUs on a grid: x the first dimension, y the second, further dimensions as planes side by side;
// anything else (hosts, switches of a hybrid) in a row above.
void place_torus(const topology::Topology& t, TopologyLayout& out, const std::vector<uint32_t>& drawn) {
  const auto& shape = t.torus_shape();
  const int64_t nx = shape[0], ny = shape.size() > 1 ? shape[1] : 1;
  int64_t planes = 1;
  for (size_t d = 2; d < shape.size(); ++d) planes *= shape[d];
  const double cols = static_cast<double>(nx * planes) + static_cast<double>(planes - 1);
  for (size_t g = 0; g < t.gpu_count(); ++g) {
    const auto i = static_cast<int64_t>(g);
    const int64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    TopoNode& node = out.nodes[drawn[t.gpu_node(g)]];
    node.x = static_cast<float>((static_cast<double>(z * (nx + 1) + x) + 0.5) / std::max(1.0, cols));
    node.y = static_cast<float>((static_cast<double>(y) + 0.5) / static_cast<double>(ny));
  }
  std::vector<uint32_t> others;
  for (uint32_t i = 0; i < out.nodes.size(); ++i)
    if (out.nodes[i].kind != NodeKind::kGpu) others.push_back(i);
  for (size_t k = 0; k < others.size(); ++k) {
    out.nodes[others[k]].x = static_cast<float>((static_cast<double>(k) + 0.5) / static_cast<double>(others.size()));
    out.nodes[others[k]].y = 0.02f;
  }
}

// Rack-scale servers (rack_layout.hpp) along the bottom, the fabric's tiers above them.
void place_racks(const topology::Topology& t, TopologyLayout& out, const std::vector<int>& node_tier,
                 const std::vector<SortKey>& sort_key, int64_t used_gpus) {
  int32_t servers = 0;
  std::vector<uint32_t> fabric;
  for (uint32_t i = 0; i < out.nodes.size(); ++i) {
    const int32_t server = std::get<0>(sort_key[i]);
    if (server < 0)
      fabric.push_back(i);
    else
      servers = std::max(servers, server + 1);
  }
  const int64_t per_rack = t.gpus_per_server(), per_tray = t.gpus_per_tray();
  RackShape shape;
  shape.racks = servers;
  shape.gpus_per_rack = per_rack;
  shape.gpus_per_tray = per_tray;
  shape.used_gpus = used_gpus;
  shape.top = fabric.empty() ? 0.04f : 0.3f;
  out.racks = lay_out_racks(shape);
  place_tiers(out, node_tier, sort_key, fabric, 0.05f, shape.top - 0.08f, shape.top - 0.08f);
  std::vector<std::vector<uint32_t>> in_rack(static_cast<size_t>(servers));  // switches, CPUs, NICs of each rack
  for (uint32_t i = 0; i < out.nodes.size(); ++i) {
    const int32_t server = std::get<0>(sort_key[i]);
    if (server < 0) continue;
    TopoNode& node = out.nodes[i];
    const TopoRack& rack = out.racks[static_cast<size_t>(server)];
    node.rack = server;
    if (out.collapsed) {  // the whole rack as one node, at the top of its box
      node.x = 0.5f * (rack.box.x0 + rack.box.x1);
      node.y = rack.box.y0;
      node.used = rack.used_gpus > 0;
    } else if (node.kind == NodeKind::kGpu) {
      const int32_t local = std::get<1>(sort_key[i]);
      std::tie(node.x, node.y) = rack_gpu_position(rack, local, per_tray);
      node.tray = static_cast<int32_t>(local / std::max<int64_t>(1, per_tray));
      node.used = used_gpus <= 0 || server * per_rack + local < used_gpus;
    } else {
      in_rack[static_cast<size_t>(server)].push_back(i);
    }
  }
  for (size_t r = 0; r < in_rack.size(); ++r)
    for (size_t k = 0; k < in_rack[r].size(); ++k)
      std::tie(out.nodes[in_rack[r][k]].x, out.nodes[in_rack[r][k]].y) =
          rack_switch_position(out.racks[r], k, in_rack[r].size());
}

}  // namespace

TopologyLayout layout_topology(const topology::Topology& t, size_t max_gpus, int64_t used_gpus, size_t max_rack_gpus) {
  TopologyLayout out;
  const size_t n = t.node_count();
  const bool torus = !t.torus_shape().empty();
  const bool racks = !torus && t.gpus_per_tray() < t.gpus_per_server();
  out.collapsed = !torus && t.gpu_count() > (racks ? max_rack_gpus : max_gpus);

  // Drawn node of each graph node.
  std::vector<uint32_t> drawn(n);
  std::map<int32_t, uint32_t> server_node;
  std::vector<int> node_tier;
  std::vector<SortKey> sort_key;
  for (size_t v = 0; v < n; ++v) {
    const topology::NodeProps& p = t.node(v);
    if (out.collapsed && p.server >= 0) {
      auto [it, fresh] = server_node.emplace(p.server, static_cast<uint32_t>(out.nodes.size()));
      if (fresh) {
        std::ostringstream name;
        name << (racks ? "rack " : "server") << p.server;
        out.nodes.push_back({name.str(), NodeKind::kGpu, 0, 0, 0});
        node_tier.push_back(0);
        sort_key.emplace_back(p.server, 0, v);
      }
      drawn[v] = it->second;
      if (p.kind == NodeKind::kGpu) ++out.nodes[it->second].members;
      continue;
    }
    drawn[v] = static_cast<uint32_t>(out.nodes.size());
    out.nodes.push_back({p.name, p.kind, 0, 0, 1});
    // Fat trees name their middle tier "agg" (kind spine): it sits under the spines.
    node_tier.push_back(tier(p.kind) + (p.kind == NodeKind::kSpine && !starts_with(p.name, "agg") ? 1 : 0));
    sort_key.emplace_back(p.server, p.local, v);
  }

  if (torus) {
    place_torus(t, out, drawn);
  } else if (racks) {
    place_racks(t, out, node_tier, sort_key, used_gpus);
  } else {
    std::vector<uint32_t> all(out.nodes.size());
    for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    place_tiers(out, node_tier, sort_key, all, 0.06f, 0.94f, 0.5f);
  }

  // Drawn links: cables between the same two drawn nodes, of one kind, merge.
  out.link_of.assign(t.link_count(), TopologyLayout::kInside);
  out.forward.assign(t.link_count(), 1);
  std::map<std::tuple<uint32_t, uint32_t, std::string>, uint32_t> by_pair;
  for (topology::LinkId l = 0; l < t.link_count(); ++l) {
    const uint32_t a = drawn[t.link_src(l)], b = drawn[t.link_dst(l)];
    if (a == b) continue;
    const auto key = std::make_tuple(std::min(a, b), std::max(a, b), t.link(l).kind);
    auto [it, fresh] = by_pair.emplace(key, static_cast<uint32_t>(out.links.size()));
    if (fresh) {
      TopoLink link;
      link.a = std::min(a, b);
      link.b = std::max(a, b);
      link.kind = t.link(l).kind;
      link.capacity_bps = 0;
      link.cables = 0;
      out.links.push_back(std::move(link));
    }
    out.link_of[l] = it->second;
    out.forward[l] = a < b ? 1 : 0;
    // Each cable is two directed links: count it once, from its even (first) direction.
    if (l % 2 == 0) {
      TopoLink& link = out.links[it->second];
      link.capacity_bps += t.capacity(l).bytes_per_second();
      ++link.cables;
    }
  }
  return out;
}

}  // namespace trainsim::ui
