#include "planner/cli/commands.hpp"

#include <charconv>
#include <fstream>
#include <memory>
#include <sstream>

#include "models/collectives/alpha_beta.hpp"
#include "models/collectives/collective.hpp"
#include "models/collectives/sweep.hpp"
#include "models/failure/checkpoint.hpp"
#include "models/failure/law.hpp"
#include "models/failure/profile.hpp"
#include "models/hardware/calibration.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/llm/model_spec.hpp"
#include "models/presets/catalog.hpp"
#include "models/schedules/schedule.hpp"
#include "models/stack/stack_spec.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/fault.hpp"
#include "models/workload/run/iterations.hpp"
#include "models/workload/run/simulate.hpp"
#include "planner/cli/chakra.hpp"
#include "planner/cli/flags.hpp"
#include "planner/cli/job_input.hpp"
#include "planner/cli/oom_hints.hpp"
#include "planner/cli/report.hpp"
#include "planner/emit/emitter.hpp"
#include "sim/error.hpp"
#include "topology/builder.hpp"
#include "topology/graph.hpp"
#include "topology/routing.hpp"
#include "topology/summary.hpp"
#include "traces/sinks/recorders.hpp"
#include "traces/svg/svg.hpp"
#include "traces/svg/timeline.hpp"

namespace trainsim::planner::cli {

using sim::config::Json;

namespace {
// --iterations N (1 when absent).
int32_t iterations_option(const Args& args) {
  const auto it = args.command_options.find("iterations");
  if (it == args.command_options.end()) return 1;
  const std::string& text = it->second;
  bool digits = !text.empty() && text.size() <= 6;
  for (const char c : text) digits = digits && c >= '0' && c <= '9';
  const long n = digits ? std::strtol(text.c_str(), nullptr, 10) : -1;
  if (n < 1 || n > models::workload::kMaxIterations)
    throw ConfigError("--iterations", "expected a whole number from 1 to 64, got \"" + text + "\"",
                      "e.g. --iterations 8");
  return static_cast<int32_t>(n);
}

// --plot FILE.svg of `trainsim simulate`: the Gantt timeline of the simulated iteration.
void write_timeline_plot(const std::string& path, const models::workload::Job& job, const models::workload::Workload& w,
                         const sim::task::TaskExecutor& exec) {
  traces::TimelineOptions o;
  std::ostringstream title;
  title << job.model.name << " on " << job.gpus << " x " << job.gpu.name << " (tp " << job.tp << ", pp " << job.pp
        << ", dp " << job.dp << ")";
  o.title = title.str();
  traces::write_svg_file(path, traces::timeline_svg(w.graph, exec, o), "--plot");
}
}  // namespace

int run_simulate(const Args& args, std::ostream& out) {
  if (args.command_options.count("chakra")) return run_chakra_simulate(args, out);
  check_chakra_export(args);
  const Json given = job_json(args);
  const models::workload::Job job = models::workload::resolve_job(models::workload::parse_job(given));
  check_strict(args.options.count("strict") > 0, job);
  models::workload::SimulateOptions opt;
  opt.fidelity =
      args.fidelity == "full" ? models::workload::Fidelity::kFullRanks : models::workload::Fidelity::kRepresentative;
  if (!args.link_csv.empty() && job.network != models::workload::Network::kFlow)
    throw ConfigError("--link-csv", "link utilization needs the flow network", "drop --network analytic");
  traces::Recorders recorders(traces::RecorderOptions{args.trace_file, args.link_csv, &job, false});
  recorders.attach(opt);
  opt.after_run = [&](const models::workload::Workload& w, const sim::task::TaskExecutor& exec) {
    recorders.write_trace();
    if (args.command_options.count("plot")) write_timeline_plot(args.command_options.at("plot"), job, w, exec);
    write_chakra_export(args, job, w, exec);
    recorders.write_link_csv();
  };
  for (const std::string& spec : args.faults) opt.faults.push_back(models::workload::parse_fault(spec));
  const int32_t iterations = iterations_option(args);
  // A trace or link timeline records one iteration.
  if (iterations > 1 && !args.trace_file.empty())
    throw ConfigError("--trace", "records one iteration", "drop --iterations, or --trace");
  if (iterations > 1 && args.command_options.count("plot"))
    throw ConfigError("--plot", "draws one iteration", "drop --iterations, or --plot");
  if (iterations > 1 && !args.link_csv.empty())
    throw ConfigError("--link-csv", "records one iteration", "drop --iterations, or --link-csv");
  // A simulated failure (a dead GPU) is an outcome, reported with exit code 0.
  models::workload::SimulationResult r;
  if (iterations == 1) {
    r = models::workload::simulate(job, opt);
    if (args.json)
      out << canonical_json(r.to_json()) << "\n";
    else
      print_report(out, r);
  } else {
    models::workload::IterationsResult ir = models::workload::simulate_iterations(job, opt, iterations);
    r = std::move(ir.detail);
    if (args.json) {
      Json j = r.to_json();
      if (r.fits) j["iterations"] = ir.to_json();
      out << canonical_json(j) << "\n";
    } else {
      print_report(out, r);
      if (r.fits) print_iterations(out, ir, !opt.faults.empty());
    }
  }
  if (!r.fits) throw models::workload::does_not_fit_error(r, oom_hint(given, r));
  return kExitOk;
}

int run_list(const Args& args, std::ostream& out) {
  const std::vector<std::string>& kinds = list_categories();
  if (args.positionals.size() != 1) {
    std::string all;
    for (const std::string& k : kinds) all += (all.empty() ? "" : "|") + k;
    throw ConfigError("list", "say what to list", "trainsim list " + all);
  }
  const std::string kind = sim::config::read_enum(Json(args.positionals[0]), "list", kinds);
  auto rows = [&](const auto& entries) {
    for (const auto& e : entries)
      out << e.name << std::string(e.name.size() < 14 ? 14 - e.name.size() : 1, ' ') << e.description << "\n";
    return kExitOk;
  };
  if (kind == "failure-laws") return rows(models::failure::FailureLawRegistry::instance().all());
  if (kind == "checkpoints") return rows(models::failure::CheckpointRegistry::instance().all());
  if (kind == "emitters") {
    for (const auto& e : emit::EmitterRegistry::instance().all())
      out << e.name << std::string(e.name.size() < 14 ? 14 - e.name.size() : 1, ' ') << e.description << "\n";
    return kExitOk;
  }
  if (kind == "schedules") {
    for (const auto& s : models::schedules::ScheduleRegistry::instance().all())
      out << s.name << std::string(s.name.size() < 14 ? 14 - s.name.size() : 1, ' ') << s.description << "\n";
    return kExitOk;
  }
  for (const auto& p : models::presets::list(kind))
    out << p.name << std::string(p.name.size() < 18 ? 18 - p.name.size() : 1, ' ') << p.description << "\n";
  return kExitOk;
}

int run_config(const Args& args, std::ostream& out) {
  if (args.positionals.empty() || args.positionals[0] != "explain")
    throw ConfigError("config", "unknown config action", "use `trainsim config explain`");
  out << "# Configuration reference\n\nGenerated by `trainsim config explain` from the schema tables in the source; "
         "do not edit by hand.\nSizes take units (`80GiB`, `512MB`), bandwidths bits or bytes per second "
         "(`400Gbps`, `50GBps`), durations (`5us`), FLOP rates (`989TFLOPS`). Unknown keys are errors.\n\n";
  out << models::workload::job_schema().markdown() << "\n";
  out << models::llm::model_schema().markdown() << "\n";
  out << models::llm::moe_schema().markdown() << "\n";
  out << models::llm::mla_schema().markdown() << "\n";
  out << models::llm::attention_window_schema().markdown() << "\n";
  out << models::hardware::cluster_schema().markdown() << "\n";
  out << models::hardware::gpu_schema().markdown() << "\n";
  out << models::hardware::calibration_schema().markdown() << "\n";
  out << models::stack::stack_schema().markdown() << "\n";
  out << "## Built-in stacks\n\n| stack | framework | targets | description |\n| --- | --- | --- | --- |\n";
  for (const auto& p : models::presets::list("stacks")) {
    const auto s = models::stack::parse_stack(models::presets::find("stacks", p.name, "stack"), "stack");
    out << "| `" << s.name << "` | " << sim::config::markdown_cell(s.framework) << " | " << s.target << " | "
        << sim::config::markdown_cell(s.description) << " |\n";
  }
  out << "\n";
  out << models::failure::failure_profile_schema().markdown() << "\n";
  out << models::failure::component_schema().markdown() << "\n";
  out << models::failure::storage_schema().markdown() << "\n";
  out << models::failure::straggler_schema().markdown() << "\n";
  out << "## Cluster `network`\n\n"
         "A cluster's `network` object names a topology builder and its parameters, plus optional "
         "`faults` (`[{\"a\": NODE, \"b\": NODE, \"factor\": 0 or 1e-6..1, \"direction\": \"both\"|\"a_to_b\"}]`) and "
         "`routing` (below). Without it, trainsim derives a rail-optimized fabric from the cluster's NVLink "
         "and NIC figures.\n\n";
  for (const auto& b : topology::BuilderRegistry::instance().all()) out << b.markdown() << "\n";
  out << topology::routing_schema().markdown();
  return kExitOk;
}

namespace {
// "32K:8G" (powers of two, as nccl-tests -f 2) or "1M,4M,16M".
std::vector<sim::Bytes> parse_sizes(const std::string& text) {
  std::vector<sim::Bytes> out;
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    const sim::Bytes lo = sim::parse_bytes(text.substr(0, colon), "--sizes");
    const sim::Bytes hi = sim::parse_bytes(text.substr(colon + 1), "--sizes");
    if (lo.count() <= 0 || hi < lo)
      throw ConfigError("--sizes", "expected MIN:MAX with 0 < MIN <= MAX, got \"" + text + "\"", "e.g. --sizes 32K:8G");
    for (sim::Bytes b = lo; b <= hi; b = b * 2) out.push_back(b);
    return out;
  }
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const sim::Bytes b = sim::parse_bytes(item, "--sizes");
    if (b.count() <= 0) throw ConfigError("--sizes", "sizes must be positive, got \"" + item + "\"");
    out.push_back(b);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string option(const Args& args, const std::string& key, const std::string& fallback) {
  const auto it = args.command_options.find(key);
  return it == args.command_options.end() ? fallback : it->second;
}
}  // namespace

// One nccl-tests-style row: size, time, algbw = size / time, busbw = algbw x the op's factor.
void sweep_row(Json& rows, std::ostream& out, bool json, sim::Bytes size, double secs, double factor,
               const std::string& algorithm) {
  const double algbw = static_cast<double>(size.count()) / secs / 1e9;
  rows.push_back(Json{{"size_bytes", size.count()},
                      {"time_s", secs},
                      {"algbw_GBps", algbw},
                      {"busbw_GBps", algbw * factor},
                      {"algorithm", algorithm}});
  if (json) return;
  char line[160];
  std::snprintf(line, sizeof line, "%12lld  %12.2f  %11.2f  %11.2f  %s\n", static_cast<long long>(size.count()),
                secs * 1e6, algbw, algbw * factor, algorithm.c_str());
  out << line;
}

int run_collective(const Args& args, std::ostream& out) {
  if (!args.positionals.empty()) throw ConfigError(args.positionals[0], "unexpected argument");
  if (!args.job_flags.contains("cluster"))
    throw ConfigError("--cluster", "is required", "pass --cluster NAME or a file");
  if (!args.job_flags.contains("gpus")) throw ConfigError("--gpus", "is required", "pass --gpus N");
  const auto cluster = models::hardware::parse_cluster(
      models::presets::resolve("clusters", args.job_flags["cluster"].get<std::string>(), "--cluster"), "--cluster");
  const int64_t gpus = sim::config::read_int(args.job_flags["gpus"], "--gpus", 2, cluster.max_gpus);
  const auto op = models::collectives::parse_collective_op(option(args, "op", "all_reduce"), "--op");
  const std::vector<sim::Bytes> sizes = parse_sizes(option(args, "sizes", "32K:8G"));
  const bool flow = sim::config::read_enum(args.job_flags.value("network", Json("flow")), "--network",
                                           {"analytic", "flow"}) == "flow";
  if (op == models::collectives::CollectiveOp::kSendRecv && gpus != 2)
    throw ConfigError("--gpus", "send_recv runs between 2 GPUs", "pass --gpus 2");
  namespace col = models::collectives;
  col::NcclOverrides nccl;
  if (const std::string p = option(args, "protocol", "auto"); p != "auto")
    nccl.protocol = col::parse_protocol(p, "--protocol");
  if (args.command_options.count("channels")) {
    const std::string text = option(args, "channels", "");
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > 64)
      throw ConfigError("--channels", "must be an integer from 1 to 64, got \"" + text + "\"",
                        "NCCL runs 1 to 64 channels (MAXCHANNELS)");
    nccl.channels = static_cast<int32_t>(v);
  }
  const bool full = args.fidelity == "full";
  const col::Sweep sweep =
      flow ? col::flow_sweep(cluster, gpus, op, sizes, option(args, "algo", "auto"), nccl, full)
           : col::analytic_sweep(cluster, gpus, op, sizes,
                                 sim::config::read_enum(Json(option(args, "algo", "auto")), "--algo",
                                                        {"auto", "ring", "tree", "hierarchical"}),
                                 nccl);
  if (!args.json) {
    out << "# trainsim collective: " << col::to_string(op) << " on " << gpus << " GPUs of " << cluster.name << " (";
    if (flow)
      out << "flow-level network on " << sweep.fabric << ", " << sweep.nodes << " server"
          << (sweep.nodes == 1 ? "" : "s");
    else
      out << sweep.nodes << " node" << (sweep.nodes == 1 ? "" : "s") << ", analytic alpha-beta model";
    out << ")\n";
    out << "#       size      time(us)  algbw(GB/s)  busbw(GB/s)  algorithm\n";
  }
  const double factor = col::bus_bandwidth_factor(op, gpus);
  Json rows = Json::array();
  for (const col::SweepPoint& p : sweep.points)
    sweep_row(rows, out, args.json, p.size, p.time.seconds(), factor, p.algorithm);
  if (args.json) out << canonical_json(rows) << "\n";
  return kExitOk;
}

