#pragma once
// Colours of the views: task categories (the SVG timeline's palette), link utilization (a
// perceptual ramp from idle to saturated), ranks, node kinds.

#include <imgui.h>

#include "topology/graph.hpp"
#include "traces/svg/timeline.hpp"

namespace trainsim::ui {

ImU32 category_colour(traces::TimelineCategory c, float alpha = 1.0f);
ImU32 utilization_colour(float u);  // u in [0, 1]
ImU32 rank_colour(int index);
ImU32 node_colour(topology::NodeKind k);
constexpr ImU32 kCriticalColour = IM_COL32(255, 40, 40, 255);
constexpr ImU32 kSelectColour = IM_COL32(255, 230, 60, 255);
constexpr ImU32 kGridColour = IM_COL32(90, 90, 100, 255);
constexpr ImU32 kTextColour = IM_COL32(220, 220, 225, 255);
constexpr ImU32 kCanvasColour = IM_COL32(28, 28, 34, 255);
constexpr ImU32 kRowColour = IM_COL32(40, 40, 48, 255);

}  // namespace trainsim::ui
