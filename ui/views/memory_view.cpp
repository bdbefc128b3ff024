// Memory view: device memory in use on each simulated rank over the iteration (weights, gradients,
// optimizer state and buffers, plus the activations alive at each instant), with the usable
// capacity as a red line. It follows the schedule's time window; hovering reads every rank's value
// at that time.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "ui/views/colours.hpp"
#include "ui/views/views.hpp"

namespace trainsim::ui {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Value of a step function at time t.
int64_t value_at(const MemoryTrack& m, double t) {
  int64_t v = m.points.empty() ? 0 : m.points.front().second;
  auto it = std::upper_bound(m.points.begin(), m.points.end(), t, [](double x, const std::pair<int64_t, int64_t>& p) {
    return x < static_cast<double>(p.first);
  });
  if (it != m.points.begin()) v = std::prev(it)->second;
  return v;
}

}  // namespace

void draw_memory_view(ViewState& st) {
  const Scene* scene = st.scene.get();
  if (scene == nullptr) {
    ImGui::TextUnformatted("simulating...");
    return;
  }
  if (scene->memory.empty()) {
    ImGui::TextUnformatted("this scene has no memory counters");
    return;
  }
  int64_t top_bytes = 1, capacity = 0;
  for (const MemoryTrack& m : scene->memory) {
    top_bytes = std::max(top_bytes, m.peak());
    capacity = std::max(capacity, m.capacity_bytes);
  }
  top_bytes =
      static_cast<int64_t>(static_cast<double>(st.memory_fit ? top_bytes : std::max(top_bytes, capacity)) * 1.08);
  ImGui::Checkbox("scale to use", &st.memory_fit);
  ImGui::SameLine();

  // Legend: rank, peak.
  for (size_t k = 0; k < scene->memory.size() && k < 16; ++k) {
    const MemoryTrack& m = scene->memory[k];
    if (k) ImGui::SameLine();
    const ImU32 c = rank_colour(static_cast<int>(k));
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(c), "rank %d peak %.1f GiB", m.rank,
                       static_cast<double>(m.peak()) / kGiB);
  }
  if (capacity > 0) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1, 0.3f, 0.3f, 1), "capacity %.1f GiB", static_cast<double>(capacity) / kGiB);
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  constexpr float kAxis = 60;
  const float x0 = origin.x + kAxis, w = std::max(50.f, avail.x - kAxis - 4);
  const float y0 = origin.y, h = std::max(40.f, avail.y - 4);
  ImGui::InvisibleButton("memory", ImVec2(w + kAxis, h));
  const bool hovered = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  TimeWindow& win = st.window;
  if (hovered && io.MouseWheel != 0) win.zoom(std::pow(1.25, io.MouseWheel), win.to_t(io.MousePos.x, x0, w));
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2))
    win.pan(-io.MouseDelta.x / w * win.width());

  dl->PushClipRect(origin, ImVec2(x0 + w, y0 + h), true);
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + w, y0 + h), kCanvasColour);
  auto y_of = [&](double bytes) { return y0 + h - static_cast<float>(bytes / static_cast<double>(top_bytes)) * h; };
  // Grid every 10 or 20 GiB.
  const double step = top_bytes / kGiB > 100 ? 20 : (top_bytes / kGiB > 30 ? 10 : 2);
  for (double g = 0; g * kGiB <= static_cast<double>(top_bytes); g += step) {
    const float y = y_of(g * kGiB);
    dl->AddLine(ImVec2(x0, y), ImVec2(x0 + w, y), IM_COL32(55, 55, 65, 255));
    char buf[24];
    std::snprintf(buf, sizeof buf, "%.0f GiB", g);
    dl->AddText(ImVec2(origin.x + 2, y - ImGui::GetFontSize() / 2), kTextColour, buf);
  }
  if (capacity > 0 && capacity <= top_bytes) {
    const float y = y_of(static_cast<double>(capacity));
    dl->AddLine(ImVec2(x0, y), ImVec2(x0 + w, y), kCriticalColour, 2);
  }
  const double t0 = win.begin(), t1 = win.end();
  for (size_t k = 0; k < scene->memory.size(); ++k) {
    const MemoryTrack& m = scene->memory[k];
    const ImU32 c = rank_colour(static_cast<int>(k));
    const float thick = m.rank == st.selected_rank ? 3.f : 1.5f;
    // Step line over the window: start from the value at t0.
    float px = x0, py = y_of(static_cast<double>(value_at(m, t0)));
    for (const auto& [t, b] : m.points) {
      if (static_cast<double>(t) <= t0) continue;
      if (static_cast<double>(t) > t1) break;
      const float x = static_cast<float>(win.to_x(static_cast<double>(t), x0, w));
      const float y = y_of(static_cast<double>(b));
      if (x - px >= 0.5f) dl->AddLine(ImVec2(px, py), ImVec2(x, py), c, thick);
      dl->AddLine(ImVec2(x, py), ImVec2(x, y), c, thick);
      px = x;
      py = y;
    }
    dl->AddLine(ImVec2(px, py), ImVec2(x0 + w, py), c, thick);
  }
  dl->PopClipRect();

  if (hovered) {
    const double t = win.to_t(io.MousePos.x, x0, w);
    dl->AddLine(ImVec2(io.MousePos.x, y0), ImVec2(io.MousePos.x, y0 + h), kGridColour);
    ImGui::BeginTooltip();
    ImGui::Text("t = %.3f ms", t / 1e6);
    for (const MemoryTrack& m : scene->memory)
      ImGui::Text("rank %d: %.2f GiB", m.rank, static_cast<double>(value_at(m, t)) / kGiB);
    ImGui::EndTooltip();
  }
}

}  // namespace trainsim::ui
