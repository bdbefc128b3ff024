#pragma once
// Flow-level network: transfers are flows over routes of links; each flow first waits the sum of
// its links' latencies, then shares link bandwidth max-min fairly with every other active flow.
// When a flow starts or ends, only the connected component of flows that share links with it is
// re-solved; their bytes are advanced over the exact elapsed interval and their completion
// events cancelled and rescheduled.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sim/engine.hpp"
#include "sim/units.hpp"

namespace trainsim::sim::flow {

using FlowId = uint32_t;
using LinkId = uint32_t;

class FlowNetwork {
 public:
  explicit FlowNetwork(Engine& engine) : engine_(engine) {}
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  LinkId add_link(Bandwidth capacity, Time latency);
  size_t link_count() const { return links_.size(); }
  // Degradation or failure (capacity 0 stalls the link's flows until it is restored).
  void set_capacity(LinkId link, Bandwidth capacity);

  // Starts a transfer of `bytes` over `route`; `done` runs when the last byte arrives. `weight`
  // is the sharing penalty (2 = half the share of a weight-1 flow on a common bottleneck).
  FlowId start(Bytes bytes, std::span<const LinkId> route, std::function<void()> done, double weight = 1.0);

  double rate(FlowId f) const { return flows_[f].rate; }
  // Bytes carried by a link so far (for utilisation), as of the last update touching it.
  double bytes_carried(LinkId l) const { return links_[l].carried; }
  uint64_t solves() const { return solves_; }
  uint64_t variables_solved() const { return variables_solved_; }
  uint64_t flows_completed() const { return completed_; }
  size_t active_flows() const { return active_; }

 private:
  struct Link {
    double capacity;
    Time latency;
    std::vector<FlowId> flows;  // active flows crossing the link
    double carried = 0;
  };
  struct Flow {
    std::vector<LinkId> route;
    double remaining = 0;  // bytes
    double rate = 0;       // bytes/s
    double weight = 1;
    Time updated;  // remaining is exact as of this time
    EventId completion;
    std::function<void()> done;
    bool active = false;
  };
  void activate(FlowId f);
  void finish(FlowId f);
  // Re-solves the flows connected (through shared links) to `seeds`.
  void resolve(const std::vector<LinkId>& seeds);
  void advance(Flow& fl);
  void reschedule(FlowId f);

  Engine& engine_;
  std::vector<Link> links_;
  std::vector<Flow> flows_;
  uint64_t solves_ = 0, variables_solved_ = 0, completed_ = 0;
  size_t active_ = 0;
  std::vector<uint32_t> seen_link_, seen_flow_;  // visit stamps for component searches
  uint32_t stamp_ = 0;
};

}  // namespace trainsim::sim::flow
