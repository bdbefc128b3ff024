#pragma once
// What to try when a job does not fit: the changes the job has not made (more recomputation, a
// smaller micro-batch, a higher ZeRO stage, larger TP or PP, optimizer offload), each priced by
// resolving the changed job and recomputing its memory (no simulation), best first, with how much
// each saves and whether it alone fits.

#include <string>

#include "models/workload/run/simulate.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::planner::cli {

// `job` is the job as given (the JSON `simulate` parsed), `r` its result (fits == false).
std::string oom_hint(const sim::config::Json& job, const models::workload::SimulationResult& r);

}  // namespace trainsim::planner::cli
