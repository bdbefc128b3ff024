// `trainsim kineto`: PyTorch profiler (Kineto) traces (docs/kineto.md).
//   kineto calibrate TRACE.json [--gpu G] [--out CAL.json] [--json]   fit the compute constants
//   kineto compare TRACE.json [JOB.json] (job flags) [--json] [--plot FILE.svg]   real vs simulated timeline
//   kineto export [JOB.json] (job flags) --out TRACE.json [--rank R]   a simulated iteration as a trace
#include <cstdio>
#include <string>

#include "models/workload/job/job.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/job_input.hpp"
#include "planner/cli/options.hpp"
#include "planner/cli/output_files.hpp"
#include "sim/error.hpp"
#include "traces/kineto/calibrate.hpp"
#include "traces/kineto/compare.hpp"
#include "traces/kineto/export.hpp"
#include "traces/kineto/plot.hpp"
#include "traces/kineto/trace.hpp"
#include "traces/svg/svg.hpp"

namespace trainsim::planner::cli {

namespace {

using sim::config::Json;

std::string ms(sim::Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", t.seconds() * 1e3);
  return buf;
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * v);
  return buf;
}

// The trace file: the positional after the subcommand.
std::string trace_argument(const Args& args, const std::string& sub) {
  if (args.positionals.size() < 2)
    throw ConfigError("kineto " + sub, "missing the trace file", "write `trainsim kineto " + sub + " TRACE.json`");
  return args.positionals[1];
}

// The job of compare / export: `first_job` is the index of the optional JOB.json positional.
models::workload::Job kineto_job(const Args& args, size_t first_job) {
  Args job_args = args;
  job_args.positionals.assign(args.positionals.begin() + static_cast<std::ptrdiff_t>(first_job),
                              args.positionals.end());
  return models::workload::resolve_job(models::workload::parse_job(job_json(job_args)));
}

int run_calibrate(const Args& args, std::ostream& out, const std::string& command_line) {
  const std::string file = trace_argument(args, "calibrate");
  if (args.positionals.size() > 2)
    throw ConfigError(args.positionals[2], "unexpected argument", "kineto calibrate reads one trace");
  for (auto it = args.job_flags.begin(); it != args.job_flags.end(); ++it)
    if (it.key() != "gpu")
      throw ConfigError(flag_name(it.key()), "does not apply to `trainsim kineto calibrate`",
                        "drop it: only --gpu names the traced GPU");
  const std::string gpu_ref = args.job_flags.contains("gpu") && args.job_flags["gpu"].is_string()
                                  ? args.job_flags["gpu"].get<std::string>()
                                  : std::string();
  const traces::KinetoTrace trace = traces::load_kineto_trace(file);
  const models::hardware::GpuSpec prior = traces::trace_gpu(trace, gpu_ref);
  const traces::KinetoCalibration cal = traces::calibrate_kineto(trace, file, prior, command_line);
  const std::string cal_out = option(args, "out", "");
  if (!cal_out.empty()) write_json_file(cal_out, cal.calibration_json(file_stem(cal_out)), "--out");
  if (args.json) {
    out << cal.to_json().dump(2) << "\n";
    return kExitOk;
  }
  out << "kineto calibrate: " << file << " (" << (trace.device_name.empty() ? "no device name" : trace.device_name)
      << ", GPU " << prior.name << ", " << trace.ops.size() << " operators, " << trace.kernels.size()
      << " GPU activities, " << cal.measurements.items.size() << " shapes fitted)\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-14s %6s %8s %14s %14s %9s %14s %9s\n", "class", "ops", "kernels", "measured",
                "predicted", "error", "after fit", "error");
  out << line;
  for (const traces::ClassSummary& c : cal.classes) {
    if (c.ops == 0) continue;
    const bool priced = c.priced_ops > 0;
    std::snprintf(line, sizeof line, "  %-14s %6d %8d %14s %14s %9s %14s %9s\n", traces::to_string(c.cls), c.ops,
                  c.kernels, ms(c.measured).c_str(), priced ? ms(c.before).c_str() : "-",
                  priced ? percent(c.error_before()).c_str() : "-", priced ? ms(c.after).c_str() : "-",
                  priced ? percent(c.error_after()).c_str() : "-");
    out << line;
  }
  out << "\nfitted constants (relative RMS error of their records: before -> after)\n";
  for (const auto& p : cal.fit.parameters) {
    std::snprintf(line, sizeof line, "  %-22s %12.6g -> %-12.6g %5.1f%% -> %5.1f%%  %s\n", p.name.c_str(), p.prior,
                  p.fitted, 100.0 * p.rms_before, 100.0 * p.rms_after, p.kept ? p.note.c_str() : p.kinds.c_str());
    out << line;
  }
  for (const auto& n : cal.notes) out << "  note: " << n << "\n";
  for (const auto& n : cal.fit.notes) out << "  note: " << n << "\n";
  if (!cal_out.empty())
    out << "calibration written to " << cal_out << " (name it with --calibration " << cal_out << ")\n";
  return kExitOk;
}

