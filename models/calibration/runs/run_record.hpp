#pragma once
// Logged training runs, as a team writes them from its logs in the schema of the published
// measurement files (../shared/data/published_dev*.json, docs/calibration.md "Run files"): for
// each run the model shape, the cluster, the parallel configuration, the framework and precision,
// and what it measured (tokens/s per GPU, iteration time, model TFLOP/s or MFU; optionally the
// peak memory). Each record becomes a trainsim job (record_job.hpp) and one measured quantity.
//
// A file is either an array of records or {"defaults": {job keys}, "runs": [records]}; a record's
// own `job` object (trainsim job keys) is set over what is read from its fields. Problems are
// ConfigErrors naming `runs[i].field` and the fix; `skip_unusable` turns the ones that make a
// record unusable (no measured quantity, unknown framework) into notes instead.

#include <optional>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::calibration {

// The measured quantity a run is compared on.
enum class RunMetric {
  kTokensPerGpu,   // measured.tokens_per_s_per_gpu
  kIterationTime,  // measured.iteration_s (or iteration_ms)
  kModelTflops,    // measured.model_tflops_per_gpu or tflops_per_gpu (Megatron's model FLOPs)
  kMfu,            // measured.mfu (model FLOPs over the GPU's dense BF16 peak)
};
const char* to_string(RunMetric m);

struct RunRecord {
  std::string id;      // the record's id (or "runs[i]")
  std::string path;    // where it is in the file, "runs[3]"
  std::string source;  // its source text ("" when none)
  sim::config::Json job;
  RunMetric metric = RunMetric::kTokensPerGpu;
  double measured = 0.0;  // in the metric's unit (tokens/s, s, TFLOP/s, fraction)
  // The source's FLOP count over Megatron's model FLOPs: 4/3 when the accounting counts the
  // recomputed forward of a fully recomputed run (measured.flops_accounting says "recomput").
  double flops_factor = 1.0;
  std::optional<double> peak_memory_gib;  // measured.peak_memory_gib (checked; no constant is fitted to it yet)
  std::vector<std::string> assumptions;   // what was assumed where the record is silent
};

// Job keys applied to every run (the command line's --stack, --cluster, --gpu, --precision):
// over what a record's fields say, under the record's own `job` object.
struct RunDefaults {
  sim::config::Json job = sim::config::Json::object();
  bool skip_unusable = false;
  std::string only;  // keep records whose id or source contains it ("" = all)
};

struct RunFile {
  std::vector<RunRecord> runs;
  std::vector<std::string> skipped;  // "runs[i] (id): why", with skip_unusable
};

RunFile read_runs(const sim::config::Json& file, const RunDefaults& defaults, const std::string& path);

// The run's measured quantity predicted from a simulation of its job: tokens/s per GPU,
// iteration seconds, model TFLOP/s per GPU (times flops_factor) or MFU.
double predicted_metric(const RunRecord& run, double tokens_per_s_per_gpu, double iteration_s,
                        double model_tflops_per_gpu, double mfu);
// Relative throughput error of a prediction: predicted / measured - 1 for throughput metrics and
// measured / predicted - 1 for iteration time (positive = optimistic).
double throughput_error(const RunRecord& run, double predicted);

}  // namespace trainsim::models::calibration
