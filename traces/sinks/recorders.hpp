#pragma once
// The trace, link and memory recorders a run carries, attached through the run's hooks
// (models/workload/run/run_workload.hpp): one helper for `trainsim simulate`, the Chakra replay
// and the viewer instead of a copy each. Recording every flow means no reused private
// durations, so attach() turns those off when it records flows.

#include <memory>
#include <string>

#include "models/workload/job/job.hpp"
#include "models/workload/run/run_workload.hpp"
#include "traces/sinks/chrome_trace.hpp"
#include "traces/sinks/flow_recorder.hpp"

namespace trainsim::traces {

struct RecorderOptions {
  std::string trace_file;  // Chrome / Perfetto JSON written by write() ("": no trace)
  std::string link_csv;    // per-link utilization CSV written by write() ("": none)
  // Memory counters in the trace (used and capacity per rank) for this job; null: none (a
  // replayed trace has no job memory).
  const models::workload::Job* memory_of = nullptr;
  // Record every flow even without a file (the viewer's link utilization), with unlabelled links.
  bool record_links = false;
};

class Recorders {
 public:
  explicit Recorders(RecorderOptions options) : options_(std::move(options)) {}
  Recorders(const Recorders&) = delete;
  Recorders& operator=(const Recorders&) = delete;

  // Chains the recorders' before_run and on_network hooks after those already in `run`.
  void attach(models::workload::RunOptions& run);
  // After the run (in after_run, or once run_workload returned): write the trace, and the link
  // CSV (200 bins over the run), where they were asked for.
  void write_trace() const;
  void write_link_csv() const;

  bool records_flows() const {
    return !options_.trace_file.empty() || !options_.link_csv.empty() || options_.record_links;
  }
  const FlowRecorder* flows() const { return flows_.get(); }

 private:
  RecorderOptions options_;
  std::unique_ptr<ChromeTraceRecorder> trace_;
  std::unique_ptr<FlowRecorder> flows_;
  const sim::Engine* engine_ = nullptr;
};

}  // namespace trainsim::traces
