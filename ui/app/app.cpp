#include "ui/app/app.hpp"

#include <imgui.h>
// clang-format off
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <GLFW/glfw3.h>
// clang-format on

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "models/schedules/schedule.hpp"
#include "sim/error.hpp"
#include "ui/app/screenshot.hpp"
#include "ui/app/worker.hpp"
#include "ui/scene/plan_table.hpp"
#include "ui/scene/simulate_scene.hpp"
#include "ui/scene/trace_scene.hpp"
#include "ui/scene/what_if.hpp"
#include "ui/views/views.hpp"

namespace trainsim::ui {

namespace {

using sim::config::Json;

// One line for an error a worker caught: "path: message (hint)" like the CLI's.
std::string describe(const std::exception& e) {
  if (const auto* c = dynamic_cast<const ConfigError*>(&e)) {
    std::ostringstream s;
    if (!c->path().empty()) s << c->path() << ": ";
    s << c->message();
    if (!c->hint().empty()) s << " (" << c->hint() << ")";
    return s.str();
  }
  return e.what();
}

std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return describe(e);
  } catch (...) {
    return "unknown error";
  }
}

// The window's tiles, as fractions of the display: left column schedule over memory; right
// column topology, what-if, plans.
struct Tile {
  const char* name;
  float x, y, w, h;
};
constexpr Tile kTiles[] = {
    {"Schedule", 0.0f, 0.0f, 0.62f, 0.60f},  {"Memory", 0.0f, 0.60f, 0.62f, 0.40f},
    {"Topology", 0.62f, 0.0f, 0.38f, 0.45f}, {"What-if", 0.62f, 0.45f, 0.38f, 0.20f},
    {"Plans", 0.62f, 0.65f, 0.38f, 0.35f},
};

struct Scenes {
  // Fast pass (no link utilization) then full pass (with it) for the same request.
  Worker<std::shared_ptr<const Scene>> worker;
  uint64_t fast_id = 0, full_id = 0;
  bool pending = false;
};

// Opens the window (hidden when headless) with an OpenGL 3.3 context and ImGui on it.
GLFWwindow* open_window(const AppOptions& o, bool headless) {
  if (!glfwInit())
    throw ConfigError("ui", "cannot open a window: no display",
                      "run it on a desktop, or headless: xvfb-run -a trainsim ui --screenshot out.png");
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  if (headless) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(o.width, o.height, "trainsim", nullptr, nullptr);
  if (window == nullptr) {
    glfwTerminate();
    throw ConfigError("ui", "cannot create an OpenGL 3.3 window",
                      "check the display's OpenGL driver (Mesa's llvmpipe works), or use xvfb-run");
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // the layout is the program's, not a file's
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");
  return window;
}

// Shuts ImGui down and closes the window (open_window's undo).
struct Cleanup {
  GLFWwindow* w;
  ~Cleanup() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(w);
    glfwTerminate();
  }
};

// The viewer's state between frames: the job shown, the views' state, the workers and the
// what-if and plans panels. Its phases run once per frame: poll the workers, draw the tiles,
// and (headless) shoot once everything is loaded.
struct App {
  const AppOptions& o;
  const bool headless;
  std::shared_ptr<const WhatIfBase> base;  // the job as given, or a picked plan (null for a trace)
  ViewState state;
  Scenes scenes;
  WhatIfPanel what_if;
  PlansPanel plans;
  Worker<std::shared_ptr<PlanTable>> planner;
  bool window_reset = true;
  // The job shown: the what-if panel changes `base` (the job as given, or a picked plan).
  std::function<models::workload::Job()> current;
  std::chrono::steady_clock::time_point request_time = std::chrono::steady_clock::now();
  bool first_scene = true;
  bool baseline_pending = false;      // the next schedule pass is a picked plan's: it becomes the baseline
  std::exception_ptr headless_error;  // a failed link pass or planner: the screenshot fails with it
  int settle_frames = 0;              // headless: frames drawn since everything was loaded

  App(const AppOptions& options, bool is_headless, std::shared_ptr<const WhatIfBase> b)
      : o(options), headless(is_headless), base(std::move(b)) {}

  void load(std::function<models::workload::Job()> make_job);
  void load_knobs() {
    load([b = base, k = what_if.knobs] { return apply_what_if(*b, k); });
  }
  void start(const WhatIf& knobs);
  void poll_scenes();
  void take_scene(const std::shared_ptr<const Scene>& scene, bool full);
  void poll_planner();
  void pick_plan(int32_t picked);
  std::vector<Region> draw_tiles();
  bool shoot_when_ready(std::chrono::steady_clock::time_point started, int fw, int fh,
                        const std::vector<Region>& regions);
};

