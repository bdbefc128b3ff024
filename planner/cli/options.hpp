#pragma once
// Typed readers for the command options (Args::command_options): each throws ConfigError naming
// the flag with the expected form.

#include <cstdint>
#include <optional>
#include <string>

#include "planner/cli/args.hpp"
#include "sim/units.hpp"

namespace trainsim::planner::cli {

std::string option(const Args& args, const std::string& key, const std::string& fallback);
int64_t int_option(const Args& args, const std::string& key, int64_t fallback, int64_t lo, int64_t hi);
double number_option(const Args& args, const std::string& key, double fallback, double lo, double hi);
// One number of option --KEY in [lo, hi] (number_option's check, for one item of a list).
double number_value(const std::string& text, const std::string& key, double lo, double hi);
// "15T", "2.5e12", "300B" tokens.
double parse_tokens(const std::string& text);
// A duration with a unit ("30min", "2h"); nullopt when the option is absent.
std::optional<sim::Time> time_option(const Args& args, const std::string& key);
// A bandwidth with a unit ("2TBps"), above zero; nullopt when absent.
std::optional<sim::Bandwidth> bandwidth_option(const Args& args, const std::string& key);

}  // namespace trainsim::planner::cli
