// `trainsim calibrate RUNS.json`: fits the end-to-end constants to a team's logged runs
// (models/calibration/runs/run_fit.hpp), reports the error before, after and cross-validated,
// and writes the calibration file `simulate`, `plan`, `reliability` and `ui` take.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include "models/calibration/fit.hpp"
#include "models/calibration/measurement.hpp"
#include "models/calibration/runs/run_fit.hpp"
#include "models/calibration/runs/run_parameters.hpp"
#include "models/calibration/runs/run_record.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/stack.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/options.hpp"
#include "planner/cli/output_files.hpp"
#include "planner/cli/report.hpp"
#include "sim/error.hpp"
#include "traces/svg/svg.hpp"

namespace trainsim::planner::cli {

namespace {

using models::calibration::RunFitResult;
using models::calibration::RunMetric;
using sim::config::Json;

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * v);
  return buf;
}

std::string quantity(RunMetric m, double v) {
  char buf[48];
  switch (m) {
    case RunMetric::kTokensPerGpu: std::snprintf(buf, sizeof buf, "%.0f tok/s", v); break;
    case RunMetric::kIterationTime: std::snprintf(buf, sizeof buf, "%.3f s", v); break;
    case RunMetric::kModelTflops: std::snprintf(buf, sizeof buf, "%.0f TFLOP/s", v); break;
    case RunMetric::kMfu: std::snprintf(buf, sizeof buf, "%.1f%% MFU(BF16)", 100.0 * v); break;
  }
  return buf;
}

// Predicted against measured throughput (relative to each run's measurement, so runs of every
// metric share one chart): the presets' prediction and the cross-validated one per run.
std::string plot_svg(const RunFitResult& r) {
  double lo = 1.0, hi = 1.0;
  for (size_t i = 0; i < r.runs.size(); ++i) {
    if (!r.outcomes[i].fits) continue;
    for (double e : {r.outcomes[i].error_before, r.outcomes[i].error_cv}) {
      lo = std::min(lo, 1.0 + e);
      hi = std::max(hi, 1.0 + e);
    }
  }
  lo = std::max(0.05, lo * 0.9);
  hi = hi * 1.1;
  traces::SvgCanvas canvas(760, 480);
  traces::Axis x{0.0, static_cast<double>(std::max<size_t>(r.runs.size(), 1)), false, "run (file order)", {}, false};
  traces::Axis y{lo, hi, false, "predicted / measured throughput", {}, false};
  traces::Chart chart(canvas, 70, 40, 500, 380, x, y);
  chart.draw_axes();
  canvas.text(70, 24, "trainsim calibrate: before (presets) and cross-validated after", 14);
  canvas.line(chart.px(0), chart.py(1.0), chart.px(x.hi), chart.py(1.0), "#555", 1, "4 3");
  if (r.band > 0) {
    canvas.line(chart.px(0), chart.py(1.0 + r.band), chart.px(x.hi), chart.py(1.0 + r.band), "#9ecae1", 1, "2 3");
    canvas.line(chart.px(0), chart.py(1.0 - r.band), chart.px(x.hi), chart.py(1.0 - r.band), "#9ecae1", 1, "2 3");
  }
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const auto& o = r.outcomes[i];
    if (!o.fits) continue;
    const double cx = chart.px(static_cast<double>(i) + 0.5);
    canvas.circle(cx, chart.py(1.0 + o.error_before), 4, "#bbbbbb", {},
                  r.runs[i].id + " before " + percent(o.error_before));
    canvas.circle(cx, chart.py(1.0 + o.error_cv), 4, "#1f77b4", {},
                  r.runs[i].id + " cross-validated " + percent(o.error_cv));
  }
  traces::draw_legend(
      canvas, 590, 50,
      {{"presets", "#bbbbbb", true}, {"calibrated (leave-one-out)", "#1f77b4", true}, {"band", "#9ecae1", false}});
  return canvas.str();
}

