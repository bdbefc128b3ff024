// `trainsim plan`: search every parallel configuration (planner/search/), report the ranking,
// explain the winner, sweep cluster sizes, compare what-if hardware, and write launch configs.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "models/failure/goodput.hpp"
#include "models/failure/inventory.hpp"
#include "models/failure/stragglers.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/job_input.hpp"
#include "planner/cli/options.hpp"
#include "planner/cli/overrides.hpp"
#include "planner/cli/plan_compare.hpp"
#include "planner/cli/plan_plot.hpp"
#include "planner/cli/plan_report.hpp"
#include "planner/cli/reliability_options.hpp"
#include "planner/cli/report.hpp"
#include "planner/emit/emitter.hpp"
#include "planner/search/distributed.hpp"
#include "planner/search/estimator.hpp"
#include "planner/search/pareto.hpp"
#include "planner/search/search.hpp"
#include "sim/config/schema.hpp"
#include "sim/error.hpp"
#include "traces/svg/svg.hpp"

namespace trainsim::planner::cli {

using sim::config::Json;

namespace {

// "1024:16384": powers of two from the first to the last.
std::vector<int64_t> parse_range(const std::string& text) {
  const auto colon = text.find(':');
  auto num = [&](const std::string& s) {
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < 1) return int64_t{-1};
    return static_cast<int64_t>(v);
  };
  const int64_t lo = num(text.substr(0, colon)), hi = num(text.substr(colon + 1));
  if (lo < 1 || hi < lo || hi > (int64_t{1} << 30))
    throw ConfigError("--gpus", "expected a range MIN:MAX with 1 <= MIN <= MAX <= 2^30, got \"" + text + "\"",
                      "e.g. --gpus 1024:16384 (doubling)");
  std::vector<int64_t> out;
  for (int64_t g = lo; g <= hi; g *= 2) out.push_back(g);
  if (out.back() != hi) out.push_back(hi);
  return out;
}

// A terminal progress bar on stderr (rank 0, only when stderr is a terminal).
std::function<void(int64_t, int64_t)> progress_bar(const std::string& label) {
  if (!isatty(2) || !search::Distributed::instance().root()) return {};
  return [label](int64_t done, int64_t total) {
    const int width = 30;
    const double f = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const int fill = static_cast<int>(f * width);
    std::fprintf(stderr, "\r%s [%s%s] %3.0f%%", label.c_str(), std::string(static_cast<size_t>(fill), '#').c_str(),
                 std::string(static_cast<size_t>(width - fill), ' ').c_str(), 100.0 * f);
    if (done >= total) std::fprintf(stderr, "\r%s\r", std::string(label.size() + width + 8, ' ').c_str());
    std::fflush(stderr);
  };
}

struct Setup {
  models::workload::JobSpec spec;
  models::workload::Job hardware;
};

Setup setup(const Json& job_json, int64_t gpus, bool needs_power) {
  Json j = job_json;
  j["gpus"] = gpus;
  Setup s;
  s.spec = models::workload::parse_job(j);
  s.hardware = models::workload::resolve_hardware(s.spec);
  if (gpus > s.hardware.cluster.max_gpus)
    throw ConfigError("--gpus",
                      std::to_string(gpus) + " GPUs exceed cluster \"" + s.hardware.cluster.name + "\"'s maximum of " +
                          std::to_string(s.hardware.cluster.max_gpus),
                      "use at most " + std::to_string(s.hardware.cluster.max_gpus) + " GPUs");
  if (needs_power && s.hardware.gpu.tdp_watts <= 0)
    throw ConfigError("gpu.tdp_watts", "is not set for " + s.hardware.gpu.name + ", so energy cannot be estimated",
                      "use --objective time or cost, or --override gpu.tdp_watts=700");
  if (s.spec.global_batch <= 0)
    throw ConfigError("--global-batch", "is required", "pass --global-batch N (sequences per iteration)");
  return s;
}

// What the phases of `trainsim plan` share: the options, the job (as given, without its GPU
// count, and with the what-if overrides), the sizes to plan, the goodput setup and the emitters.
struct PlanRun {
  search::Distributed& dist;  // first: it initialises MPI when launched by mpirun
  const Args& args;
  std::ostream& out;
  PlanReportOptions ro;
  search::SearchOptions so;
  std::vector<int64_t> sizes;           // the --gpus count, or the --gpus-range sizes
  Json base_json;                       // the job as given (the first size's GPU count)
  Json given;                           // ... without "gpus": the fields the search keeps
  Json what_if_json;                    // ... with the --override values
  std::optional<ReliabilitySetup> rel;  // --objective goodput: the reliability options
  std::vector<std::string> emitters;    // --emit names
};

// The report options (--objective, --tokens, --price-per-gpu-hour, --top).
PlanReportOptions report_options(const Args& args) {
  PlanReportOptions ro;
  ro.json = args.json;
  ro.objective = sim::config::read_enum(Json(option(args, "objective", "time")), "--objective",
                                        {"time", "cost", "energy", "goodput"});
  if (args.command_options.count("tokens")) ro.tokens = parse_tokens(args.command_options.at("tokens"));
  // A list of prices ("2.5,4,6") is one per cluster of a comparison (cluster_prices).
  if (option(args, "price-per-gpu-hour", "").find(',') == std::string::npos)
    ro.price_per_gpu_hour = number_option(args, "price-per-gpu-hour", 0.0, 0.0, 1e6);
  ro.top = int_option(args, "top", 10, 1, 1000);
  return ro;
}

// The search options: re-simulations, headroom, the space's bounds and the threads (the hardware's,
// shared by the MPI ranks of one node).
search::SearchOptions search_options(const Args& args, int64_t keep) {
  search::SearchOptions so;
  so.keep = keep;
  so.rerank = int_option(args, "rerank", 100, 0, 100000);
  so.rerank_flow = int_option(args, "rerank-flow", 10, 0, 100000);
  so.headroom = number_option(args, "headroom", 0.9, 0.05, 1.0);
  so.space.max_micro_batch = int_option(args, "max-micro-batch", 16, 1, 4096);
  so.space.max_vp = int_option(args, "max-vp", 8, 1, 64);
  const int64_t hw_threads = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int64_t local_ranks = local ? std::max(1, std::atoi(local)) : 1;
  so.threads = static_cast<int>(int_option(args, "threads", std::max<int64_t>(1, hw_threads / local_ranks), 1, 1024));
  return so;
}

// The job: flags over the file; a GPU range stands in for --gpus.
void read_job(PlanRun& p) {
  Args a = p.args;
  if (p.args.command_options.count("gpus-range")) {
    p.sizes = parse_range(p.args.command_options.at("gpus-range"));
    a.job_flags["gpus"] = p.sizes.front();
  }
  p.base_json = job_json(a);
  if (p.sizes.empty()) {
    if (!p.base_json.contains("gpus")) throw ConfigError("gpus", "missing", "give --gpus N or MIN:MAX");
    p.sizes = {sim::config::read_int(p.base_json.at("gpus"), "gpus", 1, 2147483647)};
  }
  p.given = p.base_json;
  p.given.erase("gpus");
}

// Goodput: the reliability options of `trainsim reliability`, read once; without --objective
// goodput, they are errors.
void read_reliability(PlanRun& p) {
  const Args& args = p.args;
  if (p.ro.objective == "goodput") {
    if (p.ro.tokens <= 0)
      throw ConfigError("--tokens", "is required with --objective goodput (the run's length)", "pass --tokens 15T");
    p.rel = reliability_setup(args, p.base_json.value("seed", int64_t{0}));
    return;
  }
  for (const char* o : {"runs", "checkpoint", "checkpoint-interval", "spares", "failures", "failure-scale",
                        "storage-write", "storage-read"})
    if (args.command_options.count(o))
      throw ConfigError(std::string("--") + o, "only applies to `trainsim plan` with --objective goodput",
                        "add --objective goodput, or run `trainsim reliability`");
  if (!args.rates.empty() || args.options.count("elastic") || args.options.count("broadcast-restore"))
    throw ConfigError(!args.rates.empty()             ? "--rate"
                      : args.options.count("elastic") ? "--elastic"
                                                      : "--broadcast-restore",
                      "only applies to `trainsim plan` with --objective goodput",
                      "add --objective goodput, or run `trainsim reliability`");
}

// Launch configs: names and folder checked before the search runs.
std::vector<std::string> read_emitters(const Args& args) {
  std::vector<std::string> emitters;
  if (args.command_options.count("emit")) {
    if (option(args, "out", "").empty()) throw ConfigError("--out", "is required with --emit", "pass --out DIR");
    const std::string names = args.command_options.at("emit");
    size_t start = 0;
    while (true) {
      const size_t comma = names.find(',', start);
      emitters.push_back(names.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      emit::EmitterRegistry::instance().get(emitters.back(), "--emit");
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else if (args.command_options.count("out")) {
    throw ConfigError("--out", "only applies with --emit", "add --emit megatron|nemo|deepspeed|torchtitan|slurm");
  }
  return emitters;
}

// The goodput model of one cluster size (its components and failure processes); the search
// ranks by its expected wall clock. Null without --objective goodput.
std::unique_ptr<models::failure::GoodputModel> goodput_for(const std::optional<ReliabilitySetup>& rel, const Setup& st,
                                                           int64_t g) {
  if (!rel) return nullptr;
  models::workload::Job j = st.hardware;
  j.gpus = g;
  j.global_batch = st.spec.global_batch;
  j.seq_len = st.spec.seq_len.value_or(j.model.seq_len);
  j.network = st.spec.network;
  return std::make_unique<models::failure::GoodputModel>(j, rel->profile, rel->options);
}

// The search's score under a goodput model: its expected wall clock (empty without one).
std::function<double(const search::Candidate&, double)> score_of(const models::failure::GoodputModel* gm) {
  if (!gm) return {};
  return [gm](const search::Candidate& c, double it) {
    return gm->expected_time(c.dp, c.cp, c.zero, sim::Time::from_seconds_ceil(it)).seconds();
  };
}

// Searches the job `job` on g GPUs into `row` (its result and best plan), or the reason it has
// none (a PlanError, or a ConfigError: the hardware may reject the GPU count).
template <class Row>
void search_into(PlanRun& p, const Json& job, int64_t g, bool needs_power, Row& row) {
  try {
    const Setup s = setup(job, g, needs_power);
    const auto gm = goodput_for(p.rel, s, g);
    p.so.score = score_of(gm.get());
    row.result = search::run_search(s.hardware, s.spec, p.given, p.so);
    p.so.score = {};  // it points into this size's model
    row.job = search::plan_job(s.hardware, s.spec, row.result.plans.front().candidate);
    row.ok = true;
  } catch (const PlanError& e) {
    row.why = e.what();
  } catch (const ConfigError& e) {
    row.why = (e.path().empty() ? "" : e.path() + ": ") + e.message();
  }
}

// A sweep of cluster sizes: one search per size (fewer re-simulations each), the table, the plot.
int run_sweep(PlanRun& p) {
  const Args& args = p.args;
  if (!p.emitters.empty())
    throw ConfigError("--emit", "writes the launch configs of one plan, not of a sweep", "give one --gpus count");
  p.so.rerank = args.command_options.count("rerank") ? p.so.rerank : std::min<int64_t>(p.so.rerank, 10);
  p.so.rerank_flow =
      args.command_options.count("rerank-flow") ? p.so.rerank_flow : std::min<int64_t>(p.so.rerank_flow, 3);
  std::vector<SizeResult> rows;
  for (const int64_t g : p.sizes) {
    p.so.progress = progress_bar(std::to_string(g) + " GPUs");
    SizeResult row;
    row.gpus = g;
    search_into(p, p.what_if_json, g, p.ro.require_power, row);
    rows.push_back(std::move(row));
  }
  for (const auto& r : rows)
    if (r.ok) check_strict(args.options.count("strict") > 0, r.job);
  if (!p.dist.root()) return kExitOk;
  // The plot first: a plot that cannot be written fails the run before any report is printed.
  if (args.command_options.count("plot")) {
    const size_t best = best_size(rows, p.ro);
    std::ostringstream title;
    if (best < rows.size()) title << rows[best].job.model.name << " on " << rows[best].job.gpu.name << ": ";
    title << "cluster sizes (objective: " << p.ro.objective << ")";
    traces::write_svg_file(args.command_options.at("plot"), sweep_svg(rows, best, title.str()), "--plot");
  }
  print_sweep(p.out, rows, p.ro);
  bool any = false;
  for (const auto& r : rows) any = any || r.ok;
  if (!any) throw PlanError("plan", "no cluster size in the range has a configuration that fits", "use more GPUs");
  return kExitOk;
}

// Goodput: the Monte Carlo of the winner, stragglers re-simulated.
models::failure::ReliabilityReport reliability_study(const ReliabilitySetup& rel, const models::workload::Job& winner) {
  const models::workload::SimulationResult sim = models::workload::simulate(winner);
  const models::failure::StragglerSlowdowns slow = models::failure::straggler_slowdowns(winner, sim, rel.profile);
  return models::failure::run_study(
      models::failure::reliability_model(winner, models::failure::count_components(winner), sim.iteration, rel.profile,
                                         rel.options, slow),
      rel.options);
}

// One cluster size: the search (and, with overrides, the baseline's), the report, the launch
// configs and the plot.
int run_single(PlanRun& p) {
  const Args& args = p.args;
  const int64_t gpus = p.sizes.front();
  Setup s = setup(p.what_if_json, gpus, p.ro.require_power);
  p.so.progress = progress_bar("plan");
  const auto gm = goodput_for(p.rel, s, gpus);
  p.so.score = score_of(gm.get());
  const search::SearchResult r = search::run_search(s.hardware, s.spec, p.given, p.so);
  std::optional<BaselineResult> baseline;
  if (!args.overrides.empty()) {
    p.so.progress = progress_bar("baseline");
    BaselineResult br;
    // The original hardware may reject what the override allows (more GPUs than it has).
    search_into(p, p.base_json, gpus, false, br);
    baseline = std::move(br);
  }
  const models::workload::Job winner = search::plan_job(s.hardware, s.spec, r.plans.front().candidate);
  check_strict(args.options.count("strict") > 0, winner);
  if (!p.dist.root()) return kExitOk;
  std::vector<std::string> written;
  for (const auto& name : p.emitters)
    for (const auto& f : emit::write_files(option(args, "out", ""), emit::emit(name, winner))) written.push_back(f);
  std::optional<models::failure::ReliabilityReport> study;
  if (p.rel) study = reliability_study(*p.rel, winner);
  // The plot first: a plot that cannot be written fails the run before any report is printed.
  if (args.command_options.count("plot")) {
    std::ostringstream title;
    title << s.hardware.model.name << " on " << r.gpus << " x " << s.hardware.gpu.name << ": time vs memory";
    traces::write_svg_file(args.command_options.at("plot"),
                           pareto_svg(r, search::usable_memory_bytes(s.hardware, p.ro.headroom), p.ro.top, title.str()),
                           "--plot");
  }
  print_plan(p.out, r, s.hardware, s.spec, winner, p.ro, baseline ? &*baseline : nullptr, written,
             study ? &*study : nullptr);
  return kExitOk;
}

// Several clusters (`--cluster A,B,C`): the same search on each (on each size of a --gpus
// MIN:MAX sweep, with the sweep's fewer re-simulations), side by side, and the comparison plot.
int run_compare(PlanRun& p, const std::vector<std::string>& names) {
  const Args& args = p.args;
  if (!p.emitters.empty())
    throw ConfigError("--emit", "writes the launch configs of one plan, not of a comparison of clusters",
                      "give one --cluster");
  if (!args.overrides.empty())
    throw ConfigError("--override", "changes the hardware of one cluster, not of a comparison of clusters",
                      "give one --cluster, or add a cluster file with the change to the list");
  const bool sweep = p.sizes.size() > 1;
  if (sweep) {
    p.so.rerank = args.command_options.count("rerank") ? p.so.rerank : std::min<int64_t>(p.so.rerank, 10);
    p.so.rerank_flow =
        args.command_options.count("rerank-flow") ? p.so.rerank_flow : std::min<int64_t>(p.so.rerank_flow, 3);
  }
  const std::vector<double> prices = cluster_prices(option(args, "price-per-gpu-hour", "0"), names.size());
  // Every cluster resolved before any search: an unknown preset (did-you-mean) or a malformed
  // file is an error of --cluster.
  std::vector<ClusterPlans> clusters(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    Json j = p.base_json;
    j["cluster"] = names[i];
    clusters[i].cluster = names[i];
    clusters[i].gpu = models::workload::resolve_platform(models::workload::parse_job(j)).gpu.name;
    clusters[i].price_per_gpu_hour = prices[i];
  }
  for (auto& c : clusters) {
    Json j = p.base_json;
    j["cluster"] = c.cluster;
    p.given["cluster"] = c.cluster;
    for (const int64_t g : p.sizes) {
      p.so.progress = progress_bar(sweep ? c.cluster + ", " + std::to_string(g) + " GPUs" : c.cluster);
      SizeResult row;
      row.gpus = g;
      search_into(p, j, g, p.ro.require_power, row);
      c.sizes.push_back(std::move(row));
    }
  }
  for (const auto& c : clusters)
    for (const auto& r : c.sizes)
      if (r.ok) check_strict(args.options.count("strict") > 0, r.job);
  if (!p.dist.root()) return kExitOk;
  // The plot first: a plot that cannot be written fails the run before any report is printed.
  if (args.command_options.count("plot")) {
    std::string model;
    for (const auto& c : clusters)
      for (const auto& s : c.sizes)
        if (model.empty() && s.ok) model = s.job.model.name + " ";
    const std::string title = sweep ? model + "on " + std::to_string(clusters.size()) + " clusters: cluster sizes"
                                    : model + "on " + std::to_string(p.sizes.front()) + " GPUs of " +
                                          std::to_string(clusters.size()) + " clusters";
    traces::write_svg_file(args.command_options.at("plot"),
                           sweep ? compare_sweep_svg(clusters, p.ro, title) : compare_svg(clusters, p.ro, title),
                           "--plot");
  }
  print_comparison(p.out, clusters, p.ro, sweep);
  if (best_row(clusters, p.ro).first >= clusters.size())
    throw PlanError("plan", "no cluster in the list has a configuration that fits",
                    sweep ? "use more GPUs" : "use more GPUs, or try --gpus MIN:MAX");
  return kExitOk;
}

}  // namespace

int run_plan(const Args& args, std::ostream& out) {
  PlanRun p{search::Distributed::instance(), args, out, report_options(args), {}, {}, {}, {}, {}, {}, {}};
  p.so = search_options(args, p.ro.top);
  p.ro.headroom = p.so.headroom;
  read_job(p);
  if (p.ro.objective == "energy") p.ro.require_power = true;
  read_reliability(p);
  p.emitters = read_emitters(args);
  const std::vector<std::string> clusters = cluster_list(p.base_json);
  if (!clusters.empty()) return run_compare(p, clusters);
  if (option(args, "price-per-gpu-hour", "").find(',') != std::string::npos)
    cluster_prices(args.command_options.at("price-per-gpu-hour"), 1);  // throws: a list for one cluster
  p.what_if_json = apply_overrides(p.base_json, args.overrides);
  p.ro.overrides = args.overrides;
  return p.sizes.size() > 1 ? run_sweep(p) : run_single(p);
}

}  // namespace trainsim::planner::cli
