#include "ui/views/colours.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace trainsim::ui {

ImU32 category_colour(traces::TimelineCategory c, float alpha) {
  const char* hex = traces::timeline_colour(c);  // "#rrggbb"
  const unsigned long v = std::strtoul(hex + 1, nullptr, 16);
  return IM_COL32((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff, static_cast<int>(std::clamp(alpha, 0.f, 1.f) * 255));
}

ImU32 utilization_colour(float u) {
  // Grey-blue (idle) -> teal -> yellow -> red (saturated).
  static constexpr std::array<std::array<float, 3>, 4> stops = {
      {{70, 80, 110}, {40, 170, 160}, {240, 200, 60}, {230, 50, 40}}};
  u = std::clamp(u, 0.f, 1.f) * 3.f;
  const int i = std::min(2, static_cast<int>(u));
  const float f = u - static_cast<float>(i);
  auto mix = [&](int k) { return static_cast<int>(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f); };
  return IM_COL32(mix(0), mix(1), mix(2), 255);
}

ImU32 rank_colour(int index) {
  static constexpr std::array<ImU32, 8> colours = {IM_COL32(78, 121, 167, 255),  IM_COL32(242, 142, 43, 255),
                                                   IM_COL32(89, 161, 79, 255),   IM_COL32(225, 87, 89, 255),
                                                   IM_COL32(176, 122, 161, 255), IM_COL32(118, 183, 178, 255),
                                                   IM_COL32(237, 201, 72, 255),  IM_COL32(255, 157, 167, 255)};
  return colours[static_cast<size_t>(index) % colours.size()];
}

ImU32 node_colour(topology::NodeKind k) {
  using topology::NodeKind;
  switch (k) {
    case NodeKind::kGpu: return IM_COL32(118, 185, 0, 255);
    case NodeKind::kNvSwitch: return IM_COL32(160, 120, 220, 255);
    case NodeKind::kPcieSwitch: return IM_COL32(140, 140, 160, 255);
    case NodeKind::kCpu: return IM_COL32(100, 160, 220, 255);
    case NodeKind::kNic: return IM_COL32(200, 160, 90, 255);
    case NodeKind::kLeaf: return IM_COL32(90, 170, 230, 255);
    case NodeKind::kSpine: return IM_COL32(240, 140, 60, 255);
    case NodeKind::kCore: return IM_COL32(230, 80, 80, 255);
    case NodeKind::kRouter: return IM_COL32(200, 200, 200, 255);
  }
  return IM_COL32(200, 200, 200, 255);
}

}  // namespace trainsim::ui