void print_report(const RunFitResult& r, const std::string& file, std::ostream& out) {
  const Json& ev = r.calibration.at("evidence");
  out << "trainsim calibrate: " << file << ": " << r.runs.size() << " runs on "
      << r.calibration.at("gpu").get<std::string>() << " (" << ev.at("clusters").at(0).get<std::string>()
      << "), stacks";
  for (const auto& s : ev.at("stacks")) out << " " << s.get<std::string>();
  out << "; " << r.used << " used in the fit, " << r.simulations << " simulations\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-36s %-8s %12s %12s %12s  %s\n", "constant", "target", "prior", "fitted", "+-",
                "runs / note");
  out << line;
  for (const auto& c : r.constants) {
    const bool time = c.param.name == "step_overhead" || c.param.name == "kernel_launch";
    auto show = [&](double v) {
      char b[32];
      if (time)
        std::snprintf(b, sizeof b, "%.4g ms", v * 1e3);
      else
        std::snprintf(b, sizeof b, "%.4g", v);
      return std::string(b);
    };
    std::snprintf(line, sizeof line, "  %-36s %-8s %12s %12s %12s  %d%s%s\n", c.param.label().c_str(),
                  c.param.target.c_str(), show(c.param.prior).c_str(), c.fitted ? show(c.value).c_str() : "-",
                  c.fitted && c.uncertainty > 0 ? show(c.uncertainty).c_str() : "-", c.runs, c.note.empty() ? "" : "  ",
                  c.note.c_str());
    out << line;
  }
  out << "\n";
  std::snprintf(line, sizeof line, "  %-44s %16s %10s %10s %10s\n", "run", "measured", "before", "after", "cross-val");
  out << line;
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const auto& o = r.outcomes[i];
    std::string id = r.runs[i].id;
    if (id.size() > 44) id = id.substr(0, 41) + "...";
    if (!o.fits) {
      std::snprintf(line, sizeof line, "  %-44s %16s %10s\n", id.c_str(),
                    quantity(r.runs[i].metric, r.runs[i].measured).c_str(), "no fit");
    } else {
      std::snprintf(line, sizeof line, "  %-44s %16s %10s %10s %10s\n", id.c_str(),
                    quantity(r.runs[i].metric, r.runs[i].measured).c_str(), percent(o.error_before).c_str(),
                    percent(o.error_after).c_str(), percent(o.error_cv).c_str());
    }
    out << line;
  }
  std::snprintf(line, sizeof line, "  %-44s %16s %9.1f%% %9.1f%% %9.1f%%\n", "median |error|", "",
                100.0 * r.median_before, 100.0 * r.median_after, 100.0 * r.median_cv);
  out << line;
  std::snprintf(line, sizeof line, "  %-44s %16s %10s %10s %9.1f%%   (each run at the others' median MFU)\n",
                "constant-MFU baseline, leave-one-out", "", "", "", 100.0 * r.median_constant_mfu);
  out << line;
  std::snprintf(line, sizeof line,
                "\nband: ± %.1f %% (68th percentile of the %zu runs' leave-one-out errors): the error to expect on "
                "a run like these\n",
                100.0 * r.band, r.used);
  out << line;
  for (const auto& m : r.memory) {
    std::snprintf(line, sizeof line,
                  "peak memory (%s, %zu runs): allocator reserve %.4g -> %s; median |error| %.1f%% before, %.1f%% "
                  "after, %.1f%% leave-one-out%s%s\n",
                  m.stack.c_str(), m.runs.size(), m.prior, m.fitted ? fmt("%.4g", m.value).c_str() : "kept",
                  100.0 * m.median_before, 100.0 * m.median_after, 100.0 * m.median_cv, m.note.empty() ? "" : "; ",
                  m.note.c_str());
    out << line;
  }
  for (const auto& n : r.notes) out << "  note: " << n << "\n";
}

// --measurements: the validator's kernel measurements fitted first (models/calibration/fit.hpp),
// as the base calibration of every run; the run fit then starts from those constants.
void kernel_base(const std::string& path, std::vector<models::calibration::RunRecord>& runs) {
  for (const auto& r : runs)
    if (r.job.contains("calibration"))
      throw ConfigError(
          "--measurements", "is given with --calibration, and each gives the runs a base calibration",
          "give one: --measurements MEASURED.json fits the kernels here, --calibration uses a fitted file");
  const auto set = models::calibration::measurements_from_json(models::presets::load_json_file(path, "--measurements"),
                                                               "--measurements");
  const models::workload::Job job = models::workload::resolve_job(models::workload::parse_job(runs.front().job));
  if (!set.provenance.gpu_preset.empty() && set.provenance.gpu_preset != job.gpu.name)
    throw ConfigError("--measurements",
                      "measured on " + set.provenance.gpu_preset + " but the runs are on " + job.gpu.name,
                      "give measurements taken on " + job.gpu.name);
  const models::calibration::FitResult fitted =
      models::calibration::fit(set, models::workload::without_stack_kernels(job.stack, job.gpu), &job.cluster);
  const Json base = models::calibration::calibration_json(fitted, set.provenance, job.gpu.name + "-kernels");
  for (auto& r : runs) r.job["calibration"] = base;
}

}  // namespace

int run_calibrate_runs(const Args& args, std::ostream& out) {
  if (args.positionals.empty())
    throw ConfigError("calibrate", "missing the run file", "write `trainsim calibrate RUNS.json --out CAL.json`");
  if (args.positionals.size() > 1)
    throw ConfigError(args.positionals[1], "unexpected argument", "calibrate reads one run file");
  const std::string file = args.positionals[0];
  models::calibration::RunDefaults defaults;
  defaults.job = args.job_flags;
  defaults.skip_unusable = args.options.count("skip-unusable") > 0;
  defaults.only = option(args, "only", "");
  const Json runs_json = models::presets::load_json_file(file, "calibrate");
  models::calibration::RunFile runs = models::calibration::read_runs(runs_json, defaults, "runs");
  if (const std::string path = option(args, "measurements", ""); !path.empty()) kernel_base(path, runs.runs);
  models::calibration::RunFitOptions opts;
  const std::string cal_out = option(args, "out", "");
  opts.name = cal_out.empty() || file_stem(cal_out).empty() ? "calibrated" : file_stem(cal_out);
  opts.skip_unusable = defaults.skip_unusable;
  const int64_t hw = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
  opts.threads = static_cast<int>(int_option(args, "threads", hw, 1, 1024));
  RunFitResult r = models::calibration::fit_runs(std::move(runs.runs), opts);
  for (const auto& s : runs.skipped) r.notes.insert(r.notes.begin(), "skipped " + s);
  r.calibration["fit"]["notes"] = r.notes;
  if (!cal_out.empty()) write_json_file(cal_out, r.calibration, "--out");
  if (const std::string plot = option(args, "plot", ""); !plot.empty())
    traces::write_svg_file(plot, plot_svg(r), "--plot");
  if (args.json) {
    out << r.calibration.dump(2) << "\n";
    return kExitOk;
  }
  print_report(r, file, out);
  if (!cal_out.empty())
    out << "calibration written to " << cal_out << " (use it with --calibration " << cal_out << ")\n";
  return kExitOk;
}

}  // namespace trainsim::planner::cli
