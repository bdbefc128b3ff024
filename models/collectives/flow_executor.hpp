#pragma once
// The one executor for every collective algorithm: runs a plan's transfers as flows on a
// FlowNetwork whose links are the topology's links (same ids), routed by a Router.
//
// Order. A transfer starts as soon as the transfers in its `after` list have arrived (the data
// flow, see collective.hpp), not when its whole step has: a ring's chunk moves on as soon as it
// has landed, a tree's leaves do not wait for the other subtrees. A connection is FIFO, as
// NCCL's send queue to a peer is: a transfer also waits for the previous one between the same
// (src, dst) pair (with several in one step, as merged channels give, the one at the same place
// in its step), and the time it queued there after its data had arrived counts towards its
// route latency (the connection is a pipe: its first byte follows the previous one's last).
// Otherwise a hop faster than the next one downstream (an NVLink hop before a NIC, a healthy link
// before a degraded one) would run its later steps alongside the current one, and their max-min
// share of the slow link would starve the step that the next hop waits for.
//
// Pipelining. With ExecOptions::slice_bytes > 0 every transfer is cut into slices of about that
// size (at most max_slices): slice i of a transfer waits for slice i of its prerequisites and for
// its own slice i - 1, as NCCL pushes a channel's chunk through a connection slice by slice; only
// slice 0 waits the route's latency (the connection is a pipe: later slices follow back to back).
// Trees and hierarchical plans then overlap their stages; a ring gains only latency.
//
// Switches. A switch pseudo-rank (collective.hpp) is the NVSwitch of that server: a transfer into
// it is a flow on the GPU's NVLink into the switch, one out of it a flow on the switch's link to
// the GPU (a multicast is several of these, as the switch replicates the data).
//
// Symmetric copies (the fast mode). `run` can stand a plan for several identical communicators
// that run at the same time: copy j is the group with every GPU shifted by offsets[j]
// (offsets[0] = 0 is the group itself). Each transfer is then one flow whose capacity use on
// every link is the number of copies that cross it (FlowNetwork::start_shared): links only this
// group crosses count once, links the copies share (NICs, leaves, spines) count every copy, and
// links only other copies cross are their own mirror images and are left out, except degraded
// links (faults break the symmetry; the copy behind the slow link sets everyone's pace, as in
// synchronous training). Under the symmetry this is the max-min allocation of all copies run
// explicitly, at the cost of one.
//
// Rank rotations (the all-to-all fast mode). An all-to-all sends a block between every ordered
// pair of ranks, a set that every permutation of the ranks maps onto itself. When the group's
// ranks form m servers x q ranks (ascending GPU ids, q on each server), the rotations
// (k, i) -> ((k + a) mod m, (i + b) mod q), one per (a, b), move rank 0 onto every rank exactly
// once; so the plan's transfers out of rank 0 stand for all of them, each as one flow that counts
// its n images on the links they share, as symmetric copies do. A fabric whose servers are alike
// and whose rails are alike (the rotation maps rail i onto rail i + b) is symmetric under these
// maps; the runner checks the group's shape, tests check the result against every flow run.
//
// Reductions are fused into the transfers (as NCCL's reduce kernels are): no separate compute.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "models/collectives/collective.hpp"
#include "sim/engine.hpp"
#include "sim/flow/network.hpp"
#include "topology/routing.hpp"

