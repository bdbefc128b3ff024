#pragma once
// `trainsim ui [JOB.json | TRACE.json] (job flags) [--screenshot FILE.png [--size WxH]
// [--regions FILE.json]] [--no-plans] [--threads N]`: the viewer. The viewer is its own executable,
// `trainsim-ui` (ui/), built where ImGui, GLFW and OpenGL are: `trainsim` itself links no GUI
// library, so it runs on headless machines without them. `trainsim ui` checks its arguments, then
// becomes `trainsim-ui` (exec, same arguments), found beside the `trainsim` executable.

#include <string>

#include "planner/cli/args.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::planner::cli {

// The job `trainsim ui` opens without one: the README's first example, LLaMA-3-70B on 1,024 H100s
// (TP 8, PP 4, micro-batch 1, global batch 512, sequence 8,192, selective recompute, 1F1B).
sim::config::Json default_ui_job();

// The viewer's arguments, checked: a trace file or a job (with no job file and no --model, the
// built-in default job: the README's LLaMA-3-70B on 1,024 H100s). Throws ConfigError.
struct UiRequest {
  sim::config::Json job;  // merged job; null with a trace
  std::string trace;
  std::string screenshot, regions;
  int width = 1600, height = 1000;
  bool plans = true;
  int threads = 1;
};
UiRequest ui_request(const Args& args);

// Checks the arguments, then replaces this process with `trainsim-ui` given `argv`. Throws
// ConfigError when the viewer was not built (no trainsim-ui beside this executable).
int run_ui(const Args& args, const char* const* argv);

}  // namespace trainsim::planner::cli
