#include "models/presets/catalog.hpp"

#include "sim/config/json_input.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "models/presets/embedded.hpp"

namespace trainsim::models::presets {

using sim::config::Json;

namespace {
const char* singular(const std::string& kind) {
  return kind == "models"         ? "model"
         : kind == "gpus"         ? "GPU"
         : kind == "clusters"     ? "cluster"
         : kind == "calibrations" ? "calibration"
         : kind == "failures"     ? "failure profile"
         : kind == "stacks"       ? "software stack"
                                  : "preset";
}
}  // namespace

std::vector<PresetEntry> list(const std::string& kind) {
  std::vector<PresetEntry> out;
  for (const auto& p : embedded_presets()) {
    if (kind != p.kind) continue;
    const Json j = Json::parse(p.json);
    out.push_back(PresetEntry{p.name, j.value("description", std::string())});
  }
  std::sort(out.begin(), out.end(), [](const PresetEntry& a, const PresetEntry& b) { return a.name < b.name; });
  return out;
}

Json find(const std::string& kind, const std::string& name, const std::string& path) {
  std::vector<std::string> names;
  for (const auto& p : embedded_presets()) {
    if (kind != p.kind) continue;
    if (name == p.name) return Json::parse(p.json);
    names.push_back(p.name);
  }
  std::sort(names.begin(), names.end());
  const std::string near = sim::config::did_you_mean(name, names);
  throw ConfigError(
      path, std::string("unknown ") + singular(kind) + " preset \"" + name + "\"",
      near.empty() ? "see `trainsim list " + kind + "`, or give a JSON file" : "did you mean \"" + near + "\"?");
}

Json load_json_file(const std::string& file, const std::string& path) {
  return sim::config::parse_json(sim::config::read_input_file(file, path), path,
                                 path == file ? "" : "\"" + file + "\"");
}

bool is_file_reference(const std::string& ref) {
  return ref.find('/') != std::string::npos || (ref.size() > 5 && ref.compare(ref.size() - 5, 5, ".json") == 0);
}

Json resolve(const std::string& kind, const std::string& ref, const std::string& path) {
  return is_file_reference(ref) ? load_json_file(ref, path) : find(kind, ref, path);
}

}  // namespace trainsim::models::presets
