#pragma once
// Checks a replay program without running it: what a real distributed execution needs of the
// simulated DAG. A simulated plan that cannot be executed as written fails here.
//   - every send has its receive, of the same bytes, and each pair's transfers are received in
//     the order they are sent (NCCL matches a pair's point-to-point calls in issue order);
//   - every member of a communicator takes part in each of its collectives, and all members
//     issue the communicator's collectives in the same order with the same op and bytes;
//   - no dependency links tasks that share no rank (it could only be met by a message that is
//     not in the plan);
//   - a dry run under the issue rules of rank_state.hpp (streams, dependencies, per-communicator
//     order; a collective completes when every member has issued it, a transfer when both ends
//     have) finishes: nothing deadlocks.

#include <cstdint>
#include <string>
#include <vector>

#include "validator/replay/program.hpp"

namespace trainsim::validator::replay {

struct CheckReport {
  std::vector<std::string> problems;  // empty: the program can run; at most a few per kind
  int64_t ops = 0, transfers = 0, collectives = 0, communicators = 0;
  bool ok() const { return problems.empty(); }
};

CheckReport check_program(const Program& p);

}  // namespace trainsim::validator::replay
