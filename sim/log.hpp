#pragma once
// Diagnostic logging (STYLE conv. 19): named categories with a threshold each, all off by default,
// set once at start-up from a spec ("network=trace,planner=debug", "all=debug"), written to stderr
// one line per message ("[network:debug] ..."). Never part of results: reports, JSON, traces and
// golden files go through their own writers, so turning a category on cannot change them.
//
//   TRAINSIM_LOG_DEBUG(kNetwork, "run: ", stats.flows_started, " flows");
//
// When the category is below the level the macro costs one relaxed load of one byte and a branch:
// the message arguments are not evaluated, and the formatting code is out of line.
//
// The categories are a fixed list, not self-registered at their call sites: the spec is checked at
// start-up, before any call site has run, and a registrant in a static library that the linker
// dropped would make a valid name "unknown" (the problem conv. 8 solves with WHOLE_ARCHIVE). A
// fixed enum also makes the threshold an array index known at compile time and a misspelt category
// a compile error. Adding one: an enumerator here and its name in log.cpp.
//
// The thresholds are process-wide (the one exception to conv. 1, like the immutable registries):
// they are written once by configure() before any simulation starts and only read afterwards, and
// they decide what goes to stderr, never what a simulation computes.

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim::log {

enum class Level : uint8_t { kOff, kInfo, kDebug, kTrace };

enum class Category : uint8_t {
  kBuilder,  // models/workload: building the task graph of a job
  kNetwork,  // sim/flow: flows and max-min re-solves
  kPlanner,  // planner/search: the search space, pruning, re-ranking
  kFailure,  // models/failure: the reliability Monte Carlo
  kEngine,   // sim/engine: the event loop
  kCount,
};
inline constexpr size_t kCategories = static_cast<size_t>(Category::kCount);

using Thresholds = std::array<Level, kCategories>;

// "network", "debug".
const char* name(Category c);
const char* name(Level l);
// The category names in declaration order (for messages and docs), and the level names.
std::vector<std::string> category_names();
std::vector<std::string> level_names();

// Parses "CATEGORY=LEVEL[,CATEGORY=LEVEL...]" ("all" names every category; later items win; an
// empty spec turns everything off). Throws ConfigError naming `source` (the flag or environment
// variable it came from) with the valid names.
Thresholds parse_spec(std::string_view spec, const std::string& source);
// Installs thresholds (start-up only: main, before any simulation). The current ones, for tests.
void configure(const Thresholds& t);
Thresholds current();

namespace detail {
inline std::array<std::atomic<uint8_t>, kCategories> thresholds{};
// Writes "[category:level] message\n" to stderr in one write (newlines in `message` become spaces).
void write(Category c, Level l, const std::string& message);
}  // namespace detail

// True when messages of `c` at `l` are printed: one relaxed load.
inline bool enabled(Category c, Level l) {
  return static_cast<uint8_t>(l) <= detail::thresholds[static_cast<size_t>(c)].load(std::memory_order_relaxed);
}

}  // namespace trainsim::sim::log

// TRAINSIM_LOG(kNetwork, kDebug, "a ", x, " b"): the arguments are streamed (operator<<) only
// when the category is enabled at that level. The formatting sits in a cold, never-inlined lambda,
// so a call site adds a load, a compare and a branch to its function and nothing else (the
// function keeps its size, and with it the compiler's inlining decisions).
#define TRAINSIM_LOG(category, level, ...)                                                                           \
  do {                                                                                                               \
    if (::trainsim::sim::log::enabled(::trainsim::sim::log::Category::category, ::trainsim::sim::log::Level::level)) \
        [[unlikely]]                                                                                                 \
      [&]() __attribute__((cold, noinline)) {                                                                        \
        ::trainsim::sim::log::detail::write(::trainsim::sim::log::Category::category,                                \
                                            ::trainsim::sim::log::Level::level,                                      \
                                            ::trainsim::detail::concat("" __VA_OPT__(, ) __VA_ARGS__));              \
      }                                                                                                              \
    ();                                                                                                              \
  } while (0)
#define TRAINSIM_LOG_INFO(category, ...) TRAINSIM_LOG(category, kInfo __VA_OPT__(, ) __VA_ARGS__)
#define TRAINSIM_LOG_DEBUG(category, ...) TRAINSIM_LOG(category, kDebug __VA_OPT__(, ) __VA_ARGS__)
#define TRAINSIM_LOG_TRACE(category, ...) TRAINSIM_LOG(category, kTrace __VA_OPT__(, ) __VA_ARGS__)
