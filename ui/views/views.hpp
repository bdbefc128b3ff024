#pragma once
// The viewer's views, one file each. They draw the current Scene into the current ImGui window
// and change only the shared ViewState (selection, visible time window) or what they own.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ui/scene/plan_table.hpp"
#include "ui/scene/scene.hpp"
#include "ui/scene/time_window.hpp"
#include "ui/scene/what_if.hpp"

namespace trainsim::ui {

// What the views share.
struct ViewState {
  std::shared_ptr<const Scene> scene;
  TimeWindow window;  // the schedule's visible range; the memory view follows it, the topology
                      // view colours links by their utilization inside it
  int32_t selected_rank = -1;
  int32_t selected_microbatch = -1;
  bool show_critical = true;
  bool memory_fit = false;  // the memory view's scale: up to the peak use, not the capacity
};

void draw_schedule_view(ViewState& state);
void draw_memory_view(ViewState& state);
void draw_topology_view(ViewState& state);

// The what-if panel edits `knobs`; it returns true when they changed (the app re-simulates).
struct WhatIfPanel {
  WhatIf knobs;
  WhatIf baseline;        // the job as loaded
  double baseline_s = 0;  // its iteration time
  bool live = true;       // re-simulate on every change
  bool busy = false;      // a simulation is running
  std::string status;     // last simulation: time, or why the knobs were rejected
  std::vector<std::string> schedules;
};
bool draw_what_if_view(WhatIfPanel& panel, const ViewState& state);

// The plans table; returns the row index the user picked (-1: none this frame).
struct PlansPanel {
  std::shared_ptr<PlanTable> table;  // null while the planner runs
  std::string status;                // "planning..." or an error
  int32_t selected = -1;             // row index in table->rows
};
int32_t draw_plans_view(PlansPanel& panel);

}  // namespace trainsim::ui
