#include "sim/deadline.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

#include "sim/error.hpp"

namespace trainsim::sim {
namespace {
std::atomic<int64_t> deadline_ns{0};  // steady clock; 0: none
std::atomic<int64_t> limit_ms{0};
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void set_time_limit(double seconds) {
  if (!(seconds > 0)) {
    deadline_ns = 0;
    return;
  }
  limit_ms = static_cast<int64_t>(seconds * 1e3);
  deadline_ns = now_ns() + static_cast<int64_t>(seconds * 1e9);
}

void check_deadline() {
  const int64_t d = deadline_ns.load(std::memory_order_relaxed);
  if (d == 0 || now_ns() < d) return;
  char text[96];
  std::snprintf(text, sizeof text, "the run took longer than its limit of %.0f s and was stopped",
                static_cast<double>(limit_ms.load()) / 1e3);
  throw ConfigError("--time-limit", text, "raise --time-limit, or give a smaller job (fewer GPUs, micro-batches)");
}

}  // namespace trainsim::sim
