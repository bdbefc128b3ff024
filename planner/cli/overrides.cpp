#include "planner/cli/overrides.hpp"

#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/presets/catalog.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

using sim::config::Json;

namespace {

// The text after '=' as JSON: numbers and booleans keep their type, JSON objects and lists are
// parsed, anything else (sizes and rates with units, names) stays text.
Json value_of(const std::string& text) {
  if (!text.empty() && (text[0] == '{' || text[0] == '[' || text == "true" || text == "false" || text == "null"))
    return Json::parse(text, nullptr, false);
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size()) return Json::parse(text, nullptr, false);
  return Json(text);
}

Json resolve(const Json& ref, const char* kind, const std::string& path) {
  return ref.is_string() ? models::presets::resolve(kind, ref.get<std::string>(), path) : ref;
}

template <typename Spec>
void check_key(const sim::config::Schema<Spec>& schema, const std::string& what, const std::string& key,
               const std::string& item) {
  std::vector<std::string> keys;
  for (const auto& f : schema.fields()) {
    if (f.key == key) return;
    keys.push_back(f.key);
  }
  const std::string near = sim::config::did_you_mean(key, keys);
  throw ConfigError("--override", what + " has no field \"" + key + "\" (in \"" + item + "\")",
                    near.empty() ? "see `trainsim config explain` for the " + what + " fields"
                                 : "did you mean " + what + "." + near + "?");
}

}  // namespace

Json apply_overrides(Json job, const std::vector<std::string>& overrides) {
  for (const std::string& item : overrides) {
    const auto eq = item.find('=');
    const auto dot = item.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq || eq + 1 == item.size())
      throw ConfigError("--override", "expected cluster.FIELD=VALUE or gpu.FIELD=VALUE, got \"" + item + "\"",
                        "e.g. --override cluster.nic_bandwidth=800Gbps");
    const std::string target = item.substr(0, dot), key = item.substr(dot + 1, eq - dot - 1);
    const Json value = value_of(item.substr(eq + 1));
    if (value.is_discarded())
      throw ConfigError("--override", "the value of \"" + item + "\" is not valid JSON", "quote it as text");
    if (!job.contains("cluster")) throw ConfigError("--cluster", "is required", "pass --cluster NAME or a file");
    Json cluster = resolve(job["cluster"], "clusters", "cluster");
    if (target == "cluster") {
      check_key(models::hardware::cluster_schema(), "cluster", key, item);
      cluster[key] = value;
      job["cluster"] = cluster;
    } else if (target == "gpu") {
      check_key(models::hardware::gpu_schema(), "gpu", key, item);
      Json gpu;
      if (job.contains("gpu") && !job["gpu"].is_null())
        gpu = resolve(job["gpu"], "gpus", "gpu");
      else if (cluster.contains("gpu") && cluster["gpu"].is_object())
        gpu = cluster["gpu"];
      else if (cluster.contains("gpu") && cluster["gpu"].is_string())
        gpu = models::presets::find("gpus", cluster["gpu"].get<std::string>(), "cluster.gpu");
      else
        throw ConfigError("--override", "the cluster names no GPU to override", "pass --gpu NAME");
      gpu[key] = value;
      job["gpu"] = gpu;
    } else {
      throw ConfigError("--override", "can change cluster or gpu fields, got \"" + target + "\" in \"" + item + "\"",
                        "e.g. --override cluster.nic_bandwidth=800Gbps or --override gpu.memory=141GiB");
    }
  }
  return job;
}

}  // namespace trainsim::planner::cli
