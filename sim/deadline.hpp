#pragma once
// A wall-clock limit for one command (`--time-limit`, docs/robustness.md). Long loops (the event
// engine, the reliability Monte Carlo) call check_deadline() every few thousand steps; past the
// limit it throws ConfigError("--time-limit", ...), so no input runs unbounded. The limit is the
// only wall-clock input to a run: below it, output does not depend on speed.
#include <cstdint>

namespace trainsim::sim {

// The limit in seconds from now (<= 0: none). Process-wide; thread-safe.
void set_time_limit(double seconds);
// Throws once the limit has passed.
void check_deadline();

}  // namespace trainsim::sim
