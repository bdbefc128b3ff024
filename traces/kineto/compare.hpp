#pragma once
// A real timeline against the simulated one: the rank's Kineto trace beside the same rank's
// simulated iteration (written by kineto_export, read back by the same parser), each summarised
// the same way over its profiler steps: step time, compute, communication per collective, exposed
// communication and idle time; and the operators that took the most time, measured against the
// compute model's prediction.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/gpu_spec.hpp"
#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"
#include "sim/units.hpp"
#include "traces/kineto/trace.hpp"

namespace trainsim::traces {

// Where one rank's GPU time goes in a step, averaged over the trace's steps. Busy times are
// unions of kernel spans (overlapping kernels count once).
struct TimelineSummary {
  int steps = 0;
  sim::Time step;                         // step window
  sim::Time compute;                      // kernels, copies and memsets that are not NCCL
  std::map<std::string, sim::Time> comm;  // NCCL kernels per collective (kineto_ops collective_kind)
  sim::Time comm_total;                   // all NCCL kernels
  sim::Time exposed_comm;                 // NCCL running while no compute runs
  sim::Time idle;                         // nothing running
};
TimelineSummary summarize_timeline(const KinetoTrace& trace);

// Operators of one shape (kineto_ops op_key), measured and predicted in total.
struct OpComparison {
  std::string key;
  std::string cls;  // kineto_ops OpClass name
  int count = 0;
  sim::Time measured;
  std::optional<sim::Time> predicted;  // the compute model's, when it prices the class
};
// The `n` shapes with the most measured time (ties by key), predicted on `gpu`.
std::vector<OpComparison> top_ops(const KinetoTrace& trace, const models::hardware::GpuSpec& gpu, size_t n);

struct KinetoComparison {
  std::string trace;
  std::string device;
  int64_t rank = 0, world_size = 1;
  TimelineSummary real, simulated;
  std::vector<OpComparison> ops;
  KinetoTrace simulated_trace;        // the simulated iteration as read back (for kineto_plot)
  sim::config::Json to_json() const;  // with "schema_version"
};

// Checks that the job is the one traced (same number of GPUs; the same GPU when the trace's
// device maps to a preset: ConfigError otherwise), simulates it and compares.
KinetoComparison compare_kineto(const KinetoTrace& trace, const std::string& file, const models::workload::Job& job,
                                size_t top = 10);

}  // namespace trainsim::traces
