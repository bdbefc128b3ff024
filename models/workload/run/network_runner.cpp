#include "models/workload/run/network_runner.hpp"

#include <algorithm>
#include <memory>
#include <sstream>

#include "models/collectives/flow_collective.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "sim/error.hpp"
#include "topology/spec.hpp"

namespace trainsim::models::workload {

namespace col = collectives;

NetworkCommRunner::NetworkCommRunner(const Job& job, const Workload& w, Fidelity fidelity, sim::Engine& engine,
                                     const std::vector<Fault>& static_faults, bool symmetric_rotations,
                                     int route_threads)
    : job_(job), w_(w), fidelity_(fidelity), engine_(engine), net_(engine), symmetric_(symmetric_rotations) {
  const sim::config::Json spec = hardware::network_spec(job.cluster);
  // Ring channels stand for each other only where each channel leaves its servers on a rail of
  // its own and the fabric blocks nowhere (see plan()): on a plain fat tree every GPU of a server
  // shares the server's leaf, and the channels' ECMP collisions on its uplinks set the pace.
  symmetric_channels_ =
      symmetric_ && spec.value("builder", "") == "rail_optimized" && spec.value("oversubscription", 1.0) <= 1.0;
  topo_ = std::make_unique<topology::Topology>(
      topology::build_topology(spec, hardware::network_gpus(job.cluster, job.gpus), "cluster.network"));
  for (const Fault& f : static_faults)
    if (f.is_link())
      for (const auto l : fault_links(f, *topo_)) topo_->degrade(l, f.kind == Fault::Kind::kLinkDown ? 0.0 : f.factor);
  router_ = std::make_unique<topology::Router>(*topo_, topology::routing_params(spec, *topo_, "cluster.network"));
  col::add_topology_links(*topo_, net_);
  // Step fusion past 16 steps (FlowExecutor): a 128-rank data-parallel ring runs in 16 super-steps.
  // On the LLaMA-3-405B / 16,384-GPU benchmark it moves the iteration time by 0.13% and halves
  // the flows (docs/accuracy.md#network).
  col::ExecOptions eo;
  eo.max_steps = kMaxSteps;
  exec_ = std::make_unique<col::FlowExecutor>(engine, net_, *router_, eo);
  plans_.resize(w.comms.size());
  algorithms_.resize(w.comms.size());
  orders_.resize(w.comms.size());
  offsets_.resize(2 * w.groups.size());
  memo_.resize(w.comms.size());
  rotations_.resize(w.comms.size());
  costs_.resize(w.comms.size());
  bases_.resize(w.comms.size());
  in_flight_.assign(w.groups.size(), 0);
  reused_.resize(w.groups.size());
  group_starts_.assign(w.groups.size(), 0);
  // A static fault that cuts the job in two: it stops before it starts (simulate.cpp), so no
  // routes are computed.
  if (!disconnected().empty()) return;
  // Every communication's routes between servers, found at once (on several threads).
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (uint32_t c = 0; c < w.comms.size(); ++c) {
    plan(c);
    for (const auto& order : orders_[c]) exec_->route_pairs(*plans_[c], order, offsets(c), pairs, rotations_[c]);
  }
  router_->prefetch(pairs, route_threads);
  // Which groups' routes touch each link, then each communicator's conflicts: the other groups
  // on its links.
  std::vector<std::vector<uint32_t>> on_link(net_.link_count());
  for (uint32_t c = 0; c < w.comms.size(); ++c) {
    const uint32_t g = w.comms[c].group;
    auto& links = memo_[c].links;
    for (const auto& order : orders_[c]) exec_->links_of(*plans_[c], order, offsets(c), links, rotations_[c]);
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());
    for (const auto l : links)
      if (std::find(on_link[l].begin(), on_link[l].end(), g) == on_link[l].end()) on_link[l].push_back(g);
  }
  for (uint32_t c = 0; c < w.comms.size(); ++c) {
    auto& conflicts = memo_[c].conflicts;
    for (const auto l : memo_[c].links)
      for (const uint32_t g : on_link[l])
        if (g != w.comms[c].group) conflicts.push_back(g);
    std::sort(conflicts.begin(), conflicts.end());
    conflicts.erase(std::unique(conflicts.begin(), conflicts.end()), conflicts.end());
  }
}

NetworkCommRunner::~NetworkCommRunner() = default;

