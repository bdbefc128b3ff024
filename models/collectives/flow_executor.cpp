#include "models/collectives/flow_executor.hpp"

#include <algorithm>
#include <tuple>

#include "models/collectives/nccl_tuning.hpp"
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
  // The whole torus, in GPU order: the torus algorithms can run on its dimensions.
  const auto& shape = t.torus_shape();
  bool whole = !shape.empty() && shape.size() <= 3 && gpus.size() == t.gpu_count();
  for (size_t i = 0; whole && i < gpus.size(); ++i) whole = gpus[i] == static_cast<int32_t>(i);
  if (whole)
    for (size_t k = 0; k < shape.size(); ++k) g.dims[k] = static_cast<int32_t>(shape[k]);
  return g;
}

FlowExecutor::FlowExecutor(sim::Engine& engine, sim::flow::FlowNetwork& net, const topology::Router& router,
                           ExecOptions options)
    : engine_(engine), net_(net), router_(&router), options_(options) {
  const topology::Topology& t = router_->topology();
  for (topology::LinkId l = 0; l < t.link_count() && !degraded_; ++l) degraded_ = t.link(l).factor < 1.0;
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

FlowExecutor::Fingerprint FlowExecutor::fingerprint(const CollectivePlan& plan) {
  Fingerprint f;
  f.steps = plan.steps.size();
  f.chunks = plan.chunks;
  for (const Step& st : plan.steps) f.transfers += st.transfers.size();
  for (const Step& st : plan.steps)
    if (!st.transfers.empty()) {
      if (f.first_bytes < 0) f.first_bytes = st.transfers.front().bytes.count();
      f.last_bytes = st.transfers.back().bytes.count();
      f.last_src = st.transfers.back().src;
      f.last_dst = st.transfers.back().dst;
    }
  return f;
}

FlowExecutor::Compiled& FlowExecutor::compile(const CollectivePlan& plan) {
  // The cache is keyed by address (plans live as long as their runs; see run()); the fingerprint
  // catches a different plan at a reused address, which is recompiled.
  const Fingerprint f = fingerprint(plan);
  if (const auto it = compiled_.find(&plan); it != compiled_.end() && it->second.fingerprint == f)
    return *it->second.compiled;
  const size_t steps = plan.steps.size();
  const size_t m = options_.max_steps > 0 && steps > static_cast<size_t>(options_.max_steps)
                       ? (steps + static_cast<size_t>(options_.max_steps) - 1) / static_cast<size_t>(options_.max_steps)
                       : 1;
  auto c = std::make_unique<Compiled>();
  // Fusion keeps the timing only when every (src, dst) pair of a super-step sends exactly once in
  // each of its steps (a ring's pipeline is full); otherwise the plan runs unfused.
  if (m == 1 || !build(plan, m, *c)) {
    c = std::make_unique<Compiled>();
    build(plan, 1, *c);
  }
  auto& slot = compiled_[&plan];
  slot.fingerprint = f;
  slot.compiled = std::move(c);
  return *slot.compiled;
}

bool FlowExecutor::build(const CollectivePlan& plan, size_t m, Compiled& c) const {
  const size_t steps = plan.steps.size();
  // Item of every plan transfer: its own, or with fusion the one of its (super-step, src, dst).
  std::vector<std::vector<uint32_t>> item_of(steps);
  std::vector<uint32_t> last_step;                           // per item: last step that added to it
  std::map<std::pair<int32_t, int32_t>, uint32_t> in_super;  // (src, dst) -> item, this super-step
  size_t super_begin = 0;                                    // first item of this super-step
  const auto super_ok = [&](size_t first_step) {
    const size_t len = std::min(m, steps - first_step);
    for (size_t i = super_begin; i < c.items.size(); ++i)
      if (c.items[i].merged != len) return false;
    return true;
  };
  for (size_t st = 0; st < steps; ++st) {
    if (st % m == 0) {
      if (m > 1 && st > 0 && !super_ok(st - m)) return false;
      in_super.clear();
      super_begin = c.items.size();
    }
    for (const Transfer& t : plan.steps[st].transfers) {
      uint32_t item;
      if (m == 1) {
        item = static_cast<uint32_t>(c.items.size());
        c.items.push_back({t.src, t.dst, t.bytes, 0, static_cast<uint32_t>(t.steps), static_cast<uint32_t>(st)});
      } else if (const auto f = in_super.find({t.src, t.dst}); f != in_super.end()) {
        item = f->second;
        if (last_step[item] == st) return false;  // two chunks to one peer in one step
        last_step[item] = static_cast<uint32_t>(st);
        c.items[item].bytes += t.bytes;
        c.items[item].merged += static_cast<uint32_t>(t.steps);
      } else {
        item = static_cast<uint32_t>(c.items.size());
        in_super.emplace(std::make_pair(t.src, t.dst), item);
        c.items.push_back({t.src, t.dst, t.bytes, 0, static_cast<uint32_t>(t.steps), static_cast<uint32_t>(st)});
        last_step.push_back(static_cast<uint32_t>(st));
      }
      item_of[st].push_back(item);
    }
  }
  if (m > 1 && steps > 0 && !super_ok((steps - 1) / m * m)) return false;
  // Dependency edges between items (with fusion: only on earlier super-steps, once each).
  struct Edge {
    uint32_t from, to;  // prerequisite, dependent
    bool queue;         // only the connection's order (see below), not data
  };
  std::vector<Edge> edges;
  for (size_t st = 0; st < steps; ++st)
    for (size_t k = 0; k < plan.steps[st].transfers.size(); ++k)
      for (const TransferRef& a : plan.steps[st].transfers[k].after) {
        if (m > 1 && static_cast<size_t>(a.step) / m == st / m) continue;
        edges.push_back({item_of[static_cast<size_t>(a.step)][static_cast<size_t>(a.index)], item_of[st][k], false});
      }
  // Connections are FIFO: the j-th item of a (src, dst) pair in a (super-)step also waits for the
  // j-th of the pair's previous (super-)step (its last when that one had fewer; with channels
  // merged into one plan, occurrence j is channel j's connection). See "Order" in the header.
  struct Connection {
    size_t step = 0;
    std::vector<uint32_t> previous, current;
  };
  std::map<std::pair<int32_t, int32_t>, Connection> connections;
  for (size_t st = 0; st < steps; ++st)
    for (size_t k = 0; k < plan.steps[st].transfers.size(); ++k) {
      const Transfer& t = plan.steps[st].transfers[k];
      const uint32_t item = item_of[st][k];
      auto [it, fresh] = connections.try_emplace({t.src, t.dst});
      Connection& cn = it->second;
      if (!fresh && cn.step != st / m) {
        cn.previous.swap(cn.current);
        cn.current.clear();
      }
      cn.step = st / m;
      if (std::find(cn.current.begin(), cn.current.end(), item) != cn.current.end()) continue;  // fused
      cn.current.push_back(item);
      if (cn.previous.empty()) continue;
      const uint32_t before = cn.previous[std::min(cn.current.size() - 1, cn.previous.size() - 1)];
      bool known = false;  // already a data dependency (with fusion, duplicates go below)
      for (const TransferRef& a : t.after)
        known = known || item_of[static_cast<size_t>(a.step)][static_cast<size_t>(a.index)] == before;
      if (!known) edges.push_back({before, item, true});
    }
  if (m > 1) {  // one edge per pair of items; a data edge wins over a queue edge
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
      return std::tie(a.from, a.to, a.queue) < std::tie(b.from, b.to, b.queue);
    });
    edges.erase(std::unique(edges.begin(), edges.end(),
                            [](const Edge& a, const Edge& b) { return a.from == b.from && a.to == b.to; }),
                edges.end());
  }
  const size_t items = c.items.size();
  c.dep_begin.assign(items + 1, 0);
  for (const Edge& e : edges) {
    ++c.dep_begin[e.from + 1];
    ++c.items[e.to].deps;
  }
  for (size_t i = 0; i < items; ++i) c.dep_begin[i + 1] += c.dep_begin[i];
  c.dependents.assign(edges.size(), 0);
  c.queued.assign(edges.size(), 0);
  std::vector<uint32_t> fill(c.dep_begin.begin(), c.dep_begin.end() - 1);
  for (const Edge& e : edges) {
    c.queued[fill[e.from]] = e.queue ? 1 : 0;
    c.dependents[fill[e.from]++] = e.to;
  }
  return true;
}

