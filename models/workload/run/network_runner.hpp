#pragma once
// Runs a workload's communication tasks (collectives and pipeline transfers) as flows on the
// cluster's topology: each task's collective is planned once by the algorithm the automatic choice
// picks for its size and group (collective.hpp), and every transfer of the plan becomes flows that
// share link bandwidth max-min fairly with everything else in flight at that moment: TP, DP and
// PP traffic of every stage, ECMP collisions, oversubscribed spines, degraded links.
//
// Representative fidelity (one rank per stage): a task of the representative rank stands for
// the symmetric copies of its communicator that run at the same time on the other TP and DP
// ranks of the stage: a TP group for its dp copies, a DP group for its tp copies, a pipeline
// transfer for all tp x dp of them. They run as one set of flows with per-link multiplicity
// (FlowExecutor, symmetric copies), so a spine carries the load of all copies without simulating
// them. Full fidelity runs every communicator explicitly; tests check the two agree.
//
// All-to-alls in representative fidelity run as rank 0's transfers standing for every rank's
// (FlowExecutor, rank rotations) when the group spreads evenly over its servers: n - 1 flows
// instead of n (n - 1). A ring that NCCL runs on several channels (each server's ranks rotated by
// the channel, as on an NVL72 rack's 8 data-parallel ranks) runs channel 0 standing for the
// others under orbit constraints, where the fabric between the servers is a non-blocking
// rail-optimized one (each channel leaves its servers on its own rail; on a plain fat tree or an
// oversubscribed one the channels' ECMP collisions on shared uplinks set the pace, and every
// channel runs): on LLaMA-3-405B over 16,384 GB200 GPUs 8x fewer data-parallel flows, the
// iteration 0.3% from every channel run (docs/network.md). The constructor's symmetric_rotations
// turns both off (the reference; tests check both against every flow run).
//
// Reused durations. A collective whose links no other collective is using can only share
// bandwidth with itself, so its duration is a pure function of its plan: the first one that runs
// so, from start to finish, runs as flows and the repeats that start so reuse its measured
// duration (NetworkStats::memoized). "So" means that no collective of its own group nor of any
// group whose routes touch its links (Memo::conflicts, from the routes) is in flight: a TP group
// inside an NVSwitch server has no such group (DP and PP traffic leaves through the NICs); a TP
// group inside an NVL72 rack shares the GPUs' NVLinks with the DP ring through the rack, so it
// reuses its duration while no DP collective is in flight and runs as flows beside one. When a
// collective starts on the links of a reused one in flight, the reused one turns into flows
// there and then: the launch it has not served yet, then the share of its bytes and of its steps'
// latencies its measured duration had not moved by then (at an even pace), sharing the links
// with the newcomer (counted in memo_overlaps; that split is the approximation, within 0.01% of
// running every collective as flows in ReusedDurations.*, and that communication reuses no more:
// its collectives are seldom alone). Reused collectives put no flows on the network, so
// recorders switch reuse off (set_reuse_durations).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/collectives/flow_executor.hpp"
#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/fault.hpp"
#include "sim/flow/network.hpp"
#include "sim/task/executor.hpp"
#include "topology/graph.hpp"
#include "topology/routing.hpp"

namespace trainsim::models::workload {

class NetworkCommRunner final : public sim::task::TaskRunner {
 public:
  static constexpr int32_t kMaxSteps = 16;  // ExecOptions::max_steps of the simulation

  // Builds the cluster's topology for job.gpus GPUs (ConfigError at "cluster.network" when it
  // cannot be built) and a flow network on `engine`. `static_faults` are link faults present from
  // the start (fault.hpp; others are ignored): routes avoid their dead links from the outset.
  // `symmetric_rotations` off: all-to-alls run every rank's transfers and rings every channel (the
  // reference for the rank-rotation fast modes above). The routes between servers of every
  // communication are found up front on `route_threads` threads (topology::Router::prefetch).
  NetworkCommRunner(const Job& job, const Workload& w, Fidelity fidelity, sim::Engine& engine,
                    const std::vector<Fault>& static_faults = {}, bool symmetric_rotations = true,
                    int route_threads = 1);
  // Off: every collective runs as flows, so recorders (traces, link CSV) see all traffic.
  void set_reuse_durations(bool on) { reuse_durations_ = on; }
  ~NetworkCommRunner() override;

  void start(sim::task::TaskIndex i, const sim::task::Task& t, sim::task::TaskExecutor& exec) override;

