#pragma once
// Reading user files: bounded in size and nesting, every failure a ConfigError naming the file.
// A file is read up to kMaxInputBytes (so /dev/zero or a FIFO cannot exhaust memory) and JSON is
// nested at most kMaxJsonDepth levels (deeper values would overflow the stack of the recursive
// code that copies, prints or destroys them). The JSON library's own exceptions (a number out
// of range, invalid UTF-8, a syntax error) all become one-line errors.
#include <cstddef>
#include <string>

#include "sim/config/schema.hpp"

namespace trainsim::sim::config {

inline constexpr size_t kMaxInputBytes = size_t{1} << 30;  // 1 GiB
inline constexpr int kMaxJsonDepth = 512;

// The file's bytes; `path` names it in errors (the flag or field that gave it).
std::string read_input_file(const std::string& file, const std::string& path);
// `text` parsed; `path` names the input in errors, and `label` (e.g. "\"job.json\"") the file when
// the path is a field or flag that named it.
Json parse_json(const std::string& text, const std::string& path, const std::string& label = "");
// Throws when `text` nests arrays and objects deeper than kMaxJsonDepth (strings skipped).
void check_json_depth(const std::string& text, const std::string& path, const std::string& label = "");

}  // namespace trainsim::sim::config
