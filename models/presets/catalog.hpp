#pragma once
// Built-in presets (compiled in from models/presets/<kind>/*.json) and resolution of a
// "preset name or JSON file" reference.

#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::presets {

struct PresetEntry {
  std::string name;
  std::string description;
};

// kind: "models", "gpus", "clusters" or "calibrations".
std::vector<PresetEntry> list(const std::string& kind);
// The preset's JSON; throws ConfigError at `path` with a did-you-mean when unknown.
sim::config::Json find(const std::string& kind, const std::string& name, const std::string& path);
// A reference names a JSON file when it ends in ".json" or has a '/'; otherwise a preset.
bool is_file_reference(const std::string& ref);
// A reference is a preset name, or a path to a JSON file (see is_file_reference).
sim::config::Json resolve(const std::string& kind, const std::string& ref, const std::string& path);
// Reads and parses a JSON file; throws ConfigError at `path` on I/O or syntax errors.
sim::config::Json load_json_file(const std::string& file, const std::string& path);

}  // namespace trainsim::models::presets
