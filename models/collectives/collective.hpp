#pragma once
// A collective algorithm is a pure generator of steps (STYLE conv. 9): each step is a set of
// {src, dst, chunk, bytes, reduce} transfers between group-local ranks. Algorithms register from
// their own files under algorithms/ (conv. 8); one shared executor turns plans into flows.
//
// Buffer and chunks. The buffer (nccl-tests "size" N) is cut into `chunks` numbered parts whose
// sizes are `chunk_bytes`; a transfer always moves one whole chunk. Which rank owns which chunk:
//   all-reduce, reduce, broadcast, send/recv: every chunk is a part of the one N-byte buffer;
//   all-gather, reduce-scatter: chunk k is rank (k mod n)'s block (its input for all-gather,
//     its output for reduce-scatter); the blocks of one rank add up to N/n;
//   all-to-all: chunk k is the block rank (k / n) mod n sends to rank k mod n; each rank's send
//     buffer is N, so the chunks add up to n*N.
// Channels stack whole copies of the layout (channel c owns a contiguous range of chunk ids), which
// keeps the ownership rules above.
//
// Execution order. Steps are logical rounds: running step k+1 after every transfer of step k has
// arrived is always correct. Each transfer also lists in `after` the earlier transfers it really
// waits for (derived from the data flow by AlgorithmInfo::plan, not written by algorithms):
//   - the data it sends must have arrived at its source (read after write);
//   - the copy of the chunk it overwrites or adds into must have been read by the earlier sends
//     that needed the old value, and earlier overwrites of it must have landed (write after read,
//     write after write; two reductions into the same copy commute and are not ordered).
// An executor may start a transfer as soon as its `after` list has completed; every order that
// respects these lists yields the same data as the step order. All dependencies link transfers
// of the same chunk, so an executor that cuts transfers into slices for pipelining keeps them
// valid slice by slice (slice i waits for slice i of its prerequisites).
//
// In-network reduction. A negative endpoint is a switch: switch_rank(node) = -1 - node is the
// NVSwitch (NVLink SHARP) of server `node` as named in Group::node_of_rank. Ranks send chunks into
// it with reduce = true (the switch adds them in flight); transfers out of it carry the result, and
// several transfers of one chunk out of the switch in one step are a multicast (the switch
// replicates the data; its ingress carries it once). Such plans set in_network_reduction.

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/collectives/comm_model.hpp"
#include "sim/config/schema.hpp"
#include "sim/registry.hpp"
#include "sim/units.hpp"

namespace trainsim::models::collectives {

// The switch pseudo-rank of server `node`, and back.
constexpr int32_t switch_rank(int32_t node) { return -1 - node; }
constexpr bool is_switch(int32_t rank) { return rank < 0; }
constexpr int32_t switch_node(int32_t rank) { return -1 - rank; }

// A transfer named by position: plan.steps[step].transfers[index].
struct TransferRef {
  int32_t step = 0;
  int32_t index = 0;
  friend bool operator==(const TransferRef&, const TransferRef&) = default;
  friend auto operator<=>(const TransferRef&, const TransferRef&) = default;
};

struct Transfer {
  int32_t src = 0, dst = 0;             // group-local ranks, or switch_rank(node)
  int32_t chunk = 0;                    // which part of the buffer
  sim::Bytes bytes;                     // == plan.chunk_bytes[chunk]
  bool reduce = false;                  // the receiver adds into its copy (otherwise it overwrites)
  std::vector<TransferRef> after = {};  // earlier transfers this one waits for (see above)
  // Plan steps this transfer stands for on its connection: 1, or in a fused plan
  // (fused_plans.hpp, for the flow executor only) a run of a ring's steps whose chunks it moves
  // together, paying the per-step latency that often.
  int32_t steps = 1;
};

struct Step {
  std::vector<Transfer> transfers;  // run concurrently
};

struct CollectivePlan {
  std::vector<Step> steps;
  int32_t ranks = 0;                    // group size the plan was made for
  int32_t chunks = 1;                   // the buffer is split into this many parts
  std::vector<sim::Bytes> chunk_bytes;  // size of each part
  bool in_network_reduction = false;    // some transfers go through a switch (see above)
};

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::kAllReduce;
  sim::Bytes bytes;  // per-rank buffer, as nccl-tests counts "size"
  int32_t root = 0;  // broadcast/reduce root; the sender of a send/recv
};

