// `trainsim validate --replay iteration JOB`: the simulated iteration as a real distributed
// program (docs/validator.md). Every MPI process is one rank of the plan; it simulates the job at
// full fidelity (same inputs, same DAG on every rank), checks the program, runs its own ops on the
// CPU or GPU backend, and rank 0 reports every rank's measured timeline beside the simulated one.
#include <fstream>
#include <memory>
#include <string>

#include "models/calibration/fit.hpp"
#include "models/calibration/measurement.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/job_input.hpp"
#include "planner/cli/options.hpp"
#include "planner/cli/output_files.hpp"
#include "planner/search/distributed.hpp"
#include "sim/error.hpp"
#include "validator/replay/check.hpp"
#include "validator/replay/compare.hpp"
#include "validator/replay/executor.hpp"
#include "validator/replay/gpu_backend.hpp"
#include "validator/replay/measurements.hpp"
#include "validator/replay/mpi_backend.hpp"
#include "validator/runner.hpp"

namespace trainsim::planner::cli {

namespace replay = validator::replay;

namespace {

// The plan's ranks against the processes running it: one process per rank.
void check_world(const models::workload::Job& job, int world, const std::string& backend) {
  if (world == job.gpus) return;
  if (world == 1 && job.gpus > 1 && !replay::have_mpi())
    throw validator::NoGpuError("the plan has " + std::to_string(job.gpus) +
                                " ranks and this trainsim was built without MPI (install libopenmpi-dev, which "
                                "`bash .ci/setup` does, and rebuild)");
  throw ConfigError("--replay",
                    "the MPI world has " + std::to_string(world) + " process" + (world == 1 ? "" : "es") +
                        " but the plan has " + std::to_string(job.gpus) + " ranks",
                    "run one process per rank: mpirun -np " + std::to_string(job.gpus) +
                        " trainsim validate --replay iteration --backend " + backend + " ...");
}

// The job simulated with every rank explicit, as programs.
replay::Program simulate_program(const models::workload::Job& job) {
  models::workload::SimulateOptions opt;
  opt.fidelity = models::workload::Fidelity::kFullRanks;
  replay::Program program;
  opt.after_run = [&](const models::workload::Workload& w, const sim::task::TaskExecutor& exec) {
    program = replay::build_program(w, exec);
  };
  const models::workload::SimulationResult r = models::workload::simulate(job, opt);
  if (!r.fits)
    throw models::workload::does_not_fit_error(r, "the replay runs the plan as simulated: change the plan first");
  return program;
}

// --save: the replay's communication as collective records (after those of --measurements, a
// microbenchmark run's file); --calibration-out: the constants fitted to them all
// (models/calibration/fit.hpp), the links per class. Returns the fit (null without either).
sim::config::Json save_and_fit(const Args& args, const models::workload::Job& job, const replay::Program& program,
                               const std::vector<replay::RankTimeline>& timelines, double scale) {
  const std::string save = option(args, "save", ""), out = option(args, "calibration-out", "");
  if (save.empty() && out.empty()) return nullptr;
  models::calibration::MeasurementSet set;
  if (const std::string micro = option(args, "measurements", ""); !micro.empty()) {
    set = models::calibration::measurements_from_json(models::presets::load_json_file(micro, "--measurements"),
                                                      "--measurements");
    if (!set.provenance.gpu_preset.empty() && set.provenance.gpu_preset != job.gpu.name)
      throw ConfigError("--measurements",
                        "measured on " + set.provenance.gpu_preset + " but the job's GPU is " + job.gpu.name,
                        "give the microbenchmarks of this job's GPU");
  } else {
    set.provenance.gpu_preset = job.gpu.name;
    set.provenance.gpus = static_cast<int>(job.gpus);
    set.provenance.job = job.to_json();
  }
  set.provenance.replay = "the whole iteration, every rank (validate --replay iteration)";
  for (auto& m : replay::comm_measurements(program, timelines, scale, static_cast<int>(job.cluster.gpus_per_node)))
    set.items.push_back(std::move(m));
  if (!save.empty()) write_json_file(save, models::calibration::to_json(set), "--save");
  const models::calibration::FitResult fitted = models::calibration::fit(set, job.gpu, &job.cluster);
  if (!out.empty())
    write_json_file(out, models::calibration::calibration_json(fitted, set.provenance, job.gpu.name + "-measured"),
                    "--calibration-out");
  return fitted.to_json();
}

}  // namespace

int run_validate_replay(const Args& args, std::ostream& out) {
  const std::string what = option(args, "replay", "");
  if (what != "iteration")
    throw ConfigError("--replay", "expected \"iteration\", got \"" + what + "\"", "write --replay iteration");
  const std::string backend_name = option(args, "backend", "cpu");
  if (backend_name != "cpu" && backend_name != "gpu")
    throw ConfigError("--backend", "expected cpu or gpu, got \"" + backend_name + "\"",
                      "--backend cpu (OpenMPI, any machine) or --backend gpu (CUDA + NCCL)");
  if (args.command_options.count("reps"))
    throw ConfigError("--reps", "does not apply to --replay", "drop it, or drop --replay");
  if (args.command_options.count("measurements") && !args.command_options.count("save") &&
      !args.command_options.count("calibration-out"))
    throw ConfigError("--measurements", "with --replay, only adds microbenchmarks to the link fit",
                      "add --calibration-out FILE (or --save FILE), or drop it");
  for (const char* k : {"save", "calibration-out", "measurements"})
    if (args.command_options.count(k) && backend_name != "gpu")
      throw ConfigError(std::string("--") + k,
                        "the CPU backend's timings are MPI's on this machine, not the GPU links': nothing to fit",
                        "use --backend gpu on a GPU node, or drop it");
  const auto& dist = search::Distributed::instance();  // first: initialises MPI under mpirun
  const models::workload::Job job = models::workload::resolve_job(models::workload::parse_job(job_json(args)));
  check_world(job, dist.size(), backend_name);

  const replay::Program program = simulate_program(job);
  const replay::CheckReport checks = replay::check_program(program);
  if (!checks.ok())
    throw replay::ReplayError("the simulated plan cannot run as written (" + std::to_string(checks.problems.size()) +
                              " problems), first: " + checks.problems.front());
  replay::ReplayOptions opt;
  opt.timeout_s = time_option(args, "replay-timeout").value_or(sim::Time::s(60)).seconds();
  // CPU: a simulated iteration lasts a quarter of a second of waits, whatever its length; GPU:
  // real time (the kernels and NCCL take what they take).
  const double sim_s = program.iteration.seconds();
  const double fallback = backend_name == "gpu" ? 1.0 : (sim_s > 0 ? 0.25 / sim_s : 1.0);
  opt.scale = number_option(args, "time-scale", fallback, 1e-6, 1e6);

  std::unique_ptr<replay::Backend> backend = backend_name == "gpu"
                                                 ? replay::make_gpu_backend(job, opt.timeout_s)
                                                 : std::make_unique<replay::MpiBackend>(256 * 1024, opt.timeout_s);
  replay::RankTimeline mine;
  try {
    backend->synchronize();  // every rank is here before the communicators are made
    backend->setup(program);
    mine = replay::execute(program.ranks.at(static_cast<size_t>(backend->rank())), *backend, opt);
  } catch (const replay::ReplayError& e) {
    dist.fail_all("error: --replay: " + std::string(e.what()), kExitReplayFailed);
    throw;
  }
  const std::vector<std::string> all = backend->gather(mine.serialize());
  if (backend->rank() != 0) return kExitOk;
  std::vector<replay::RankTimeline> timelines;
  for (const auto& bytes : all) timelines.push_back(replay::RankTimeline::deserialize(bytes));
  const replay::ReplayReport report = replay::compare(program, timelines, checks, backend->name(), opt.scale);
  if (!args.trace_file.empty()) {
    std::ofstream f(args.trace_file);
    if (!f || !(f << replay::perfetto_trace(program, timelines).dump() << "\n"))
      throw ConfigError("--trace", "cannot write " + args.trace_file, "give a writable path");
  }
  const sim::config::Json fit_json = save_and_fit(args, job, program, timelines, opt.scale);
  if (args.json) {
    sim::config::Json j = {{"schema_version", 1}, {"replay", report.to_json()}};
    if (!fit_json.is_null()) j["fit"] = fit_json;
    out << j.dump(2) << "\n";
  } else {
    replay::print_report(out, report);
    if (!fit_json.is_null()) out << "\nLink fit from the replay's communication: " << fit_json.dump() << "\n";
  }
  return kExitOk;
}

}  // namespace trainsim::planner::cli
