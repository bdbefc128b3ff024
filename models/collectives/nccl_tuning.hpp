#pragma once
// NCCL's cost model and automatic choice (NVIDIA/nccl v2.30.7: src/graph/tuning.cc
// ncclTopoTuneModel and ncclTopoGetAlgoTime, src/enqueue.cc topoGetAlgoInfo, src/graph/search.cc
// for the channel count), for a communicator placed on a cluster. Every algorithm x protocol pair
// has a latency (base + per-step hardware latency x steps) and a bandwidth (channels x bandwidth
// per channel, refined per protocol: LL carries half its bytes as flags, LL128 120 of 128 bytes,
// each capped per channel); NCCL runs the pair with the least latency + bytes / bandwidth, on as
// many channels as the message fills (the channel ramp). The cluster's `nccl` calibration scales
// each protocol's latency and bandwidth to what the system measured (1.0 = NCCL's constants); the
// choice and the time both use the scaled table, so the chosen protocol is the fastest as
// measured. Constants and their sources: nccl_tuning.cpp; docs/network.md "Protocols".

#include <cstdint>
#include <optional>
#include <string>

#include "models/collectives/comm_model.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "sim/units.hpp"

namespace trainsim::models::collectives {

enum class Protocol : uint8_t { kLL, kLL128, kSimple };
inline constexpr int kProtocols = 3;
const char* to_string(Protocol p);  // "LL", "LL128", "Simple" (NCCL_PROTO spelling)
// Parses "ll", "ll128", "simple" (any case; ConfigError at `path` with the valid names).
Protocol parse_protocol(const std::string& text, const std::string& path);
// Payload bytes per byte on the wire: LL 1/2 (a 4-byte flag per 4 bytes), LL128 120/128, Simple 1.
double payload_efficiency(Protocol p);

// NCCL's Simple protocol moves a 4 MiB buffer (NCCL_BUFFSIZE default) in NCCL_STEPS = 8 slots:
// 512 KiB per pipeline step (NCCL src/include/device.h, docs "Environment Variables"). The flow
// network pipelines trees and hierarchical plans in slices of it, at most 64 per transfer: a
// bound on simulation cost, not NCCL's (a deep tree's pipeline fill it adds: docs/network.md).
inline constexpr int64_t kSimpleSliceBytes = 512 * 1024;
inline constexpr int32_t kMaxPipelineSlices = 64;

// NCCL's algorithms, in its order.
enum class NcclAlgorithm : uint8_t { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
inline constexpr int kNcclAlgorithms = 7;
const char* to_string(NcclAlgorithm a);  // NCCL_ALGO spelling: "Tree", "Ring", ..., "PAT"
// The registered plan (models/collectives/algorithms) that runs it: ring, double_binary_tree,
// nvls (NVLS-tree: nvls across servers), halving_doubling (PAT), ring for CollNet.
std::string plan_algorithm(NcclAlgorithm a);

// What NCCL's topology search finds for one communicator (search.cc: speeds tried from the
// generation's array, channels duplicated when fast enough), and what NCCL may run on it.
struct NcclSystem {
  int arch = 2;  // 0 volta, 1 ampere, 2 hopper, 3 blackwell
  int32_t ranks = 1, nodes = 1;
  int32_t channels = 1;       // ring and tree channels
  double bw_intra = 0.0;      // GB/s per channel inside a server
  double bw_inter = 0.0;      // GB/s per channel across servers (bw_intra on one server)
  int32_t nvls_channels = 0;  // 0: no NVLink SHARP
  double nvls_bw = 0.0;       // GB/s per NVLS channel
  int32_t nvls_run = 0;       // NVLS channels (CTAs) a call runs on (nvls.cc ncclNvlsTuning)
  bool collnet = false;       // SHARP in the network fabric (CollNet)
  int cpu = 0;                // 0 intel, 1 amd, 2 arm (calibration.cpu)
  hardware::NcclCalibration calibration;
};
// `ranks` ranks, `per_node` per server; `nvls`: the servers' NVSwitches reduce (NVLink SHARP);
// `channels` (> 0) overrides the channel count (NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS), and the
// bus bandwidth scales with it (channels x bandwidth per channel).
NcclSystem nccl_system(const hardware::ClusterSpec& c, int64_t ranks, int64_t per_node, bool nvls,
                       int32_t channels = 0);

// One entry of NCCL's table, calibrated: latency in microseconds, algorithm bandwidth in GB/s
// (bytes per ns; 0: NCCL would not run it).
struct NcclEntry {
  double latency_us = 0.0;
  double bandwidth_GBps = 0.0;
};
NcclEntry nccl_entry(CollectiveOp op, NcclAlgorithm a, Protocol p, const NcclSystem& s);
// NCCL's time for `bytes` (ncclTopoGetAlgoTime: the tree correction factors, the multi-node ring
// plateau); negative when the pair is not available.
double nccl_time_us(CollectiveOp op, NcclAlgorithm a, Protocol p, sim::Bytes bytes, const NcclSystem& s);

// What a user pins: NCCL_PROTO (one protocol) and NCCL_MIN/MAX_NCHANNELS (0: NCCL's count).
struct NcclOverrides {
  std::optional<Protocol> protocol;
  int32_t channels = 0;
};

// The latency of a table entry split as the flow network pays it (calibrated, microseconds): once
// per collective, per step inside a server, per step across servers. NVLS and CollNet pay it all
// once (their steps are switch operations).
struct NcclSteps {
  double base_us = 0.0, intra_us = 0.0, inter_us = 0.0;
};
NcclSteps nccl_steps(CollectiveOp op, NcclAlgorithm a, Protocol p, const NcclSystem& s);

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  int32_t channels = 1;  // after the ramp: channels the message fills
  int32_t threads = 0;   // threads per channel
  double time_us = 0.0;  // NCCL's calibrated estimate, without the cluster's collective_launch
};
// NCCL's choice for all-reduce, all-gather, reduce-scatter, broadcast and reduce (other ops
// have no table: nullopt). `protocol` / `algorithm` restrict it (NCCL_PROTO / NCCL_ALGO), and
// `excluded` (bit 1 << algorithm) leaves algorithms out; nullopt when nothing is left.
std::optional<NcclChoice> nccl_choose(CollectiveOp op, sim::Bytes bytes, const NcclSystem& s,
                                      std::optional<Protocol> protocol = std::nullopt,
                                      std::optional<NcclAlgorithm> algorithm = std::nullopt, unsigned excluded = 0);

}  // namespace trainsim::models::collectives
