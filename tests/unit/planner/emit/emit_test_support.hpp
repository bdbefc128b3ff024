#pragma once
// Helpers shared by the emitter tests: jobs from JSON, one emitter's files, lines and values.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "planner/emit/emitter.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::emit::testing {

using Json = sim::config::Json;

inline models::workload::Job job(const Json& j) {
  return models::workload::resolve_job(models::workload::parse_job(j));
}

// `base` with the keys of `extra` set over it.
inline Json with(Json base, const Json& extra) {
  for (auto it = extra.begin(); it != extra.end(); ++it) base[it.key()] = it.value();
  return base;
}

// LLaMA-3-70B on 256 H100s: tp 8, pp 4, dp 8, interleaved with vp 5, selective recompute, ZeRO-1.
inline Json llama70b() {
  return Json{{"model", "llama3-70b"},
              {"cluster", "dgx-h100"},
              {"gpus", 256},
              {"tp", 8},
              {"pp", 4},
              {"vp", 5},
              {"schedule", "interleaved"},
              {"recompute", "selective"},
              {"zero", 1},
              {"global_batch", 512}};
}

// LLaMA-3-70B on 64 B200s as Megatron-Bridge 25.11's MXFP8 recipe for DGX B200 runs it: tp 2,
// pp 4, vp 5 interleaved, ZeRO-1, global batch 128; `precision` mxfp8 or nvfp4.
inline Json llama70b_b200(const std::string& precision) {
  return Json{{"model", "llama3-70b"},
              {"cluster", "dgx-b200"},
              {"gpus", 64},
              {"tp", 2},
              {"pp", 4},
              {"vp", 5},
              {"schedule", "interleaved"},
              {"zero", 1},
              {"global_batch", 128},
              {"precision", precision}};
}

// The content of the file `name` that emitter `emitter` writes for `j` (fails the test if absent).
inline std::string file(const std::string& emitter, const models::workload::Job& j, const std::string& name) {
  for (const auto& f : emit(emitter, j))
    if (f.name == name) return f.content;
  ADD_FAILURE() << emitter << " wrote no " << name;
  return "";
}

inline bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The lines of `text` that are not comments and contain `needle`.
inline std::vector<std::string> code_lines(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos && line[first] == '#') continue;
    if (contains(line, needle)) out.push_back(line);
  }
  return out;
}

// The value after `flag ` on the first non-comment line that has it ("" if none).
inline std::string flag_value(const std::string& text, const std::string& flag) {
  for (const auto& line : code_lines(text, flag + " ")) {
    const auto at = line.find(flag + " ");
    std::istringstream rest(line.substr(at + flag.size() + 1));
    std::string v;
    rest >> v;
    return v;
  }
  return "";
}

// Whether a non-comment line has exactly the switch `flag` (a word of its own).
inline bool has_flag(const std::string& text, const std::string& flag) {
  for (const auto& line : code_lines(text, flag)) {
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      if (w == "#") break;
      if (w == flag) return true;
    }
  }
  return false;
}

// The one-line message of the ConfigError `f` throws, or "" when it throws nothing.
template <typename F>
std::string config_error(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace trainsim::planner::emit::testing