int64_t FlowExecutor::Copies::image(size_t j, int32_t gpu) const {
  const size_t rotations = static_cast<size_t>(rotation.images());
  const size_t t = j / rotations, r = j % rotations;
  int64_t g = gpu;
  if (r != 0 && rotation.local_only) {
    const auto rank = static_cast<int32_t>(std::lower_bound(members.begin(), members.end(), gpu) - members.begin());
    const auto k = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), rank) - starts.begin()) - 1;
    const int32_t begin = starts[k],
                  q = (k + 1 < starts.size() ? starts[k + 1] : static_cast<int32_t>(members.size())) - begin;
    g = members[static_cast<size_t>(begin + (rank - begin + static_cast<int32_t>(r)) % q)];
  } else if (r != 0) {
    const auto it = std::lower_bound(members.begin(), members.end(), gpu);
    const auto rank = static_cast<int32_t>(it - members.begin());
    const int32_t q = rotation.per_node, m = rotation.nodes;
    const int32_t a = rotation.local_only ? 0 : static_cast<int32_t>(r) / q, b = static_cast<int32_t>(r) % q;
    g = members[static_cast<size_t>(((rank / q + a) % m) * q + (rank % q + b) % q)];
  }
  return g + (offsets.empty() ? 0 : offsets[t]);
}

