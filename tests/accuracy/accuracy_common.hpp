#pragma once
// Shared helpers for the accuracy suites: data loading, job construction, error statistics and
// a printed table (config, measured, predicted, error) per source.

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "models/calibration/runs/run_record.hpp"
#include "models/workload/run/simulate.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::accuracy {

using sim::config::Json;

// Loads ../shared/data/<file>; nullopt when the data set is not present (the test then skips).
std::optional<Json> load_shared(const std::string& file);

// A GPT-style model object for vTrain rows (the rows carry the shape; GeLU, LayerNorm, learned
// positions, biases, dropout as in Megatron's GPT).
Json gpt_model(const Json& row_model);

// The built-in preset of a Narayanan et al. SC'21 model row (layers, hidden), "" if none.
std::string preset_for(const Json& row_model);

// Concatenates with operator<< (avoids GCC 12's -Wrestrict false positive on string + chains).
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// Whether `s` begins with `p` (record ids, GPU names).
inline bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// Simulates; nullopt when the configuration does not fit in memory.
std::optional<models::workload::SimulationResult> run(const Json& job);

struct Row {
  std::string id, config;
  double measured = 0, predicted = 0;
  bool fits = true;
  Json job;  // the simulated job (for the stack's accuracy entry; null: not checked)
  double error() const { return (predicted - measured) / measured; }
};

struct Stats {
  double median_abs = 0, max_abs = 0, median_signed = 0;
  size_t n = 0, not_fitting = 0;
};
Stats stats(const std::vector<Row>& rows);
// Prints the table and the summary line; `unit` labels the measured quantity.
void print_table(const std::string& title, const std::vector<Row>& rows, const std::string& unit,
                 size_t max_rows = 200);

// The stack preset's accuracy entry whose source starts with `source` (models/presets/stacks/
// <stack>.json, `accuracy`) must be what this suite measured on the fitting rows: the band (68th
// percentile of |error|, models/stack/evidence.hpp) within 1 point, the row count, and the
// evidence of the rows' jobs. A mismatch prints the entry to write.
void expect_stack_accuracy(const std::string& stack, const std::string& source, const std::vector<Row>& rows);

// `trainsim calibrate` on this suite's rows, with the suite's own jobs (row.job): the fit of the
// end-to-end constants (models/calibration/runs/run_fit.hpp) and each row's leave-one-out error.
// `metric` says what row.measured is (times `scale` gives the metric's unit: iteration ms -> s is
// 1e-3). Prints the before / after / cross-validated medians and returns them.
// Whether the slow calibrations run (TRAINSIM_ACCURACY_CALIBRATE=all): sources whose simulations
// are long (the Blackwell tables, Narayanan's ZeRO-3 rows, vTrain multi-node, the long-sequence
// sweep) are calibrated only then; docs/calibration.md holds their numbers.
bool slow_calibrations();

struct CalibrationStats {
  size_t runs = 0, used = 0, fitted = 0, simulations = 0;
  double before = 0, after = 0, cv = 0, band = 0, seconds = 0, constant_mfu = 0;
  // The allocator reserve's fit to the peaks (rows of `peaks`, by id): runs that logged one (all
  // stacks), and the median relative peak-memory error before, after and leave-one-out of the
  // last stack's fit (the suites calibrate one stack at a time).
  size_t peak_runs = 0;
  double peak_before = 0, peak_after = 0, peak_cv = 0;
};
// `peaks`: measured peak memory (GiB) of some of the rows, matched by id (null: none).
CalibrationStats calibrate_rows(const std::string& title, const std::vector<Row>& rows,
                                models::calibration::RunMetric metric, double scale = 1.0,
                                const std::vector<Row>* peaks = nullptr);

}  // namespace trainsim::accuracy
