#pragma once
// Shared by the fuzz targets (docs/robustness.md). Each target feeds the input to one parse or
// parse-and-resolve path. Bad input must end as ConfigError (exit 2) or PlanError (exit 3):
// anything else (an internal error, another exception, a crash, a sanitizer report) is a finding,
// and the target aborts so that libFuzzer keeps the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "sim/config/json_input.hpp"
#include "sim/error.hpp"

namespace trainsim::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `f`; expected errors pass, anything else aborts with what it was.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const ConfigError&) {
  } catch (const PlanError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz finding: %s\n", e.what());
    std::abort();
  }
}

// The input as JSON, as every loader reads a file (sim::config::parse_json).
inline sim::config::Json json_of(const uint8_t* data, size_t size) {
  return sim::config::parse_json(text_of(data, size), "fuzz.json");
}

}  // namespace trainsim::fuzz
