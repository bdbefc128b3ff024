// The `trainsim` executable: the only place that catches errors, prints them (one line on
// stderr) and chooses the exit code.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "planner/cli/args.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/errors.hpp"
#include "planner/cli/ui.hpp"
#include "planner/search/distributed.hpp"
#include "sim/deadline.hpp"
#include "sim/error.hpp"

namespace {
// Under mpirun only rank 0 reports errors (every rank reaches the same one and exits with the same
// code).
std::ostream& err() {
  static std::ostringstream sink;
  if (trainsim::planner::search::Distributed::instance().root()) return std::cerr;
  return sink;
}

// Options that only some commands read: given to another command they are an error, never
// silently ignored.
void check_command_options(const trainsim::planner::cli::Args& args) {
  using trainsim::ConfigError;
  struct Rule {
    const char* option;
    std::vector<std::string> commands;
    const char* hint;
  };
  const std::vector<std::string> plan{"plan"}, sim{"simulate"}, rel{"reliability"}, plan_rel{"plan", "reliability"},
      coll{"collective"}, topo{"topology"}, val{"validate"};
  const std::vector<Rule> rules = {
      {"top", plan, "drop it, or run `trainsim plan`"},
      {"objective", plan, "drop it, or run `trainsim plan`"},
      {"price-per-gpu-hour", plan, "drop it, or run `trainsim plan`"},
      {"emit", plan, "drop it, or run `trainsim plan`"},
      {"out", {"plan", "kineto", "calibrate"}, "drop it, or run `trainsim plan`"},
      {"only", {"calibrate"}, "drop it, or run `trainsim calibrate`"},
      {"rank", {"kineto"}, "drop it, or run `trainsim kineto export`"},
      {"threads", {"plan", "ui", "calibrate"}, "drop it, or run `trainsim plan` or `trainsim ui`"},
      {"rerank", plan, "drop it, or run `trainsim plan`"},
      {"rerank-flow", plan, "drop it, or run `trainsim plan`"},
      {"headroom", plan, "drop it, or run `trainsim plan`"},
      {"max-micro-batch", plan, "drop it, or run `trainsim plan`"},
      {"max-vp", plan, "drop it, or run `trainsim plan`"},
      {"tokens", plan_rel, "drop it, or run `trainsim plan` or `trainsim reliability`"},
      {"iterations", sim, "drop it, or run `trainsim simulate`"},
      {"chakra", sim, "drop it, or run `trainsim simulate --chakra PATH --cluster C`"},
      {"export-chakra", sim, "drop it, or run `trainsim simulate ... --fidelity full --export-chakra PREFIX`"},
      {"recorded-gpu", sim, "drop it, or run `trainsim simulate --chakra PATH --recorded-gpu G`"},
      {"plot",
       {"simulate", "plan", "kineto", "calibrate"},
       "drop it, or run `trainsim simulate`, `trainsim plan` or `trainsim kineto compare`"},
      {"op", coll, "drop it, or run `trainsim collective`"},
      {"sizes", coll, "drop it, or run `trainsim collective`"},
      {"algo", coll, "drop it, or run `trainsim collective`"},
      {"protocol", coll, "drop it, or run `trainsim collective`"},
      {"channels", coll, "drop it, or run `trainsim collective`"},
      {"dot", topo, "drop it, or run `trainsim topology`"},
      {"measurements", {"validate", "calibrate"}, "drop it, or run `trainsim validate`"},
      {"save", val, "drop it, or run `trainsim validate`"},
      {"calibration-out", val, "drop it, or run `trainsim validate`"},
      {"reps", val, "drop it, or run `trainsim validate`"},
      {"replay", val, "drop it, or run `trainsim validate --replay iteration`"},
      {"backend", val, "drop it, or run `trainsim validate --replay iteration`"},
      {"time-scale", val, "drop it, or run `trainsim validate --replay iteration`"},
      {"replay-timeout", val, "drop it, or run `trainsim validate --replay iteration`"},
      {"days", rel, "drop it, or run `trainsim reliability`"},
      {"runs", plan_rel, "drop it, or run `trainsim reliability`"},
      {"checkpoint", plan_rel, "drop it, or run `trainsim reliability`"},
      {"checkpoint-interval", plan_rel, "drop it, or run `trainsim reliability`"},
      {"spares", plan_rel, "drop it, or run `trainsim reliability`"},
      {"failures", plan_rel, "drop it, or run `trainsim reliability`"},
      {"failure-scale", plan_rel, "drop it, or run `trainsim reliability`"},
      {"storage-write", plan_rel, "drop it, or run `trainsim reliability`"},
      {"storage-read", plan_rel, "drop it, or run `trainsim reliability`"},
      {"screenshot", {"ui"}, "drop it, or run `trainsim ui`"},
      {"regions", {"ui"}, "drop it, or run `trainsim ui`"},
      {"size", {"ui"}, "drop it, or run `trainsim ui`"},
  };
  auto allowed = [&](const std::vector<std::string>& cmds) {
    return std::find(cmds.begin(), cmds.end(), args.command) != cmds.end();
  };
  auto reject = [&](const std::string& flag, const std::vector<std::string>& cmds, const std::string& hint) {
    std::string which;
    for (size_t i = 0; i < cmds.size(); ++i)
      which += (i ? (i + 1 == cmds.size() ? " and " : ", ") : "") + ("`trainsim " + cmds[i] + "`");
    throw ConfigError(flag, "only applies to " + which, hint);
  };
  for (const Rule& r : rules)
    if (args.command_options.count(r.option) && !allowed(r.commands))
      reject(std::string("--") + r.option, r.commands, r.hint);
  if (args.options.count("strict") && !allowed({"simulate", "plan"}))
    reject("--strict", {"simulate", "plan"}, "drop it, or run `trainsim simulate` or `trainsim plan`");
  if (args.options.count("skip-unusable") && !allowed({"calibrate"}))
    reject("--skip-unusable", {"calibrate"}, "drop it, or run `trainsim calibrate`");
  if (args.options.count("no-plans") && !allowed({"ui"})) reject("--no-plans", {"ui"}, "drop it, or run `trainsim ui`");
  for (const char* s : {"elastic", "broadcast-restore"})
    if (args.options.count(s) && !allowed(plan_rel))
      reject(std::string("--") + s, plan_rel, "drop it, or run `trainsim reliability`");
  if (!args.rates.empty() && !allowed(plan_rel)) reject("--rate", plan_rel, "drop it, or run `trainsim reliability`");
  if (!args.faults.empty() && !allowed(sim)) reject("--fault", sim, "drop it, or run `trainsim simulate`");
  if (!args.trace_file.empty() && !allowed(sim) && !(allowed(val) && args.command_options.count("replay")))
    reject("--trace", sim, "drop it, or run `trainsim simulate` or `trainsim validate --replay iteration`");
  if (!args.link_csv.empty() && !allowed(sim)) reject("--link-csv", sim, "drop it, or run `trainsim simulate`");
  if (args.fidelity != "representative" && !allowed(sim) && args.command != "collective")
    reject("--fidelity", {"simulate", "collective"}, "drop it, or run `trainsim simulate` or `trainsim collective`");
  if (!args.overrides.empty() && !allowed(plan))
    throw ConfigError("--override", "only applies to `trainsim plan`", "change the cluster or GPU in a file instead");
  if (args.command_options.count("gpus-range") && !allowed(plan))
    throw ConfigError("--gpus", "a range MIN:MAX only applies to `trainsim plan`", "give one GPU count");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainsim::planner::cli;
  Args args;
  try {
    args = parse_args(argc, argv);
    configure_logging(args);
    trainsim::sim::set_time_limit(args.time_limit.seconds());
    if (args.command.empty() && !args.options.count("help"))
      throw trainsim::ConfigError("trainsim", "no command given",
                                  "run `trainsim help` for the commands, e.g. `trainsim simulate --model llama3-8b "
                                  "--cluster dgx-h100 --gpus 8 --global-batch 8`");
    if (args.command == "help" || args.options.count("help")) {
      print_help(std::cout);
      return kExitOk;
    }
    check_command_options(args);
    if (args.command == "simulate") return run_simulate(args, std::cout);
    if (args.command == "list") return run_list(args, std::cout);
    if (args.command == "config") return run_config(args, std::cout);
    if (args.command == "collective") return run_collective(args, std::cout);
    if (args.command == "topology") return run_topology(args, std::cout);
    if (args.command == "plan") return run_plan(args, std::cout);
    if (args.command == "reliability") return run_reliability(args, std::cout);
    if (args.command == "calibrate") return run_calibrate_runs(args, std::cout);
    if (args.command == "ui") return run_ui(args, argv);
    if (args.command == "validate" || args.command == "kineto") {
      // The command line recorded in provenance, without --log (diagnostics never reach results).
      std::string line = "trainsim";
      for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--log") {
          ++i;
          continue;
        }
        if (a.rfind("--log=", 0) == 0) continue;
        line += " " + a;
      }
      return args.command == "kineto" ? run_kineto(args, std::cout, line) : run_validate(args, std::cout, line);
    }
    throw trainsim::ConfigError(
        args.command, "unknown command",
        "use simulate, plan, reliability, calibrate, collective, topology, validate, kineto, ui, list or "
        "config; see `trainsim help`");
  } catch (...) {
    return report_error(std::current_exception(), args, err());
  }
}