uint32_t FlowExecutor::copies_id(const std::vector<int32_t>& offsets, RankRotation rotation,
                                 const std::vector<int32_t>& gpus) {
  Copies key{offsets, rotation, rotation.none() ? std::vector<int32_t>{} : gpus, {}};
  if (!key.offsets.empty() && key.offsets.size() == 1 && key.offsets[0] == 0) key.offsets.clear();
  if (!rotation.none() && rotation.local_only) {
    const topology::Topology& t = router_->topology();
    for (size_t i = 0; i < gpus.size(); ++i)
      if (i == 0 || t.server_of(static_cast<size_t>(gpus[i])) != t.server_of(static_cast<size_t>(gpus[i - 1])))
        key.starts.push_back(static_cast<int32_t>(i));
  }
  auto it = copies_ids_.find(key);
  if (it == copies_ids_.end()) {
    TRAINSIM_ASSERT(rotation.none() || rotation.local_only ||
                        static_cast<size_t>(rotation.nodes * rotation.per_node) == gpus.size(),
                    "rank rotation ", rotation.nodes, " x ", rotation.per_node, " over ", gpus.size(), " ranks");
    TRAINSIM_ASSERT(!rotation.local_only || std::is_sorted(gpus.begin(), gpus.end()),
                    "rotations inside servers need the group's GPUs in ascending order");
    it = copies_ids_.emplace(std::move(key), static_cast<uint32_t>(copies_ids_.size())).first;
    copies_of_id_.push_back(&it->first);
  }
  return it->second;
}