// Submits the shown job's first pass: the schedule (fast); the second, link utilization, follows.
void App::load(std::function<models::workload::Job()> make_job) {
  current = make_job;
  request_time = std::chrono::steady_clock::now();
  SceneOptions fast;
  fast.link_utilization = false;
  scenes.fast_id = scenes.worker.submit(
      ([make_job, fast] { return std::make_shared<const Scene>(simulate_scene(make_job(), fast)); }));
  scenes.full_id = 0;
  scenes.pending = true;
}

// The first submissions: the trace, or the job (with `knobs`, its what-if values) and the planner.
void App::start(const WhatIf& knobs) {
  for (const auto& s : models::schedules::ScheduleRegistry::instance().names()) what_if.schedules.push_back(s);
  if (!o.trace.empty()) {
    const std::string file = o.trace;
    scenes.fast_id = scenes.worker.submit(([file] { return std::make_shared<const Scene>(load_trace_scene(file)); }));
    scenes.pending = true;
    what_if.status = "the what-if panel needs a job (a trace has no job to change)";
    plans.status = "plans need a job: open a job file, not a trace";
    return;
  }
  const Json job = o.job;
  what_if.baseline = what_if.knobs = knobs;
  load_knobs();
  what_if.status = "the job as given";
  if (o.plans) {
    const int threads = o.threads;
    planner.submit(([job, threads] { return std::make_shared<PlanTable>(plan_table(job, 20, 20, threads)); }));
    plans.status = "planning: every parallel configuration of this model, cluster and batch...";
  } else {
    plans.status = "the planner is off (--no-plans)";
  }
}

// Takes a finished scene pass, if it is the current request's: shows it, or reports its error.
void App::poll_scenes() {
  auto r = scenes.worker.poll();
  if (!r || (r->id != scenes.fast_id && r->id != scenes.full_id)) return;
  if (!r->error) {
    take_scene(*r->value, r->id == scenes.full_id);
    return;
  }
  // The first scene failing ends the program with that error (its exit code); later ones
  // are a what-if the panel reports.
  if (first_scene) std::rethrow_exception(r->error);
  if (r->id == scenes.full_id) {
    // The schedule pass worked; only the link utilization is missing.
    what_if.status += "; link utilization failed: " + describe(r->error);
    if (headless) headless_error = r->error;
  } else {
    what_if.status = "not simulated: " + describe(r->error);
  }
  scenes.pending = false;
}

// Shows a scene: the time window reset when the span changed, the baseline taken from the first
// (or a picked plan's) schedule pass, and the link-utilization pass submitted after a fast one.
void App::take_scene(const std::shared_ptr<const Scene>& scene, bool full) {
  const double span_before = state.scene ? static_cast<double>(state.scene->span_ns) : 0;
  state.scene = scene;
  if (window_reset || static_cast<double>(state.scene->span_ns) != span_before) {
    state.window.reset(static_cast<double>(state.scene->span_ns));
    window_reset = false;
  }
  if ((first_scene || (baseline_pending && !full)) && o.trace.empty()) {
    what_if.baseline_s = state.scene->iteration_s;
    baseline_pending = false;
  }
  first_scene = false;
  if (full) {
    scenes.pending = false;
    return;
  }
  const double last_request_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - request_time).count();
  std::ostringstream s;
  s.precision(3);
  s << "simulated in " << state.scene->build_ms << " ms (" << last_request_ms << " ms from the change)";
  if (o.trace.empty()) what_if.status = s.str();
  // The second pass: the same job with every flow recorded for link utilization (on the
  // flow network only: an analytic job has no topology).
  if (o.trace.empty() && !state.scene->nodes.empty()) {
    scenes.full_id = scenes.worker.submit(
        ([make_job = current] { return std::make_shared<const Scene>(simulate_scene(make_job(), SceneOptions{})); }));
  } else {
    scenes.pending = false;
  }
}

// Takes the planner's table, or reports its error.
void App::poll_planner() {
  if (auto r = planner.poll()) {
    if (!r->error) {
      plans.table = *r->value;
    } else {
      plans.status = "planner: " + describe(r->error);
      if (headless) headless_error = r->error;
    }
  }
}

