#pragma once
// Flow-level network: transfers are flows over routes of links. A flow first waits the sum of its
// links' latencies (no bandwidth used), then shares link bandwidth max-min fairly (weighted) with
// the other flows in their bandwidth phase. When flows join or leave, or a link's capacity
// changes, only the connected component of flows sharing links with them is re-solved, once per
// simulated instant; their bytes are advanced over the exact elapsed whole-ns interval and their
// completion events cancelled and rescheduled (completion time rounded up to whole ns). A flow
// that starts on the route (and with the weight) of one that finished at the same instant takes
// its rate without a re-solve: the set of flows sharing bandwidth is the one last solved, and so
// is its max-min solution (a connection's next pipeline slice costs no solve). A flow with no
// latency joins its links at once, in its instant's re-solve.

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine.hpp"
#include "sim/flow/key_index.hpp"
#include "sim/flow/maxmin.hpp"
#include "sim/signals.hpp"
#include "sim/units.hpp"

namespace trainsim::sim::flow {

using LinkId = uint32_t;
// Unique over a network's lifetime (slots are recycled, each reuse bumps a generation).
using FlowId = uint64_t;

struct LinkSpec {
  Bandwidth capacity;
  Time latency;
};

// Observation points (traces, statistics). Emitting costs nothing measurable without subscribers.
struct FlowSignals {
  Signal<FlowId, Bytes, Time> on_flow_start;            // start() called (latency phase begins)
  Signal<FlowId, Bandwidth, Time> on_flow_rate_change;  // bandwidth-phase rate set or changed
  Signal<FlowId, Time> on_flow_end;                     // last byte arrived, before `done` runs
};

struct FlowNetworkStats {
  uint64_t flows_started = 0;
  uint64_t flows_completed = 0;
  uint64_t solves = 0;            // max-min solves (one per affected component set and instant)
  uint64_t variables_solved = 0;  // flows over all solves
};

class FlowNetwork {
 public:
  explicit FlowNetwork(Engine& engine) : engine_(engine) {}
  FlowNetwork(Engine& engine, std::span<const LinkSpec> links);
  // Cancels the network's pending events: the engine may outlive it.
  ~FlowNetwork();
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  LinkId add_link(Bandwidth capacity, Time latency);
  size_t link_count() const { return links_.size(); }
  Bandwidth capacity(LinkId link) const { return Bandwidth::bytes_per_s(links_[link].capacity); }
  Time latency(LinkId link) const { return links_[link].latency; }
  // Degradation or failure: capacity 0 stalls the link's flows until it is raised again.
  void set_capacity(LinkId link, Bandwidth capacity);

  // Starts a transfer of `bytes` over `route` (link ids, in order); `done` runs when the last
  // byte arrives. `weight` is the sharing penalty: 2 gets half the share of a weight-1 flow on a
  // common bottleneck. A zero-byte flow completes right after its latency phase; a flow with an
  // empty route completes at once.
  FlowId start(Bytes bytes, std::span<const LinkId> route, Callback done, double weight = 1.0);
  // A flow that stands for several identical ones (a representative of symmetric groups): it
  // uses usage[k] units of links[k]'s capacity per unit of its own rate (usage[k] copies of it
  // cross that link), waits `latency` before its bandwidth phase, and completes when its own
  // bytes have arrived. bytes_carried() counts usage[k] x bytes on links[k].
  FlowId start_shared(Bytes bytes, std::span<const LinkId> links, std::span<const double> usage, Time latency,
                      Callback done, double weight = 1.0);

  // Moves a running flow onto new links (a reroute around a failed link): the bytes it has moved
  // so far stay counted on its old links, the rest crosses the new ones, with `usage` as in
  // start_shared. A flow in its latency phase keeps its activation time. False (and nothing
  // changes) when the flow is no longer running or its last byte arrives at this instant.
  bool reroute(FlowId flow, std::span<const LinkId> links, std::span<const double> usage);
  // The links of a running flow and its usage of each (1 for ordinary flows), appended to the
  // vectors; nothing once the flow has finished.
  void route_of(FlowId flow, std::vector<LinkId>& links, std::vector<double>& usage) const;
  // Current rate; zero outside the bandwidth phase, while stalled, or once finished.
  Bandwidth rate(FlowId flow) const;
  bool is_running(FlowId flow) const;
  // A dense index of a flow, reused once it has finished (for callers' side tables).
  static uint32_t slot_of(FlowId flow) { return static_cast<uint32_t>(flow & 0xffffffffu); }
  // Bytes that have crossed `link` so far (completed flows exactly, running ones up to now).
  Bytes bytes_carried(LinkId link) const;
  size_t running_flows() const { return running_; }
  const FlowNetworkStats& stats() const { return stats_; }
  FlowSignals& signals() { return signals_; }

