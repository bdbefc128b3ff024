// FlowExecutor::orbit_routes: rank rotations as orbit constraints (RankRotation::orbits).
//
// A representative transfer's images run the same hops on other links: pairing its route with
// each image's route hop by hop joins every link with its images into an orbit (union-find, the
// lowest link id as the orbit's canonical link). Under the symmetry the images of a flow run
// exactly when it does, so at every instant each link of an orbit carries what the
// representatives carry on the whole orbit, spread over its links: a representative crossing an
// orbit of L links with its I images (I / L of them on each link, more than one where images meet,
// as on a spine) uses I / L of the canonical link per unit of its rate. An image whose route is
// longer or shorter (its servers under different leaves) pairs only its first and last links
// with the representative's: switch links only images cross are left unconstrained, exact on a
// non-blocking fabric. Representatives of
// different steps or phases then share a link only while they both run, which counted images
// (rotated_routes) cannot tell.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "models/collectives/flow_executor.hpp"
#include "sim/error.hpp"

namespace trainsim::models::collectives {

void FlowExecutor::orbit_routes(const Compiled& c, const std::vector<int32_t>& gpus, uint32_t copies) {
  const topology::Topology& t = router_->topology();
  const Copies& cp = *copies_of_id_[copies];
  const auto n = static_cast<uint64_t>(t.gpu_count());
  const auto flow_id = [n](int64_t s, int64_t d) { return static_cast<uint64_t>(s) * n + static_cast<uint64_t>(d); };
  // Distinct representative pairs, in item order (deterministic).
  std::vector<std::pair<int32_t, int32_t>> pairs;
  std::unordered_map<uint64_t, uint32_t> seen;
  for (const Compiled::Item& it : c.items) {
    if (is_switch(it.src) || is_switch(it.dst)) continue;
    const int32_t src = gpus[static_cast<size_t>(it.src)], dst = gpus[static_cast<size_t>(it.dst)];
    if (routes_.contains(std::make_tuple(src, dst, copies))) continue;
    if (seen.try_emplace(flow_id(src, dst), static_cast<uint32_t>(pairs.size())).second) pairs.emplace_back(src, dst);
  }
  // Union-find over link ids (parents of untouched links are themselves), roots the lowest id.
  std::unordered_map<sim::flow::LinkId, sim::flow::LinkId> parent;
  const auto find = [&](sim::flow::LinkId l) {
    sim::flow::LinkId root = l;
    for (auto it = parent.find(root); it != parent.end() && it->second != root; it = parent.find(root))
      root = it->second;
    for (auto it = parent.find(l); it != parent.end() && it->second != root; it = parent.find(l)) {
      const sim::flow::LinkId next = it->second;
      it->second = root;
      l = next;
    }
    return root;
  };
  const auto unite = [&](sim::flow::LinkId a, sim::flow::LinkId b) {
    parent.try_emplace(a, a);
    parent.try_emplace(b, b);
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  std::vector<std::vector<topology::Route>> own(pairs.size());
  std::vector<topology::Route> image;
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto [src, dst] = pairs[k];
    router_->routes(static_cast<uint32_t>(src), static_cast<uint32_t>(dst), flow_id(src, dst), own[k]);
    ++stats_.routes_computed;
    for (const topology::Route& r : own[k])
      for (const auto l : r.links) unite(l, l);
    for (size_t j = 1; j < cp.count(); ++j) {
      const int64_t s = cp.image(j, src), d = cp.image(j, dst);
      image.clear();
      router_->routes(static_cast<uint32_t>(s), static_cast<uint32_t>(d), flow_id(s, d), image);
      ++stats_.routes_computed;
      TRAINSIM_ASSERT(image.size() == own[k].size(), "an image of a transfer has ", image.size(), " routes, not ",
                      own[k].size(), ": the fabric is not symmetric under the rotation");
      for (size_t r = 0; r < image.size(); ++r) {
        const auto& a = own[k][r].links;
        const auto& b = image[r].links;
        if (a.size() == b.size()) {
          for (size_t h = 0; h < b.size(); ++h) unite(a[h], b[h]);
        } else if (!a.empty() && !b.empty()) {
          // A route through more or fewer switches (an image whose servers sit under different
          // leaves): only its first and last links, the endpoints' own, pair with the
          // representative's; the switch links only images cross are not constrained.
          unite(a.front(), b.front());
          unite(a.back(), b.back());
        }
      }
    }
  }
  // Orbit sizes: the distinct links of each root.
  std::unordered_map<sim::flow::LinkId, double> size;
  std::vector<sim::flow::LinkId> members;
  members.reserve(parent.size());
  for (const auto& [l, p] : parent) members.push_back(l);
  for (const auto l : members) size[find(l)] += 1.0;
  const auto images = static_cast<double>(cp.count());
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto [src, dst] = pairs[k];
    Routes out;
    for (const topology::Route& r : own[k]) {
      SharedRoute sr;
      sr.cross_node = t.server_of(static_cast<size_t>(src)) != t.server_of(static_cast<size_t>(dst));
      for (const auto l : r.links) {
        const sim::flow::LinkId root = find(l);
        sr.latency += t.link(l).latency;
        sr.links.push_back(root);
        sr.usage.push_back(images / size[root]);
      }
      sr.fraction = r.fraction;
      out.push_back(std::move(sr));
    }
    routes_[std::make_tuple(src, dst, copies)] = std::move(out);
  }
}

}  // namespace trainsim::models::collectives
