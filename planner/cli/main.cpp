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
#include "planner/cli/flags.hpp"
#include "planner/cli/ui.hpp"
#include "planner/cli/usage.hpp"
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
      // `trainsim help COMMAND` or `trainsim COMMAND --help`: that command's usage.
      const std::string command = args.command == "help" || args.command.empty()
                                      ? (args.positionals.empty() ? "" : args.positionals[0])
                                      : args.command;
      if (command.empty() || command == "help")
        print_help(std::cout);
      else
        print_command_help(std::cout, command);
      return kExitOk;
    }
    check_command_flags(args);
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