const FlowExecutor::Routes& FlowExecutor::routes(int32_t src, int32_t dst, uint32_t copies) {
  const auto key = std::make_tuple(src, dst, copies);
  if (auto it = routes_.find(key); it != routes_.end()) return it->second;
  Routes out;  // inserted into the cache once complete
  const topology::Topology& t = router_->topology();
  const auto n = static_cast<uint64_t>(t.gpu_count());
  // The connection's flow id is its (src, dst) pair: a persistent connection hashes the same way
  // every time (NCCL keeps its queue pairs), and each copy hashes as its own pair.
  const auto flow_id = [n](int64_t s, int64_t d) { return static_cast<uint64_t>(s) * n + static_cast<uint64_t>(d); };
  scratch_.clear();
  router_->routes(static_cast<uint32_t>(src), static_cast<uint32_t>(dst), flow_id(src, dst), scratch_);
  ++stats_.routes_computed;
  const bool cross_node = t.server_of(static_cast<size_t>(src)) != t.server_of(static_cast<size_t>(dst));
  for (const topology::Route& r : scratch_) {
    SharedRoute sr;
    sr.links = r.links;
    sr.usage.assign(r.links.size(), 1.0);
    for (const auto l : r.links) sr.latency += t.link(l).latency;
    sr.fraction = r.fraction;
    sr.cross_node = cross_node;
    out.push_back(std::move(sr));
  }
  const Copies& cp = *copies_of_id_[copies];
  const size_t count = cp.count();
  if (count <= 1 || out.empty()) return routes_[key] = std::move(out);
  for (size_t j = 1; j < count; ++j) {
    const int64_t s = cp.image(j, src), d = cp.image(j, dst);
    TRAINSIM_ASSERT(s >= 0 && d >= 0 && static_cast<uint64_t>(s) < n && static_cast<uint64_t>(d) < n, "copy ", j,
                    " of a communicator falls outside the topology");
  }
  // A route that stays inside its server shares links only with copies on that server: copies
  // on other servers are mirror images of this one (every server has the same fabric, unless a
  // fault broke the symmetry).
  const int32_t server = t.server_of(static_cast<size_t>(src));
  bool intra = !degraded_;
  for (const SharedRoute& sr : out)
    for (const auto l : sr.links)
      intra = intra && t.node(t.link_src(l)).server == server && t.node(t.link_dst(l)).server == server;
  // Count, per sub-route k, how many copies cross each link (flat counters, reset after use).
  const size_t links = net_.link_count(), routes_n = out.size();
  if (crossings_.size() < links * routes_n) crossings_.assign(links * routes_n, 0);
  touched_.clear();
  const auto cross = [&](size_t k, sim::flow::LinkId l) {
    uint32_t& c = crossings_[k * links + l];
    if (c++ == 0) touched_.emplace_back(static_cast<uint32_t>(k), l);
  };
  for (size_t k = 0; k < routes_n; ++k)
    for (const auto l : out[k].links) cross(k, l);
  for (size_t j = 1; j < count; ++j) {
    const int64_t s = cp.image(j, src), d = cp.image(j, dst);
    if (intra && t.server_of(static_cast<size_t>(s)) != server && t.server_of(static_cast<size_t>(d)) != server)
      continue;
    scratch_.clear();
    router_->routes(static_cast<uint32_t>(s), static_cast<uint32_t>(d), flow_id(s, d), scratch_);
    ++stats_.routes_computed;
    for (size_t k = 0; k < scratch_.size(); ++k)
      for (const auto l : scratch_[k].links) cross(k % routes_n, l);
  }
  // Links of this group's own route with their copy counts, then links the copies share among
  // themselves and degraded links any copy crosses (a fault is no mirror image: the slowest copy
  // sets the pace), in link order (deterministic).
  std::sort(touched_.begin(), touched_.end());
  for (size_t k = 0; k < routes_n; ++k) {
    SharedRoute& sr = out[k];
    const size_t own = sr.links.size();
    for (size_t h = 0; h < own; ++h) sr.usage[h] = static_cast<double>(crossings_[k * links + sr.links[h]]);
    for (const auto& [tk, l] : touched_) {
      const uint32_t c = crossings_[tk * links + l];
      if (tk != k || (c < 2 && t.link(l).factor >= 1.0) ||
          std::find(sr.links.begin(), sr.links.begin() + static_cast<std::ptrdiff_t>(own), l) !=
              sr.links.begin() + static_cast<std::ptrdiff_t>(own))
        continue;
      sr.links.push_back(l);
      sr.usage.push_back(static_cast<double>(c));
    }
  }
  for (const auto& [tk, l] : touched_) crossings_[tk * links + l] = 0;
  return routes_[key] = std::move(out);
}

