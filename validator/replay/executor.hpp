#pragma once
// Runs one rank's program on a backend under the issue rules of rank_state.hpp: each op is
// started as soon as its stream, its dependencies and its channel allow, and polled until done.
// Measures when each op started and ended (seconds since the ranks' common start, divided by the
// time scale, so in simulated seconds). A rank that makes no progress for `timeout_s` throws
// ReplayError naming what it waits on: a deadlock, or a partner that never issued its side.

#include <cstdint>
#include <string>
#include <vector>

#include "validator/replay/backend.hpp"
#include "validator/replay/program.hpp"

namespace trainsim::validator::replay {

struct ReplayOptions {
  double scale = 1.0;       // wall seconds per simulated second (compute waits, re-gathers)
  double timeout_s = 60.0;  // the longest a rank may make no progress
};

struct RankTimeline {
  int32_t rank = 0;
  std::vector<double> start, end;  // per op, simulated seconds (measured / scale)
  double iteration = 0;            // the last op's end
  std::string serialize() const;
  static RankTimeline deserialize(const std::string& bytes);
};

RankTimeline execute(const RankProgram& program, Backend& backend, const ReplayOptions& options);

}  // namespace trainsim::validator::replay
