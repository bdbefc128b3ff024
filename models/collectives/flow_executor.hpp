#pragma once
// The one executor for every collective algorithm: runs a plan's steps as flows on a
// FlowNetwork whose links are the topology's links (same ids), routed by a Router. A step's
// transfers start together; the next step starts when all of them have arrived.

#include <functional>
#include <memory>
#include <vector>

#include "models/collectives/collective.hpp"
#include "sim/engine.hpp"
#include "sim/flow/network.hpp"
#include "topology/routing.hpp"

namespace trainsim::models::collectives {

// A FlowNetwork with one link per topology link (capacity x degradation factor, latency).
void add_topology_links(const topology::Topology& t, sim::flow::FlowNetwork& net);

class FlowExecutor {
 public:
  FlowExecutor(sim::Engine& engine, sim::flow::FlowNetwork& net, const topology::Router& router)
      : engine_(engine), net_(net), router_(router) {}
  // Runs `plan` over the communicator `gpus` (group rank i is GPU gpus[i]) after `launch`;
  // `done` runs when the last step has arrived.
  void run(const CollectivePlan& plan, const std::vector<int32_t>& gpus, sim::Time launch, std::function<void()> done);

 private:
  struct Run {
    const CollectivePlan* plan;
    std::vector<int32_t> gpus;
    size_t step = 0;
    size_t pending = 0;
    std::function<void()> done;
  };
  void start_step(std::shared_ptr<Run> r);

  sim::Engine& engine_;
  sim::flow::FlowNetwork& net_;
  const topology::Router& router_;
  uint64_t next_flow_ = 0;
};

}  // namespace trainsim::models::collectives
