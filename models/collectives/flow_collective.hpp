#pragma once
// One collective on an idle flow network: what `trainsim collective --network flow` prints per
// size, and what the nccl-tests accuracy suite compares with measurements.

#include <memory>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/collectives/flow_executor.hpp"
#include "models/collectives/nccl_tuning.hpp"
#include "models/collectives/plan_cache.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "topology/routing.hpp"

namespace trainsim::models::collectives {

struct FlowCollectiveResult {
  sim::Time time;         // launch to the last byte
  std::string algorithm;  // the algorithm that ran (with NCCL: "Ring/LL128 x12 (ring x8)")
};

// NCCL's view of a collective on the flow network: the cluster whose NCCL model chooses the
// algorithm and protocol (nccl_tuning.hpp), and the user's overrides.
struct NcclContext {
  const hardware::ClusterSpec* cluster = nullptr;
  NcclOverrides overrides;
};

// NCCL's ring channels across servers: one per GPU of a server (of the server with the fewest of
// the group's ranks; at most `count` when > 0), each ring with every server's local order rotated
// by its index so that every channel leaves a server from a different GPU (so NIC); each carries
// 1/channels of the buffer (rounded up). Empty when the group is on one server or has one rank on
// some server, and for rooted ops (broadcast, reduce), whose ring must start or end at the root.
std::vector<std::vector<int32_t>> ring_channel_orders(CollectiveOp op, const Group& group,
                                                      const std::vector<int32_t>& gpus, int32_t count = 0);

// A collective ready to run on the flow network: the plan of one channel and the GPU order of
// every channel (one order when the algorithm runs on a single channel).
struct ChannelPlan {
  std::string algorithm;
  std::shared_ptr<const CollectivePlan> plan;
  std::vector<std::vector<int32_t>> orders;
  std::optional<NcclChoice> nccl;  // NCCL's choice, when planned with a context
  TransferCost cost;               // how the chosen protocol uses the wire
  sim::Time base;                  // NCCL's base latency, before the first byte
  bool representative = false;     // hierarchical_representative (fused_plans.hpp): stands for the plan
  std::string label() const;       // "ring", "ring x8", "Ring/LL128 x12 (ring x8)"
};
// Plans `spec` over `gpus` (described by `group`) with `algorithm`, or with "auto": NCCL's choice
// for the size and group, falling back to the ring, the direct exchange or send/recv when the
// choice cannot run this group shape. A ring runs as ring_channel_orders' channels, each on its
// share of the buffer rounded up (no byte left out).
// With an NCCL context, "auto" is NCCL's choice (nccl_choose, leaving out algorithms whose plan
// cannot run this group) and a named algorithm takes NCCL's best protocol for it; the plan then
// carries the protocol's wire factor and latencies (flow_protocol.cpp). With a cache, a plan made
// before for the same algorithm, spec and group shape is shared (plan_cache.hpp).
// With fused_steps > 0 (the fast mode) a ring of more steps is planned fused in at most that many
// super-steps, and a hierarchical all-reduce across servers as the transfers of server 0 and
// shard 0 (hierarchical_representative; `representative` set): neither is materialized whole.
ChannelPlan plan_channels(const CollectiveSpec& spec, const Group& group, const std::vector<int32_t>& gpus,
                          const std::string& algorithm = "auto", const NcclContext& nccl = {},
                          PlanCache* cache = nullptr, int32_t fused_steps = 0);

// Runs `op` of `bytes` per rank over GPUs 0..gpus-1 of the router's topology with `algorithm` (a
// registered name, or "auto" for choose_algorithm; an automatic choice that cannot run this
// group falls back as plan_channels does), after `launch`. Plans other than rings are pipelined in
// 512 KiB slices (at most 64), as NCCL streams chunks through a tree.
// Fast mode (`full` false): NCCL's ring channels across servers are images of channel 0 under
// the rotations inside each server (RankRotation::local_only), so channel 0 runs alone and each
// of its transfers stands for every image on the links they share, and its steps run fused in at
// most 16 super-steps (fused_plans.hpp); hierarchical runs server 0's transfers of shard 0 for all
// of them (RankRotation with orbit constraints), and the double binary tree's channel 0 stands for
// every channel under orbit constraints; `full` runs every channel's flows, every step.
FlowCollectiveResult run_flow_collective(const topology::Router& router, int32_t gpus, CollectiveOp op,
                                         sim::Bytes bytes, const std::string& algorithm, sim::Time launch,
                                         const NcclContext& nccl = {}, bool full = false);

// The NCCL algorithm a registered plan runs as (nullopt: NCCL has no table entry for it).
std::optional<NcclAlgorithm> nccl_algorithm_of(const std::string& plan, const Group& group);
// How NCCL's choice runs on the flow network (flow_protocol.cpp).
TransferCost transfer_cost(const NcclChoice& choice, CollectiveOp op, const NcclSystem& s,
                           const hardware::ClusterSpec& cluster, const Group& group);

}  // namespace trainsim::models::collectives