const col::CollectivePlan& NetworkCommRunner::plan(uint32_t comm) {
  if (plans_[comm]) return *plans_[comm];
  const CommInfo& c = w_.comms[comm];
  const std::vector<int32_t>& gpus = w_.groups[c.group];
  // NCCL's algorithm, protocol and channels for this size and group (nccl_tuning.hpp).
  col::ChannelPlan cp = col::plan_channels(col::CollectiveSpec{c.op, c.bytes, 0}, col::group_on(*topo_, gpus), gpus,
                                           "auto", col::NcclContext{&job_.cluster, {}}, &col::PlanCache::shared());
  costs_[comm] = cp.cost;
  bases_[comm] = cp.base;
  algorithms_[comm] = std::move(cp.algorithm);
  orders_[comm] = std::move(cp.orders);
  if (symmetric_channels_ && fidelity_ == Fidelity::kRepresentative && algorithms_[comm] == "ring" &&
      orders_[comm].size() > 1) {
    // NCCL's ring channels (channel c: each server's ranks rotated by c, ring_channel_orders) run
    // at once, each on its own images of channel 0's links: channel 0 stands for all of them
    // under orbit constraints (FlowExecutor, rank rotations) on a non-blocking rail-optimized
    // fabric (within 0.2% of every channel, simulate_test).
    const col::Group g = col::group_on(*topo_, gpus);
    col::RankRotation rot{g.node_count(), col::detail::fewest_per_node(g), true,
                          static_cast<int32_t>(orders_[comm].size())};
    rot.orbits = true;
    rotations_[comm] = rot;
    orders_[comm].resize(1);
  }
  if (symmetric_ && fidelity_ == Fidelity::kRepresentative && algorithms_[comm] == "all_to_all_direct" &&
      orders_[comm].size() == 1) {
    const col::RankRotation rot = all_to_all_rotation(orders_[comm][0]);
    if (!rot.none()) {
      // Rank 0's transfers stand for everyone's (FlowExecutor, rank rotations).
      auto own = std::make_shared<col::CollectivePlan>(*cp.plan);
      for (col::Step& st : own->steps) std::erase_if(st.transfers, [](const col::Transfer& t) { return t.src != 0; });
      cp.plan = std::move(own);
      rotations_[comm] = rot;
    }
  }
  plans_[comm] = std::move(cp.plan);
  return *plans_[comm];
}

col::RankRotation NetworkCommRunner::all_to_all_rotation(const std::vector<int32_t>& gpus) const {
  // Servers in order with the positions of the group's GPUs on each (relative to its first one).
  std::vector<std::vector<int32_t>> local;
  int32_t server = -1, first = 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (i > 0 && gpus[i] <= gpus[i - 1]) return {};
    const int32_t sv = topo_->server_of(static_cast<size_t>(gpus[i]));
    if (sv != server) {
      server = sv;
      first = gpus[i];
      local.emplace_back();
    }
    local.back().push_back(gpus[i] - first);
  }
  for (const auto& l : local)
    if (l != local.front()) return {};
  return col::RankRotation{static_cast<int32_t>(local.size()), static_cast<int32_t>(local.front().size())};
}

const std::vector<int32_t>& NetworkCommRunner::offsets(uint32_t comm) {
  const uint32_t group = w_.comms[comm].group;
  // A transfer between two ranks of one stage (a context-parallel ring step) is made by every
  // ring of the stage at once; other groups tile the stage.
  const bool p2p = w_.comms[comm].op == col::CollectiveOp::kSendRecv;
  const size_t key = 2 * static_cast<size_t>(group) + (p2p ? 1 : 0);
  if (offsets_[key]) return *offsets_[key];
  auto out = std::make_unique<std::vector<int32_t>>();
  if (fidelity_ == Fidelity::kRepresentative) {
    // The communicators of one kind partition a stage's tp*cp*dp ranks into translates of each
    // other (Megatron's rank order tp-cp-dp-pp), so the copies of this group are the translates
    // that tile the stage: walk the stage's positions in order and start a copy at each position
    // no copy covers yet (the smallest member of its copy).
    const std::vector<int32_t>& gpus = w_.groups[group];
    const int64_t per_stage = job_.tp * job_.cp * job_.dp;
    const int64_t base = gpus[0] / per_stage * per_stage;
    std::vector<int64_t> local;  // members in the first member's stage, relative to its start
    for (const int32_t g : gpus)
      if (g / per_stage * per_stage == base) local.push_back(g - base);
    std::vector<bool> covered(static_cast<size_t>(per_stage), false);
    const int64_t g0 = local.front();
    const bool overlapping = p2p && local.size() == 2;
    for (int64_t r = 0; r < per_stage; ++r) {
      if (covered[static_cast<size_t>(r)] || r < g0) continue;
      const int64_t delta = r - g0;
      // Ring transfers are not translates along the CP dimension (the wrap-around hop): copies
      // move along TP and DP only, each standing for its own (t, d) ring edge into CP rank 0.
      if (overlapping && (delta / job_.tp) % job_.cp != 0) continue;
      bool fits = true;
      for (const int64_t x : local)
        fits = fits && x + delta < per_stage && (overlapping || !covered[static_cast<size_t>(x + delta)]);
      if (!fits) continue;
      covered[static_cast<size_t>(r)] = true;
      if (!overlapping)
        for (const int64_t x : local) covered[static_cast<size_t>(x + delta)] = true;
      out->push_back(static_cast<int32_t>(delta));
    }
  }
  offsets_[key] = std::move(out);
  return *offsets_[key];
}