namespace trainsim::models::collectives {

// A FlowNetwork with one link per topology link (capacity x degradation factor, latency).
void add_topology_links(const topology::Topology& t, sim::flow::FlowNetwork& net);

// The communicator `gpus` (group rank i is GPU gpus[i]) as a Group: each rank's server from the
// topology, NVLink SHARP when the topology offers in-network reduction.
Group group_on(const topology::Topology& t, const std::vector<int32_t>& gpus);

// See "Rank rotations": the group's ranks as `nodes` servers x `per_node` ranks (1 x 1: none).
// With local_only, the images are the rotations inside every server ((k, i) -> (k, i + b)): the
// channels of a ring that NCCL runs one per local GPU, each entering and leaving the servers
// through its own GPU, are images of channel 0 under them. Every image of every transfer counts on
// the links it crosses, as for the all-to-all: a GPU's NVLink carries one transfer of each channel
// per ring step (on a 72-GPU NVLink domain the NVLinks, not the NICs, bound a ring across racks).
struct RankRotation {
  int32_t nodes = 1, per_node = 1;
  bool local_only = false;
  // With local_only: the rotations by 0..local_count-1 (0: all per_node), as many as the channels
  // of a ring that NCCL runs on fewer channels than the server has GPUs (a 72-GPU NVLink domain).
  // Each server rotates its own ranks, so servers may hold different numbers of them (per_node
  // is then their fewest).
  int32_t local_count = 0;
  // The fraction of a link's other images that send at the same time as the representative (1:
  // all, the all-to-all's bulk exchange). A ring's channels drift apart and each waits out its
  // step latency between transfers, so fewer than all share a GPU's NVLink at any moment.
  double overlap = 1.0;
  // Orbit constraints instead of counted images: the links that are images of each other (found
  // by pairing each representative route with its images' routes hop by hop) form one orbit, and
  // the representatives' flows on any link of an orbit share its canonical link (the lowest id),
  // each using images / orbit size of it per unit of rate. Under the symmetry every link of an
  // orbit carries at each instant what the representatives carry on the whole orbit, so this is
  // exact whatever runs when (a hierarchical plan's phases one after another, pipelined by
  // slices); counted images assume every image of a link's representatives runs all the time.
  bool orbits = false;
  int32_t images() const { return local_only ? (local_count > 0 ? local_count : per_node) : nodes * per_node; }
  bool none() const { return images() <= 1; }
  friend auto operator<=>(const RankRotation&, const RankRotation&) = default;
};

struct ExecOptions {
  sim::Bytes slice_bytes;  // 0: transfers are not sliced
  int32_t max_slices = 8;
  // Step fusion (0: off). A plan of S > max_steps steps runs in super-steps of m = ceil(S /
  // max_steps) steps: the transfers of one (src, dst) pair within a super-step become one flow of
  // their summed bytes that pays their summed latency, and waits only for prerequisites in earlier
  // super-steps. Only plans whose every pair sends exactly once in each step of a super-step are
  // fused (a ring all-reduce / all-gather / reduce-scatter: its pipeline is full, so dropping the
  // chains inside a super-step keeps an idle network's timing exactly); trees, broadcast chains
  // and halving-doubling run unfused. Under contention a super-step averages the sharing over its
  // m steps. It bounds a 1,024-rank ring at max_steps x 1,024 flows instead of 2 x 1,023^2.
  int32_t max_steps = 0;
};

// How a run's transfers use the wire under the NCCL protocol that runs them (flow_protocol.hpp
// derives it from NCCL's choice): each transfer puts wire_factor x its bytes on its links (the
// protocol's flags and, for the engine-bound LL protocols, the time its threads take beyond the
// wire, as bytes), and with protocol_latency its first slice waits the protocol's per-step
// latency (inside a server or across servers) instead of the route's wire latency.
// slice_bytes (> 0) pipelines the run's transfers in slices of that many payload bytes (at most
// 64), as the protocol's buffer steps do, overriding ExecOptions::slice_bytes.
struct TransferCost {
  double wire_factor = 1.0;
  bool protocol_latency = false;
  sim::Time step_intra, step_inter;
  sim::Bytes slice_bytes;
  // What a transfer waited in its connection's queue after its data was there counts towards its
  // latency (the connection is a pipe); false: it pays its latency whole.
  bool queue_credit = true;
  // The share of each step's latency a transfer pays (the rest of a collective resumed part way,
  // whose bytes wire_factor scales down likewise).
  double latency_share = 1.0;
};

struct FlowExecutorStats {
  uint64_t collectives = 0;
  uint64_t transfers = 0;  // transfer slices started
  uint64_t flows = 0;      // flows started (a transfer may use several routes)
  uint64_t routes_computed = 0;
};

class FlowExecutor {
 public:
  FlowExecutor(sim::Engine& engine, sim::flow::FlowNetwork& net, const topology::Router& router,
               ExecOptions options = {});
  ~FlowExecutor();
  FlowExecutor(const FlowExecutor&) = delete;
  FlowExecutor& operator=(const FlowExecutor&) = delete;