void summary_row(std::ostream& out, const char* what, sim::Time real, sim::Time sim) {
  char line[160];
  const double err = real.count_ns() > 0 ? sim.seconds() / real.seconds() - 1.0 : 0.0;
  std::snprintf(line, sizeof line, "  %-26s %14s %14s %9s\n", what, ms(real).c_str(), ms(sim).c_str(),
                real.count_ns() > 0 ? percent(err).c_str() : "-");
  out << line;
}

int run_compare(const Args& args, std::ostream& out) {
  const std::string file = trace_argument(args, "compare");
  const models::workload::Job job = kineto_job(args, 2);
  const traces::KinetoTrace trace = traces::load_kineto_trace(file);
  const traces::KinetoComparison c = traces::compare_kineto(trace, file, job);
  if (args.command_options.count("plot")) {
    std::ostringstream title;
    title << "rank " << c.rank << " of " << c.world_size << ": " << file << " vs trainsim (" << job.model.name
          << ", tp " << job.tp << ", pp " << job.pp << ", dp " << job.dp << ")";
    traces::write_svg_file(args.command_options.at("plot"),
                           traces::kineto_compare_svg(trace, c.simulated_trace, title.str()), "--plot");
  }
  if (args.json) {
    out << c.to_json().dump(2) << "\n";
    return kExitOk;
  }
  out << "kineto compare: " << file << " (rank " << c.rank << " of " << c.world_size << ", "
      << (c.device.empty() ? "no device name" : c.device) << ", " << c.real.steps << " step"
      << (c.real.steps == 1 ? "" : "s") << ") against the simulated iteration of the same rank\n\n";
  char line[200];
  std::snprintf(line, sizeof line, "  %-26s %14s %14s %9s\n", "per step", "trace", "simulated", "error");
  out << line;
  summary_row(out, "step time", c.real.step, c.simulated.step);
  summary_row(out, "compute (busy)", c.real.compute, c.simulated.compute);
  summary_row(out, "communication (busy)", c.real.comm_total, c.simulated.comm_total);
  std::map<std::string, bool> kinds;
  for (const auto& [k, t] : c.real.comm) kinds[k] = true;
  for (const auto& [k, t] : c.simulated.comm) kinds[k] = true;
  for (const auto& kind : kinds) {
    const std::string& k = kind.first;  // not a structured binding: the lambda captures it
    auto find = [&](const traces::TimelineSummary& s) {
      auto it = s.comm.find(k);
      return it == s.comm.end() ? sim::Time::zero() : it->second;
    };
    summary_row(out, ("  " + k).c_str(), find(c.real), find(c.simulated));
  }
  summary_row(out, "exposed communication", c.real.exposed_comm, c.simulated.exposed_comm);
  summary_row(out, "idle", c.real.idle, c.simulated.idle);
  out << "\ntop operators by measured time (predicted by the compute model on " << job.gpu.name << ")\n";
  std::snprintf(line, sizeof line, "  %6s %14s %14s %9s  %s\n", "count", "measured", "predicted", "error", "operator");
  out << line;
  for (const traces::OpComparison& o : c.ops) {
    const double err =
        o.predicted && o.measured.count_ns() > 0 ? o.predicted->seconds() / o.measured.seconds() - 1.0 : 0.0;
    std::snprintf(line, sizeof line, "  %6d %14s %14s %9s  ", o.count, ms(o.measured).c_str(),
                  o.predicted ? ms(*o.predicted).c_str() : "-", o.predicted ? percent(err).c_str() : "-");
    out << line << o.key << "\n";
  }
  return kExitOk;
}

int run_export(const Args& args, std::ostream& out) {
  const std::string file = option(args, "out", "");
  if (file.empty()) throw ConfigError("--out", "is required", "write `trainsim kineto export ... --out TRACE.json`");
  const models::workload::Job job = kineto_job(args, 1);
  const int64_t rank = int_option(args, "rank", 0, 0, 1LL << 40);
  const Json trace = traces::export_kineto(job, rank);
  traces::write_kineto_file(file, trace, "--out");
  out << "kineto export: wrote " << file << ": rank " << rank << " (pipeline stage "
      << trace["trainsim"]["stage"].get<int64_t>() << "), " << trace["traceEvents"].size() << " events, step "
      << ms(sim::Time::ns(trace["trainsim"]["iteration_ns"].get<int64_t>())) << "\n";
  return kExitOk;
}

}  // namespace

int run_kineto(const Args& args, std::ostream& out, const std::string& command_line) {
  const std::string sub = args.positionals.empty() ? "" : args.positionals[0];
  if (args.command_options.count("rank") && sub != "export")
    throw ConfigError("--rank", "only applies to `trainsim kineto export`", "drop it: compare reads the trace's rank");
  if (args.command_options.count("out") && sub == "compare")
    throw ConfigError("--out", "does not apply to `trainsim kineto compare`", "drop it");
  if (args.command_options.count("plot") && sub != "compare")
    throw ConfigError("--plot", "only applies to `trainsim kineto compare`", "drop it");
  if (sub == "calibrate") return run_calibrate(args, out, command_line);
  if (sub == "compare") return run_compare(args, out);
  if (sub == "export") return run_export(args, out);
  throw ConfigError(sub.empty() ? "kineto" : "kineto " + sub, sub.empty() ? "missing subcommand" : "unknown subcommand",
                    "use `trainsim kineto calibrate|compare|export`; see `trainsim help`");
}

}  // namespace trainsim::planner::cli
