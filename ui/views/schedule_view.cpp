// Schedule view: a Gantt chart with one row per (rank, stream), tasks coloured by kind, idle time
// (the bubbles) left as the dark row background with each row's idle share in its label, the
// critical path outlined in red. Wheel zooms about the mouse, dragging pans, double-click resets;
// hovering shows a task's details; clicking a task selects its rank and micro-batch (outlined in
// yellow on every stage).
#include <imgui.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <vector>

#include "ui/views/colours.hpp"
#include "ui/views/views.hpp"

namespace trainsim::ui {

namespace {

constexpr float kLabelWidth = 150, kAxisHeight = 22, kLegendHeight = 22;

// "12.5 ms", "830 us": for axis ticks and tooltips.
void format_time(char* buf, size_t n, double ns) {
  if (ns >= 1e9)
    std::snprintf(buf, n, "%.3f s", ns / 1e9);
  else if (ns >= 1e6)
    std::snprintf(buf, n, "%.2f ms", ns / 1e6);
  else
    std::snprintf(buf, n, "%.1f us", ns / 1e3);
}

// A tick step of 1, 2 or 5 x 10^k nanoseconds giving about `target` ticks over `width`.
double tick_step(double width, int target) {
  const double raw = width / std::max(1, target);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

void draw_legend(ImDrawList* dl, ImVec2 p) {
  float x = p.x;
  for (int c = 0; c < traces::kTimelineCategories; ++c) {
    const auto cat = static_cast<traces::TimelineCategory>(c);
    dl->AddRectFilled(ImVec2(x, p.y + 4), ImVec2(x + 12, p.y + 16), category_colour(cat));
    const char* name = traces::to_string(cat);
    dl->AddText(ImVec2(x + 15, p.y + 2), kTextColour, name);
    x += 22 + ImGui::CalcTextSize(name).x;
  }
  dl->AddRect(ImVec2(x, p.y + 4), ImVec2(x + 12, p.y + 16), kCriticalColour, 0, 0, 2);
  dl->AddText(ImVec2(x + 15, p.y + 2), kTextColour, "critical path");
}

}  // namespace

void draw_schedule_view(ViewState& st) {
  const Scene* scene = st.scene.get();
  if (scene == nullptr) {
    ImGui::TextUnformatted("simulating...");
    return;
  }
  ImGui::Text("%s", scene->title.c_str());
  if (scene->iteration_s > 0) {
    // Every utilization names its peak (models/compute/peaks.hpp).
    char low[64] = "";
    if (!scene->mfu_low_peak.empty())
      std::snprintf(low, sizeof low, ", %.1f%% of %s peak", 100 * scene->mfu_low, scene->mfu_low_peak.c_str());
    ImGui::Text("iteration %.4f s   MFU %.1f%% of BF16 peak%s   %.0f tokens/s   %zu rows   built in %.0f ms",
                scene->iteration_s, 100 * scene->mfu, low, scene->tokens_per_s, scene->rows.size(), scene->build_ms);
  } else {
    ImGui::Text("span %.4f s   %zu rows   %zu tasks   loaded in %.0f ms", static_cast<double>(scene->span_ns) / 1e9,
                scene->rows.size(), scene->tasks.size(), scene->build_ms);
  }
  if (scene->has_critical_path) {
    ImGui::SameLine();
    ImGui::Checkbox("critical path", &st.show_critical);
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("reset zoom")) st.window.reset(static_cast<double>(scene->span_ns));
  if (st.selected_rank >= 0 || st.selected_microbatch >= 0) {
    ImGui::SameLine();
    ImGui::Text("selected: rank %d, micro-batch %d", st.selected_rank, st.selected_microbatch);
    ImGui::SameLine();
    if (ImGui::SmallButton("clear")) st.selected_rank = st.selected_microbatch = -1;
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  draw_legend(dl, origin);
  const float top = origin.y + kLegendHeight;
  const float plot_x = origin.x + kLabelWidth;
  const float plot_w = std::max(50.f, avail.x - kLabelWidth - 4);
  const float plot_h = std::max(40.f, avail.y - kLegendHeight - kAxisHeight);
  const float row_h = std::clamp(plot_h / static_cast<float>(std::max<size_t>(1, scene->rows.size())), 3.f, 28.f);
  const float rows_h = row_h * static_cast<float>(scene->rows.size());

  ImGui::SetCursorScreenPos(ImVec2(plot_x, top));
  ImGui::InvisibleButton("gantt", ImVec2(plot_w, std::max(1.f, std::min(plot_h, rows_h))));
  const bool hovered = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  TimeWindow& win = st.window;
  if (hovered && io.MouseWheel != 0) win.zoom(std::pow(1.25, io.MouseWheel), win.to_t(io.MousePos.x, plot_x, plot_w));
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2)) {
    win.pan(-io.MouseDelta.x / plot_w * win.width());
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) win.reset(static_cast<double>(scene->span_ns));

