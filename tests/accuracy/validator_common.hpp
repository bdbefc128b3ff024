#pragma once
// Shared helpers for the suites that check trainsim's own GPU measurements (`trainsim validate
// --save`, committed under tests/accuracy/data/): load a measurement file, resolve a job, fit,
// report, print the per-op table, and cross-check a calibration preset on other jobs.

#include <string>
#include <vector>

#include "models/calibration/fit.hpp"
#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"
#include "validator/report.hpp"

namespace trainsim::accuracy {

models::workload::Job validator_job(const sim::config::Json& spec);

// tests/accuracy/data/<file>.measurements.json
models::calibration::MeasurementSet validator_measurements(const std::string& file);

// The signed error of the first row of `kind` (before or after the calibration), NaN if none.
double validator_error(const validator::Report& r, models::calibration::OpKind kind, bool after);

// Prints every modelled row (measured, before, after) and each kind's error summary; returns the
// layer row (nullptr when the report has none).
const validator::ReportRow* print_validator_report(const validator::Report& report);

// Out of sample: a calibration preset fitted on one job predicts another measured the same day.
struct CrossCase {
  const char* file;
  sim::config::Json job;
  models::calibration::OpKind kind;
  double preset_seen, calibrated_seen;  // signed errors seen when the measurements were taken
  double bound;                         // |error| after calibration must stay under this
};

// Checks each case: the job with its GPU preset and with `calibration` give the errors seen
// (within half a point), and the calibrated error stays under the case's bound.
void expect_cross_cases(const std::vector<CrossCase>& cases, const std::string& calibration);

}  // namespace trainsim::accuracy
