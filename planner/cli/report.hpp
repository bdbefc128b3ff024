#pragma once
// Human-readable report of a simulated iteration (the default output of `trainsim simulate`).

#include <ostream>

#include "models/workload/run/iterations.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::planner::cli {

void print_report(std::ostream& out, const models::workload::SimulationResult& r);
// With --strict, a job outside the evidence of its constants (prediction_band.hpp) is an error
// (exit 2) naming what is outside; without it, reports mark the prediction extrapolated.
void check_strict(bool strict, const models::workload::Job& job);
// The per-iteration times of `simulate --iterations N` (after print_report of the detailed one).
void print_iterations(std::ostream& out, const models::workload::IterationsResult& ir, bool faults);
// One number through a printf format ("%.2f").
std::string fmt(const char* format, double v);
// Canonical JSON text: fixed key order (sorted), floats rounded to 9 significant digits.
std::string canonical_json(const sim::config::Json& j);

}  // namespace trainsim::planner::cli
