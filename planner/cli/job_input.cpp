#include "planner/cli/job_input.hpp"

#include "models/presets/catalog.hpp"
#include "models/workload/job/job.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

using sim::config::Json;

// Job file (optional positional) with command-line flags merged over it. File references inside
// a job file (model, cluster, gpu, calibration) are relative to the job file's folder.
Json job_json(const Args& args) {
  Json j = Json::object();
  if (args.positionals.size() > 1)
    throw ConfigError(args.positionals[1], "unexpected argument", "give at most one job file");
  if (!args.positionals.empty()) {
    const std::string& file = args.positionals[0];
    j = models::presets::load_json_file(file, file);
    if (!j.is_object()) throw ConfigError(file, "a job file must hold a JSON object");
    const auto slash = file.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "" : file.substr(0, slash + 1);
    for (const char* key : {"model", "cluster", "gpu", "calibration"}) {
      auto it = j.find(key);
      if (it == j.end() || !it->is_string()) continue;
      const std::string ref = it->get<std::string>();
      if (models::presets::is_file_reference(ref) && !ref.empty() && ref[0] != '/') *it = dir + ref;
    }
  }
  for (auto it = args.job_flags.begin(); it != args.job_flags.end(); ++it) j[it.key()] = it.value();
  // Required keys, named as the flag that provides them.
  for (const auto& f : models::workload::job_schema().fields())
    if (f.required && !j.contains(f.key))
      throw ConfigError(flag_name(f.key), "is required",
                        "pass " + flag_name(f.key) + " or \"" + f.key + "\" in a job file");
  return j;
}

}  // namespace trainsim::planner::cli
