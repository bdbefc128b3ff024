#pragma once
// A DAG of compute / collective / p2p / memory tasks. Each task runs on one or more streams
// (a collective occupies one stream of every participating rank); a stream runs its tasks in
// insertion order, like a CUDA stream. Dependencies are explicit edges. The graph is data: it
// can be inspected (critical path, per-stream totals) without running an engine.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/huge_page_allocator.hpp"
#include "sim/units.hpp"

namespace trainsim::sim::task {

using TaskIndex = sim::TaskIndex;
using StreamId = uint32_t;
using LabelId = uint16_t;

enum class TaskKind : uint8_t { kCompute, kCollective, kP2P, kMemory };
const char* to_string(TaskKind k);

struct StreamInfo {
  int32_t rank = 0;   // simulated rank (a process in traces)
  LabelId label = 0;  // stream name, e.g. "compute", "tp", "dp", "pp"
};

// What a generator provides for one task.
struct TaskSpec {
  TaskKind kind = TaskKind::kCompute;
  LabelId label = 0;        // op name, e.g. "attn_fwd"
  uint8_t category = 0;     // caller-defined class for breakdowns (e.g. TP/DP/PP comm)
  int32_t microbatch = -1;  // -1: not tied to a micro-batch
  int32_t layer = -1;       // -1: not tied to a layer
  Time duration;            // used by fixed-duration runners
  Flops flops;              // hardware FLOPs executed (compute tasks)
  Bytes bytes;              // bytes moved per rank (communication / memory tasks)
};

struct Task {
  TaskSpec spec;
  uint32_t first_stream = 0;  // index into stream_refs
  uint16_t n_streams = 0;
  uint32_t n_deps = 0;
  uint32_t succ_begin = 0, succ_end = 0;  // into successors (after finalize)
};

class TaskGraph {
 public:
  LabelId intern(const std::string& label);
  const std::string& label(LabelId id) const { return labels_[id]; }

  StreamId add_stream(int32_t rank, const std::string& label);
  const StreamInfo& stream(StreamId s) const { return streams_[s]; }
  size_t stream_count() const { return streams_.size(); }

  // Capacity hints for large graphs (avoids repeated reallocation of the task and edge arrays).
  void reserve(size_t tasks, size_t edges);

  // Appends a task at the tail of each listed stream (streams run tasks in insertion order).
  TaskIndex add(const TaskSpec& spec, StreamId stream);
  TaskIndex add(const TaskSpec& spec, const std::vector<StreamId>& streams);
  // `after` may start only once `before` has finished.
  void add_dep(TaskIndex before, TaskIndex after);
  // Builds successor lists; the graph is immutable afterwards.
  void finalize();
  bool finalized() const { return finalized_; }

  size_t size() const { return tasks_.size(); }
  const Task& task(TaskIndex i) const { return tasks_[i]; }
  const StreamId* streams_of(TaskIndex i) const { return &stream_refs_[tasks_[i].first_stream]; }
  const TaskIndex* successors_begin(TaskIndex i) const { return succ_.data() + tasks_[i].succ_begin; }
  const TaskIndex* successors_end(TaskIndex i) const { return succ_.data() + tasks_[i].succ_end; }
  // Tasks of a stream in execution order.
  const BigVector<TaskIndex>& stream_tasks(StreamId s) const { return stream_tasks_[s]; }
  // "attn_fwd mb3 L7" style display name.
  std::string display_name(TaskIndex i) const;

 private:
  std::vector<std::string> labels_;
  std::vector<StreamInfo> streams_;
  std::vector<BigVector<TaskIndex>> stream_tasks_;
  BigVector<Task> tasks_;
  BigVector<StreamId> stream_refs_;
  BigVector<std::pair<TaskIndex, TaskIndex>> edges_;
  BigVector<TaskIndex> succ_;
  bool finalized_ = false;
};

}  // namespace trainsim::sim::task
