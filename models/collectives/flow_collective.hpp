#pragma once
// One collective on an idle flow network: what `trainsim collective --network flow` prints per
// size, and what the nccl-tests accuracy suite compares with measurements.

#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "topology/routing.hpp"

namespace trainsim::models::collectives {

struct FlowCollectiveResult {
  sim::Time time;         // launch to the last byte
  std::string algorithm;  // the algorithm that ran
};

// NCCL's ring channels across servers: one per GPU of a server, each ring with the server-local
// order rotated so that every channel leaves a server from a different GPU (so NIC); each carries
// 1/channels of the buffer (rounded up). Empty when the group is on one server or has one rank per
// server, and for rooted ops (broadcast, reduce), whose ring must start or end at the root.
std::vector<std::vector<int32_t>> ring_channel_orders(CollectiveOp op, const Group& group,
                                                      const std::vector<int32_t>& gpus);

// A collective ready to run on the flow network: the plan of one channel and the GPU order of
// every channel (one order when the algorithm runs on a single channel).
struct ChannelPlan {
  std::string algorithm;
  CollectivePlan plan;
  std::vector<std::vector<int32_t>> orders;
};
// Plans `spec` over `gpus` (described by `group`) with `algorithm`, or with "auto": NCCL's choice
// for the size and group, falling back to the ring, the direct exchange or send/recv when the
// choice cannot run this group shape. A ring runs as ring_channel_orders' channels, each on its
// share of the buffer rounded up (no byte left out).
ChannelPlan plan_channels(const CollectiveSpec& spec, const Group& group, const std::vector<int32_t>& gpus,
                          const std::string& algorithm = "auto");

// Runs `op` of `bytes` per rank over GPUs 0..gpus-1 of the router's topology with `algorithm` (a
// registered name, or "auto" for choose_algorithm; an automatic choice that cannot run this
// group falls back as plan_channels does), after `launch`. Plans other than rings are pipelined in
// 512 KiB slices (at most 64), as NCCL streams chunks through a tree.
FlowCollectiveResult run_flow_collective(const topology::Router& router, int32_t gpus, CollectiveOp op,
                                         sim::Bytes bytes, const std::string& algorithm, sim::Time launch);

}  // namespace trainsim::models::collectives
