#pragma once
// Built-in presets, compiled into the binary from models/presets/<kind>/<name>.json.

#include <string>
#include <vector>

namespace trainsim::models::presets {

struct EmbeddedPreset {
  const char* kind;  // "gpus", "clusters", "models", "calibrations"
  const char* name;  // file stem = preset name
  const char* json;
};

const std::vector<EmbeddedPreset>& embedded_presets();

}  // namespace trainsim::models::presets
