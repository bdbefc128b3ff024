#pragma once
// What the builder produces: the task DAG of one training iteration with, per task, the rank slot
// it runs on and what its communication moves; the ranks (one per pipeline stage in
// representative fidelity, every GPU in full fidelity) with their streams; the activation
// timeline events and the interned communicators.

#include <cstdint>
#include <vector>

#include "models/collectives/comm_model.hpp"
#include "models/memory/timeline.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::models::workload {

// Two fidelities: kRepresentative simulates one rank per pipeline stage (every TP and DP peer
// does the same work at the same time, so their collectives are represented by the costs of the
// group); kFullRanks makes every rank and every collective member explicit (small scale, used to
// check the representative mode).
enum class Fidelity : uint8_t { kRepresentative, kFullRanks };

// Task categories for time breakdowns (TaskSpec::category).
enum class Category : uint8_t {
  kCompute = 0,
  kRecompute,
  kOptimizer,
  kTpComm,
  kDpComm,
  kPpComm,
  kCpComm,    // context parallelism: ring K/V passing, Ulysses all-to-alls
  kEpComm,    // expert parallelism: token dispatch / combine all-to-alls
  kOffload,   // host <-> device copies (activation and optimizer offload) and the CPU optimizer step
  kHostSync,  // the GPU waiting for the host after a host-device synchronization (llm/host_sync.hpp)
};
const char* to_string(Category c);

inline constexpr sim::task::StreamId kNoStream = 0xffffffffu;

struct RankInfo {
  int32_t rank = 0;  // Megatron global rank (order tp-cp-dp-pp): tp + tp*(cp + cp_size*(dp + dp_size*stage))
  int32_t stage = 0;
  int32_t dp_index = 0, tp_index = 0, cp_index = 0;
  sim::task::StreamId compute = 0, tp = 0, dp = 0, pp = 0;
  // Only when the job uses them (else kNoStream): context-parallel transfers, expert all-to-alls,
  // device-to-host copies (and the CPU optimizer step), host-to-device copies (PCIe is duplex).
  sim::task::StreamId cp = kNoStream, ep = kNoStream, d2h = kNoStream, h2d = kNoStream;
};

// What a communication task moves between which GPUs, for runners that simulate it as network
// flows. GPU ids are Megatron global ranks (server-major: GPU g sits on server g / gpus_per_node).
struct CommInfo {
  collectives::CollectiveOp op;  // kSendRecv for pipeline transfers (group = {src, dst})
  sim::Bytes bytes;              // per-rank buffer (nccl-tests "size"); the transfer size for p2p
  uint32_t group;                // index into Workload::groups
  sim::Time extra;               // fixed cost on top of the transfer (pipeline scatter/gather's all-gather)
};

struct Workload {
  sim::task::TaskGraph graph;
  std::vector<RankInfo> ranks;
  std::vector<memory::TimelineEvent> memory_events;  // activation alloc/free, sorted by task
  std::vector<int64_t> activation_per_vstage;        // one micro-batch of each virtual stage
  sim::BigVector<uint32_t> task_rank_slot;           // first rank slot of each task
  std::vector<std::vector<int32_t>> groups;          // communicator members (GPU ids), interned
  std::vector<CommInfo> comms;                       // interned (op, bytes, group, extra)
  sim::BigVector<uint32_t> task_comm;                // per task: index into comms, or kNoComm
  static constexpr uint32_t kNoComm = 0xffffffffu;
};

}  // namespace trainsim::models::workload