// The communicator: `size` ranks, where they sit, and what the fabric offers.
struct Group {
  int32_t size = 1;
  std::vector<int32_t> node_of_rank;  // server index of each rank; empty: all on server 0
  std::array<int32_t, 3> dims{};      // torus shape, rank = x + d0*(y + d1*z); 0 = unused dimension
  bool nvls_capable = false;          // the servers' NVSwitches reduce in the network (NVLink SHARP)

  static Group single_node(int32_t size, bool nvls = false);
  // `nodes` servers numbered 0.., each with `per_node` consecutive ranks.
  static Group blocked(int32_t nodes, int32_t per_node, bool nvls = false);
  int32_t node(int32_t rank) const;
  // Ranks of each server: servers by increasing index, ranks in increasing order.
  std::vector<std::vector<int32_t>> ranks_by_node() const;
  int32_t node_count() const;
  // Ranks per server when every server holds the same number, else 0.
  int32_t ranks_per_node() const;
};

// Variants are parameters, not files. The wrapper (AlgorithmInfo::plan) rejects a parameter that
// the chosen algorithm does not use.
struct AlgorithmParams {
  int32_t channels = 1;             // independent copies of the algorithm, each on 1/channels of the buffer
  bool bidirectional = false;       // doubles the channels; odd channels run their rings the other way
  std::string inter_node = "ring";  // hierarchical, nvls: the cross-node all-reduce algorithm
};
// JSON field table for AlgorithmParams (conv. 11).
const sim::config::Schema<AlgorithmParams>& algorithm_params_schema();

// What one generator call plans: channel `index` of `count`, run reversed when bidirectional.
struct ChannelInfo {
  int32_t index = 0;
  int32_t count = 1;
  bool reversed = false;
};

// Plans one channel. Sets steps, chunks and chunk_bytes (and in_network_reduction); the wrapper
// fills `ranks` and the dependencies.
using PlanFn =
    std::function<CollectivePlan(const CollectiveSpec&, const Group&, const AlgorithmParams&, const ChannelInfo&)>;
// "" when the algorithm can run `spec` on `group`, otherwise why not (one clause).
using CheckFn = std::function<std::string(const CollectiveSpec&, const Group&, const AlgorithmParams&)>;

struct AlgorithmInfo {
  static constexpr const char* kWhat = "collective algorithm";  // in errors: unknown collective algorithm "x"
  std::string name;
  std::string description;
  std::vector<CollectiveOp> ops;  // supported collectives
  PlanFn generate;
  CheckFn check = nullptr;               // optional group/spec requirements
  std::vector<std::string> params = {};  // AlgorithmParams keys it uses besides "channels"

  bool supports(CollectiveOp op) const;
  // "" when plan() would succeed, otherwise the reason.
  std::string why_not(const CollectiveSpec& spec, const Group& group, const AlgorithmParams& params) const;
  // Validates (ConfigError), plans every channel, merges them, drops empty steps, derives `after`.
  CollectivePlan plan(const CollectiveSpec& spec, const Group& group, const AlgorithmParams& params = {}) const;
  // Shorthand: `ranks` ranks on one server, default parameters.
  CollectivePlan plan(const CollectiveSpec& spec, int32_t ranks) const;
};

// Immutable registry built at start-up from the self-registering files, sorted by name; get()
// throws ConfigError at `path` with a did-you-mean and the valid names when unknown.
using AlgorithmRegistry = sim::Registry<AlgorithmInfo>;
// Names of the registered algorithms that implement `op`, sorted.
std::vector<std::string> algorithms_supporting(CollectiveOp op);

// The "auto" choice, after NCCL's idea of picking the algorithm with the least latency + bytes /
// bandwidth, reduced to thresholds because it sees no cluster (see choose.cpp for the
// constants and their sources):
//   send/recv -> send_recv
//   all-reduce: a whole torus (group.dims set) -> torus; one server with NVLink SHARP -> nvls; across servers below the
//   ring's
//     latency-bound size (ring latency x ring algorithm bandwidth) -> double_binary_tree;
//     otherwise ring (NCCL has no halving-doubling, and its default large-message algorithm
//     across servers is the ring; hierarchical is there by name)
//   all-gather, reduce-scatter: halving_doubling (NCCL 2.23's PAT) below the latency-bound size
//     over one rank per server when n is a power of two, else ring
//   broadcast, reduce: binomial_tree below the latency-bound size, else ring
//   all-to-all: all_to_all_hierarchical across servers with several ranks each when the block per
//     peer is below the network's bandwidth-delay product, else all_to_all_direct
std::string choose_algorithm(CollectiveOp op, sim::Bytes bytes, const Group& group);
// The ring's latency-bound size used above: messages below it spend more time in per-step
// latency than in moving bytes.
sim::Bytes ring_latency_bound_bytes(CollectiveOp op, const Group& group);

