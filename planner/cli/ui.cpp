// `trainsim ui`: the arguments, checked, then the viewer's own executable (ui.hpp).
#include "planner/cli/ui.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <tuple>

#include "planner/cli/job_input.hpp"
#include "planner/cli/options.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

using sim::config::Json;

Json default_ui_job() {
  return Json{{"model", "llama3-70b"},
              {"cluster", "dgx-h100"},
              {"gpus", 1024},
              {"tp", 8},
              {"pp", 4},
              {"micro_batch", 1},
              {"global_batch", 512},
              {"seq_len", 8192},
              {"recompute", "selective"},
              {"schedule", "1f1b"}};
}

namespace {

// A trace-event file (not a job) by its first bytes: an object with "traceEvents", or an array.
bool looks_like_trace(const std::string& file) {
  std::ifstream in(file);
  if (!in) return false;  // job_json reports the unreadable file
  std::string head(65536, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '[') return true;
  return head.find("\"traceEvents\"") != std::string::npos;
}

// "1600x1000" -> (1600, 1000).
std::pair<int, int> parse_window_size(const std::string& text) {
  const auto x = text.find('x');
  int w = 0, h = 0;
  if (x != std::string::npos) {
    try {
      size_t used_w = 0, used_h = 0;
      w = std::stoi(text.substr(0, x), &used_w);
      h = std::stoi(text.substr(x + 1), &used_h);
      if (used_w != x || used_h != text.size() - x - 1) w = h = 0;
    } catch (const std::exception&) {
      w = h = 0;
    }
  }
  if (w < 320 || h < 240 || w > 8192 || h > 8192)
    throw ConfigError("--size", "\"" + text + "\" is not WIDTHxHEIGHT in pixels (320x240 to 8192x8192)",
                      "write --size 1600x1000");
  return {w, h};
}

}  // namespace

UiRequest ui_request(const Args& args) {
  UiRequest r;
  const bool screenshot = args.command_options.count("screenshot") != 0;
  if (!screenshot && args.command_options.count("regions"))
    throw ConfigError("--regions", "only applies with --screenshot", "add --screenshot FILE.png");
  if (!screenshot && args.command_options.count("size"))
    throw ConfigError("--size", "only applies with --screenshot (a window can be resized)",
                      "add --screenshot FILE.png");
  if (args.positionals.size() > 1)
    throw ConfigError(args.positionals[1], "unexpected argument", "give at most one job or trace file");
  if (!args.positionals.empty() && looks_like_trace(args.positionals[0])) {
    r.trace = args.positionals[0];
    if (!args.job_flags.empty())
      throw ConfigError(flag_name(args.job_flags.begin().key()), "does not apply to a trace file",
                        "drop it, or open a job file");
  } else if (args.positionals.empty() && !args.job_flags.contains("model")) {
    r.job = default_ui_job();
    for (auto it = args.job_flags.begin(); it != args.job_flags.end(); ++it) r.job[it.key()] = it.value();
  } else {
    r.job = job_json(args);
  }
  if (args.command_options.count("size"))
    std::tie(r.width, r.height) = parse_window_size(args.command_options.at("size"));
  r.screenshot = option(args, "screenshot", "");
  r.regions = option(args, "regions", "");
  r.plans = args.options.count("no-plans") == 0;
  r.threads = static_cast<int>(int_option(
      args, "threads", std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()) - 1), 1, 1024));
  return r;
}

int run_ui(const Args& args, const char* const* argv) {
  ui_request(args);  // bad arguments are this process's errors
  // trainsim-ui beside this executable.
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path viewer = self.parent_path() / "trainsim-ui";
  if (ec || !std::filesystem::exists(viewer))
    throw ConfigError("ui", "this trainsim was built without the viewer (no trainsim-ui beside it)",
                      "install libimgui-dev and libglfw3-dev (bash .ci/setup) and rebuild");
  std::cout.flush();
  std::cerr.flush();
  execv(viewer.c_str(), const_cast<char* const*>(argv));
  throw ConfigError("ui", std::string("cannot start ") + viewer.string() + ": " + std::strerror(errno),
                    "check that trainsim-ui is executable");
}

}  // namespace trainsim::planner::cli
