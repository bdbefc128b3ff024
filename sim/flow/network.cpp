#include "sim/flow/network.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/error.hpp"
#include "sim/log.hpp"

namespace trainsim::sim::flow {

namespace {
// std::llround for bytes (x >= 0, below 2^63) without the library call: x - trunc(x) is exact.
int64_t whole_bytes(double x) {
  const auto t = static_cast<int64_t>(x);
  return x - static_cast<double>(t) >= 0.5 ? t + 1 : t;
}
}  // namespace

FlowNetwork::FlowNetwork(Engine& engine, std::span<const LinkSpec> links) : engine_(engine) {
  links_.reserve(links.size());
  for (const LinkSpec& l : links) add_link(l.capacity, l.latency);
}

FlowNetwork::~FlowNetwork() {
  TRAINSIM_LOG_DEBUG(
      kNetwork, "run summary: ", links_.size(), " links, ", stats_.flows_started, " flows started, ",
      stats_.flows_completed, " completed, ", running_, " still running; ", stats_.solves, " max-min solves over ",
      stats_.variables_solved, " flows (",
      stats_.solves ? static_cast<double>(stats_.variables_solved) / static_cast<double>(stats_.solves) : 0.0,
      " per solve)");
  engine_.cancel(resolve_event_);
  for (const Flow& f : flows_)
    if (f.phase != Phase::kFree) engine_.cancel(f.event);
}

LinkId FlowNetwork::add_link(Bandwidth capacity, Time latency) {
  // `>=` also rejects NaN.
  TRAINSIM_ASSERT(capacity.bytes_per_second() >= 0.0, "link capacity must be >= 0");
  TRAINSIM_ASSERT(latency >= Time::zero() && !latency.is_infinite(), "link latency must be finite and >= 0");
  Link l;
  l.capacity = capacity.bytes_per_second();
  l.latency = latency;
  links_.push_back(std::move(l));
  return static_cast<LinkId>(links_.size() - 1);
}

void FlowNetwork::set_capacity(LinkId link, Bandwidth capacity) {
  TRAINSIM_ASSERT(link < links_.size(), "unknown link ", link);
  TRAINSIM_ASSERT(capacity.bytes_per_second() >= 0.0, "link capacity must be >= 0");
  if (links_[link].capacity == capacity.bytes_per_second()) return;
  links_[link].capacity = capacity.bytes_per_second();
  mark_dirty(link);
}

uint32_t FlowNetwork::take_slot() {
  if (!free_slots_.empty()) {
    const uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  flows_.emplace_back();
  return static_cast<uint32_t>(flows_.size() - 1);
}

FlowId FlowNetwork::start(Bytes bytes, std::span<const LinkId> route, Callback done, double weight) {
  TRAINSIM_ASSERT(bytes.count() >= 0, "negative flow size ", bytes.count());
  TRAINSIM_ASSERT(weight > 0.0 && std::isfinite(weight), "flow weight must be positive, got ", weight);
  for (const LinkId l : route) TRAINSIM_ASSERT(l < links_.size(), "unknown link ", l);
  const uint32_t slot = take_slot();
  Flow& f = flows_[slot];
  Time latency = Time::zero();
  f.route.clear();
  for (const LinkId l : route) {
    f.route.push_back({l, 0, 1.0});
    latency += links_[l].latency;
  }
  return start_impl(bytes, latency, std::move(done), weight, slot);
}

FlowId FlowNetwork::start_shared(Bytes bytes, std::span<const LinkId> links, std::span<const double> usage,
                                 Time latency, Callback done, double weight) {
  TRAINSIM_ASSERT(links.size() == usage.size(), "start_shared: ", links.size(), " links but ", usage.size(),
                  " usage coefficients");
  TRAINSIM_ASSERT(latency >= Time::zero() && !latency.is_infinite(), "flow latency must be finite and >= 0");
  TRAINSIM_ASSERT(bytes.count() >= 0, "negative flow size ", bytes.count());
  TRAINSIM_ASSERT(weight > 0.0 && std::isfinite(weight), "flow weight must be positive, got ", weight);
  for (size_t k = 0; k < links.size(); ++k) {
    TRAINSIM_ASSERT(links[k] < links_.size(), "unknown link ", links[k]);
    TRAINSIM_ASSERT(usage[k] > 0.0 && std::isfinite(usage[k]), "usage must be positive, got ", usage[k]);
  }
  const uint32_t slot = take_slot();
  Flow& f = flows_[slot];
  f.route.clear();
  for (size_t k = 0; k < links.size(); ++k) f.route.push_back({links[k], 0, usage[k]});
  return start_impl(bytes, latency, std::move(done), weight, slot);
}

FlowId FlowNetwork::start_impl(Bytes bytes, Time latency, Callback done, double weight, uint32_t slot) {
  Flow& f = flows_[slot];
  f.done = std::move(done);
  f.remaining = static_cast<double>(bytes.count());
  f.rate = 0.0;
  f.weight = weight;
  f.bytes = bytes;
  f.carried_before = 0;
  f.updated = engine_.now();
  f.finish_at = Time::infinite();
  f.solved_away = false;
  f.phase = Phase::kLatency;
  ++running_;
  ++stats_.flows_started;
  const FlowId id = id_of(slot, f.generation);
  TRAINSIM_LOG_TRACE(kNetwork, "flow ", id, " start at ", engine_.now().count_ns(), " ns: ", bytes.count(),
                     " bytes over ", f.route.size(), " links, latency ", latency.count_ns(), " ns");
  // Observers hear of the flow before any rate it takes from a vacancy.
  if (!signals_.on_flow_start.empty()) signals_.on_flow_start.emit(id, bytes, engine_.now());
  if (latency == Time::zero() && f.remaining > 0.0 && !f.route.empty()) {
    // No latency phase: it joins its links now, in this instant's one re-solve (a deferred
    // activation would cost a second solve of the same instant).
    f.phase = Phase::kBandwidth;
    f.rate = -1.0;
    join_or_replace(slot);
  } else {
    // Latency phase first: the flow uses no bandwidth until its first byte could arrive.
    f.event = engine_.schedule_in(latency, [this, slot] { activate(slot); });
  }
  return id;
}

const FlowNetwork::Flow* FlowNetwork::find(FlowId flow) const {
  const auto slot = static_cast<uint32_t>(flow & 0xffffffffu);
  const auto generation = static_cast<uint32_t>(flow >> 32);
  if (slot >= flows_.size()) return nullptr;
  const Flow& f = flows_[slot];
  return f.phase != Phase::kFree && f.generation == generation ? &f : nullptr;
}

Bandwidth FlowNetwork::rate(FlowId flow) const {
  const Flow* f = find(flow);
  return Bandwidth::bytes_per_s(f != nullptr && f->phase == Phase::kBandwidth ? std::max(f->rate, 0.0) : 0.0);
}

bool FlowNetwork::is_running(FlowId flow) const { return find(flow) != nullptr; }

void FlowNetwork::route_of(FlowId flow, std::vector<LinkId>& links, std::vector<double>& usage) const {
  const Flow* f = find(flow);
  if (f == nullptr) return;
  for (const Hop& h : f->route) {
    links.push_back(h.link);
    usage.push_back(h.usage);
  }
}

double FlowNetwork::remaining_now(const Flow& f) const {
  if (f.rate <= 0.0) return f.remaining;  // stalled or not yet solved: nothing moved since `updated`
  const Time now = engine_.now();
  // Due at this instant: the completion time was rounded up, so every byte is across.
  if (now >= f.finish_at) return 0.0;
  const double moved = f.rate * static_cast<double>((now - f.updated).count_ns()) / 1e9;
  return std::max(f.remaining - moved, 0.0);
}

Bytes FlowNetwork::bytes_carried(LinkId link) const {
  TRAINSIM_ASSERT(link < links_.size(), "unknown link ", link);
  const Link& l = links_[link];
  double partial = 0.0;
  for (const Member& m : l.members) {
    const Flow& f = flows_[m.slot];
    // Bytes moved on its current route (what it carried on routes it left is counted there).
    const double moved = static_cast<double>(f.bytes.count() - f.carried_before) - remaining_now(f);
    partial += std::max(moved, 0.0) * f.route[m.hop].usage;
  }
  return Bytes(l.completed_bytes + static_cast<int64_t>(std::floor(partial)));
}

void FlowNetwork::activate(uint32_t slot) {
  Flow& f = flows_[slot];
  f.event = EventId{};
  if (f.remaining <= 0.0 || f.route.empty()) {  // nothing to share: done after the latency
    complete(slot);
    return;
  }
  f.phase = Phase::kBandwidth;
  f.updated = engine_.now();
  f.rate = -1.0;  // differs from any solved rate: the first solve schedules its completion
  join_or_replace(slot);
}

uint64_t FlowNetwork::route_key(const Flow& f) {
  uint64_t h = std::bit_cast<uint64_t>(f.weight);
  for (const Hop& hop : f.route) h = (h ^ hop.link ^ std::bit_cast<uint64_t>(hop.usage)) * 0x100000001b3ULL + 0x9e37;
  return h;
}

void FlowNetwork::vacate(uint32_t slot) {
  const Flow& f = flows_[slot];
  Vacancy v;
  v.key = route_key(f);
  v.rate = f.rate;
  v.weight = f.weight;
  v.begin = static_cast<uint32_t>(vacated_hops_.size());
  vacated_hops_.insert(vacated_hops_.end(), f.route.begin(), f.route.end());
  v.end = static_cast<uint32_t>(vacated_hops_.size());
  v.next = vacancy_head_.exchange(v.key, static_cast<uint32_t>(vacancies_.size()));
  vacancies_.push_back(v);
  schedule_resolve();  // a vacancy nobody takes marks its links dirty there
}

void FlowNetwork::join_or_replace(uint32_t slot) {
  Flow& f = flows_[slot];
  if (!vacancies_.empty()) {
    for (uint32_t i = vacancy_head_.find(route_key(f)); i != Vacancy::kNone; i = vacancies_[i].next) {
      Vacancy& v = vacancies_[i];
      if (v.taken || v.weight != f.weight || v.end - v.begin != f.route.size()) continue;
      bool same = true;
      for (uint32_t k = 0; same && k < f.route.size(); ++k) {
        const Hop& a = vacated_hops_[v.begin + k];
        same = a.link == f.route[k].link && a.usage == f.route[k].usage;
      }
      if (!same) continue;
      // The flows sharing bandwidth are the same set as at the last solve: it takes the rate of
      // the one it replaces and nobody else's changes.
      v.taken = true;
      join_links(slot, false);
      f.updated = engine_.now();
      f.rate = v.rate;
      reschedule(slot);
      if (!signals_.on_flow_rate_change.empty())
        signals_.on_flow_rate_change.emit(id_of(slot, f.generation), Bandwidth::bytes_per_s(f.rate), engine_.now());
      return;
    }
  }
  join_links(slot, true);
}

void FlowNetwork::join_links(uint32_t slot, bool dirty) {
  Flow& f = flows_[slot];
  for (uint32_t h = 0; h < f.route.size(); ++h) {
    Link& l = links_[f.route[h].link];
    f.route[h].pos = static_cast<uint32_t>(l.members.size());
    l.members.push_back({slot, h});
    if (dirty) mark_dirty(f.route[h].link);
  }
}

void FlowNetwork::leave_links(uint32_t slot, bool dirty) {
  Flow& f = flows_[slot];
  for (uint32_t h = 0; h < f.route.size(); ++h) {
    const LinkId link = f.route[h].link;
    Link& l = links_[link];
    // Swap-remove (pos is read now: an earlier removal may have moved this entry).
    const uint32_t pos = f.route[h].pos;
    const Member moved = l.members.back();
    l.members[pos] = moved;
    flows_[moved.slot].route[moved.hop].pos = pos;
    l.members.pop_back();
    if (dirty) mark_dirty(link);
  }
}

bool FlowNetwork::reroute(FlowId flow, std::span<const LinkId> links, std::span<const double> usage) {
  TRAINSIM_ASSERT(links.size() == usage.size(), "reroute: ", links.size(), " links but ", usage.size(),
                  " usage coefficients");
  TRAINSIM_ASSERT(!links.empty(), "reroute: a flow needs at least one link");
  for (size_t k = 0; k < links.size(); ++k) {
    TRAINSIM_ASSERT(links[k] < links_.size(), "unknown link ", links[k]);
    TRAINSIM_ASSERT(usage[k] > 0.0 && std::isfinite(usage[k]), "usage must be positive, got ", usage[k]);
  }
  if (find(flow) == nullptr) return false;
  const auto slot = static_cast<uint32_t>(flow & 0xffffffffu);
  Flow& f = flows_[slot];
  const auto set_route = [&] {
    f.route.clear();
    for (size_t k = 0; k < links.size(); ++k) f.route.push_back({links[k], 0, usage[k]});
  };
  if (f.phase == Phase::kLatency) {  // no bandwidth used yet: only the route changes
    set_route();
    return true;
  }
  const Time now = engine_.now();
  if (f.rate > 0.0 && now >= f.finish_at) return false;  // its completion event is due now
  bool same = f.route.size() == links.size();
  for (size_t k = 0; same && k < links.size(); ++k) same = f.route[k].link == links[k] && f.route[k].usage == usage[k];
  if (same) return true;
  // The old links keep what crossed them (whole bytes: old plus new add up to the flow's size).
  const double left = remaining_now(f);
  const int64_t moved =
      std::llround(static_cast<double>(f.bytes.count()) - left) - f.carried_before;  // on the route it leaves
  for (const Hop& h : f.route) links_[h.link].completed_bytes += std::llround(static_cast<double>(moved) * h.usage);
  f.carried_before += moved;
  leave_links(slot, true);
  f.remaining = left;
  f.updated = now;
  f.rate = -1.0;  // re-solved on the new links: the solve schedules its completion
  engine_.cancel(f.event);
  f.event = EventId{};
  f.finish_at = Time::infinite();
  set_route();
  join_links(slot, true);
  return true;
}

void FlowNetwork::complete(uint32_t slot) {
  Flow& f = flows_[slot];
  const FlowId id = id_of(slot, f.generation);
  if (f.phase == Phase::kBandwidth) {
    const int64_t carried = f.bytes.count() - f.carried_before;  // on this route
    for (const Hop& h : f.route)
      links_[h.link].completed_bytes += h.usage == 1.0 ? carried : whole_bytes(static_cast<double>(carried) * h.usage);
    // A flow that had its share leaves a vacancy: one with the same route and weight starting at
    // this instant (the next slice on a connection) takes it without a re-solve.
    if (f.rate > 0.0 && !f.solved_away) {
      vacate(slot);
      leave_links(slot, false);
    } else {
      leave_links(slot, true);
    }
  }
  Callback done = std::move(f.done);
  f.done = nullptr;
  f.event = EventId{};
  f.phase = Phase::kFree;
  f.rate = 0.0;
  ++f.generation;
  free_slots_.push_back(slot);
  --running_;
  ++stats_.flows_completed;
  TRAINSIM_LOG_TRACE(kNetwork, "flow ", id, " finish at ", engine_.now().count_ns(), " ns (", running_, " running)");
  if (!signals_.on_flow_end.empty()) signals_.on_flow_end.emit(id, engine_.now());
  if (done) done();  // last: it may start flows (and reuse this slot)
}

void FlowNetwork::mark_dirty(LinkId link) {
  Link& l = links_[link];
  if (!l.dirty) {
    l.dirty = true;
    dirty_.push_back(link);
  }
  schedule_resolve();
}

void FlowNetwork::schedule_resolve() {
  // One re-solve per instant, after the events already queued for it: a collective that starts
  // a thousand flows together costs one solve, not a thousand.
  if (!engine_.is_pending(resolve_event_)) resolve_event_ = engine_.schedule_in(Time::zero(), [this] { resolve(); });
}

void FlowNetwork::resolve() {
  resolve_event_ = EventId{};
  for (const Vacancy& v : vacancies_) {
    if (v.taken) continue;
    for (uint32_t k = v.begin; k < v.end; ++k) {
      Link& l = links_[vacated_hops_[k].link];
      if (!l.dirty) {
        l.dirty = true;
        dirty_.push_back(vacated_hops_[k].link);
      }
    }
  }
  vacancy_head_.clear();
  vacancies_.clear();
  vacated_hops_.clear();
  if (dirty_.empty()) return;
  Scratch& s = scratch_;
  const Time now = engine_.now();
  if (++stamp_ == 0) {  // wrapped: clear old marks so none can match
    for (Link& l : links_) l.stamp = 0;
    for (Flow& f : flows_) f.stamp = 0;
    stamp_ = 1;
  }
  // The connected component(s) of the dirty links, breadth first: deterministic order.
  s.links.clear();
  s.flows.clear();
  const auto visit = [&](LinkId link) {
    Link& l = links_[link];
    if (l.stamp == stamp_) return;
    l.stamp = stamp_;
    l.local = static_cast<uint32_t>(s.links.size());
    s.links.push_back(link);
  };
  for (const LinkId link : dirty_) {
    links_[link].dirty = false;
    visit(link);
  }
  dirty_.clear();
  for (size_t q = 0; q < s.links.size(); ++q)
    for (const Member& m : links_[s.links[q]].members) {
      Flow& f = flows_[m.slot];
      if (f.stamp == stamp_) continue;
      f.stamp = stamp_;
      // A flow due at this instant (its completion event is queued for now) holds no bandwidth.
      if (f.rate > 0.0 && now >= f.finish_at) {
        f.solved_away = true;
        continue;
      }
      s.flows.push_back(m.slot);
      for (const Hop& h : f.route) visit(h.link);
    }
  if (s.flows.empty()) return;

  MaxMinProblem& p = s.problem;
  p.clear();
  for (const LinkId link : s.links) p.add_constraint(links_[link].capacity);
  for (const uint32_t slot : s.flows) {
    const Flow& f = flows_[slot];
    s.uses.clear();
    s.usage.clear();
    for (const Hop& h : f.route) {
      s.uses.push_back(links_[h.link].local);
      s.usage.push_back(h.usage);
    }
    p.add_variable(s.uses, s.usage, f.weight);
  }
  s.solver.solve(p, s.rates);
  ++stats_.solves;
  stats_.variables_solved += s.flows.size();
  engine_.charge(s.flows.size());
  TRAINSIM_LOG_TRACE(kNetwork, "re-solve ", stats_.solves, " at ", now.count_ns(), " ns: ", s.flows.size(),
                     " flows on ", s.links.size(), " links");

  for (size_t i = 0; i < s.flows.size(); ++i) {
    const uint32_t slot = s.flows[i];
    Flow& f = flows_[slot];
    if (s.rates[i] == f.rate) continue;  // unchanged: its completion event stands
    // Advance over the exact elapsed interval at the old rate, then continue at the new one.
    f.remaining = remaining_now(f);
    f.updated = now;
    f.rate = s.rates[i];
    reschedule(slot);
    if (!signals_.on_flow_rate_change.empty())
      signals_.on_flow_rate_change.emit(id_of(slot, f.generation), Bandwidth::bytes_per_s(f.rate), now);
  }
}

void FlowNetwork::reschedule(uint32_t slot) {
  Flow& f = flows_[slot];
  engine_.cancel(f.event);
  f.event = EventId{};
  f.finish_at = Time::infinite();
  if (f.rate <= 0.0) return;  // stalled (a failed link): resumes when capacity returns
  const Time left = Time::from_seconds_ceil(f.remaining / f.rate);
  const Time at = engine_.now() + left;
  // Too slow to finish within the clock's 292 years: the input's error, not a flow that hangs
  // until the queue drains and reports a deadlock.
  if (at.is_infinite()) throw_time_overflow();
  f.finish_at = at;
  f.event = engine_.schedule_at(at, [this, slot] { complete(slot); });
}

}  // namespace trainsim::sim::flow
