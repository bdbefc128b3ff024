#pragma once
// `trainsim ui`: the desktop viewer (ImGui on GLFW + OpenGL 3). One window tiled into the
// schedule (Gantt), memory, topology, what-if and plans views. Simulations and the planner run
// on worker threads so the window stays live. With `screenshot` set it renders headless (a hidden
// window; under Xvfb when there is no display), waits for every view's data, writes the PNG
// (and the views' regions as JSON when `regions` is set) and returns.

#include <string>

#include "sim/config/schema.hpp"

namespace trainsim::ui {

struct AppOptions {
  sim::config::Json job;   // merged job JSON (file + flags); null when `trace` is set
  std::string trace;       // a trace-event file to view instead of a job
  std::string screenshot;  // PNG to write, then exit
  std::string regions;     // JSON file of the views' rectangles (pixels), with `screenshot`
  int width = 1600, height = 1000;
  bool plans = true;       // run the planner for the plans view
  int threads = 1;         // planner threads
  double timeout_s = 300;  // screenshot: give up waiting for the views' data after this long
};

// Returns the exit code (0). Throws ConfigError when no window can be opened (no display) or the
// screenshot cannot be written, and whatever loading the job or trace throws.
int run_app(const AppOptions& options);

}  // namespace trainsim::ui
