#pragma once
// Chakra execution traces on the command line (docs/traces.md):
//   trainsim simulate --chakra PATH --cluster C [--gpu G] [--recorded-gpu G] [--network flow|analytic]
//                     [--json] [--trace FILE] [--plot FILE.svg] [--link-csv FILE]
// replays a recorded trace (one file, or PATH.0.json, PATH.1.json, ...) on a cluster, and
//   trainsim simulate JOB ... --fidelity full --export-chakra PREFIX
// writes the simulated iteration as PREFIX.<rank>.json.

#include <ostream>

#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "planner/cli/args.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::planner::cli {

// `trainsim simulate --chakra PATH`: the replay report (text or --json); returns the exit code.
int run_chakra_simulate(const Args& args, std::ostream& out);

// Before `trainsim simulate` runs: ConfigError when --export-chakra cannot be honoured (not full
// fidelity, faults, several iterations).
void check_chakra_export(const Args& args);
// After the run: writes the files when --export-chakra was given.
void write_chakra_export(const Args& args, const models::workload::Job& job, const models::workload::Workload& w,
                         const sim::task::TaskExecutor& exec);

}  // namespace trainsim::planner::cli
