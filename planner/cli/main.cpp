// The `trainsim` executable: the only place that catches errors, prints them (one line on
// stderr) and chooses the exit code.
#include <iostream>
#include <sstream>

#include "planner/cli/args.hpp"
#include "planner/cli/commands.hpp"
#include "planner/search/distributed.hpp"
#include "sim/error.hpp"
#include "validator/runner.hpp"

namespace {
// Under mpirun only rank 0 reports errors (every rank reaches the same one and exits with the same
// code).
std::ostream& err() {
  static std::ostringstream sink;
  if (trainsim::planner::search::Distributed::instance().root()) return std::cerr;
  return sink;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace trainsim::planner::cli;
  Args args;
  try {
    args = parse_args(argc, argv);
    if (args.command.empty() || args.command == "help" || args.options.count("help")) {
      print_help(std::cout);
      return args.command.empty() && !args.options.count("help") ? kExitBadInput : kExitOk;
    }
    if (args.command != "plan") {
      // Options only the planner reads.
      for (const char* o : {"top", "objective", "tokens", "price-per-gpu-hour", "emit", "out", "threads", "rerank",
                            "rerank-flow", "headroom", "max-micro-batch", "max-vp"})
        if (args.command_options.count(o))
          throw trainsim::ConfigError(std::string("--") + o, "only applies to `trainsim plan`",
                                      "drop it, or run `trainsim plan`");
      if (!args.overrides.empty())
        throw trainsim::ConfigError("--override", "only applies to `trainsim plan`",
                                    "change the cluster or GPU in a file instead");
      if (args.command_options.count("gpus-range"))
        throw trainsim::ConfigError("--gpus", "a range MIN:MAX only applies to `trainsim plan`", "give one GPU count");
    }
    if (args.command == "simulate") return run_simulate(args, std::cout);
    if (args.command == "list") return run_list(args, std::cout);
    if (args.command == "config") return run_config(args, std::cout);
    if (args.command == "collective") return run_collective(args, std::cout);
    if (args.command == "topology") return run_topology(args, std::cout);
    if (args.command == "plan") return run_plan(args, std::cout);
    if (args.command == "validate") {
      std::string line = "trainsim";
      for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
      return run_validate(args, std::cout, line);
    }
    throw trainsim::ConfigError(
        args.command, "unknown command",
        "use simulate, plan, collective, topology, validate, list or config; see `trainsim help`");
  } catch (const trainsim::ConfigError& e) {
    std::cout.flush();
    const std::string path = display_path(e.path(), args);
    err() << "error: " << (path.empty() ? "" : path + ": ") << e.message()
          << (e.hint().empty() ? "" : " (" + e.hint() + ")") << "\n";
    return kExitBadInput;
  } catch (const trainsim::PlanError& e) {
    std::cout.flush();
    err() << "error: " << e.what() << "\n";
    return kExitDoesNotFit;
  } catch (const trainsim::validator::NoGpuError& e) {
    std::cout.flush();
    err() << "error: validate: " << e.what() << "\n";
    return kExitNoGpu;
  } catch (const std::exception& e) {
    std::cout.flush();
    err() << "internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
