#include "traces/sinks/recorders.hpp"

#include <vector>

#include "traces/sinks/memory_slots.hpp"

namespace trainsim::traces {

void Recorders::attach(models::workload::RunOptions& run) {
  if (records_flows()) run.reuse_durations = false;
  auto before = std::move(run.before_run);
  run.before_run = [this, before](sim::Engine& engine, const models::workload::Workload& w) {
    if (before) before(engine, w);
    engine_ = &engine;
    if (options_.trace_file.empty()) return;
    trace_ = std::make_unique<ChromeTraceRecorder>(engine, w.graph);
    if (options_.memory_of) trace_->set_memory(&w.memory_events, memory_slots(*options_.memory_of, w));
  };
  auto on_network = std::move(run.on_network);
  run.on_network = [this, on_network](sim::flow::FlowNetwork& net, const topology::Topology& t) {
    if (on_network) on_network(net, t);
    if (!records_flows()) return;
    std::vector<std::string> labels = options_.trace_file.empty() && options_.link_csv.empty()
                                          ? std::vector<std::string>(t.link_count())
                                          : link_labels(t);
    flows_ = std::make_unique<FlowRecorder>(net, std::move(labels));
    if (trace_) trace_->set_flows(flows_.get());
  };
}

void Recorders::write_trace() const {
  if (trace_) trace_->write_file(options_.trace_file);
}

void Recorders::write_link_csv() const {
  // 200 bins over the iteration: per-link utilization timelines small enough to plot.
  if (flows_ && !options_.link_csv.empty() && engine_)
    flows_->write_link_csv(options_.link_csv, engine_->now(), 200, "--link-csv");
}

}  // namespace trainsim::traces