 private:
  enum class Phase : uint8_t { kFree, kLatency, kBandwidth };
  struct Hop {
    LinkId link;
    uint32_t pos;        // index of this flow's entry in the link's member list
    double usage = 1.0;  // capacity units per unit of rate (copies of the flow on this link)
  };
  struct Member {  // a flow crossing a link: its slot and which hop of its route this is
    uint32_t slot;
    uint32_t hop;
  };
  struct Link {
    double capacity;  // bytes/s
    Time latency;
    std::vector<Member> members;  // flows in their bandwidth phase crossing this link
    int64_t completed_bytes = 0;  // bytes of completed flows that crossed it
    uint32_t stamp = 0;           // component search visit mark
    uint32_t local = 0;           // constraint index in the current solve
    bool dirty = false;           // waiting for the next re-solve
  };
  struct Flow {
    std::vector<Hop> route;
    Callback done;
    double remaining = 0;  // bytes, exact as of `updated`
    double rate = 0;       // bytes/s; < 0 while waiting for its first solve
    double weight = 1;
    Bytes bytes;
    int64_t carried_before = 0;  // whole bytes moved on routes it left (reroute)
    Time updated, finish_at;
    EventId event;  // activation (latency phase) or completion (bandwidth phase)
    uint32_t generation = 0;
    uint32_t stamp = 0;
    Phase phase = Phase::kFree;
    bool solved_away = false;  // a re-solve at its completion instant already gave its share away
  };
  // Scratch state of a re-solve, kept to avoid allocation.
  struct Scratch {
    std::vector<LinkId> links;
    std::vector<uint32_t> flows;
    MaxMinProblem problem;
    MaxMinSolver solver;
    std::vector<double> rates;
    std::vector<uint32_t> uses;
    std::vector<double> usage;
  };
  FlowId start_impl(Bytes bytes, Time latency, Callback done, double weight, uint32_t slot);
  uint32_t take_slot();

  static FlowId id_of(uint32_t slot, uint32_t generation) { return (FlowId{generation} << 32) | slot; }
  const Flow* find(FlowId flow) const;
  double remaining_now(const Flow& f) const;
  void activate(uint32_t slot);
  void complete(uint32_t slot);
  // Adds / removes a bandwidth-phase flow to / from its links' member lists (marks them dirty).
  // `dirty`: mark the links for the next re-solve (not when a flow takes or leaves a vacancy).
  void join_links(uint32_t slot, bool dirty);
  void leave_links(uint32_t slot, bool dirty);
  // A finished flow's place at this instant, and a starting flow taking one with its route.
  static uint64_t route_key(const Flow& f);
  void vacate(uint32_t slot);
  void join_or_replace(uint32_t slot);
  void mark_dirty(LinkId link);
  void schedule_resolve();
  void resolve();
  void reschedule(uint32_t slot);

  // A flow that finished at this instant with a share of bandwidth: its route (in vacated_hops_),
  // weight and rate. Cleared by the instant's re-solve, which marks untaken ones' links dirty.
  struct Vacancy {
    static constexpr uint32_t kNone = KeyIndex::kAbsent;
    uint64_t key = 0;
    double rate = 0, weight = 1;
    uint32_t begin = 0, end = 0;  // its hops in vacated_hops_
    uint32_t next = kNone;        // the previous vacancy with the same key
    bool taken = false;
  };

  Engine& engine_;
  std::vector<Vacancy> vacancies_;
  std::vector<Hop> vacated_hops_;
  KeyIndex vacancy_head_;  // the last vacancy of each route key at this instant
  std::vector<Link> links_;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_slots_;
  std::vector<LinkId> dirty_;
  EventId resolve_event_;
  uint32_t stamp_ = 0;
  size_t running_ = 0;
  FlowNetworkStats stats_;
  FlowSignals signals_;
  Scratch scratch_;
};

}  // namespace trainsim::sim::flow