void NetworkCommRunner::start(sim::task::TaskIndex i, const sim::task::Task& t, sim::task::TaskExecutor& exec) {
  const uint32_t comm = i < w_.task_comm.size() ? w_.task_comm[i] : Workload::kNoComm;
  if (comm == Workload::kNoComm) {  // not communication after all: its fixed duration
    engine_.schedule_in(t.spec.duration, [&exec, i] { exec.complete(i); });
    return;
  }
  const CommInfo& c = w_.comms[comm];
  Memo& m = memo_[comm];
  const bool alone = quiet(comm);
  overlap_reused(comm);
  const uint64_t ticket = starts_around(comm) + 1;
  ++in_flight_[c.group];
  ++group_starts_[c.group];
  // Data-parallel traffic (gradient reduction, parameter gathers) may yield to latency-critical
  // collectives on shared links.
  const double weight = t.spec.category == static_cast<uint8_t>(Category::kDpComm) ? job_.dp_comm_weight : 1.0;
  if (reuse_durations_ && alone && !m.overlapped && m.duration > sim::Time::zero()) {
    ++memoized;
    Reused& r = reused_[c.group];
    r = Reused{comm, i, &exec, engine_.now(), weight, {}};
    r.finish = engine_.schedule_in(m.duration, [this, comm, i, &exec] {
      reused_[w_.comms[comm].group].comm = Workload::kNoComm;
      finish(comm, i, exec, sim::Time::zero(), 0, false);
    });
    return;
  }
  // The launch (kernel start and protocol setup) and any fixed extra (the pipeline's re-gather
  // over NVLink) come before the first byte moves.
  const sim::Time started = engine_.now();
  run_flows(comm, weight, launch_of(comm), 1.0, [this, comm, i, &exec, started, ticket, record = alone] {
    finish(comm, i, exec, started, ticket, record);
  });
}

sim::Time NetworkCommRunner::launch_of(uint32_t comm) const {
  return job_.cluster.collective_launch + w_.comms[comm].extra + bases_[comm];
}

void NetworkCommRunner::run_flows(uint32_t comm, double weight, sim::Time launch, double share,
                                  std::function<void()> done) {
  const col::CollectivePlan& p = plan(comm);
  const auto& orders = orders_[comm];
  col::TransferCost cost = costs_[comm];
  cost.wire_factor *= share;
  cost.latency_share = share;
  if (orders.size() == 1) {
    exec_->run(p, orders[0], launch, std::move(done), offsets(comm), weight, rotations_[comm], cost);
    return;
  }
  auto left = std::make_shared<size_t>(orders.size());
  auto all = std::make_shared<std::function<void()>>(std::move(done));
  for (const auto& order : orders)
    exec_->run(
        p, order, launch,
        [left, all] {
          if (--*left == 0) (*all)();
        },
        offsets(comm), weight, {}, cost);
}

void NetworkCommRunner::fail_link(const Fault& f) {
  for (const auto l : fault_links(f, *topo_)) {
    topo_->degrade(l, f.kind == Fault::Kind::kLinkDown ? 0.0 : f.factor);
    net_.set_capacity(l, topo_->capacity(l));
  }
  // A measured duration no longer holds on the changed links (simulate turns reuse off for runs
  // with link faults during the run, so no reused collective is in flight on them).
  reuse_durations_ = false;
  // Same routes (the router's snapshot still has the link), but the faulty link now joins the
  // shared route of every transfer whose copies cross it.
  exec_->reroute(*router_);
}

