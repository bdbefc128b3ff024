// What-if panel: tensor / pipeline / virtual-pipeline sizes, micro-batch, schedule and the two
// networks' bandwidth multipliers. With "live" on, every change re-simulates (the app runs it on a
// worker; the newest change wins); otherwise "simulate" does.
#include <imgui.h>

#include <algorithm>

#include "ui/views/views.hpp"

namespace trainsim::ui {

bool draw_what_if_view(WhatIfPanel& p, const ViewState& st) {
  bool changed = false;
  WhatIf& k = p.knobs;
  ImGui::PushItemWidth(110);
  auto int_knob = [&](const char* label, int64_t& v, int lo, int hi) {
    int x = static_cast<int>(v);
    if (ImGui::InputInt(label, &x, 1, 8)) {
      x = std::clamp(x, lo, hi);
      if (x != v) {
        v = x;
        changed = true;
      }
    }
  };
  int_knob("TP", k.tp, 1, 64);
  ImGui::SameLine();
  int_knob("PP", k.pp, 1, 256);
  ImGui::SameLine();
  int_knob("VP", k.vp, 1, 16);
  int_knob("micro-batch", k.micro_batch, 1, 256);
  ImGui::SameLine();
  if (ImGui::BeginCombo("schedule", k.schedule.c_str())) {
    for (const std::string& s : p.schedules)
      if (ImGui::Selectable(s.c_str(), s == k.schedule) && s != k.schedule) {
        k.schedule = s;
        changed = true;
      }
    ImGui::EndCombo();
  }
  float inter = static_cast<float>(k.inter_node_bandwidth), intra = static_cast<float>(k.intra_node_bandwidth);
  if (ImGui::SliderFloat("scale-out bandwidth x", &inter, 0.125f, 8.f, "%.3g", ImGuiSliderFlags_Logarithmic)) {
    k.inter_node_bandwidth = inter;
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::SliderFloat("NVLink bandwidth x", &intra, 0.125f, 8.f, "%.3g", ImGuiSliderFlags_Logarithmic)) {
    k.intra_node_bandwidth = intra;
    changed = true;
  }
  ImGui::PopItemWidth();
  ImGui::Checkbox("re-simulate live", &p.live);
  ImGui::SameLine();
  const bool run = ImGui::Button("simulate");
  ImGui::SameLine();
  if (ImGui::Button("back to the job")) {
    changed = !(k == p.baseline);
    k = p.baseline;
  }
  if (p.busy) {
    ImGui::SameLine();
    ImGui::TextDisabled("simulating...");
  }
  ImGui::TextWrapped("%s", p.status.c_str());
  if (st.scene && st.scene->iteration_s > 0 && p.baseline_s > 0) {
    const double d = st.scene->iteration_s / p.baseline_s - 1;
    ImGui::Text("shown: %.4f s per iteration, %+.1f%% against the job (%.4f s)", st.scene->iteration_s, 100 * d,
                p.baseline_s);
  }
  return run || (changed && p.live);
}

}  // namespace trainsim::ui