// Loads the plan picked in the plans view as the job shown, and its baseline.
void App::pick_plan(int32_t picked) {
  const PlanTable& table = *plans.table;
  const auto row = static_cast<size_t>(picked);
  try {
    auto picked_base = std::make_shared<WhatIfBase>();
    picked_base->spec = table.job_spec(row);
    picked_base->hardware = table.hardware;
    // "back to the job" now returns to the picked plan, and compares with it.
    what_if.baseline = what_if.knobs = what_if_of(table.job(row));
    base = picked_base;
    window_reset = true;
    baseline_pending = true;
    load_knobs();
    what_if.status = "plan #" + std::to_string(table.rows[row].rank) + ": " + table.rows[row].config;
  } catch (const std::exception& e) {
    what_if.status = "plan #" + std::to_string(table.rows[row].rank) + " not loaded: " + describe(e);
  }
}

// Draws every tile's view; returns the tiles' rectangles (pixels).
std::vector<Region> App::draw_tiles() {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  std::vector<Region> regions;
  for (const Tile& t : kTiles) {
    ImGui::SetNextWindowPos(ImVec2(t.x * display.x, t.y * display.y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(t.w * display.x, t.h * display.y), ImGuiCond_Always);
    ImGui::Begin(t.name, nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse);
    const std::string name = t.name;
    if (name == "Schedule") {
      draw_schedule_view(state);
    } else if (name == "Memory") {
      draw_memory_view(state);
    } else if (name == "Topology") {
      draw_topology_view(state);
    } else if (name == "What-if") {
      if (o.trace.empty()) {
        if (draw_what_if_view(what_if, state)) load_knobs();
      } else {
        ImGui::TextWrapped("%s", what_if.status.c_str());
      }
    } else if (name == "Plans") {
      const int32_t picked = draw_plans_view(plans);
      if (picked >= 0) pick_plan(picked);
    }
    const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    regions.push_back(
        {t.name, static_cast<int>(p.x), static_cast<int>(p.y), static_cast<int>(s.x), static_cast<int>(s.y)});
    ImGui::End();
  }
  return regions;
}

// Headless: once everything is loaded (both passes, the planner), a few more frames for layout,
// then writes the screenshot (and regions) and returns true; throws a worker's error, or when
// the data is not ready after the timeout.
bool App::shoot_when_ready(std::chrono::steady_clock::time_point started, int fw, int fh,
                           const std::vector<Region>& regions) {
  if (headless_error) std::rethrow_exception(headless_error);
  const bool planned = !o.plans || !o.trace.empty() || plans.table != nullptr;
  const bool ready = state.scene && !scenes.pending && !planner.busy() && planned;
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (ready) ++settle_frames;
  if (settle_frames >= 3 || waited > o.timeout_s) {
    // The running simulation or search cannot be interrupted: the process ends when it does.
    if (!ready)
      throw ConfigError("--screenshot", "the views' data was not ready after " + std::to_string(o.timeout_s) + " s",
                        "try a smaller job, or --no-plans");
    write_screenshot(o.screenshot, fw, fh);
    if (!o.regions.empty()) write_regions(o.regions, fw, fh, regions);
    return true;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(ready ? 0 : 20));
  return false;
}

}  // namespace

int run_app(const AppOptions& o) {
  const bool headless = !o.screenshot.empty();
  // The job resolves first: a bad job is its error, before any window opens.
  std::shared_ptr<const WhatIfBase> base;
  WhatIf knobs;
  if (o.trace.empty()) {
    base = std::make_shared<const WhatIfBase>(what_if_base(o.job));
    knobs = what_if_of(models::workload::resolve_job(base->spec));
    apply_what_if(*base, knobs);
  }
  GLFWwindow* window = open_window(o, headless);
  const Cleanup cleanup{window};
  App app(o, headless, std::move(base));
  app.start(knobs);

  const auto started = std::chrono::steady_clock::now();
  while (!glfwWindowShouldClose(window)) {
    if (headless)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(app.scenes.pending || app.planner.busy() ? 0.03 : 0.5);
    app.poll_scenes();
    app.poll_planner();
    app.what_if.busy = app.scenes.pending;

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    const std::vector<Region> regions = app.draw_tiles();
    ImGui::Render();
    int fw = 0, fh = 0;
    glfwGetFramebufferSize(window, &fw, &fh);
    glViewport(0, 0, fw, fh);
    glClearColor(0.08f, 0.08f, 0.1f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    if (headless) {
      if (app.shoot_when_ready(started, fw, fh, regions)) return 0;
    } else {
      glfwSwapBuffers(window);
    }
  }
  return 0;
}

}  // namespace trainsim::ui
