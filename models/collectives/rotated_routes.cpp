// FlowExecutor's rank rotations as counted images (RankRotation without orbits): every image of
// every item counted on the links it crosses (rotated_routes), and the switch hops' images counted
// per plan step (switch_usage). Orbit constraints are orbit_routes.cpp.
#include <map>

#include "models/collectives/flow_executor.hpp"

namespace trainsim::models::collectives {

void FlowExecutor::rotated_routes(const Compiled& c, const std::vector<int32_t>& gpus, uint32_t copies) {
  // Rank rotations map one item's link onto another item's (the images of rank 0's transfers are
  // everybody's), so a link's load is not its own items' images: count every image of every item
  // on each link (n_l, weighted by route fractions; an item's pair routed once for all the items
  // that move on it), and the representatives whose own routes cross it (r_l); each
  // representative then weighs n_l / r_l there. Links no representative crosses are mirror
  // images of ones that one does.
  const topology::Topology& t = router_->topology();
  const Copies& cp = *copies_of_id_[copies];
  const auto n = static_cast<uint64_t>(t.gpu_count());
  const auto flow_id = [n](int64_t s, int64_t d) { return static_cast<uint64_t>(s) * n + static_cast<uint64_t>(d); };
  std::vector<double> images(net_.link_count(), 0.0), reps(net_.link_count(), 0.0);
  // Each pair once, with the number of items that move on it (a ring's pair moves in every
  // step): its images are routed once and counted that many times.
  std::vector<std::pair<int32_t, int32_t>> pairs;
  std::vector<double> moves;
  std::map<std::pair<int32_t, int32_t>, size_t> index;
  for (const Compiled::Item& it : c.items) {
    if (is_switch(it.src) || is_switch(it.dst)) continue;
    const int32_t src = gpus[static_cast<size_t>(it.src)], dst = gpus[static_cast<size_t>(it.dst)];
    if (routes_.contains(std::make_tuple(src, dst, copies))) continue;
    const auto [at, fresh] = index.emplace(std::make_pair(src, dst), pairs.size());
    if (fresh) {
      pairs.emplace_back(src, dst);
      moves.push_back(0.0);
    }
    moves[at->second] += 1.0;
  }
  for (size_t p = 0; p < pairs.size(); ++p) {
    const auto [src, dst] = pairs[p];
    for (size_t j = 0; j < cp.count(); ++j) {
      const int64_t s = cp.image(j, src), d = cp.image(j, dst);
      scratch_.clear();
      router_->routes(static_cast<uint32_t>(s), static_cast<uint32_t>(d), flow_id(s, d), scratch_);
      ++stats_.routes_computed;
      for (const topology::Route& r : scratch_)
        for (const auto l : r.links) {
          images[l] += moves[p] * r.fraction;
          if (j == 0) reps[l] += moves[p] * r.fraction;
        }
    }
  }
  for (const auto& [src, dst] : pairs) {
    Routes out;
    scratch_.clear();
    router_->routes(static_cast<uint32_t>(src), static_cast<uint32_t>(dst), flow_id(src, dst), scratch_);
    for (const topology::Route& r : scratch_) {
      SharedRoute sr;
      sr.links = r.links;
      sr.cross_node = t.server_of(static_cast<size_t>(src)) != t.server_of(static_cast<size_t>(dst));
      for (const auto l : r.links) {
        sr.latency += t.link(l).latency;
        const double ratio = images[l] / reps[l];
        sr.usage.push_back(ratio > 1.0 ? 1.0 + (ratio - 1.0) * cp.rotation.overlap : ratio);
      }
      sr.fraction = r.fraction;
      out.push_back(std::move(sr));
    }
    routes_[std::make_tuple(src, dst, copies)] = std::move(out);
  }
}

std::vector<double> FlowExecutor::switch_usage(const Compiled& c, const std::vector<int32_t>& gpus,
                                               uint32_t copies) const {
  // A switch hop's images under rotations inside a server are other GPUs' hops of the same server
  // (shard l's images are shards l + b): count, per step, every image of every item on each hop
  // and the items on it; each item then stands for images / items there. Steps apart are apart in
  // time too, so a hop used in two steps (NVLS: all shards in, then one shard back) is counted
  // per step.
  std::vector<double> usage(c.items.size(), 1.0);
  const Copies& cp = *copies_of_id_[copies];
  if (!cp.rotation.local_only || cp.rotation.none()) return usage;
  using Hop = std::pair<uint32_t, sim::flow::LinkId>;  // (step, switch link)
  std::map<Hop, std::pair<double, double>> count;      // images, items
  std::vector<Hop> hop(c.items.size());
  for (size_t i = 0; i < c.items.size(); ++i) {
    const Compiled::Item& it = c.items[i];
    if (!is_switch(it.src) && !is_switch(it.dst)) continue;
    const bool into = is_switch(it.dst);
    const int32_t gpu = gpus[static_cast<size_t>(into ? it.src : it.dst)];
    hop[i] = {it.step, switch_link(gpu, into)};
    count[hop[i]].second += 1.0;
    for (size_t j = 0; j < cp.count(); ++j)
      count[{it.step, switch_link(static_cast<int32_t>(cp.image(j, gpu)), into)}].first += 1.0;
  }
  for (size_t i = 0; i < c.items.size(); ++i) {
    const Compiled::Item& it = c.items[i];
    if (!is_switch(it.src) && !is_switch(it.dst)) continue;
    const auto& [images, items] = count[hop[i]];
    usage[i] = images / items;
  }
  return usage;
}

}  // namespace trainsim::models::collectives
