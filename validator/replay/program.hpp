#pragma once
// A simulated iteration as one program per rank, for `trainsim validate --replay iteration`
// (docs/validator.md): every task of the full-fidelity DAG that a rank takes part in becomes one
// op of that rank, in the order the simulation started them, with its stream, its dependencies on
// the rank's earlier ops and what it moves:
//   compute task            -> kCompute on its stream (FLOPs, simulated duration)
//   collective              -> kCollective on every member (op, per-rank bytes, communicator)
//   pipeline transfer       -> kSend on the sender, kRecv on the receiver (peer, bytes, tag:
//                              the n-th transfer of that ordered pair)
// A transfer's fixed re-gather time (scatter/gather) is the receive's `extra`. Backends
// (backend.hpp) execute the ops; check.hpp verifies the program without running it.

#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/comm_model.hpp"
#include "models/workload/dag/workload.hpp"
#include "sim/task/executor.hpp"
#include "sim/units.hpp"

namespace trainsim::validator::replay {

enum class OpKind : uint8_t { kCompute, kSend, kRecv, kCollective };
const char* to_string(OpKind k);

struct Op {
  OpKind kind = OpKind::kCompute;
  uint32_t task = 0;     // the task in the simulated graph
  uint32_t stream = 0;   // index into the rank's streams
  uint8_t category = 0;  // models::workload::Category
  std::string name;      // "attn_fwd mb3 L7"
  sim::Time sim_start, sim_duration;
  double flops = 0;
  int64_t bytes = 0;  // per-rank buffer of a collective, the transfer size of a send / receive
  models::collectives::CollectiveOp collective = models::collectives::CollectiveOp::kAllReduce;
  int32_t peer = -1;           // send: the receiver; receive: the sender
  int32_t tag = 0;             // send / receive: the n-th transfer of the ordered pair (sender, receiver)
  int32_t group = -1;          // collective: index into Program::groups
  sim::Time extra;             // receive: the fixed re-gather time after the transfer
  std::vector<uint32_t> deps;  // earlier ops of the same rank this one waits for
  bool is_comm() const { return kind != OpKind::kCompute; }
};

struct RankProgram {
  int32_t rank = 0;
  std::vector<std::string> streams;  // names, by the ops' `stream`
  std::vector<Op> ops;               // by simulated start time (then topological order)
};

struct Program {
  std::vector<RankProgram> ranks;            // every rank, global rank order
  std::vector<std::vector<int32_t>> groups;  // communicator members (global ranks), as the job's layout makes them
  sim::Time iteration;                       // the simulated makespan
  int64_t cross_rank_deps = 0;  // dependencies between tasks sharing no rank (none expected: check.hpp reports them)
};

// The program of a full-fidelity workload (`w` holds every rank of the job) that `exec` has run.
Program build_program(const models::workload::Workload& w, const sim::task::TaskExecutor& exec);

}  // namespace trainsim::validator::replay
