#pragma once
// Chrome / Perfetto trace-event JSON sink. The recorder subscribes to the engine's task signals
// (conv. 7) and keeps one (start, end) pair per task; write() turns them into one process per
// simulated rank and one thread per stream. Output is deterministic byte for byte (conv. 13).

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/memory/timeline.hpp"
#include "sim/engine.hpp"
#include "sim/task/task_graph.hpp"
#include "sim/units.hpp"
#include "traces/sinks/flow_recorder.hpp"

namespace trainsim::traces {

class TraceText;  // buffered output (chrome_trace.cpp)

// Records task start/end times from an Engine's signals and writes them as trace-event JSON:
//   {"schema_version":1,"displayTimeUnit":"ns","traceEvents":[...]}
// Besides the complete ("X") task events it writes, when given the data:
//  - "memory" counters ("C") per rank: device memory in use (static part + live activations)
//    and the usable capacity, from set_memory();
//  - "link <label>" utilization counters on the network process for the kMaxTraceLinks links
//    that carried the most bytes, in kTraceLinkBins bins (FlowRecorder::link_bin_bytes);
//  - flow events ("s" / "f", "bp":"e") from each pipeline send (a P2P task, which occupies the
//    sender's pp stream only) to each dependent task on another rank (the receiver's first
//    kernel that needs the data), ids 1, 2, ... in (send task, successor) order.
// Construct it before the executor runs; it must outlive every run of the engine, because the
// engine's signals keep a reference to it (they have no disconnect).
class ChromeTraceRecorder {
 public:
  ChromeTraceRecorder(sim::Engine& engine, const sim::task::TaskGraph& graph);
  ChromeTraceRecorder(const ChromeTraceRecorder&) = delete;
  ChromeTraceRecorder& operator=(const ChromeTraceRecorder&) = delete;

  // Metadata events (process_name / process_sort_index per rank, thread_name /
  // thread_sort_index per stream), then one complete ("X") event per (finished task, stream),
  // sorted by (pid = rank, tid = stream id, ts, task index). ts/dur are microseconds with exactly
  // three decimals, formatted from the integer nanoseconds. Tasks that never ended are skipped.
  void write(std::ostream& os) const;
  // write() to a file; throws ConfigError{"--trace", "cannot write <path>", hint} on failure.
  void write_file(const std::string& path) const;

  // Also writes the flows `flows` recorded (the first kMaxTraceFlows of them) as a "network"
  // process; `flows` must outlive write().
  void set_flows(const FlowRecorder* flows) { flows_ = flows; }
  static constexpr size_t kMaxTraceFlows = 200000;
  // Link utilization counters: the busiest links (by bytes), each over this many time bins.
  static constexpr size_t kMaxTraceLinks = 4;
  static constexpr int32_t kTraceLinkBins = 50;

  // Memory counters: one per rank slot of `events` (models::memory::TimelineEvent::slot).
  struct MemorySlot {
    int32_t rank = 0;            // the trace process (simulated rank)
    int64_t static_bytes = 0;    // weights + gradients + optimizer + buffers
    int64_t capacity_bytes = 0;  // usable device memory
  };
  // `events` (activation alloc/free at task start/end) must outlive write().
  void set_memory(const std::vector<models::memory::TimelineEvent>* events, std::vector<MemorySlot> slots) {
    memory_events_ = events;
    memory_slots_ = std::move(slots);
  }

  // Number of tasks that have both started and ended so far.
  size_t finished_tasks() const { return finished_; }

 private:
  void on_start(sim::TaskIndex i, sim::Time t);
  void on_end(sim::TaskIndex i, sim::Time t);

  void append_flows(TraceText& text) const;
  void append_link_counters(TraceText& text, int32_t pid) const;
  void append_memory_counters(TraceText& text) const;
  void append_p2p_flows(TraceText& text) const;
  int64_t last_end_ns() const;

  const sim::task::TaskGraph& graph_;
  const FlowRecorder* flows_ = nullptr;
  const std::vector<models::memory::TimelineEvent>* memory_events_ = nullptr;
  std::vector<MemorySlot> memory_slots_;
  std::vector<int64_t> start_ns_;  // per task; kNotSeen until the task starts
  std::vector<int64_t> end_ns_;    // per task; kNotSeen until the task ends
  size_t finished_ = 0;
};

// Appends `s` to `out` as a quoted JSON string: escapes '"', '\\' and control characters, and
// replaces bytes that are not valid UTF-8 with U+FFFD so the output always parses.
void append_json_string(std::string& out, std::string_view s);
// Appends `ns` nanoseconds as microseconds with exactly three decimals ("1234.567"), exact.
void append_micros(std::string& out, int64_t ns);

}  // namespace trainsim::traces
