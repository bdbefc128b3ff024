#include "sim/checked.hpp"

#include <cstdio>

#include "sim/error.hpp"

namespace trainsim::sim {

namespace {
// 2^63: the first double past int64 (every double below it converts exactly).
constexpr double kTwo63 = 9223372036854775808.0;
}  // namespace

int64_t checked_int64(double value, const std::string& what, const std::string& fix) {
  if (!(value >= -kTwo63 && value < kTwo63)) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", value);
    throw ConfigError(what, std::string(text) + " is outside the range of a 64-bit integer", fix);
  }
  return static_cast<int64_t>(value);
}

Time checked_ns(double ns) {
  TRAINSIM_ASSERT(!(ns < 0.0), "negative duration ", ns, " ns");
  // Time::infinite() (int64's maximum) means "never": a finite duration that reaches it has overflowed.
  if (!(ns < kTwo63 - 1024.0)) throw_time_overflow();
  return Time::ns(static_cast<int64_t>(ns));
}

}  // namespace trainsim::sim
