// `trainsim reliability`: a Monte Carlo of the whole training run of one plan under failures,
// checkpoints and stragglers (models/failure/), with the best checkpoint interval beside the
// Young/Daly closed form.
#include <cstdio>
#include <sstream>

#include "models/failure/inventory.hpp"
#include "models/failure/stragglers.hpp"
#include "models/failure/study.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/job_input.hpp"
#include "planner/cli/reliability_options.hpp"
#include "planner/cli/report.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

namespace {

namespace mf = models::failure;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// "42 s", "9.7 min", "3.1 h", "2.4 d".
std::string duration(double s) {
  if (s < 120) return fmt("%.1f s", s);
  if (s < 7200) return fmt("%.1f min", s / 60);
  if (s < 3 * 86400) return fmt("%.2f h", s / 3600);
  return fmt("%.2f d", s / 86400);
}

std::string bytes(double b) {
  if (b >= 1e15) return fmt("%.2f PB", b / 1e15);
  if (b >= 1e12) return fmt("%.2f TB", b / 1e12);
  return fmt("%.1f GB", b / 1e9);
}

void print_reliability(std::ostream& out, const models::workload::Job& job, const mf::ReliabilityReport& r,
                       const std::string& profile) {
  const auto& m = r.model;
  const auto& c = m.config;
  const auto& s = r.summary;
  const bool work = c.work.has_value();
  out << "trainsim reliability: " << job.model.name << " on " << job.gpus << " x " << job.gpu.name << " ("
      << job.cluster.name << "), tp " << job.tp << " pp " << job.pp << " cp " << job.cp << " dp " << job.dp << "\n";
  out << "  iteration " << fmt("%.3f s", m.iteration.seconds()) << ", " << fmt("%.0f", m.tokens_per_s) << " tokens/s; "
      << (work ? fmt("%.2f days of failure-free compute", c.work->seconds() / 86400)
               : fmt("a run of %.2f days", c.horizon->seconds() / 86400))
      << "\n\n";
  out << "failures (profile \"" << profile << "\"): job MTBF " << duration(m.mtbf.seconds()) << ", mean recovery "
      << duration(m.mean_recovery.seconds()) << "\n";
  out << "  kind        count   failures/day   failures (mean)   lost hours (mean)\n";
  for (size_t k = 0; k < c.failures.size(); ++k) {
    const auto& f = c.failures[k];
    char line[160];
    std::snprintf(line, sizeof line, "  %-9s %7lld %14.3f %17.1f %19.1f\n", f.kind.c_str(),
                  static_cast<long long>(f.count), static_cast<double>(f.count) * f.params.rate * 24.0,
                  s.failures_by_kind[k], s.lost_by_kind_s[k] / 3600.0);
    out << line;
  }
  out << "  stragglers:";
  for (const auto& st : c.stragglers)
    out << " " << st.kind << " " << fmt("%.2f/day", st.onsets_per_hour * 24) << " x" << fmt("%.3f", st.slowdown)
        << " for " << duration(st.detection.seconds()) << ";";
  out << " spares " << c.spares << (c.elastic ? ", elastic" : "") << "\n\n";

  out << "checkpoints (" << m.checkpoint_strategy
      << "): " << bytes(static_cast<double>(m.checkpoint_input.state.count())) << ", stall "
      << duration(m.checkpoint.stall.seconds()) << ", write " << duration(m.checkpoint.write.seconds()) << ", restore "
      << duration(m.checkpoint.restore.seconds()) << " (reads "
      << bytes(static_cast<double>(m.checkpoint_input.restore_read.count())) << ")\n";
  out << "  interval " << duration(r.interval.seconds())
      << (r.interval_given ? " (given)" : " (best of " + std::to_string(r.search.size()) + " tried)") << "; Young "
      << duration(r.young_interval.seconds()) << ", Daly " << duration(r.daly_interval.seconds()) << "\n\n";

  auto q = [&](const mf::Quantiles& x, double scale, const char* f) {
    return fmt(f, x.mean * scale) + " (p10 " + fmt(f, x.p10 * scale) + ", p50 " + fmt(f, x.p50 * scale) + ", p90 " +
           fmt(f, x.p90 * scale) + ")";
  };
  if (work) {
    out << "expected wall clock: " << q(s.wall_s, 1.0 / 86400, "%.2f") << " days";
    out << "; Daly's closed form " << fmt("%.2f", r.daly_time.seconds() / 86400) << "\n";
  } else {
    out << "failure-free compute done: " << q(s.work_s, 1.0 / 86400, "%.2f") << " days of "
        << fmt("%.2f", c.horizon->seconds() / 86400) << "\n";
  }
  out << "ETTR " << fmt("%.4f", s.ettr) << "; interruptions " << q(s.interruptions, 1.0, "%.1f") << "\n";
  out << "lost hours by cause (mean):";
  for (size_t i = 0; i < mf::kCauses; ++i)
    out << (i % 5 == 0 ? "\n  " : "  ") << mf::to_string(static_cast<mf::Cause>(i)) << " "
        << fmt("%.1f", s.lost_s[i] / 3600);
  out << "\nMonte Carlo: " << s.runs << " runs, seed " << r.seed << "\n";
}

}  // namespace

int run_reliability(const Args& args, std::ostream& out) {
  const models::workload::Job job = models::workload::resolve_job(models::workload::parse_job(job_json(args)));
  const ReliabilitySetup setup = reliability_setup(args, job.seed);
  if (!setup.options.tokens && !setup.options.horizon)
    throw ConfigError("--tokens", "is required: say how much to train",
                      "pass --tokens 15T, or --days 54 for a fixed span");
  const models::workload::SimulationResult base = models::workload::simulate(job);
  if (!base.fits) throw models::workload::does_not_fit_error(base, "run `trainsim plan` for a configuration that fits");
  const mf::Inventory inventory = mf::count_components(job);
  const mf::StragglerSlowdowns slow = mf::straggler_slowdowns(job, base, setup.profile);
  mf::ReliabilityModel model =
      mf::reliability_model(job, inventory, base.iteration, setup.profile, setup.options, slow);
  const mf::ReliabilityReport report = mf::run_study(std::move(model), setup.options);
  if (args.json)
    out << canonical_json(report.to_json()) << "\n";
  else
    print_reliability(out, job, report, setup.profile.name);
  return kExitOk;
}

}  // namespace trainsim::planner::cli
