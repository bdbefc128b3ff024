// Topology view: the cluster's nodes laid out by kind (topology_layout.hpp) and its cables
// coloured by their utilization over the schedule's visible time window, hot cables drawn last.
// Hovering a cable or node shows its numbers.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "ui/views/colours.hpp"
#include "ui/views/views.hpp"

namespace trainsim::ui {

namespace {

// Distance from p to the segment ab.
float segment_distance(ImVec2 p, ImVec2 a, ImVec2 b) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float len2 = dx * dx + dy * dy;
  float t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0;
  t = std::clamp(t, 0.f, 1.f);
  const float ex = a.x + t * dx - p.x, ey = a.y + t * dy - p.y;
  return std::sqrt(ex * ex + ey * ey);
}

// Screen placement of the view's [0, 1] x [0, 1] coordinates.
struct Canvas {
  ImVec2 origin;
  float w = 0, h = 0;
  ImVec2 at(float x, float y) const { return ImVec2(origin.x + 8 + x * (w - 16), origin.y + 8 + y * (h - 16)); }
  float width(const TopoBox& b) const { return (b.x1 - b.x0) * (w - 16); }
  float height(const TopoBox& b) const { return (b.y1 - b.y0) * (h - 16); }
};

constexpr ImU32 kRackColour = IM_COL32(44, 46, 56, 255);
constexpr ImU32 kRackEdgeColour = IM_COL32(110, 110, 128, 255);
constexpr ImU32 kTrayColour = IM_COL32(60, 64, 78, 255);
constexpr ImU32 kIdleTrayColour = IM_COL32(36, 37, 44, 255);
constexpr ImU32 kSwitchTrayColour = IM_COL32(74, 60, 104, 255);
constexpr ImU32 kUnusedGpuColour = IM_COL32(58, 74, 44, 255);
constexpr ImU32 kDimTextColour = IM_COL32(150, 150, 160, 255);
constexpr float kLabelShare = 0.4f;  // of a tray's width, left of its GPUs (rack_layout.cpp)

// The first of `texts` that fits `width` pixels at font size `size`, or "".
std::string fitting(const std::vector<std::string>& texts, float size, float width) {
  for (const std::string& t : texts)
    if (ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, t.c_str()).x <= width) return t;
  return "";
}

// Racks, their compute trays and switch trays, under the links and nodes.
void draw_rack_frames(ImDrawList* dl, const Scene& scene, const Canvas& c) {
  for (const TopoRack& rack : scene.racks) {
    dl->AddRectFilled(c.at(rack.box.x0, rack.box.y0), c.at(rack.box.x1, rack.box.y1), kRackColour, 2);
    dl->AddRect(c.at(rack.box.x0, rack.box.y0), c.at(rack.box.x1, rack.box.y1), kRackEdgeColour, 2);
    for (const TopoBox& tray : rack.trays)
      dl->AddRectFilled(c.at(tray.x0, tray.y0), c.at(tray.x1, tray.y1), tray.used ? kTrayColour : kIdleTrayColour);
    const TopoBox& sw = rack.switches;
    const float stripe = (sw.y1 - sw.y0) / static_cast<float>(std::max(1, rack.switch_trays));
    for (int32_t k = 0; k < rack.switch_trays; ++k) {
      const float y0 = sw.y0 + stripe * static_cast<float>(k);
      const bool gap = c.height(sw) / static_cast<float>(rack.switch_trays) >= 3;
      dl->AddRectFilled(c.at(sw.x0, y0), c.at(sw.x1, y0 + stripe), kSwitchTrayColour);
      if (gap && k > 0) dl->AddLine(c.at(sw.x0, y0), c.at(sw.x1, y0), kRackColour);
    }
  }
}