// Replays the plan symbolically: every rank starts with its own contribution to the chunks it owns
// (a set of contributing ranks per chunk), transfers copy or add sets, and at the end the op's
// postcondition must hold with each contribution counted exactly once. Also checks the chunk
// layout, transfer sizes, switch endpoints, conflicting accesses within a step, and that `after`
// orders every pair of conflicting accesses to a chunk copy (for plans up to 16384 transfers).
// Throws InternalError (TRAINSIM_ASSERT) naming the first violation.
void check_plan(const CollectiveSpec& spec, const Group& group, const CollectivePlan& plan);
// Bytes each group rank sends (switches excluded), indexed by rank.
std::vector<sim::Bytes> bytes_sent_per_rank(const CollectivePlan& plan);
std::vector<sim::Bytes> bytes_received_per_rank(const CollectivePlan& plan);
// Recomputes every transfer's `after` list from the data flow (AlgorithmInfo::plan calls it).
void derive_dependencies(CollectivePlan& plan);

namespace detail {
// `total` cut into `parts` sizes differing by at most one byte (larger ones first).
std::vector<sim::Bytes> split_bytes(sim::Bytes total, int32_t parts);
// Sets chunks and chunk_bytes: `total` cut into `parts` equal parts.
void set_chunks(CollectivePlan& plan, sim::Bytes total, int32_t parts);
// Appends one transfer of `chunk` (its bytes from the plan) to step `step`, adding steps as needed.
void add(CollectivePlan& plan, size_t step, int32_t src, int32_t dst, int32_t chunk, bool reduce);
// One ring pass over `members` in steps first_step .. first_step + members - 2, where block j (a set
// of chunks) is member j's: reduce = true is a reduce-scatter (member j ends with block j summed
// over all members), false an all-gather (member j starts with block j). `reversed` turns the ring.
void ring_pass(CollectivePlan& plan, size_t first_step, const std::vector<int32_t>& members,
               const std::vector<std::vector<int32_t>>& blocks, bool reduce, bool reversed);
// Shards the buffer over the g ranks of each server (shard l for local rank l; g is the smallest
// server's count when they differ) and plans, for each l, an all-reduce of shard l among the ranks
// with local index l (one per server) with the registered algorithm `inter`. Sets plan's chunks
// (g x C: shard l is chunks l*C .. l*C + C - 1) and returns those cross-node steps in group ranks,
// to be spliced in with append_steps.
std::vector<Step> shard_and_plan_cross_node(CollectivePlan& plan, const CollectiveSpec& spec, const Group& group,
                                            const std::string& inter);
// "" when shard_and_plan_cross_node can run `inter` on this group, otherwise why not; with
// `uneven`, servers may hold different numbers of the group's ranks.
std::string cross_node_check(const Group& group, const std::string& inter, bool uneven = false);
// The fewest ranks any server of the group holds.
int32_t fewest_per_node(const Group& group);
// Appends `steps` at step `first_step` onwards (merging with steps already there).
void append_steps(CollectivePlan& plan, size_t first_step, const std::vector<Step>& steps);
}  // namespace detail

}  // namespace trainsim::models::collectives

// Registers an algorithm from its own .cpp, at namespace scope:
//   TRAINSIM_REGISTER_COLLECTIVE(ring, "ring", "Bandwidth-optimal ring, 2(p-1) steps",
//                                (CollectiveOp::kAllReduce, CollectiveOp::kAllGather), plan_ring,
//                                check_ring /* optional */, {"bidirectional"} /* optional */)
#define TRAINSIM_DETAIL_UNPAREN(...) __VA_ARGS__
#define TRAINSIM_REGISTER_COLLECTIVE(id, name, description, ops, ...)                                                 \
  namespace {                                                                                                         \
  const ::trainsim::models::collectives::AlgorithmRegistry::Registrar trainsim_collective_registrar_##id{             \
      ::trainsim::models::collectives::AlgorithmInfo{                                                                 \
          name, description, std::vector<::trainsim::models::collectives::CollectiveOp>{TRAINSIM_DETAIL_UNPAREN ops}, \
          __VA_ARGS__}};                                                                                              \
  }
