// `trainsim validate`: measure the plan's kernels, collectives and layer on this machine's GPU(s)
// (or read saved measurements), fit the cost-model constants, print predicted vs measured before
// and after calibration, and write the measurements and the calibration file.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "models/calibration/fit.hpp"
#include "models/calibration/measurement.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/job.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/job_input.hpp"
#include "planner/cli/output_files.hpp"
#include "sim/config/schema.hpp"
#include "sim/error.hpp"
#include "validator/report.hpp"
#include "validator/runner.hpp"

namespace trainsim::planner::cli {

namespace {
std::string option(const Args& args, const std::string& key) {
  auto it = args.command_options.find(key);
  return it == args.command_options.end() ? std::string() : it->second;
}

// Saved measurements are re-fitted and compared only against the job they were measured for:
// every setting that shapes the replayed kernels must match.
void check_same_job(const models::calibration::MeasurementSet& set, const models::workload::Job& job) {
  const sim::config::Json& measured = set.provenance.job;
  if (!measured.is_object()) return;  // files written before the job was recorded
  const sim::config::Json now = job.to_json();
  std::vector<std::string> keys = {"model", "tp", "pp", "sp", "micro_batch", "seq_len", "attention", "recompute"};
  for (const auto& m : set.items)
    if (m.kind == models::calibration::OpKind::kIteration) keys.push_back("microbatches");
  for (const std::string& k : keys) {
    if (!measured.contains(k) || measured[k] == now[k]) continue;
    const std::string flag = k == "microbatches" ? "--global-batch" : flag_name(k);
    throw ConfigError("--measurements",
                      "measured with " + k + " " + sim::config::show(measured[k]) + " but the job has " + k + " " +
                          sim::config::show(now[k]),
                      "pass the job the measurements were taken for: " + flag +
                          (k == "microbatches" ? ""
                                               : " " + (measured[k].is_string() ? measured[k].get<std::string>()
                                                                                : sim::config::show(measured[k]))));
  }
}

int parse_positive(const std::string& text, const std::string& flag) {
  const bool digits = !text.empty() && text.size() < 10 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) throw ConfigError(flag, "expected a whole number, got \"" + text + "\"", "write " + flag + " 30");
  return static_cast<int>(sim::config::read_int(sim::config::Json(std::stoll(text)), flag, 1, 100000));
}
}  // namespace

int run_validate(const Args& args, std::ostream& out, const std::string& command_line) {
  if (args.command_options.count("replay")) return run_validate_replay(args, out);
  const models::workload::Job job = models::workload::resolve_job(models::workload::parse_job(job_json(args)));
  models::calibration::MeasurementSet set;
  const std::string saved = option(args, "measurements");
  if (!saved.empty()) {
    set = models::calibration::measurements_from_json(models::presets::load_json_file(saved, "--measurements"),
                                                      "--measurements");
    check_same_job(set, job);
  } else {
    validator::MeasureOptions opt;
    opt.command = command_line;
    if (const std::string reps = option(args, "reps"); !reps.empty()) opt.reps = parse_positive(reps, "--reps");
    set = validator::measure(job, opt, &std::cerr);
  }
  const std::string& preset = set.provenance.gpu_preset;
  if (!preset.empty() && preset != job.gpu.name)
    throw ConfigError(
        "gpu",
        "measured on " + set.provenance.gpu_name + " (preset " + preset + ") but the job's GPU is " + job.gpu.name,
        "pass --gpu " + preset + ", or a cluster of " + preset + " GPUs");
  if (const std::string path = option(args, "save"); !path.empty())
    write_json_file(path, models::calibration::to_json(set), "--save");

  const models::calibration::FitResult fitted = models::calibration::fit(set, job.gpu, &job.cluster);
  if (const std::string path = option(args, "calibration-out"); !path.empty())
    write_json_file(path, models::calibration::calibration_json(fitted, set.provenance, job.gpu.name + "-measured"),
                    "--calibration-out");
  const validator::Report report = validator::make_report(set, job, job.gpu, job.cluster, fitted.gpu,
                                                          fitted.has_cluster ? fitted.cluster : job.cluster);
  if (args.json) {
    sim::config::Json j = {{"schema_version", 1},
                           {"provenance", models::calibration::to_json(set.provenance)},
                           {"report", validator::report_json(report)},
                           {"fit", fitted.to_json()}};
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  validator::print_report(out, report);
  out << "\nfitted constants (relative RMS error of their records: before -> after)\n";
  for (const auto& p : fitted.parameters) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-22s %12.6g -> %-12.6g %5.1f%% -> %5.1f%%  %s\n", p.name.c_str(), p.prior,
                  p.fitted, 100.0 * p.rms_before, 100.0 * p.rms_after, p.kept ? p.note.c_str() : p.kinds.c_str());
    out << line;
  }
  for (const auto& n : fitted.notes) out << "  note: " << n << "\n";
  return kExitOk;
}

}  // namespace trainsim::planner::cli