// Rack, tray and switch-block labels, over everything, where they fit.
void draw_rack_labels(ImDrawList* dl, const Scene& scene, const Canvas& c) {
  const float font = ImGui::GetFontSize();
  auto text_at = [&](float size, float x, float y, ImU32 colour, const std::string& text) {
    if (!text.empty()) dl->AddText(ImGui::GetFont(), size, ImVec2(x, y), colour, text.c_str());
  };
  for (const TopoRack& rack : scene.racks) {
    if (rack.trays.empty()) continue;
    const float header = (rack.trays.front().y0 - rack.box.y0) * (c.h - 16);
    float size = std::min(font, header * 0.8f);
    if (size >= 7) {
      const std::string number = rack.name.substr(rack.name.rfind(' ') + 1);
      text_at(size, c.at(rack.box.x0, 0).x + 4, c.at(0, rack.box.y0).y + (header - size) / 2,
              rack.used_gpus > 0 ? kTextColour : kDimTextColour,
              fitting({rack.label, rack.name + " (" + std::to_string(rack.gpus) + " GPUs)", rack.name, number}, size,
                      c.width(rack.box) - 6));
    }
    for (const TopoBox& tray : rack.trays) {
      size = std::min(font, c.height(tray) * 1.1f);
      if (size < 7) break;
      const std::string number = tray.label.substr(tray.label.rfind(' ') + 1);
      text_at(size, c.at(tray.x0, 0).x + 3, c.at(0, tray.y0).y + (c.height(tray) - size) / 2,
              tray.used ? kDimTextColour : IM_COL32(95, 95, 105, 255),
              fitting({tray.label, number}, size, c.width(tray) * kLabelShare - 4));
    }
    // The switch block's label, left of the switch node (at 70% of its width): one line, two, or short.
    const TopoBox& sw = rack.switches;
    const float room = c.width(sw) * 0.62f - 4, x = c.at(sw.x0, 0).x + 3, y = c.at(0, sw.y0).y, h = c.height(sw);
    size = std::min(font, h * 0.6f);
    if (size < 7) continue;
    if (const std::string one = fitting({sw.label}, size, room); !one.empty()) {
      text_at(size, x, y + (h - size) / 2, kTextColour, one);
      continue;
    }
    const std::string trays = std::to_string(rack.switch_trays) + " trays";
    if (rack.switch_trays > 1 && 2.2f * size <= h && !fitting({"NVLink switch"}, size, room).empty() &&
        !fitting({trays}, size, room).empty()) {
      text_at(size, x, y + h / 2 - 1.05f * size, kTextColour, "NVLink switch");
      text_at(size, x, y + h / 2 + 0.05f * size, kTextColour, trays);
      continue;
    }
    text_at(size, x, y + (h - size) / 2, kTextColour,
            fitting({"NVSwitch x" + std::to_string(rack.switch_trays), "NVSwitch", "NVS"}, size, room));
  }
}

// Half the side of a GPU's square in a rack: fits its tray cell.
float rack_gpu_radius(const Scene& scene, const Canvas& c) {
  const TopoRack& rack = scene.racks.front();
  if (rack.trays.empty()) return 3;
  const TopoBox& tray = rack.trays.front();
  const float per_tray = static_cast<float>(rack.gpus) / static_cast<float>(rack.trays.size());
  const float cell = c.width(tray) * (1 - kLabelShare) / std::max(1.f, per_tray);
  return std::clamp(0.32f * std::min(cell, c.height(tray) * 1.2f), 1.f, 5.f);
}

}  // namespace

