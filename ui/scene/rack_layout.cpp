#include "ui/scene/rack_layout.hpp"

#include <algorithm>
#include <string>

namespace trainsim::ui {

namespace {

// Vertical units of a rack (one compute tray slot = 1): the label row, the switch block's stripes.
constexpr float kHeader = 1.6f;
constexpr float kSwitchStripe = 0.4f;
constexpr float kFooter = 0.3f;
constexpr float kTrayFill = 0.84f;   // of a tray slot; the rest is the gap between trays
constexpr float kLabelShare = 0.4f;  // of a tray's width, left of its GPUs, for "tray 17"

// NVL72's 9 switch trays serve 72 GPUs; other rack-scale domains are drawn with one block.
int32_t switch_trays(int64_t gpus_per_rack) { return gpus_per_rack == 72 ? 9 : 1; }

}  // namespace

int64_t trays_above_switches(int64_t trays) { return trays - trays * 4 / 9; }

std::vector<TopoRack> lay_out_racks(const RackShape& s) {
  const int64_t racks = std::max<int64_t>(1, s.racks);
  const int64_t per_tray = std::clamp<int64_t>(s.gpus_per_tray, 1, std::max<int64_t>(1, s.gpus_per_rack));
  const int64_t trays = std::max<int64_t>(1, s.gpus_per_rack / per_tray);
  const int64_t above = trays_above_switches(trays);
  const int32_t stripes = switch_trays(s.gpus_per_rack);
  const float block = std::max(1.5f, kSwitchStripe * static_cast<float>(stripes));
  const float units = kHeader + static_cast<float>(trays) + block + kFooter;
  const float unit = (s.bottom - s.top) / units;
  // Racks side by side, a gap between neighbours; a few racks stay narrow and centred in their slots.
  const float slot = 1.0f / static_cast<float>(racks);
  const float width = std::min(0.86f * slot, 0.3f);
  std::vector<TopoRack> out;
  out.reserve(static_cast<size_t>(racks));
  for (int64_t r = 0; r < racks; ++r) {
    TopoRack rack;
    const std::string n = std::to_string(r);
    rack.name = "NVL" + std::to_string(s.gpus_per_rack) + " rack " + n;
    rack.gpus = static_cast<int32_t>(s.gpus_per_rack);
    const int64_t first = r * s.gpus_per_rack;
    rack.used_gpus = static_cast<int32_t>(
        s.used_gpus <= 0 ? s.gpus_per_rack : std::clamp<int64_t>(s.used_gpus - first, 0, s.gpus_per_rack));
    rack.label = rack.name + " (" + std::to_string(s.gpus_per_rack) + " GPUs";
    if (rack.used_gpus == 0)
      rack.label += ", unused";
    else if (rack.used_gpus < rack.gpus)
      rack.label += ", " + std::to_string(rack.used_gpus) + " used";
    rack.label += ")";
    const float cx = (static_cast<float>(r) + 0.5f) * slot;
    rack.box = {cx - width / 2, s.top, cx + width / 2, s.bottom, rack.name, rack.used_gpus > 0};
    const float inset = 0.04f * width;
    float y = s.top + kHeader * unit;
    for (int64_t k = 0; k < trays; ++k) {
      if (k == above) {
        rack.switches = {rack.box.x0 + inset,
                         y + 0.5f * (1 - kTrayFill) * unit,
                         rack.box.x1 - inset,
                         y + block * unit - 0.5f * (1 - kTrayFill) * unit,
                         "",
                         true};
        y += block * unit;
      }
      TopoBox tray{rack.box.x0 + inset,         y + 0.5f * (1 - kTrayFill) * unit,
                   rack.box.x1 - inset,         y + (1 - 0.5f * (1 - kTrayFill)) * unit,
                   "tray " + std::to_string(k), k * per_tray < rack.used_gpus};
      rack.trays.push_back(std::move(tray));
      y += unit;
    }
    if (above >= trays)  // a rack of one tray: the switches below it
      rack.switches = {rack.box.x0 + inset, y, rack.box.x1 - inset, y + block * unit, "", true};
    rack.switches.label = stripes > 1 ? std::to_string(stripes) + " NVLink switch trays" : "NVLink switch";
    rack.switch_trays = stripes;
    out.push_back(std::move(rack));
  }
  return out;
}

std::pair<float, float> rack_gpu_position(const TopoRack& rack, int64_t local, int64_t gpus_per_tray) {
  const int64_t per_tray = std::max<int64_t>(1, gpus_per_tray);
  const auto tray =
      static_cast<size_t>(std::clamp<int64_t>(local / per_tray, 0, static_cast<int64_t>(rack.trays.size()) - 1));
  const TopoBox& b = rack.trays[tray];
  const float col = static_cast<float>(local % per_tray);
  const float x =
      b.x0 + (b.x1 - b.x0) * (kLabelShare + (1 - kLabelShare) * (col + 0.5f) / static_cast<float>(per_tray));
  return {x, 0.5f * (b.y0 + b.y1)};
}

std::pair<float, float> rack_switch_position(const TopoRack& rack, size_t k, size_t count) {
  const TopoBox& b = rack.switches;
  const float f = (static_cast<float>(k) + 0.5f) / static_cast<float>(std::max<size_t>(1, count));
  return {b.x0 + (b.x1 - b.x0) * (kLabelShare + (1 - kLabelShare) * f), 0.5f * (b.y0 + b.y1)};
}

}  // namespace trainsim::ui
