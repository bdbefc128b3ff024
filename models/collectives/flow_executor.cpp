#include "models/collectives/flow_executor.hpp"

#include <algorithm>
#include <unordered_map>

#include "sim/error.hpp"

namespace trainsim::models::collectives {

void add_topology_links(const topology::Topology& t, sim::flow::FlowNetwork& net) {
  for (topology::LinkId id = 0; id < t.link_count(); ++id) net.add_link(t.capacity(id), t.link(id).latency);
}

Group group_on(const topology::Topology& t, const std::vector<int32_t>& gpus) {
  Group g;
  g.size = static_cast<int32_t>(gpus.size());
  g.node_of_rank.reserve(gpus.size());
  for (const int32_t gpu : gpus) {
    TRAINSIM_ASSERT(gpu >= 0 && static_cast<size_t>(gpu) < t.gpu_count(), "GPU ", gpu, " is not in the topology");
    g.node_of_rank.push_back(t.server_of(static_cast<size_t>(gpu)));
  }
  g.nvls_capable = t.supports_in_network_reduction();
  return g;
}

struct FlowExecutor::Run {
  const Compiled* plan = nullptr;
  std::vector<int32_t> gpus;
  const std::vector<int32_t>* offsets = nullptr;  // interned (stable: map node)
  uint32_t offsets_id = 0;
  int32_t slices = 1;
  std::vector<uint32_t> deps_left;  // per item x slice
  std::vector<uint32_t> flows_left;
  size_t pending = 0;  // item slices not yet arrived
  std::function<void()> done;
};

FlowExecutor::FlowExecutor(sim::Engine& engine, sim::flow::FlowNetwork& net, const topology::Router& router,
                           ExecOptions options)
    : engine_(engine), net_(net), router_(router), options_(options) {
  const topology::Topology& t = router_.topology();
  uplink_.assign(t.gpu_count(), -1);
  for (size_t gpu = 0; gpu < t.gpu_count(); ++gpu) {
    const auto v = t.gpu_node(gpu);
    for (const auto e : boost::make_iterator_range(boost::out_edges(v, t.graph()))) {
      if (t.node(boost::target(e, t.graph())).kind == topology::NodeKind::kNvSwitch) {
        uplink_[gpu] = t.graph()[e].id;
        break;
      }
    }
  }
}

FlowExecutor::~FlowExecutor() = default;

sim::flow::LinkId FlowExecutor::switch_link(int32_t gpu, bool into_switch) const {
  const int64_t up = uplink_[static_cast<size_t>(gpu)];
  TRAINSIM_ASSERT(up >= 0, "GPU ", gpu, " has no NVSwitch for an in-network reduction");
  const auto link = static_cast<sim::flow::LinkId>(up);
  return into_switch ? link : topology::Topology::reverse(link);
}

const FlowExecutor::Compiled& FlowExecutor::compile(const CollectivePlan& plan) {
  size_t total = 0;
  for (const Step& s : plan.steps) total += s.transfers.size();
  auto it = compiled_.find(&plan);
  // The cache is keyed by address: a different plan at a reused address is recompiled.
  if (it != compiled_.end() && it->second.items.size() == total &&
      (total == 0 || it->second.items.back().bytes == plan.steps.back().transfers.back().bytes))
    return it->second;
  Compiled c;
  c.items.reserve(total);
  std::vector<uint32_t> first(plan.steps.size() + 1, 0);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    first[s + 1] = first[s] + static_cast<uint32_t>(plan.steps[s].transfers.size());
  std::vector<uint32_t> count(total + 1, 0);
  for (const Step& s : plan.steps)
    for (const Transfer& t : s.transfers) {
      c.items.push_back({t.src, t.dst, t.bytes, static_cast<uint32_t>(t.after.size())});
      for (const TransferRef& a : t.after) ++count[first[static_cast<size_t>(a.step)] + static_cast<uint32_t>(a.index)];
    }
  c.dep_begin.assign(total + 1, 0);
  for (size_t i = 0; i < total; ++i) c.dep_begin[i + 1] = c.dep_begin[i] + count[i];
  c.dependents.assign(c.dep_begin[total], 0);
  std::vector<uint32_t> fill(c.dep_begin.begin(), c.dep_begin.end() - 1);
  uint32_t index = 0;
  for (const Step& s : plan.steps)
    for (const Transfer& t : s.transfers) {
      for (const TransferRef& a : t.after)
        c.dependents[fill[first[static_cast<size_t>(a.step)] + static_cast<uint32_t>(a.index)]++] = index;
      ++index;
    }
  return compiled_[&plan] = std::move(c);
}

const std::vector<FlowExecutor::SharedRoute>& FlowExecutor::routes(int32_t src, int32_t dst, uint32_t offsets_id,
                                                                   const std::vector<int32_t>& offsets) {
  const auto key = std::make_tuple(src, dst, offsets_id);
  if (auto it = routes_.find(key); it != routes_.end()) return it->second;
  std::vector<SharedRoute>& out = routes_[key];
  const topology::Topology& t = router_.topology();
  const auto n = static_cast<uint64_t>(t.gpu_count());
  // The connection's flow id is its (src, dst) pair: a persistent connection hashes the same way
  // every time (NCCL keeps its queue pairs), and each copy hashes as its own pair.
  const auto flow_id = [n](int64_t s, int64_t d) { return static_cast<uint64_t>(s) * n + static_cast<uint64_t>(d); };
  scratch_.clear();
  router_.routes(static_cast<uint32_t>(src), static_cast<uint32_t>(dst), flow_id(src, dst), scratch_);
  ++stats_.routes_computed;
  for (const topology::Route& r : scratch_) {
    SharedRoute sr;
    sr.links = r.links;
    sr.usage.assign(r.links.size(), 1.0);
    for (const auto l : r.links) sr.latency += t.link(l).latency;
    sr.fraction = r.fraction;
    out.push_back(std::move(sr));
  }
  if (offsets.size() <= 1 || out.empty()) return out;
  // Count, per sub-route k, how many copies cross each link.
  std::vector<std::unordered_map<sim::flow::LinkId, uint32_t>> crossings(out.size());
  for (size_t k = 0; k < out.size(); ++k)
    for (const auto l : out[k].links) ++crossings[k][l];
  for (size_t j = 1; j < offsets.size(); ++j) {
    const int64_t s = src + offsets[j], d = dst + offsets[j];
    TRAINSIM_ASSERT(s >= 0 && d >= 0 && static_cast<uint64_t>(s) < n && static_cast<uint64_t>(d) < n, "copy ", j,
                    " of a communicator falls outside the topology");
    scratch_.clear();
    router_.routes(static_cast<uint32_t>(s), static_cast<uint32_t>(d), flow_id(s, d), scratch_);
    ++stats_.routes_computed;
    for (size_t k = 0; k < scratch_.size(); ++k)
      for (const auto l : scratch_[k].links) ++crossings[k % out.size()][l];
  }
  for (size_t k = 0; k < out.size(); ++k) {
    SharedRoute& sr = out[k];
    // Links of this group's own route, with their copy counts, then links the copies share
    // among themselves (in link order: deterministic).
    std::vector<std::pair<sim::flow::LinkId, uint32_t>> extra;
    for (const auto& [l, c] : crossings[k])
      if (c >= 2 && std::find(sr.links.begin(), sr.links.end(), l) == sr.links.end()) extra.emplace_back(l, c);
    std::sort(extra.begin(), extra.end());
    for (size_t h = 0; h < sr.links.size(); ++h) sr.usage[h] = static_cast<double>(crossings[k][sr.links[h]]);
    for (const auto& [l, c] : extra) {
      sr.links.push_back(l);
      sr.usage.push_back(static_cast<double>(c));
    }
  }
  return out;
}

void FlowExecutor::run(const CollectivePlan& plan, const std::vector<int32_t>& gpus, sim::Time launch,
                       std::function<void()> done, const std::vector<int32_t>& offsets) {
  auto r = std::make_shared<Run>();
  r->plan = &compile(plan);
  r->gpus = gpus;
  auto oit = offsets_ids_.find(offsets);
  if (oit == offsets_ids_.end()) oit = offsets_ids_.emplace(offsets, static_cast<uint32_t>(offsets_ids_.size())).first;
  r->offsets = &oit->first;
  r->offsets_id = oit->second;
  r->done = std::move(done);
  ++stats_.collectives;
  // Slices: as many as the largest transfer needs at slice_bytes each, within max_slices.
  if (options_.slice_bytes.count() > 0) {
    int64_t largest = 0;
    for (const auto& it : r->plan->items) largest = std::max(largest, it.bytes.count());
    const int64_t want = (largest + options_.slice_bytes.count() - 1) / options_.slice_bytes.count();
    r->slices = static_cast<int32_t>(std::clamp<int64_t>(want, 1, std::max(1, options_.max_slices)));
  }
  const size_t items = r->plan->items.size();
  const auto slices = static_cast<size_t>(r->slices);
  r->deps_left.resize(items * slices);
  r->flows_left.assign(items * slices, 0);
  for (size_t i = 0; i < items; ++i)
    for (size_t s = 0; s < slices; ++s) r->deps_left[i * slices + s] = r->plan->items[i].deps + (s > 0 ? 1u : 0u);
  r->pending = items * slices;
  engine_.schedule_in(launch, [this, r] {
    if (r->pending == 0) {
      if (r->done) r->done();
      return;
    }
    const size_t n = r->plan->items.size() * static_cast<size_t>(r->slices);
    for (size_t k = 0; k < n; ++k)
      if (r->deps_left[k] == 0) start_slice(r, static_cast<uint32_t>(k));
  });
}

void FlowExecutor::start_slice(const std::shared_ptr<Run>& r, uint32_t index) {
  const auto slices = static_cast<uint32_t>(r->slices);
  const Compiled::Item& it = r->plan->items[index / slices];
  const uint32_t slice = index % slices;
  // Slice sizes differ by at most one byte, larger ones first (as detail::split_bytes cuts).
  const int64_t base = it.bytes.count() / r->slices, extra = it.bytes.count() % r->slices;
  const sim::Bytes bytes(base + (static_cast<int64_t>(slice) < extra ? 1 : 0));
  ++stats_.transfers;
  const auto on_arrival = [this, r, index] {
    if (--r->flows_left[index] == 0) finish_slice(r, index);
  };
  if (is_switch(it.src) || is_switch(it.dst)) {
    // One NVLink hop between a GPU and its server's switch.
    const bool into = is_switch(it.dst);
    const int32_t gpu = r->gpus[static_cast<size_t>(into ? it.src : it.dst)];
    const sim::flow::LinkId link = switch_link(gpu, into);
    r->flows_left[index] = 1;
    ++stats_.flows;
    net_.start(bytes, std::span<const sim::flow::LinkId>(&link, 1), on_arrival);
    return;
  }
  const int32_t src = r->gpus[static_cast<size_t>(it.src)], dst = r->gpus[static_cast<size_t>(it.dst)];
  const std::vector<SharedRoute>& rs = routes(src, dst, r->offsets_id, *r->offsets);
  if (rs.empty()) {  // same GPU: nothing crosses the network
    r->flows_left[index] = 1;
    engine_.schedule_in(sim::Time::zero(), on_arrival);
    return;
  }
  r->flows_left[index] = static_cast<uint32_t>(rs.size());
  stats_.flows += rs.size();
  for (const SharedRoute& sr : rs)
    net_.start_shared(rs.size() == 1 ? bytes : bytes.scaled(sr.fraction), sr.links, sr.usage, sr.latency, on_arrival);
}

void FlowExecutor::finish_slice(const std::shared_ptr<Run>& r, uint32_t index) {
  const auto slices = static_cast<uint32_t>(r->slices);
  const uint32_t item = index / slices, slice = index % slices;
  const Compiled& c = *r->plan;
  const auto release = [&](uint32_t k) {
    if (--r->deps_left[k] == 0) start_slice(r, k);
  };
  if (slice + 1 < slices) release(index + 1);
  for (uint32_t d = c.dep_begin[item]; d < c.dep_begin[item + 1]; ++d) release(c.dependents[d] * slices + slice);
  if (--r->pending == 0 && r->done) {
    auto done = std::move(r->done);
    r->done = nullptr;
    done();
  }
}

}  // namespace trainsim::models::collectives