int run_topology(const Args& args, std::ostream& out) {
  if (!args.positionals.empty()) throw ConfigError(args.positionals[0], "unexpected argument");
  if (!args.job_flags.contains("cluster"))
    throw ConfigError("--cluster", "is required", "pass --cluster NAME or a file");
  if (!args.job_flags.contains("gpus")) throw ConfigError("--gpus", "is required", "pass --gpus N");
  const auto cluster = models::hardware::parse_cluster(
      models::presets::resolve("clusters", args.job_flags["cluster"].get<std::string>(), "--cluster"), "--cluster");
  const int64_t gpus = sim::config::read_int(args.job_flags["gpus"], "--gpus", 1, cluster.max_gpus);
  // Whole hosts, as simulate takes them; with an NVLink domain larger than a host (an NVL72 rack of
  // 4-GPU trays) the fabric is built from whole domains, as simulate builds it: 256 GPUs span 3.5 racks.
  const bool domains = cluster.domain_gpus() > cluster.gpus_per_node && gpus % cluster.gpus_per_node == 0;
  const int64_t built = domains ? models::hardware::network_gpus(cluster, gpus) : gpus;
  const topology::Topology t =
      topology::build_topology(models::hardware::network_spec(cluster), built, "cluster.network");
  const topology::Summary s = topology::summarize(t);
  if (const auto dot = args.command_options.find("dot"); dot != args.command_options.end()) {
    std::ofstream f(dot->second);
    if (!f)
      throw ConfigError("--dot", "cannot write " + dot->second, "check that the directory exists and is writable");
    topology::write_dot(t, f);
  }
  if (args.json) {
    Json j = s.to_json();
    j["builder"] = t.builder();
    out << canonical_json(j) << "\n";
    return kExitOk;
  }
  char line[200];
  out << "trainsim topology: " << cluster.name << ", " << gpus << " GPUs";
  if (built != gpus)
    out << " in " << built / cluster.domain_gpus() << " NVLink domains of " << cluster.domain_gpus() << " (" << built
        << " GPUs built)";
  out << " (" << t.builder() << ")\n";
  std::snprintf(line, sizeof line,
                "  nodes %zu (%zu GPUs, %zu switches), cables %zu\n  diameter %d hops between GPUs\n", s.nodes, s.gpus,
                s.switches, s.cables, s.diameter);
  out << line;
  std::snprintf(line, sizeof line, "  bisection bandwidth %.1f GB/s per direction\n", s.bisection.gbyte_per_second());
  out << line;
  return kExitOk;
}

}  // namespace trainsim::planner::cli
