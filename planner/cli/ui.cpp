// `trainsim ui [JOB.json | TRACE.json] (job flags) [--screenshot FILE.png [--size WxH]
// [--regions FILE.json]] [--no-plans] [--threads N]`: the ImGui viewer (ui/app/app.hpp). With no
// job file and no --model it opens the built-in default job (the README's: LLaMA-3-70B on 1,024
// H100s). Built only where libimgui-dev, libglfw3-dev and OpenGL are; elsewhere the command
// says so (exit 2).
#include <fstream>
#include <sstream>
#include <thread>

#include "planner/cli/commands.hpp"
#include "planner/cli/job_input.hpp"
#include "planner/cli/options.hpp"
#include "sim/error.hpp"
#if TRAINSIM_HAVE_UI
#include "ui/app/app.hpp"
#endif

namespace trainsim::planner::cli {

using sim::config::Json;

namespace {

// The job `trainsim ui` opens without one: the README's first example.
Json default_job() {
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

int run_ui(const Args& args, std::ostream& out) {
  (void)out;
  const bool screenshot = args.command_options.count("screenshot") != 0;
  if (!screenshot && args.command_options.count("size") == 0 && args.command_options.count("regions"))
    throw ConfigError("--regions", "only applies with --screenshot", "add --screenshot FILE.png");
  if (!screenshot && args.command_options.count("size"))
    throw ConfigError("--size", "only applies with --screenshot (a window can be resized)",
                      "add --screenshot FILE.png");
  if (args.positionals.size() > 1)
    throw ConfigError(args.positionals[1], "unexpected argument", "give at most one job or trace file");
  std::string trace;
  Json job;
  if (!args.positionals.empty() && looks_like_trace(args.positionals[0])) {
    trace = args.positionals[0];
    if (!args.job_flags.empty())
      throw ConfigError(flag_name(args.job_flags.begin().key()), "does not apply to a trace file",
                        "drop it, or open a job file");
  } else if (args.positionals.empty() && !args.job_flags.contains("model")) {
    job = default_job();
    for (auto it = args.job_flags.begin(); it != args.job_flags.end(); ++it) job[it.key()] = it.value();
  } else {
    job = job_json(args);
  }
  std::pair<int, int> size{1600, 1000};
  if (args.command_options.count("size")) size = parse_window_size(args.command_options.at("size"));
  const auto threads = static_cast<int>(int_option(
      args, "threads", std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()) - 1), 1, 1024));
#if TRAINSIM_HAVE_UI
  ui::AppOptions o;
  o.job = job;
  o.trace = trace;
  o.screenshot = option(args, "screenshot", "");
  o.regions = option(args, "regions", "");
  std::tie(o.width, o.height) = size;
  o.plans = args.options.count("no-plans") == 0;
  o.threads = threads;
  return ui::run_app(o);
#else
  (void)threads;
  throw ConfigError("ui", "this trainsim was built without the viewer (ImGui, GLFW or OpenGL was not found)",
                    "install libimgui-dev and libglfw3-dev (bash .ci/setup) and rebuild");
#endif
}

}  // namespace trainsim::planner::cli
