#include "planner/cli/options.hpp"

#include <cstdio>
#include <cstdlib>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

std::string option(const Args& args, const std::string& key, const std::string& fallback) {
  const auto it = args.command_options.find(key);
  return it == args.command_options.end() ? fallback : it->second;
}

int64_t int_option(const Args& args, const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
  const auto it = args.command_options.find(key);
  if (it == args.command_options.end()) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || v < lo || v > hi)
    throw ConfigError("--" + key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                      "], got \"" + it->second + "\"");
  return v;
}

double number_value(const std::string& text, const std::string& key, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= lo && v <= hi)) {
    char range[96];
    std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
    throw ConfigError("--" + key, "expected a number in " + std::string(range) + ", got \"" + text + "\"");
  }
  return v;
}

double number_option(const Args& args, const std::string& key, double fallback, double lo, double hi) {
  const auto it = args.command_options.find(key);
  if (it == args.command_options.end()) return fallback;
  return number_value(it->second, key, lo, hi);
}

double parse_tokens(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  const std::string suffix(end);
  if (suffix == "T")
    v *= 1e12;
  else if (suffix == "B" || suffix == "G")
    v *= 1e9;
  else if (suffix == "M")
    v *= 1e6;
  else if (!suffix.empty())
    v = -1;
  if (text.empty() || end == text.c_str() || !(v > 0))
    throw ConfigError("--tokens", "expected a positive token count such as 15T, 300B or 2e12, got \"" + text + "\"");
  return v;
}

std::optional<sim::Time> time_option(const Args& args, const std::string& key) {
  const auto it = args.command_options.find(key);
  if (it == args.command_options.end()) return std::nullopt;
  return sim::config::read_time(sim::config::Json(it->second), "--" + key);
}

std::optional<sim::Bandwidth> bandwidth_option(const Args& args, const std::string& key) {
  const auto it = args.command_options.find(key);
  if (it == args.command_options.end()) return std::nullopt;
  const sim::Bandwidth b = sim::config::read_bandwidth(sim::config::Json(it->second), "--" + key);
  if (!(b.bytes_per_second() > 0))
    throw ConfigError("--" + key, "must be above zero, got \"" + it->second + "\"", "e.g. --" + key + " 1TBps");
  return b;
}

}  // namespace trainsim::planner::cli
