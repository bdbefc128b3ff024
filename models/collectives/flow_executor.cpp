#include "models/collectives/flow_executor.hpp"

#include <memory>

namespace trainsim::models::collectives {

void add_topology_links(const topology::Topology& t, sim::flow::FlowNetwork& net) {
  for (topology::LinkId id = 0; id < t.link_count(); ++id) net.add_link(t.capacity(id), t.link(id).latency);
}

void FlowExecutor::run(const CollectivePlan& plan, const std::vector<int32_t>& gpus, sim::Time launch,
                       std::function<void()> done) {
  auto r = std::make_shared<Run>(Run{&plan, gpus, 0, 0, std::move(done)});
  engine_.schedule_in(launch, [this, r] { start_step(r); });
}

void FlowExecutor::start_step(std::shared_ptr<Run> r) {
  // Skip empty steps; finish after the last one.
  while (r->step < r->plan->steps.size() && r->plan->steps[r->step].transfers.empty()) ++r->step;
  if (r->step == r->plan->steps.size()) {
    if (r->done) r->done();
    return;
  }
  const Step& s = r->plan->steps[r->step];
  std::vector<std::pair<std::vector<sim::flow::LinkId>, sim::Bytes>> flows;
  for (const Transfer& t : s.transfers) {
    const auto src = static_cast<size_t>(r->gpus[static_cast<size_t>(t.src)]);
    const auto dst = static_cast<size_t>(r->gpus[static_cast<size_t>(t.dst)]);
    for (const topology::Route& route : router_.routes(src, dst, next_flow_++))
      flows.emplace_back(route.links, t.bytes.scaled(route.fraction));
  }
  r->pending = flows.size();
  ++r->step;
  if (flows.empty()) {
    start_step(r);
    return;
  }
  for (const auto& [links, bytes] : flows)
    net_.start(bytes, links, [this, r] {
      if (--r->pending == 0) start_step(r);
    });
}

}  // namespace trainsim::models::collectives
