#pragma once
// A Chakra trace (chakra_trace.hpp) as a trainsim Workload on a target cluster: rank r runs on
// GPU r; GPU compute nodes keep their recorded time or are rescaled to the target GPU; the
// collectives of each communicator (pg_name) are matched across ranks into one collective task
// and the sends and receives into one transfer task, both run by the target cluster's network;
// data and control dependencies are edges. The rules, with their reasons, are in docs/traces.md.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/gpu_spec.hpp"
#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"
#include "traces/chakra/trace.hpp"

namespace trainsim::traces::chakra {

// What an imported task is (TaskSpec::category), for the time breakdown.
enum class TaskClass : uint8_t { kCompute = 0, kCpu, kCollective, kTransfer, kMemory };
const char* to_string(TaskClass c);

struct ImportOptions {
  // The GPU the trace was recorded on. When it is set and differs from the target job's GPU,
  // GPU compute nodes with num_ops or tensor_size are rescaled by the ratio of the two GPUs'
  // roofline times; without it recorded times are kept as they are.
  std::optional<models::hardware::GpuSpec> recorded_gpu;
};

struct CommGroup {
  std::string pg_name;         // "" for collectives that name no process group (every rank)
  std::vector<int32_t> ranks;  // members, ascending (= GPU ids)
  int64_t collectives = 0;     // collective tasks on it
};

struct ImportStats {
  int64_t ranks = 0, nodes = 0;
  int64_t compute = 0, cpu = 0, memory = 0;  // tasks of each kind
  int64_t collectives = 0, transfers = 0;    // one per matched collective / send-receive pair
  int64_t skipped = 0;   // metadata and invalid nodes, and nodes with no time and no num_ops: dependencies pass through
  int64_t rescaled = 0;  // GPU compute nodes rescaled from the recorded GPU to the target
  int64_t roofline = 0;  // GPU compute nodes with no recorded time, timed by the target's roofline
  int64_t kept = 0;      // GPU compute nodes kept at their recorded time on another GPU (no num_ops / tensor_size)
  std::vector<CommGroup> groups;
  sim::config::Json to_json() const;
};

struct ImportedWorkload {
  models::workload::Workload w;  // full fidelity: one RankInfo per rank, rank r = GPU r
  ImportStats stats;
};

// Throws ConfigError naming the node (FILE:id N.field) for: unknown or unsupported node types,
// missing comm_size / comm_type / peers, collectives that do not match across the ranks of
// their group, sends without their receive, dependency cycles (within a rank, or across ranks
// through collectives and stream order), and more ranks than the job's cluster has GPUs.
// `job` gives the target cluster and GPU (its gpus must equal the trace's ranks).
ImportedWorkload import_workload(const Trace& trace, const models::workload::Job& job, const ImportOptions& options);

// The recorded GPU a trace names in its global metadata (attribute "gpu", which trainsim's
// exporter writes), if any rank's file does.
std::optional<std::string> recorded_gpu_name(const Trace& trace);

}  // namespace trainsim::traces::chakra
