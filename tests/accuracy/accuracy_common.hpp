#pragma once
// Shared helpers for the accuracy suites: data loading, job construction, error statistics and
// a printed table (config, measured, predicted, error) per source.

#include <optional>
#include <sstream>
#include <string>
#include <vector>

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

// Simulates; nullopt when the configuration does not fit in memory.
std::optional<models::workload::SimulationResult> run(const Json& job);

struct Row {
  std::string id, config;
  double measured = 0, predicted = 0;
  bool fits = true;
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

}  // namespace trainsim::accuracy