  // A link fault strikes now (fault.hpp): the links' capacity drops to factor x nominal (0: dead)
  // in the topology and the flow network, and the shared routes of every transfer take in the
  // faulty links (their flows stall or slow); collectives stop reusing measured durations.
  void fail_link(const Fault& f);
  // Traffic reroutes around dead links now: a Router over the working links, and every transfer
  // in flight moves onto its new routes. False when some GPU of the job can no longer reach the
  // others (nothing rerouted then); `why` says which.
  bool reroute(std::string& why);
  // The GPU whose cable into its server's NVSwitch the link fault names, or -1. Such a cable
  // dying takes its GPU out of the job: NVLink fatal errors need a GPU reset, and in-network
  // reductions (NVLS) cannot go around it.
  int32_t nvswitch_gpu(const Fault& f) const;
  // A GPU of the job that cannot reach the others over working links, described (or "").
  std::string disconnected() const;

  const topology::Topology& topology() const { return *topo_; }
  sim::flow::FlowNetwork& network() { return net_; }
  const sim::flow::FlowNetwork& network() const { return net_; }
  const collectives::FlowExecutor& executor() const { return *exec_; }
  // Algorithm used for each of the workload's communication descriptors ("" until used).
  const std::string& algorithm(uint32_t comm) const { return algorithms_[comm]; }

 private:
  const collectives::CollectivePlan& plan(uint32_t comm);
  // The rank rotations an all-to-all over `gpus` may stand for (none unless the group spreads
  // evenly over its servers, q ranks on each at the same positions).
  collectives::RankRotation all_to_all_rotation(const std::vector<int32_t>& gpus) const;
  // Offsets of the symmetric copies of interned communication `comm` (representative fidelity).
  const std::vector<int32_t>& offsets(uint32_t comm);

  struct Memo {
    std::vector<uint32_t> conflicts;       // the other groups whose routes touch its links
    std::vector<sim::flow::LinkId> links;  // its routes' links, sorted
    sim::Time duration;                    // launch to last byte, once measured alone (zero: not yet)
    bool overlapped = false;               // a collective started beside a reused one: reuse no more
  };
  // Collectives started so far by its group and the groups its links share (a snapshot at start
  // equal to one at finish: nothing else used the links meanwhile).
  uint64_t starts_around(uint32_t comm) const;
  // No collective of its group nor of a group sharing its links in flight.
  bool quiet(uint32_t comm) const;
  // A collective of `comm` starts: every reused one in flight on its links runs the rest as flows.
  void overlap_reused(uint32_t comm);
  bool share_links(uint32_t a, uint32_t b) const;  // two communications' routes share a link
  // NCCL's launch and base latency and the communication's fixed extra, before the first byte.
  sim::Time launch_of(uint32_t comm) const;
  // Runs `comm`'s plan as flows after `launch`, `share` of its bytes (1: all); `done` at its end.
  void run_flows(uint32_t comm, double weight, sim::Time launch, double share, std::function<void()> done);
  void finish(uint32_t comm, sim::task::TaskIndex i, sim::task::TaskExecutor& exec, sim::Time started, uint64_t ticket,
              bool record);
  // A group's reused collective in flight (comm kNoComm: none).
  struct Reused {
    uint32_t comm = Workload::kNoComm;
    sim::task::TaskIndex task = 0;
    sim::task::TaskExecutor* exec = nullptr;
    sim::Time started;
    double weight = 1.0;
    sim::EventId finish{};
  };

  const Job& job_;
  const Workload& w_;
  Fidelity fidelity_;
  sim::Engine& engine_;
  std::unique_ptr<topology::Topology> topo_;
  std::unique_ptr<topology::Router> router_;
  sim::flow::FlowNetwork net_;
  std::unique_ptr<collectives::FlowExecutor> exec_;
  std::vector<std::shared_ptr<const collectives::CollectivePlan>> plans_;  // per comm, made on first use
  std::vector<std::string> algorithms_;                                    // per comm
  std::vector<std::vector<std::vector<int32_t>>> orders_;                  // per comm: GPU order of each channel
  std::vector<std::unique_ptr<std::vector<int32_t>>> offsets_;             // per group, made on first use
  std::vector<collectives::RankRotation> rotations_;                       // per comm (all-to-all fast mode)
  std::vector<collectives::TransferCost> costs_;                           // per comm: NCCL's protocol on the wire
  std::vector<sim::Time> bases_;                                           // per comm: NCCL's base latency
  std::vector<Memo> memo_;                                                 // per comm
  std::vector<uint32_t> in_flight_;                                        // per group
  std::vector<Reused> reused_;                                             // per group
  std::vector<uint64_t> group_starts_;                                     // per group: collectives started
  bool reuse_durations_ = true;
  bool symmetric_;                   // rank rotations allowed (the constructor's symmetric_rotations)
  bool symmetric_channels_ = false;  // and ring channels stand for each other (a non-blocking fabric)

 public:
  uint64_t memoized = 0, memo_overlaps = 0;  // collectives that reused a duration; overlaps (see above)
};

}  // namespace trainsim::models::workload