  // Runs `plan` over the communicator `gpus` after `launch`; `done` runs when every transfer has
  // arrived. `plan` must outlive the run. `offsets` lists the symmetric copies (see above); empty
  // means the group alone. Every copy's GPUs must exist. `weight` is the sharing penalty of the
  // run's flows on shared links (FlowNetwork::start: 2 gets half a weight-1 flow's share).
  // With `rotation`, `plan` holds only the transfers out of rank 0 of an all-to-all and stands for
  // all of them (see "Rank rotations").
  void run(const CollectivePlan& plan, const std::vector<int32_t>& gpus, sim::Time launch, std::function<void()> done,
           const std::vector<int32_t>& offsets = {}, double weight = 1.0, RankRotation rotation = {},
           TransferCost cost = {});
  // Appends every link a run of `plan` over `gpus` with `offsets` would put a flow on (the same
  // routes run() uses, computed and cached now); links may repeat.
  void links_of(const CollectivePlan& plan, const std::vector<int32_t>& gpus, const std::vector<int32_t>& offsets,
                std::vector<sim::flow::LinkId>& out, RankRotation rotation = {});
  // Appends the pairs of GPUs on different servers whose routes a run of `plan` over `gpus` with
  // `offsets` and `rotation` takes (every copy's and image's), for Router::prefetch.
  void route_pairs(const CollectivePlan& plan, const std::vector<int32_t>& gpus, const std::vector<int32_t>& offsets,
                   std::vector<std::pair<uint32_t, uint32_t>>& out, RankRotation rotation = {});
  // The topology's links changed (a fault): from now on routes come from `router` (built over
  // the working links, or the old one when only capacities changed). Runs in flight continue on
  // the new routes, and their flows move their remaining bytes onto them (FlowNetwork::reroute;
  // sub-route k of a transfer onto new sub-route k). Faulty links any copy crosses join the
  // shared routes from now on (see "Symmetric copies"). `router` must outlive its use.
  void reroute(const topology::Router& router);
  const FlowExecutorStats& stats() const { return stats_; }

 private:
  // One way to send a transfer: links with their usage (copies crossing them), latency, share.
  struct SharedRoute {
    std::vector<sim::flow::LinkId> links;
    std::vector<double> usage;
    sim::Time latency;
    double fraction = 1.0;
    bool cross_node = false;  // its endpoints are on different servers
  };
  using Routes = std::vector<SharedRoute>;
  // A plan flattened for dependency-driven execution (cached per plan).
  struct Compiled {
    struct Item {
      int32_t src, dst;
      sim::Bytes bytes;
      uint32_t deps;        // transfers in its `after` list
      uint32_t merged = 1;  // plan transfers fused into it (step fusion): latency paid that often
      uint32_t step = 0;    // the plan step (with fusion: the first) it belongs to
    };
    // One (communicator, copies)'s binding: every item's routes (null for switch hops), and per
    // item its usage of its switch hop (1, or with rotations inside servers, the images of the
    // item's step that share the hop, as rotated_routes counts them for other links).
    struct Bound {
      std::vector<const Routes*> routes;
      std::vector<double> switch_usage;
    };
    std::vector<Item> items;
    std::vector<uint32_t> dep_begin, dependents;  // CSR: items waiting for item i
    std::vector<uint8_t> queued;                  // per edge: 1 when it is only the connection's FIFO order
    // Routes of every item for one (communicator, copies): computed on the group's first run.
    std::map<std::pair<uint32_t, std::vector<int32_t>>, Bound> bound;
  };
  struct Run {
    Compiled* plan = nullptr;
    uint32_t copies_id = 0;
    const Compiled::Bound* routes = nullptr;
    const std::vector<int32_t>* gpus = nullptr;  // the key of `routes` in plan->bound
    int32_t slices = 1;
    std::vector<uint32_t> deps_left;  // per item x slice
    std::vector<uint32_t> flows_left;
    std::vector<sim::Time> ready;  // per item x slice: when its data was there (last data dependency)
    size_t pending = 0;            // item slices not yet arrived
    double weight = 1.0;
    TransferCost cost;
    std::function<void()> done;
  };

