#pragma once
// The part of the search space a job's software stack can run (models/stack, docs/stacks.md). A
// stack lists the schedules, ZeRO stages, recompute modes, context-parallel algorithms and
// switches its framework can express; the planner never generates a candidate outside them, so
// nothing is generated and then refused by check_stack_features.

#include <map>
#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::planner::search {

struct SearchSpace;

// What the stack removed from the space, for the report: dimension -> the values not searched
// ("schedule" -> {"interleaved", "zb-v"}, "cp" -> {"> 1"}, ...). Empty when the stack runs all.
using StackExclusions = std::map<std::string, std::vector<std::string>>;

// Narrows `space` (as make_space built it from `spec` and the pinned keys `given`) to what
// `hw.stack` runs: unpinned schedules, ZeRO stages and recompute modes to the stack's lists; cp
// to 1 without a context-parallel algorithm, and the stack's algorithm when the job's is not one
// of its; ep to 1 without expert parallelism; no uneven layer splits without them; sp as the
// stack's recipe sets it. Pinned values and the options the planner does not search (precision,
// attention, overlaps, offloads, ...) are checked once, here: a job asking for what the stack
// cannot run throws check_stack_features' ConfigError before anything is enumerated.
StackExclusions restrict_to_stack(SearchSpace& space, const models::workload::JobSpec& spec,
                                  const sim::config::Json& given, const models::workload::Job& hw);

// The MoE token dispatcher as a searched dimension: every candidate with ep > 1 becomes one per
// dispatcher of `space.moe_dispatchers` (the stack's, unless the job pins `moe_dispatcher`), in
// place, so the order stays fixed. Without expert parallelism the dispatcher moves nothing, so
// ep = 1 candidates keep the job's: the space grows by (dispatchers - 1) x the ep > 1 candidates.
struct Enumeration;
void expand_dispatchers(const SearchSpace& space, Enumeration& en);

}  // namespace trainsim::planner::search
