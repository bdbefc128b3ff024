#pragma once
// The job a command works on: the job file (optional positional argument) with the command-line
// flags merged over it, required keys checked and named as the flags that provide them.

#include "planner/cli/args.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::planner::cli {

// File references inside a job file (model, cluster, gpu) are made relative to its folder.
sim::config::Json job_json(const Args& args);

}  // namespace trainsim::planner::cli