void FlowExecutor::run(const CollectivePlan& plan, const std::vector<int32_t>& gpus, sim::Time launch,
                       std::function<void()> done, const std::vector<int32_t>& offsets, double weight,
                       RankRotation rotation, TransferCost cost) {
  uint32_t id;
  if (!free_runs_.empty()) {
    id = free_runs_.back();
    free_runs_.pop_back();
  } else {
    id = static_cast<uint32_t>(runs_.size());
    runs_.emplace_back();
  }
  Run& r = runs_[id];
  Compiled& c = compile(plan);
  r.plan = &c;
  r.weight = weight;
  r.cost = cost;
  r.done = std::move(done);
  ++stats_.collectives;
  const auto& bound = bind(c, gpus, copies_id(offsets, rotation, gpus));
  r.routes = &bound.second;
  r.gpus = &bound.first.second;
  r.copies_id = bound.first.first;
  // Slices: as many as the largest transfer needs at slice_bytes each, within max_slices.
  r.slices = 1;
  const bool own = cost.slice_bytes.count() > 0;
  const sim::Bytes slice = own ? cost.slice_bytes : options_.slice_bytes;
  if (slice.count() > 0) {
    int64_t largest = 0;
    for (const auto& it : c.items) largest = std::max(largest, it.bytes.count());
    const int64_t want = (largest + slice.count() - 1) / slice.count();
    const int64_t cap = own ? kMaxPipelineSlices : std::max(1, options_.max_slices);
    r.slices = static_cast<int32_t>(std::clamp<int64_t>(want, 1, cap));
  }
  const size_t items = c.items.size();
  const auto slices = static_cast<size_t>(r.slices);
  r.deps_left.resize(items * slices);
  r.flows_left.assign(items * slices, 0);
  r.ready.assign(items * slices, sim::Time::zero());
  for (size_t i = 0; i < items; ++i)
    for (size_t k = 0; k < slices; ++k) r.deps_left[i * slices + k] = c.items[i].deps + (k > 0 ? 1u : 0u);
  r.pending = items * slices;
  engine_.schedule_in(launch, [this, id] {
    if (runs_[id].pending == 0) {
      auto fn = std::move(runs_[id].done);
      free_runs_.push_back(id);
      if (fn) fn();
      return;
    }
    std::fill(runs_[id].ready.begin(), runs_[id].ready.end(), engine_.now());
    const size_t n = runs_[id].deps_left.size();
    for (size_t k = 0; k < n; ++k)
      if (runs_[id].deps_left[k] == 0) start_slice(id, static_cast<uint32_t>(k));
  });
}

const std::pair<const std::pair<uint32_t, std::vector<int32_t>>, FlowExecutor::Compiled::Bound>& FlowExecutor::bind(
    Compiled& c, const std::vector<int32_t>& gpus, uint32_t copies) {
  // Every item's routes for this communicator and its copies, computed on its first run.
  auto bit = c.bound.find({copies, gpus});
  if (bit == c.bound.end()) {
    // Rotations share load between different transfers of the plan: across servers (the
    // all-to-all) and inside servers (a ring's channels: channel b's transfer out of a GPU is the
    // image of channel 0's out of another GPU of its server).
    const RankRotation& rot = copies_of_id_[copies]->rotation;
    if (!rot.none() && rot.orbits) {
      orbit_routes(c, gpus, copies);
    } else if (!rot.none()) {
      rotated_routes(c, gpus, copies);
    }
    Compiled::Bound bound{std::vector<const Routes*>(c.items.size(), nullptr), switch_usage(c, gpus, copies)};
    for (size_t i = 0; i < c.items.size(); ++i) {
      const Compiled::Item& it = c.items[i];
      if (is_switch(it.src) || is_switch(it.dst)) continue;
      bound.routes[i] = &routes(gpus[static_cast<size_t>(it.src)], gpus[static_cast<size_t>(it.dst)], copies);
    }
    bit = c.bound.emplace(std::make_pair(copies, gpus), std::move(bound)).first;
  }
  return *bit;
}