void draw_topology_view(ViewState& st) {
  const Scene* scene = st.scene.get();
  if (scene == nullptr) {
    ImGui::TextUnformatted("simulating...");
    return;
  }
  if (scene->nodes.empty()) {
    ImGui::TextUnformatted(scene->source == "simulation"
                               ? "no topology: the analytic network has none (use --network flow)"
                               : "no topology: this trace has no link counters");
    return;
  }
  const double t0 = st.window.begin(), t1 = st.window.end();
  ImGui::Text("%s: %zu nodes, %zu links drawn   window %.2f-%.2f ms", scene->topology.c_str(), scene->nodes.size(),
              scene->links.size(), t0 / 1e6, t1 / 1e6);
  if (!scene->link_utilization) {
    ImGui::SameLine();
    ImGui::TextDisabled("(link utilization: computing...)");
  }
  if (!scene->racks.empty()) {
    int64_t gpus = 0, used = 0;
    for (const TopoRack& rack : scene->racks) {
      gpus += rack.gpus;
      used += rack.used_gpus;
    }
    const TopoRack& first = scene->racks.front();
    ImGui::TextDisabled("%zu %s racks of %zu trays + %d switch trays: %lld of %lld GPUs used", scene->racks.size(),
                        first.name.substr(0, first.name.find(' ')).c_str(), first.trays.size(), first.switch_trays,
                        static_cast<long long>(used), static_cast<long long>(gpus));
  }
  // Colour ramp legend.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    for (int i = 0; i < 100; ++i)
      dl->AddRectFilled(ImVec2(p.x + 2 * static_cast<float>(i), p.y + 3),
                        ImVec2(p.x + 2 * static_cast<float>(i) + 2, p.y + 13),
                        utilization_colour(std::sqrt(static_cast<float>(i) / 99.f)));
    dl->AddText(ImVec2(p.x + 206, p.y), kTextColour, "link utilization 0 -> 100% (square-root scale)");
    ImGui::Dummy(ImVec2(200, 16));
  }

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float w = std::max(50.f, avail.x - 4), h = std::max(50.f, avail.y - 4);
  ImGui::InvisibleButton("topology", ImVec2(w, h));
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  dl->PushClipRect(origin, ImVec2(origin.x + w, origin.y + h), true);
  dl->AddRectFilled(origin, ImVec2(origin.x + w, origin.y + h), kCanvasColour);
  const Canvas canvas{origin, w, h};
  auto pos = [&](const TopoNode& n) { return canvas.at(n.x, n.y); };
  draw_rack_frames(dl, *scene, canvas);

  std::vector<float> util(scene->links.size(), 0.f);
  for (size_t l = 0; l < scene->links.size(); ++l)
    util[l] = scene->links[l].utilization_in(static_cast<int64_t>(t0), static_cast<int64_t>(t1), scene->span_ns);
  std::vector<uint32_t> order(scene->links.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return util[a] < util[b]; });
  const float thin = scene->links.size() > 2000 ? 0.6f : 1.2f;
  int64_t hover_link = -1;
  float best = 5;
  for (uint32_t l : order) {
    const TopoLink& link = scene->links[l];
    const ImVec2 a = pos(scene->nodes[link.a]), b = pos(scene->nodes[link.b]);
    // A square-root ramp: a link busy 10% of the window is visibly warm, not idle-grey.
    dl->AddLine(a, b, utilization_colour(std::sqrt(util[l])), thin + 2.5f * std::sqrt(util[l]));
    if (hovered) {
      const float d = segment_distance(mouse, a, b);
      if (d < best) {
        best = d;
        hover_link = l;
      }
    }
  }
  const float r = scene->nodes.size() > 1500 ? 1.5f : (scene->nodes.size() > 300 ? 2.5f : 4.f);
  const float in_rack = scene->racks.empty() ? r : rack_gpu_radius(*scene, canvas);
  int64_t hover_node = -1;
  for (size_t n = 0; n < scene->nodes.size(); ++n) {
    const TopoNode& node = scene->nodes[n];
    const ImVec2 p = pos(node);
    const float rr = node.members > 1 ? r + 1.5f : (node.tray >= 0 ? in_rack : r);
    dl->AddRectFilled(ImVec2(p.x - rr, p.y - rr), ImVec2(p.x + rr, p.y + rr),
                      node.used ? node_colour(node.kind) : kUnusedGpuColour);
    if (hovered && std::abs(mouse.x - p.x) <= rr + 2 && std::abs(mouse.y - p.y) <= rr + 2)
      hover_node = static_cast<int64_t>(n);
  }
  draw_rack_labels(dl, *scene, canvas);
  dl->PopClipRect();

  if (hover_node >= 0) {
    const TopoNode& node = scene->nodes[static_cast<size_t>(hover_node)];
    ImGui::BeginTooltip();
    ImGui::Text("%s (%s)", node.name.c_str(), topology::to_string(node.kind));
    if (node.members > 1) ImGui::Text("%d GPUs drawn as one node", node.members);
    if (node.rack >= 0 && static_cast<size_t>(node.rack) < scene->racks.size()) {
      const TopoRack& rack = scene->racks[static_cast<size_t>(node.rack)];
      if (node.tray >= 0)
        ImGui::Text("%s, compute tray %d", rack.name.c_str(), node.tray);
      else
        ImGui::TextUnformatted(rack.label.c_str());
      if (node.kind == topology::NodeKind::kNvSwitch)
        ImGui::Text("the rack's NVLink switch trays (%d), drawn as one switch", rack.switch_trays);
    }
    if (!node.used) ImGui::TextUnformatted("not used by the job: the topology builds whole racks");
    ImGui::EndTooltip();
  } else if (hover_link >= 0) {
    const TopoLink& link = scene->links[static_cast<size_t>(hover_link)];
    float peak = 0;
    for (float u : link.utilization) peak = std::max(peak, u);
    ImGui::BeginTooltip();
    ImGui::Text("%s <-> %s (%s)", scene->nodes[link.a].name.c_str(), scene->nodes[link.b].name.c_str(),
                link.kind.c_str());
    if (link.capacity_bps > 0)
      ImGui::Text("%d cable(s), %.1f GB/s per direction in all", link.cables, link.capacity_bps / 1e9);
    ImGui::Text("utilization in window %.1f%%, iteration mean %.1f%%, peak bin %.1f%%",
                100 * util[static_cast<size_t>(hover_link)], 100 * link.mean_utilization(), 100 * peak);
    ImGui::EndTooltip();
  }
}

}  // namespace trainsim::ui