int32_t NetworkCommRunner::nvswitch_gpu(const Fault& f) const {
  for (const auto l : fault_links(f, *topo_)) {
    const auto& a = topo_->node(topo_->link_src(l));
    const auto& b = topo_->node(topo_->link_dst(l));
    if (a.kind == topology::NodeKind::kGpu && b.kind == topology::NodeKind::kNvSwitch)
      for (size_t g = 0; g < topo_->gpu_count(); ++g)
        if (topo_->gpu_node(g) == topo_->link_src(l)) return static_cast<int32_t>(g);
  }
  return -1;
}

std::string NetworkCommRunner::disconnected() const {
  const auto gpu = topo_->disconnected_gpu(static_cast<size_t>(job_.gpus));
  if (!gpu) return "";
  std::ostringstream why;
  why << "no working route between GPU " << *gpu << " and GPU 0";
  return why.str();
}

bool NetworkCommRunner::reroute(std::string& why) {
  why = disconnected();
  if (!why.empty()) return false;
  auto router = std::make_unique<topology::Router>(*topo_, router_->params());
  exec_->reroute(*router);
  router_ = std::move(router);
  return true;
}

uint64_t NetworkCommRunner::starts_around(uint32_t comm) const {
  uint64_t n = group_starts_[w_.comms[comm].group];
  for (const uint32_t g : memo_[comm].conflicts) n += group_starts_[g];
  return n;
}

bool NetworkCommRunner::quiet(uint32_t comm) const {
  if (in_flight_[w_.comms[comm].group] != 0) return false;
  return std::all_of(memo_[comm].conflicts.begin(), memo_[comm].conflicts.end(),
                     [&](uint32_t g) { return in_flight_[g] == 0; });
}

bool NetworkCommRunner::share_links(uint32_t a, uint32_t b) const {
  const auto& x = memo_[a].links;
  const auto& y = memo_[b].links;
  for (size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    if (x[i] == y[j]) return true;
    x[i] < y[j] ? ++i : ++j;
  }
  return false;
}

void NetworkCommRunner::overlap_reused(uint32_t comm) {
  const auto overlap = [&](uint32_t g) {
    Reused& r = reused_[g];
    if (r.comm == Workload::kNoComm || (r.comm != comm && !share_links(r.comm, comm))) return;
    // The reused collective runs the rest of its bytes as flows from now on, beside the new one:
    // the launch it has not served yet, then the share of its bytes (and of its steps' latencies)
    // its measured duration had not moved by now, at an even pace after the launch.
    const sim::Time elapsed = engine_.now() - r.started, launch = launch_of(r.comm), d = memo_[r.comm].duration;
    const sim::Time moving = d - launch;
    const double left = moving > sim::Time::zero()
                            ? std::clamp(1.0 - std::max(0.0, (elapsed - launch).seconds()) / moving.seconds(), 0.0, 1.0)
                            : 0.0;
    if (left <= 0.0) return;  // its last byte is arriving now: its finish event stands
    ++memo_overlaps;
    memo_[r.comm].overlapped = true;
    engine_.cancel(r.finish);
    --memoized;  // it ends as flows (counted by the executor)
    const uint32_t c = r.comm;
    const sim::task::TaskIndex i = r.task;
    sim::task::TaskExecutor& exec = *r.exec;
    r.comm = Workload::kNoComm;
    run_flows(c, r.weight, std::max(sim::Time::zero(), launch - elapsed), left,
              [this, c, i, &exec] { finish(c, i, exec, sim::Time::zero(), 0, false); });
  };
  overlap(w_.comms[comm].group);
  for (const uint32_t g : memo_[comm].conflicts) overlap(g);
}

void NetworkCommRunner::finish(uint32_t comm, sim::task::TaskIndex i, sim::task::TaskExecutor& exec, sim::Time started,
                               uint64_t ticket, bool record) {
  const uint32_t group = w_.comms[comm].group;
  --in_flight_[group];
  // Recorded only if nothing else on its links started meanwhile (it would have shared them).
  if (record && memo_[comm].duration == sim::Time::zero() && starts_around(comm) == ticket)
    memo_[comm].duration = engine_.now() - started;
  exec.complete(i);
}

}  // namespace trainsim::models::workload
