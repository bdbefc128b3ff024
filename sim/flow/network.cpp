#include "sim/flow/network.hpp"

#include <algorithm>
#include <cmath>

#include "sim/error.hpp"
#include "sim/flow/maxmin.hpp"

namespace trainsim::sim::flow {

LinkId FlowNetwork::add_link(Bandwidth capacity, Time latency) {
  TRAINSIM_ASSERT(capacity.bytes_per_second() >= 0.0, "negative link capacity");
  links_.push_back(Link{capacity.bytes_per_second(), latency, {}, 0.0});
  seen_link_.push_back(0);
  return static_cast<LinkId>(links_.size() - 1);
}

void FlowNetwork::set_capacity(LinkId link, Bandwidth capacity) {
  TRAINSIM_ASSERT(link < links_.size(), "unknown link ", link);
  TRAINSIM_ASSERT(capacity.bytes_per_second() >= 0.0, "negative link capacity");
  links_[link].capacity = capacity.bytes_per_second();
  resolve({link});
}

FlowId FlowNetwork::start(Bytes bytes, std::span<const LinkId> route, std::function<void()> done, double weight) {
  TRAINSIM_ASSERT(weight > 0.0, "flow weight must be positive");
  const auto id = static_cast<FlowId>(flows_.size());
  Flow fl;
  fl.route.assign(route.begin(), route.end());
  fl.remaining = static_cast<double>(bytes.count());
  fl.weight = weight;
  fl.done = std::move(done);
  Time latency = Time::zero();
  for (const LinkId l : fl.route) {
    TRAINSIM_ASSERT(l < links_.size(), "unknown link ", l);
    latency += links_[l].latency;
  }
  flows_.push_back(std::move(fl));
  seen_flow_.push_back(0);
  // Latency phase first: the flow uses no bandwidth until its first byte could arrive.
  engine_.schedule_in(latency, [this, id] { activate(id); });
  return id;
}

void FlowNetwork::activate(FlowId f) {
  Flow& fl = flows_[f];
  fl.updated = engine_.now();
  if (fl.remaining <= 0.0 || fl.route.empty()) {
    finish(f);
    return;
  }
  fl.active = true;
  ++active_;
  for (const LinkId l : fl.route) links_[l].flows.push_back(f);
  resolve(fl.route);
}

void FlowNetwork::advance(Flow& fl) {
  const Time now = engine_.now();
  if (fl.active && now > fl.updated) {
    const double moved = std::min(fl.remaining, fl.rate * (now - fl.updated).seconds());
    fl.remaining -= moved;
    for (const LinkId l : fl.route) links_[l].carried += moved;
  }
  fl.updated = now;
}

void FlowNetwork::finish(FlowId f) {
  Flow& fl = flows_[f];
  std::vector<LinkId> freed;
  if (fl.active) {
    advance(fl);
    for (const LinkId l : fl.route) links_[l].carried += fl.remaining;  // rounding residue of the last interval
    fl.remaining = 0;
    fl.active = false;
    --active_;
    for (const LinkId l : fl.route) {
      auto& v = links_[l].flows;
      v.erase(std::find(v.begin(), v.end(), f));
    }
    freed = fl.route;
  }
  ++completed_;
  auto done = std::move(fl.done);
  fl.done = nullptr;
  if (!freed.empty()) resolve(freed);
  if (done) done();
}

void FlowNetwork::reschedule(FlowId f) {
  Flow& fl = flows_[f];
  engine_.cancel(fl.completion);
  fl.completion = EventId{};
  if (fl.rate <= 0.0) return;  // stalled (a failed link): resumes when capacity returns
  const Time left = Time::from_seconds_ceil(fl.remaining / fl.rate);
  fl.completion = engine_.schedule_in(left, [this, f] { finish(f); });
}

void FlowNetwork::resolve(const std::vector<LinkId>& seeds) {
  // Connected component of active flows reachable through shared links (deterministic order).
  ++stamp_;
  std::vector<LinkId> link_queue;
  std::vector<FlowId> comp;
  for (const LinkId l : seeds)
    if (seen_link_[l] != stamp_) seen_link_[l] = stamp_, link_queue.push_back(l);
  for (size_t q = 0; q < link_queue.size(); ++q)
    for (const FlowId f : links_[link_queue[q]].flows) {
      if (seen_flow_[f] == stamp_) continue;
      seen_flow_[f] = stamp_;
      comp.push_back(f);
      for (const LinkId l : flows_[f].route)
        if (seen_link_[l] != stamp_) seen_link_[l] = stamp_, link_queue.push_back(l);
    }
  if (comp.empty()) return;
  std::sort(comp.begin(), comp.end());
  std::sort(link_queue.begin(), link_queue.end());
  MaxMinProblem prob;
  prob.capacity.reserve(link_queue.size());
  for (const LinkId l : link_queue) prob.capacity.push_back(links_[l].capacity);
  prob.uses.resize(comp.size());
  prob.weight.resize(comp.size());
  for (size_t i = 0; i < comp.size(); ++i) {
    Flow& fl = flows_[comp[i]];
    advance(fl);
    for (const LinkId l : fl.route)
      prob.uses[i].push_back(
          static_cast<uint32_t>(std::lower_bound(link_queue.begin(), link_queue.end(), l) - link_queue.begin()));
    prob.weight[i] = fl.weight;
  }
  const std::vector<double> rates = solve_maxmin(prob);
  ++solves_;
  variables_solved_ += comp.size();
  for (size_t i = 0; i < comp.size(); ++i) {
    Flow& fl = flows_[comp[i]];
    if (rates[i] == fl.rate && engine_.is_pending(fl.completion)) continue;  // unchanged: keep its event
    fl.rate = rates[i];
    reschedule(comp[i]);
  }
}

}  // namespace trainsim::sim::flow