  Compiled& compile(const CollectivePlan& plan);
  // Flattens `plan` into `c` with super-steps of m steps; false when fusion would change the
  // plan's timing (then it is built with m = 1).
  bool build(const CollectivePlan& plan, size_t m, Compiled& c) const;
  // The copies a run stands for: translates by `offsets`, each with the group's rank rotations.
  struct Copies {
    std::vector<int32_t> offsets;
    RankRotation rotation;
    std::vector<int32_t> members;  // the group's GPUs (only with a rotation)
    // With rotations inside servers: where each server's ranks begin in `members`, then its
    // size (servers may hold different numbers of the group's ranks).
    std::vector<int32_t> starts;
    friend auto operator<=>(const Copies&, const Copies&) = default;
    size_t count() const { return std::max<size_t>(offsets.size(), 1) * static_cast<size_t>(rotation.images()); }
    // GPU `gpu` of the group in copy j (j = 0: itself).
    int64_t image(size_t j, int32_t gpu) const;
  };
  uint32_t copies_id(const std::vector<int32_t>& offsets, RankRotation rotation, const std::vector<int32_t>& gpus);
  // The routes of every item of `c` for this communicator and copies (cached in c.bound).
  const std::pair<const std::pair<uint32_t, std::vector<int32_t>>, Compiled::Bound>& bind(
      Compiled& c, const std::vector<int32_t>& gpus, uint32_t copies);
  const Routes& routes(int32_t src, int32_t dst, uint32_t copies);
  // With rank rotations: the routes of every item of `c`, weighed by the load all images put on
  // their links (into the route cache).
  void rotated_routes(const Compiled& c, const std::vector<int32_t>& gpus, uint32_t copies);
  // With orbit constraints: the same routes on the orbits' canonical links (see RankRotation).
  void orbit_routes(const Compiled& c, const std::vector<int32_t>& gpus, uint32_t copies);
  // With rotations inside servers: per item, its switch hop's usage (see Compiled::Bound).
  std::vector<double> switch_usage(const Compiled& c, const std::vector<int32_t>& gpus, uint32_t copies) const;
  // Directed link ids of a GPU's cable into / out of its server's NVSwitch.
  sim::flow::LinkId switch_link(int32_t gpu, bool into_switch) const;
  void start_slice(uint32_t run, uint32_t index);
  void finish_slice(uint32_t run, uint32_t index);

  sim::Engine& engine_;
  sim::flow::FlowNetwork& net_;
  const topology::Router* router_;
  ExecOptions options_;
  std::vector<int64_t> uplink_;  // per GPU: its link into an NVSwitch, or -1
  bool degraded_ = false;        // some link has a fault (factor < 1): copies are not all mirror images
  // What identifies a plan beyond its address: its shape when it was compiled.
  struct Fingerprint {
    size_t steps = 0, transfers = 0;
    int32_t chunks = 0;
    int64_t first_bytes = -1, last_bytes = -1, last_src = 0, last_dst = 0;
    friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
  };
  static Fingerprint fingerprint(const CollectivePlan& plan);
  struct CompiledSlot {
    Fingerprint fingerprint;
    std::unique_ptr<Compiled> compiled;
  };
  std::map<const CollectivePlan*, CompiledSlot> compiled_;
  std::map<Copies, uint32_t> copies_ids_;
  std::vector<const Copies*> copies_of_id_;  // keys of copies_ids_ by id
  // Per flow slot (FlowNetwork::slot_of): which run, item and sub-route a flow carries, so that a
  // reroute can move it (entries of finished flows are stale: their ids no longer run).
  struct Tracked {
    sim::flow::FlowId id = 0;
    uint32_t run = 0, item = 0, route = 0;
  };
  std::vector<Tracked> tracked_;
  // (src GPU, dst GPU, copies id) -> routes.
  std::map<std::tuple<int32_t, int32_t, uint32_t>, Routes> routes_;
  std::vector<Run> runs_;  // runs in flight and recycled ones (callbacks name them by index)
  std::vector<uint32_t> free_runs_;
  std::vector<topology::Route> scratch_;
  std::vector<uint32_t> crossings_;                     // per (sub-route, link): copies crossing it
  std::vector<std::pair<uint32_t, uint32_t>> touched_;  // (sub-route, link) with a count
  FlowExecutorStats stats_;
};

}  // namespace trainsim::models::collectives
