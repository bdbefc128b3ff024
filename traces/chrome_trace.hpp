#pragma once
// Chrome / Perfetto trace-event JSON sink. The recorder subscribes to the engine's task signals
// (conv. 7) and keeps one (start, end) pair per task; write() turns them into one process per
// simulated rank and one thread per stream. Output is deterministic byte for byte (conv. 13).

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.hpp"
#include "sim/task/task_graph.hpp"
#include "sim/units.hpp"
#include "traces/flow_recorder.hpp"

namespace trainsim::traces {

class TraceText;  // buffered output (chrome_trace.cpp)

// Records task start/end times from an Engine's signals and writes them as trace-event JSON:
//   {"schema_version":1,"displayTimeUnit":"ns","traceEvents":[...]}
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

  // Number of tasks that have both started and ended so far.
  size_t finished_tasks() const { return finished_; }

 private:
  void on_start(sim::TaskIndex i, sim::Time t);
  void on_end(sim::TaskIndex i, sim::Time t);

  void append_flows(TraceText& text) const;

  const sim::task::TaskGraph& graph_;
  const FlowRecorder* flows_ = nullptr;
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