  dl->PushClipRect(ImVec2(origin.x, top), ImVec2(plot_x + plot_w, top + plot_h + kAxisHeight), true);
  dl->AddRectFilled(ImVec2(plot_x, top), ImVec2(plot_x + plot_w, top + std::min(plot_h, rows_h)), kCanvasColour);
  const double t0 = win.begin(), t1 = win.end();
  const double ns_per_px = win.width() / plot_w;
  int64_t hover_task = -1;
  std::vector<ImVec4> critical, selected;  // (x0, y, x1, row height) outlines
  for (uint32_t r = 0; r < scene->rows.size(); ++r) {
    const float y = top + row_h * static_cast<float>(r);
    if (y > top + plot_h) break;
    const SceneRow& row = scene->rows[r];
    const bool rank_sel = row.rank == st.selected_rank;
    dl->AddRectFilled(ImVec2(plot_x, y + 1), ImVec2(plot_x + plot_w, y + row_h - 1),
                      rank_sel ? IM_COL32(60, 60, 40, 255) : kRowColour);
    if (row_h >= 9) {
      char label[96];
      std::snprintf(label, sizeof label, "r%d %s %2.0f%% idle", row.rank, row.stream.c_str(),
                    100 * scene->idle_share(r));
      dl->AddText(ImVec2(origin.x + 2, y + (row_h - ImGui::GetFontSize()) / 2), rank_sel ? kSelectColour : kTextColour,
                  label);
    }
    // Tasks in view; those under a pixel merge with the next while their colour is the same.
    float px0 = -1, px1 = -1;
    ImU32 pcol = 0;
    auto flush = [&] {
      if (px1 > px0) dl->AddRectFilled(ImVec2(px0, y + 2), ImVec2(std::max(px1, px0 + 1), y + row_h - 2), pcol);
    };
    for (uint32_t i = scene->row_begin[r]; i < scene->row_begin[r + 1]; ++i) {
      const SceneTask& t = scene->tasks[i];
      if (static_cast<double>(t.end_ns) < t0) continue;
      if (static_cast<double>(t.start_ns) > t1) break;
      const float x0 = static_cast<float>(win.to_x(static_cast<double>(t.start_ns), plot_x, plot_w));
      const float x1 = static_cast<float>(win.to_x(static_cast<double>(t.end_ns), plot_x, plot_w));
      const bool dim = st.selected_microbatch >= 0 && t.microbatch != st.selected_microbatch;
      const ImU32 col = category_colour(t.category, dim ? 0.45f : 1.0f);
      if (col == pcol && x0 <= px1 + 1) {
        px1 = std::max(px1, x1);
      } else {
        flush();
        px0 = x0;
        px1 = x1;
        pcol = col;
      }
      // Outlines go on top of every rectangle, after the row (merged rectangles flush late).
      const float xe = std::max(x1, x0 + 1);
      if (st.show_critical && t.critical) {
        if (!critical.empty() && critical.back().y == y && x0 <= critical.back().z + 1)
          critical.back().z = std::max(critical.back().z, xe);
        else
          critical.push_back(ImVec4(x0, y, xe, row_h));
      }
      if (st.selected_microbatch >= 0 && t.microbatch == st.selected_microbatch)
        selected.push_back(ImVec4(x0, y, xe, row_h));
    }
    flush();
    if (hovered && io.MousePos.y >= y && io.MousePos.y < y + row_h)
      hover_task = scene->task_at(r, static_cast<int64_t>(win.to_t(io.MousePos.x, plot_x, plot_w)),
                                  static_cast<int64_t>(2 * ns_per_px));
  }

  for (const ImVec4& o : selected)
    dl->AddRect(ImVec2(o.x, o.y + 1), ImVec2(std::max(o.z, o.x + 2), o.y + o.w - 1), kSelectColour, 0, 0, 1.5f);
  for (const ImVec4& o : critical)
    dl->AddRect(ImVec2(o.x, o.y + 1), ImVec2(std::max(o.z, o.x + 2), o.y + o.w - 1), kCriticalColour, 0, 0, 2);

  // Time axis.
  const float axis_y = top + std::min(plot_h, rows_h);
  const double step = tick_step(win.width(), static_cast<int>(plot_w / 110));
  for (double t = std::ceil(t0 / step) * step; t <= t1; t += step) {
    const float x = static_cast<float>(win.to_x(t, plot_x, plot_w));
    dl->AddLine(ImVec2(x, axis_y), ImVec2(x, axis_y + 5), kGridColour);
    char buf[32];
    format_time(buf, sizeof buf, t);
    dl->AddText(ImVec2(x + 2, axis_y + 4), kTextColour, buf);
  }
  dl->PopClipRect();

  if (hover_task >= 0) {
    const SceneTask& t = scene->tasks[static_cast<size_t>(hover_task)];
    const SceneRow& row = scene->rows[t.row];
    char start[32], dur[32];
    format_time(start, sizeof start, static_cast<double>(t.start_ns));
    format_time(dur, sizeof dur, static_cast<double>(t.end_ns - t.start_ns));
    ImGui::BeginTooltip();
    ImGui::Text("%s", scene->labels[t.label].c_str());
    ImGui::Text("rank %d (stage %d), stream %s, %s", row.rank, row.stage, row.stream.c_str(),
                traces::to_string(t.category));
    if (t.microbatch >= 0) ImGui::Text("micro-batch %d", t.microbatch);
    if (t.layer >= 0) ImGui::Text("layer %d", t.layer);
    ImGui::Text("start %s, duration %s", start, dur);
    if (t.bytes > 0) ImGui::Text("%.2f MiB", static_cast<double>(t.bytes) / (1 << 20));
    if (t.critical) ImGui::TextColored(ImVec4(1, 0.3f, 0.3f, 1), "on the critical path");
    ImGui::EndTooltip();
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && std::abs(ImGui::GetMouseDragDelta().x) < 3) {
      st.selected_rank = row.rank;
      st.selected_microbatch = t.microbatch;
    }
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, axis_y + kAxisHeight));
}

}  // namespace trainsim::ui
