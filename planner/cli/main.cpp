// The `trainsim` executable: the only place that catches errors, prints them (one line on
// stderr) and chooses the exit code.
#include <iostream>

#include "planner/cli/args.hpp"
#include "planner/cli/commands.hpp"
#include "sim/error.hpp"
#include "validator/runner.hpp"

int main(int argc, char** argv) {
  using namespace trainsim::planner::cli;
  Args args;
  try {
    args = parse_args(argc, argv);
    if (args.command.empty() || args.command == "help" || args.options.count("help")) {
      print_help(std::cout);
      return args.command.empty() && !args.options.count("help") ? kExitBadInput : kExitOk;
    }
    if (args.command == "simulate") return run_simulate(args, std::cout);
    if (args.command == "list") return run_list(args, std::cout);
    if (args.command == "config") return run_config(args, std::cout);
    if (args.command == "collective") return run_collective(args, std::cout);
    if (args.command == "topology") return run_topology(args, std::cout);
    if (args.command == "validate") {
      std::string line = "trainsim";
      for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
      return run_validate(args, std::cout, line);
    }
    throw trainsim::ConfigError(args.command, "unknown command",
                                "use simulate, collective, topology, validate, list or config; see `trainsim help`");
  } catch (const trainsim::ConfigError& e) {
    std::cout.flush();
    const std::string path = display_path(e.path(), args);
    std::cerr << "error: " << (path.empty() ? "" : path + ": ") << e.message()
              << (e.hint().empty() ? "" : " (" + e.hint() + ")") << "\n";
    return kExitBadInput;
  } catch (const trainsim::PlanError& e) {
    std::cout.flush();
    std::cerr << "error: " << e.what() << "\n";
    return kExitDoesNotFit;
  } catch (const trainsim::validator::NoGpuError& e) {
    std::cout.flush();
    std::cerr << "error: validate: " << e.what() << "\n";
    return kExitNoGpu;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