void FlowExecutor::links_of(const CollectivePlan& plan, const std::vector<int32_t>& gpus,
                            const std::vector<int32_t>& offsets, std::vector<sim::flow::LinkId>& out,
                            RankRotation rotation) {
  Compiled& c = compile(plan);
  const auto& bound = bind(c, gpus, copies_id(offsets, rotation, gpus));
  for (size_t i = 0; i < c.items.size(); ++i) {
    const Compiled::Item& it = c.items[i];
    if (is_switch(it.src) || is_switch(it.dst)) {
      const bool into = is_switch(it.dst);
      out.push_back(switch_link(gpus[static_cast<size_t>(into ? it.src : it.dst)], into));
      continue;
    }
    for (const SharedRoute& sr : *bound.second.routes[i]) out.insert(out.end(), sr.links.begin(), sr.links.end());
  }
}

void FlowExecutor::route_pairs(const CollectivePlan& plan, const std::vector<int32_t>& gpus,
                               const std::vector<int32_t>& offsets, std::vector<std::pair<uint32_t, uint32_t>>& out,
                               RankRotation rotation) {
  const Compiled& c = compile(plan);
  const Copies& cp = *copies_of_id_[copies_id(offsets, rotation, gpus)];
  const topology::Topology& t = router_->topology();
  std::vector<std::pair<int32_t, int32_t>> own;  // the plan's pairs, once each (a ring's recur every step)
  for (const Compiled::Item& it : c.items) {
    if (is_switch(it.src) || is_switch(it.dst)) continue;
    const int32_t src = gpus[static_cast<size_t>(it.src)], dst = gpus[static_cast<size_t>(it.dst)];
    // A pair inside one server is found in no time when it is needed.
    if (t.server_of(static_cast<size_t>(src)) != t.server_of(static_cast<size_t>(dst))) own.emplace_back(src, dst);
  }
  std::sort(own.begin(), own.end());
  own.erase(std::unique(own.begin(), own.end()), own.end());
  for (const auto& [src, dst] : own)
    for (size_t j = 0; j < cp.count(); ++j)
      out.emplace_back(static_cast<uint32_t>(cp.image(j, src)), static_cast<uint32_t>(cp.image(j, dst)));
}

void FlowExecutor::start_slice(uint32_t run, uint32_t index) {
  Run& r = runs_[run];
  const auto slices = static_cast<uint32_t>(r.slices);
  const uint32_t item = index / slices, slice = index % slices;
  const Compiled::Item& it = r.plan->items[item];
  // Slice sizes differ by at most one byte, larger ones first (as detail::split_bytes cuts).
  const int64_t base = it.bytes.count() / r.slices, extra = it.bytes.count() % r.slices;
  const sim::Bytes payload(base + (static_cast<int64_t>(slice) < extra ? 1 : 0));
  const sim::Bytes bytes = r.cost.wire_factor == 1.0 ? payload : payload.scaled(r.cost.wire_factor);
  ++stats_.transfers;
  // The route's latency, paid by slice 0 only. What it waited in its connection's queue after its
  // data was there counts towards it (the previous transfer's bytes were in flight meanwhile).
  const auto latency = [&](sim::Time route, bool cross_node) {
    if (slice != 0) return sim::Time::zero();
    if (r.cost.protocol_latency) route = cross_node ? r.cost.step_inter : r.cost.step_intra;
    const sim::Time full = r.cost.latency_share == 1.0
                               ? route * it.merged
                               : sim::Time::from_seconds_ceil((route * it.merged).seconds() * r.cost.latency_share),
                    waited = r.cost.queue_credit ? engine_.now() - r.ready[index] : sim::Time::zero();
    return waited >= full ? sim::Time::zero() : full - waited;
  };
  const auto on_arrival = [this, run, index] {
    if (--runs_[run].flows_left[index] == 0) finish_slice(run, index);
  };
  if (is_switch(it.src) || is_switch(it.dst)) {
    // One NVLink hop between a GPU and its server's switch.
    const bool into = is_switch(it.dst);
    const int32_t gpu = (*r.gpus)[static_cast<size_t>(into ? it.src : it.dst)];
    const sim::flow::LinkId link = switch_link(gpu, into);
    const double usage = r.routes->switch_usage[item];
    r.flows_left[index] = 1;
    ++stats_.flows;
    net_.start_shared(bytes, std::span<const sim::flow::LinkId>(&link, 1), std::span<const double>(&usage, 1),
                      latency(net_.latency(link), false), on_arrival, r.weight);
    return;
  }
  const Routes& rs = *r.routes->routes[item];
  if (rs.empty()) {  // same GPU: nothing crosses the network
    r.flows_left[index] = 1;
    engine_.schedule_in(sim::Time::zero(), on_arrival);
    return;
  }
  r.flows_left[index] = static_cast<uint32_t>(rs.size());
  stats_.flows += rs.size();
  for (uint32_t k = 0; k < rs.size(); ++k) {
    const SharedRoute& sr = rs[k];
    const sim::flow::FlowId id = net_.start_shared(rs.size() == 1 ? bytes : bytes.scaled(sr.fraction), sr.links,
                                                   sr.usage, latency(sr.latency, sr.cross_node), on_arrival, r.weight);
    const uint32_t slot = sim::flow::FlowNetwork::slot_of(id);
    if (slot >= tracked_.size()) tracked_.resize(slot + 1);
    tracked_[slot] = Tracked{id, run, item, k};
  }
}

