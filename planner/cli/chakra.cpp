#include "planner/cli/chakra.hpp"

#include <algorithm>
#include <memory>
#include <sstream>

#include "models/hardware/gpu_spec.hpp"
#include "models/presets/catalog.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/report.hpp"
#include "sim/error.hpp"
#include "topology/graph.hpp"
#include "traces/chakra/export.hpp"
#include "traces/chakra/replay.hpp"
#include "traces/chakra/trace.hpp"
#include "traces/chakra/workload.hpp"
#include "traces/sinks/recorders.hpp"
#include "traces/svg/svg.hpp"
#include "traces/svg/timeline.hpp"

namespace trainsim::planner::cli {

using sim::config::Json;
namespace chakra = traces::chakra;

namespace {

// The job keys a replay reads: the target platform. The trace fixes everything else.
const std::vector<std::string>& replay_keys() {
  static const std::vector<std::string> keys = {"cluster", "gpu", "calibration", "network", "precision", "seed"};
  return keys;
}

models::workload::Job replay_job(const Args& args, int64_t ranks) {
  models::workload::JobSpec spec;
  spec.cluster = args.job_flags.at("cluster");
  if (args.job_flags.contains("gpu")) spec.gpu = args.job_flags.at("gpu");
  if (args.job_flags.contains("calibration")) spec.calibration = args.job_flags.at("calibration");
  if (args.job_flags.contains("precision"))
    spec.precision =
        models::workload::read_option<models::compute::Precision>(args.job_flags.at("precision"), "precision");
  models::workload::Job job = models::workload::resolve_platform(spec);
  job.network = args.job_flags.contains("network")
                    ? models::workload::read_option<models::workload::Network>(args.job_flags.at("network"), "network")
                    : models::workload::Network::kFlow;
  job.seed = args.job_flags.contains("seed")
                 ? sim::config::read_int(args.job_flags.at("seed"), "seed", 0, sim::config::kUnboundedInt)
                 : 0;
  job.gpus = ranks;
  return job;
}

// Checked before the trace is read: what a replay cannot use.
void reject_for_replay(const Args& args) {
  if (!args.positionals.empty())
    throw ConfigError(args.positionals[0], "unexpected argument: --chakra replays a trace, not a job file",
                      "give the cluster with --cluster");
  for (auto it = args.job_flags.begin(); it != args.job_flags.end(); ++it)
    if (std::find(replay_keys().begin(), replay_keys().end(), it.key()) == replay_keys().end())
      throw ConfigError(flag_name(it.key()), "does not apply to --chakra: the trace fixes the workload",
                        "drop it; a replay takes --cluster, --gpu, --calibration, --network, --precision, --seed");
  if (!args.job_flags.contains("cluster"))
    throw ConfigError("--cluster", "is required with --chakra", "pass --cluster NAME or a cluster file");
  auto no = [](const std::string& flag, const std::string& why) {
    throw ConfigError(flag, "does not apply to --chakra: " + why, "drop it");
  };
  if (!args.faults.empty()) no("--fault", "faults are simulated on generated jobs only");
  if (args.command_options.count("iterations")) no("--iterations", "a trace records one iteration");
  if (args.fidelity != "representative") no("--fidelity", "a replay simulates every rank of the trace");
  if (args.command_options.count("export-chakra")) no("--export-chakra", "the trace is already a Chakra trace");
}

std::string ms(sim::Time t) { return fmt("%.3f", t.seconds() * 1e3); }

void print_replay(std::ostream& out, const std::string& source, const models::workload::Job& job,
                  const std::string& recorded, const chakra::ImportStats& s, const chakra::ReplayResult& r) {
  out << "trainsim simulate --chakra " << source << ": " << s.ranks << " ranks, " << s.nodes << " nodes on " << s.ranks
      << " x " << job.gpu.name << " (" << job.cluster.name << ")\n";
  out << "  tasks      " << s.compute << " compute, " << s.collectives << " collectives on " << s.groups.size()
      << " process groups, " << s.transfers << " transfers, " << s.memory << " host copies, " << s.cpu << " cpu, "
      << s.skipped << " nodes passed over\n";
  out << "  timing     ";
  if (recorded.empty())
    out << "recorded durations (no recorded GPU named: --recorded-gpu rescales them)";
  else if (recorded == job.gpu.name)
    out << "recorded durations (recorded on " << recorded << ")";
  else
    out << s.rescaled << " compute nodes rescaled from " << recorded << " by roofline, " << s.kept
        << " kept (no num_ops / tensor_size)";
  if (s.roofline > 0) out << "; " << s.roofline << " timed by roofline (no duration)";
  out << "\n  network    " << to_string(job.network);
  if (r.network)
    out << " (" << r.network->topology << ", " << r.network->links << " links, " << r.network->flows << " flows)";
  out << "\n\niteration time  " << ms(r.iteration) << " ms\n\n";
  out << "  rank   compute ms  collective ms  transfer ms  memory ms   cpu ms   idle ms\n";
  const size_t shown = std::min<size_t>(r.ranks.size(), 16);
  for (size_t k = 0; k < shown; ++k) {
    const chakra::RankTime& t = r.ranks[k];
    char line[160];
    std::snprintf(line, sizeof line, "  %4zu %12s %14s %12s %10s %8s %9s\n", k, ms(t.compute).c_str(),
                  ms(t.collective).c_str(), ms(t.transfer).c_str(), ms(t.memory).c_str(), ms(t.cpu).c_str(),
                  ms(t.idle).c_str());
    out << line;
  }
  if (shown < r.ranks.size()) out << "  ... " << r.ranks.size() - shown << " more ranks (--json lists them all)\n";
  out << "  (collective, transfer, memory and cpu: time the GPU's compute waited on them)\n";
}

}  // namespace

int run_chakra_simulate(const Args& args, std::ostream& out) {
  reject_for_replay(args);
  const std::string source = args.command_options.at("chakra");
  const chakra::Trace trace = chakra::read_trace(source, "--chakra");
  const models::workload::Job job = replay_job(args, static_cast<int64_t>(trace.ranks.size()));
  chakra::ImportOptions io;
  std::string recorded;
  if (args.command_options.count("recorded-gpu")) {
    recorded = args.command_options.at("recorded-gpu");
    io.recorded_gpu =
        models::hardware::parse_gpu(models::presets::resolve("gpus", recorded, "--recorded-gpu"), "--recorded-gpu");
  } else if (const auto name = chakra::recorded_gpu_name(trace)) {
    recorded = *name;
    io.recorded_gpu = models::hardware::parse_gpu(
        models::presets::find("gpus", recorded, trace.ranks.front().file + ":metadata.gpu"), "gpu");
  }
  if (io.recorded_gpu) recorded = io.recorded_gpu->name;
  if (!args.link_csv.empty() && job.network != models::workload::Network::kFlow)
    throw ConfigError("--link-csv", "link utilization needs the flow network", "drop --network analytic");
  const chakra::ImportedWorkload iw = chakra::import_workload(trace, job, io);

  chakra::ReplayOptions ro;
  traces::Recorders recorders(traces::RecorderOptions{args.trace_file, args.link_csv, nullptr, false});
  recorders.attach(ro);
  ro.after_run = [&](const models::workload::Workload& w, const sim::task::TaskExecutor& exec) {
    recorders.write_trace();
    if (args.command_options.count("plot")) {
      traces::TimelineOptions o;
      std::ostringstream title;
      title << "Chakra trace " << source << " on " << job.gpus << " x " << job.gpu.name;
      o.title = title.str();
      traces::write_svg_file(args.command_options.at("plot"), traces::timeline_svg(w.graph, exec, o), "--plot");
    }
    recorders.write_link_csv();
  };
  const chakra::ReplayResult r = chakra::replay(iw, job, ro);
  if (args.json) {
    Json j = r.to_json();
    j["schema_version"] = 1;
    j["source"] = "chakra";
    j["trace"] = source;
    j["cluster"] = job.cluster.name;
    j["gpu"] = job.gpu.name;
    j["recorded_gpu"] = recorded.empty() ? Json(nullptr) : Json(recorded);
    j["network"] = to_string(job.network);
    j["import"] = iw.stats.to_json();
    out << canonical_json(j) << "\n";
  } else {
    print_replay(out, source, job, recorded, iw.stats, r);
  }
  return kExitOk;
}

void check_chakra_export(const Args& args) {
  if (args.command_options.count("recorded-gpu") && !args.command_options.count("chakra"))
    throw ConfigError("--recorded-gpu", "only applies with --chakra", "drop it, or replay a trace with --chakra");
  if (!args.command_options.count("export-chakra")) return;
  if (args.fidelity != "full")
    throw ConfigError("--export-chakra", "needs every rank simulated", "add --fidelity full");
  if (!args.faults.empty())
    throw ConfigError("--export-chakra", "writes a fault-free iteration", "drop --fault, or --export-chakra");
  if (args.command_options.count("iterations"))
    throw ConfigError("--export-chakra", "writes one iteration", "drop --iterations, or --export-chakra");
}

void write_chakra_export(const Args& args, const models::workload::Job& job, const models::workload::Workload& w,
                         const sim::task::TaskExecutor& exec) {
  const auto it = args.command_options.find("export-chakra");
  if (it == args.command_options.end()) return;
  chakra::write_trace(it->second, w, exec, job, "--export-chakra");
}

}  // namespace trainsim::planner::cli
