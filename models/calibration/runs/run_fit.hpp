#pragma once
// Fits the end-to-end constants (run_parameters.hpp) to logged runs (run_record.hpp): the
// calibration behind `trainsim calibrate`. docs/calibration.md explains it for users.
//
// 1. Simulate every run with the presets' constants (the "before" prediction), and once more per
//    constant that can change the run, nudged (a 10 % step in log-coordinates): the sensitivity
//    of each run's log throughput to each constant, in units of the constant's prior width.
// 2. Choose what to fit (run_solve.hpp): forward stepwise, the constant whose fit cuts the runs'
//    Huber loss most joins while it cuts it by the information criterion's price of a parameter,
//    up to max(1, runs / 3) constants. A constant moving no run by 0.5 % per prior width, or 80 %
//    collinear with the chosen ones, is kept at its prior; the report says why.
// 3. A robust maximum-a-posteriori fit in those coordinates: least squares on the log throughput
//    errors against an assumed run-to-run noise of 3 %, Huber-weighted beyond 1.345 times the
//    larger of that and the residuals' robust spread, a unit Gaussian prior per constant, bounds by
//    clamping. The runs are simulated at the result (a step of at most 3 prior widths); while that
//    differs from the linear prediction by more than 2 % on some run, another step from there (at
//    most 6).
// 4. Leave-one-out: what leaving each run out changes in the linearised fit at the final point,
//    applied to its simulated error there: its cross-validated error. The band is the 68th
//    percentile of the absolute cross-validated errors (the largest below 4 runs). A fit whose
//    median cross-validated error is not below the presets' is not kept (the runs differ from
//    the model by a mechanism, not a constant), and the presets' errors are reported.
// 5. The fitted constants' uncertainty: the posterior covariance of the linearised fit, with the
//    noise the residuals show. The constant-MFU baseline (each run at the others' median MFU) is
//    reported beside it.
//
// 6. The caching allocator's reserve per stack, from the runs that log their peak memory
//    (memory_fit.hpp); independent of the throughput fit.
//
// Runs that do not fit in memory as simulated are left out (a note says so); two runs with the
// same job measured more than 1.5x apart are reported as contradictory (the robust loss then
// weighs them down). Same runs and options, same bytes out: the runs are simulated on `threads`
// threads but every result is stored by index.

#include <optional>
#include <string>
#include <vector>

#include "models/calibration/runs/memory_fit.hpp"
#include "models/calibration/runs/run_parameters.hpp"
#include "models/calibration/runs/run_record.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::calibration {

struct RunFitOptions {
  int threads = 1;
  // A run whose job trainsim rejects (a ConfigError resolving it) is left out with a note instead
  // of failing the fit (the command line's --skip-unusable).
  bool skip_unusable = false;
  std::string name = "calibrated";  // the calibration's name
  std::string description;
};

struct RunOutcome {
  double before = 0, after = 0, cv = 0;                    // predicted metric: presets, fitted on all, leave-one-out
  double error_before = 0, error_after = 0, error_cv = 0;  // throughput error (positive = optimistic)
  bool fits = true;
  double peak_gib = 0, capacity_gib = 0;  // predicted peak memory (presets) and usable memory
};

struct FittedConstant {
  RunParameter param;
  double value = 0;        // == prior when kept
  double uncertainty = 0;  // one standard deviation of the value (0 when kept)
  bool fitted = false;
  int runs = 0;      // runs it can change
  std::string note;  // why kept, or "at its bound"
};

struct RunFitResult {
  std::vector<RunRecord> runs;
  std::vector<RunOutcome> outcomes;  // per run, same order
  std::vector<FittedConstant> constants;
  size_t used = 0;                                            // runs in the fit (the ones that fit in memory)
  double median_before = 0, median_after = 0, median_cv = 0;  // median absolute error over used runs
  // The baseline a calibration must beat: each run predicted at the median MFU of the others
  // (leave-one-out), its median absolute error.
  double median_constant_mfu = 0;
  double band = 0;  // 68th percentile |cv error|
  std::vector<std::string> notes;
  size_t simulations = 0;
  std::vector<MemoryFit> memory;  // the allocator's reserve per stack, from the runs' logged peaks
  sim::config::Json calibration;  // the calibration file (with error and evidence)
};

RunFitResult fit_runs(std::vector<RunRecord> runs, const RunFitOptions& options);

}  // namespace trainsim::models::calibration
