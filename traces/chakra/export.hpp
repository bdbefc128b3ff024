#pragma once
// Writes a simulated workload as a Chakra execution trace in chakra_jsonizer's JSON form, one
// file per rank (PREFIX.<rank>.json), so the workloads trainsim generates can be read back by
// `trainsim simulate --chakra`, or turned into the protobuf files ASTRA-sim reads (ProtoJSON
// parse + Chakra's encodeMessage). Every rank must be simulated: the workload comes from full
// fidelity (docs/traces.md).
//
// Per rank, one node per task the rank takes part in, ids 0, 1, ... in a topological order:
//   compute task      -> COMP_NODE (is_cpu_op false, num_ops = its FLOPs; host copies on the
//                        d2h / h2d streams -> MEM_STORE_NODE / MEM_LOAD_NODE with tensor_size)
//   collective        -> COMM_COLL_NODE on every member (comm_type, comm_size in the nccl-tests
//                        sense, pg_name = the communicator's index)
//   transfer          -> COMM_SEND_NODE on the sender, COMM_RECV_NODE on the receiver (comm_src,
//                        comm_dst, comm_tag unique per pair, comm_size)
// with durationMicros / startTimeMicros from the simulated run (rounded to whole microseconds,
// at least 1 for a task that took any time), a `stream` attribute naming the task's stream on
// that rank, and dataDeps for every dependency between tasks of the same rank; a dependency on a
// transfer becomes one on the receiver's COMM_RECV_NODE. A pipeline transfer's fixed re-gather
// time (scatter/gather) becomes a COMP_NODE "<name> regather" after the receive, on a stream of
// its own. The global metadata records the GPU, cluster, rank and world size.

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::traces::chakra {

struct ExportedTrace {
  std::vector<std::string> files;  // one text per rank (global rank order)
  int64_t nodes = 0;
  int64_t dropped_deps = 0;  // dependencies between tasks of different ranks with no node in common (none expected)
};

// The per-rank file contents. `w` must hold every rank of `job` (full fidelity); `exec` has run it.
ExportedTrace export_trace(const models::workload::Workload& w, const sim::task::TaskExecutor& exec,
                           const models::workload::Job& job);

// export_trace() written to PREFIX.0.json, PREFIX.1.json, ...; ConfigError at `flag` when a
// file cannot be written. Returns what was written.
ExportedTrace write_trace(const std::string& prefix, const models::workload::Workload& w,
                          const sim::task::TaskExecutor& exec, const models::workload::Job& job,
                          const std::string& flag);

}  // namespace trainsim::traces::chakra