void FlowExecutor::reroute(const topology::Router& router) {
  router_ = &router;
  const topology::Topology& t = router.topology();
  degraded_ = false;
  for (topology::LinkId l = 0; l < t.link_count() && !degraded_; ++l) degraded_ = t.link(l).factor < 1.0;
  // The communicators of the runs in flight, kept before the route caches go.
  std::vector<uint8_t> idle(runs_.size(), 0);
  for (const uint32_t id : free_runs_) idle[id] = 1;
  std::vector<std::vector<int32_t>> gpus(runs_.size());
  for (size_t id = 0; id < runs_.size(); ++id)
    if (!idle[id] && runs_[id].gpus != nullptr) gpus[id] = *runs_[id].gpus;
  for (auto& [plan, slot] : compiled_) slot.compiled->bound.clear();
  routes_.clear();
  for (size_t id = 0; id < runs_.size(); ++id) {
    Run& r = runs_[id];
    if (idle[id] || r.gpus == nullptr) continue;
    const auto& bound = bind(*r.plan, gpus[id], r.copies_id);
    r.routes = &bound.second;
    r.gpus = &bound.first.second;
  }
  // Flows in flight (in flow-slot order: deterministic) move onto their transfer's new routes.
  for (const Tracked& tr : tracked_) {
    if (!net_.is_running(tr.id)) continue;
    const Routes& rs = *runs_[tr.run].routes->routes[tr.item];
    TRAINSIM_ASSERT(!rs.empty(), "a transfer in flight has no route left");
    const SharedRoute& sr = rs[tr.route % rs.size()];
    net_.reroute(tr.id, sr.links, sr.usage);
  }
}

void FlowExecutor::finish_slice(uint32_t run, uint32_t index) {
  Run& r = runs_[run];
  const auto slices = static_cast<uint32_t>(r.slices);
  const uint32_t item = index / slices, slice = index % slices;
  const Compiled& c = *r.plan;
  // Starting flows never re-enters this run's callbacks synchronously, so `r` stays valid.
  const auto release = [&](uint32_t k, bool data) {
    if (data) r.ready[k] = engine_.now();
    if (--r.deps_left[k] == 0) start_slice(run, k);
  };
  if (slice + 1 < slices) release(index + 1, false);
  for (uint32_t d = c.dep_begin[item]; d < c.dep_begin[item + 1]; ++d)
    release(c.dependents[d] * slices + slice, c.queued[d] == 0);
  if (--r.pending == 0) {
    // Recycle the run before `done`, which may start new runs (and grow runs_).
    auto fn = std::move(r.done);
    r.done = nullptr;
    free_runs_.push_back(run);
    if (fn) fn();
  }
}

}  // namespace trainsim::models::collectives
