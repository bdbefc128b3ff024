#pragma once
// The `trainsim` subcommands. Each returns the process exit code for a normal outcome and
// throws ConfigError / PlanError for bad input or infeasible plans (main.cpp maps them).

#include <ostream>

#include "planner/cli/args.hpp"

namespace trainsim::planner::cli {

// Exit codes (documented in README.md and `trainsim help`).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitDoesNotFit = 3;

int run_simulate(const Args& args, std::ostream& out);
int run_list(const Args& args, std::ostream& out);
int run_config(const Args& args, std::ostream& out);
int run_collective(const Args& args, std::ostream& out);
int run_topology(const Args& args, std::ostream& out);
void print_help(std::ostream& out);

}  // namespace trainsim::planner::cli
