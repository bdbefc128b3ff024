// Topology view: the cluster's nodes laid out by kind (topology_layout.hpp) and its cables
// coloured by their utilization over the schedule's visible time window, hot cables drawn last.
// Hovering a cable or node shows its numbers.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

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
  auto pos = [&](const TopoNode& n) { return ImVec2(origin.x + 8 + n.x * (w - 16), origin.y + 8 + n.y * (h - 16)); };

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
  int64_t hover_node = -1;
  for (size_t n = 0; n < scene->nodes.size(); ++n) {
    const TopoNode& node = scene->nodes[n];
    const ImVec2 p = pos(node);
    const float rr = node.members > 1 ? r + 1.5f : r;
    dl->AddRectFilled(ImVec2(p.x - rr, p.y - rr), ImVec2(p.x + rr, p.y + rr), node_colour(node.kind));
    if (hovered && std::abs(mouse.x - p.x) <= rr + 2 && std::abs(mouse.y - p.y) <= rr + 2)
      hover_node = static_cast<int64_t>(n);
  }
  dl->PopClipRect();

  if (hover_node >= 0) {
    const TopoNode& node = scene->nodes[static_cast<size_t>(hover_node)];
    ImGui::BeginTooltip();
    ImGui::Text("%s (%s)", node.name.c_str(), topology::to_string(node.kind));
    if (node.members > 1) ImGui::Text("%d GPUs drawn as one node", node.members);
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
