#include "models/workload/run/run_workload.hpp"

#include <algorithm>
#include <memory>
#include <thread>

#include "models/workload/run/network_runner.hpp"
#include "models/workload/run/slow_compute.hpp"

namespace trainsim::models::workload {

sim::config::Json NetworkStats::to_json() const {
  return sim::config::Json{{"topology", topology},
                           {"links", links},
                           {"collectives", collectives},
                           {"transfers", transfers},
                           {"flows", flows},
                           {"solves", solves},
                           {"flows_solved", flows_solved},
                           {"memoized_collectives", memoized},
                           {"memo_overlaps", memo_overlaps}};
}

NetworkStats network_stats(const NetworkCommRunner& n) {
  const auto& ns = n.network().stats();
  const auto& es = n.executor().stats();
  return NetworkStats{n.topology().builder(), n.topology().link_count(),
                      es.collectives,         es.transfers,
                      ns.flows_completed,     ns.solves,
                      ns.variables_solved,    n.memoized,
                      n.memo_overlaps};
}

void run_workload(const Workload& w, const Job& job, const RunOptions& options,
                  const std::function<void(sim::Engine&)>& prepare,
                  const std::function<void(const RunView&)>& inspect) {
  if (!options.faults.empty()) check_faults(job, options.faults);
  sim::Engine engine(static_cast<uint64_t>(job.seed));
  engine.set_event_limit(options.event_limit);
  engine.set_work_limit(options.solver_limit);
  if (prepare) prepare(engine);
  if (options.before_run) options.before_run(engine, w);
  sim::task::TaskExecutor exec(engine, w.graph);
  std::unique_ptr<NetworkCommRunner> network;
  if (job.network == Network::kFlow) {
    // Link faults at time 0 are there from the start: the network is built with them.
    std::vector<Fault> from_start;
    for (const Fault& f : options.faults)
      if (f.is_link() && f.at == sim::Time::zero()) from_start.push_back(f);
    network = std::make_unique<NetworkCommRunner>(
        job, w, options.fidelity, engine, from_start,
        // Faults break the symmetry rank rotations rely on.
        options.symmetric_rotations && options.faults.empty(),
        options.route_threads > 0 ? options.route_threads : static_cast<int>(std::thread::hardware_concurrency()));
    // A link that fails during the run may be one a memoized collective is using: every
    // collective then runs as flows (as fast, within 0.01%, when nothing fails; docs/faults.md).
    const bool link_events = std::any_of(options.faults.begin(), options.faults.end(),
                                         [](const Fault& f) { return f.is_link() && f.at > sim::Time::zero(); });
    network->set_reuse_durations(options.reuse_durations && !link_events);
    exec.set_runner(sim::task::TaskKind::kCollective, *network);
    exec.set_runner(sim::task::TaskKind::kP2P, *network);
    if (options.on_network) options.on_network(network->network(), network->topology());
  }
  std::unique_ptr<SlowComputeRunner> slow;
  std::unique_ptr<FaultInjector> injector;
  if (!options.faults.empty()) {
    slow = std::make_unique<SlowComputeRunner>(w);
    exec.set_runner(sim::task::TaskKind::kCompute, *slow);
    injector = std::make_unique<FaultInjector>(exec, w, job, options.faults, network.get(), slow.get());
    injector->arm();
  }
  const sim::Time end = exec.run();
  RunView view{
      w, engine, exec, end, std::nullopt, std::nullopt, engine.limit_reached() && exec.completed() < w.graph.size()};
  if (network) view.network = network_stats(*network);
  if (injector) view.faults = injector->report();
  if (inspect) inspect(view);
  if (options.after_run) options.after_run(w, exec);
}

}  // namespace trainsim::models::workload
