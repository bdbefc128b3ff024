#pragma once
// Files the commands write: JSON documents (measurements, calibrations) and the names derived
// from their paths.

#include <string>

#include "sim/config/schema.hpp"

namespace trainsim::planner::cli {

// Writes `j` indented, one document per file; throws ConfigError{flag, "cannot write <path>"}.
void write_json_file(const std::string& path, const sim::config::Json& j, const std::string& flag);
// "out/h100-kineto.json" -> "h100-kineto": a calibration's name from the file it goes to.
std::string file_stem(const std::string& path);

}  // namespace trainsim::planner::cli
