#pragma once
// The `trainsim` subcommands. Each returns the process exit code for a normal outcome and
// throws ConfigError / PlanError for bad input or infeasible plans (main.cpp maps them).

#include <ostream>
#include <string>

#include "planner/cli/args.hpp"

namespace trainsim::planner::cli {

// Exit codes (documented in README.md and `trainsim help`, usage.cpp).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitDoesNotFit = 3;
inline constexpr int kExitNoGpu = 4;         // `validate` found no GPU, NCCL or MPI to run on
inline constexpr int kExitReplayFailed = 5;  // `validate --replay`: the plan did not run as simulated

int run_simulate(const Args& args, std::ostream& out);
int run_list(const Args& args, std::ostream& out);
int run_config(const Args& args, std::ostream& out);
int run_collective(const Args& args, std::ostream& out);
int run_topology(const Args& args, std::ostream& out);
// `trainsim plan` (plan.cpp); under mpirun every rank searches its share and rank 0 prints.
int run_plan(const Args& args, std::ostream& out);
// `trainsim reliability` (reliability.cpp): failures, checkpoints and goodput over a whole run.
int run_reliability(const Args& args, std::ostream& out);
// `trainsim kineto` (kineto.cpp): PyTorch profiler traces; `command_line` goes into a calibration's provenance.
int run_kineto(const Args& args, std::ostream& out, const std::string& command_line);
// `trainsim calibrate RUNS.json` (calibrate.cpp): fits the end-to-end constants to logged runs.
int run_calibrate_runs(const Args& args, std::ostream& out);
// `command_line` is recorded in the measurements' provenance.
int run_validate(const Args& args, std::ostream& out, const std::string& command_line);
// `trainsim validate --replay iteration` (validate_replay.cpp): every rank runs its slice of the
// simulated iteration, under mpirun, on the CPU (OpenMPI) or GPU (NCCL) backend.
int run_validate_replay(const Args& args, std::ostream& out);

}  // namespace trainsim::planner::cli
