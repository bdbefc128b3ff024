#pragma once
// Range-checked conversions of computed values to integers (docs/robustness.md). A duration, size or
// count computed in double from input values can pass what its integer holds (int64 nanoseconds,
// int64 bytes) only when an input is far outside any real job; a plain cast would then be undefined
// behaviour (in practice int64's minimum). These turn it into the input's ConfigError (exit 2).

#include <cstdint>
#include <string>

#include "sim/units.hpp"

namespace trainsim::sim {

// The smallest speed or capacity factor a slow-down takes (a slow GPU's speed, a degraded link's
// share of its bandwidth, in --fault, a failure profile's stragglers and a cluster's network faults).
// A factor f stretches what it slows by 1/f: below a millionth, a task or transfer of a few hours
// would pass the 292 years of the nanosecond clock, and a component that slow is not a straggler
// but a failure (model it as one: `gpu:R@T`, `link:A/B@T`, or a network fault's factor 0).
inline constexpr double kMinSlowdownFactor = 1e-6;

// `value` (already rounded as the caller wants) as an int64. NaN, or a value outside int64, is a
// ConfigError naming `what` with `fix`.
int64_t checked_int64(double value, const std::string& what, const std::string& fix);

// A duration of `ns` nanoseconds computed in double (already rounded as the caller wants). Past the
// clock's range (or NaN) it is the ConfigError of throw_time_overflow(): a conversion deep in the
// simulation knows no flag, so the inputs that can get there are also checked where they are read.
Time checked_ns(double ns);

}  // namespace trainsim::sim
