#pragma once
// The options `trainsim reliability` and `trainsim plan --objective goodput` share: the failure
// profile (--failures, --rate, --failure-scale), checkpointing (--checkpoint,
// --checkpoint-interval, --storage-write, --storage-read, --broadcast-restore), spares
// (--spares, --elastic), the run (--tokens or --days) and the Monte Carlo (--runs).

#include "models/failure/profile.hpp"
#include "models/failure/study.hpp"
#include "planner/cli/args.hpp"

namespace trainsim::planner::cli {

struct ReliabilitySetup {
  models::failure::FailureProfile profile;
  models::failure::ReliabilityOptions options;
};

// `seed` is the job's seed. Throws ConfigError naming the flag for bad values.
ReliabilitySetup reliability_setup(const Args& args, int64_t seed);

}  // namespace trainsim::planner::cli
