// Plans view: the planner's ranked plans in a sortable table (click a header); clicking a row
// loads that plan's schedule into the other views.
#include <imgui.h>

#include <cstdio>

#include "ui/views/views.hpp"

namespace trainsim::ui {

int32_t draw_plans_view(PlansPanel& p) {
  if (!p.table) {
    ImGui::TextWrapped("%s", p.status.c_str());
    return -1;
  }
  PlanTable& t = *p.table;
  ImGui::Text("%zu best of %lld configurations (%lld fit), searched in %.1f s", t.rows.size(),
              static_cast<long long>(t.considered), static_cast<long long>(t.feasible), t.search_s);
  int32_t picked = -1;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("plans", kPlanColumns, flags)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (int c = 0; c < kPlanColumns; ++c) {
      ImGuiTableColumnFlags cf = c == 0 ? ImGuiTableColumnFlags_DefaultSort : ImGuiTableColumnFlags_None;
      float width = 0;  // fit the contents
      if (c == static_cast<int>(PlanColumn::kConfig)) {
        cf |= ImGuiTableColumnFlags_WidthFixed;
        width = ImGui::CalcTextSize("tp8 pp16 dp128 vp8 mb4 zero3 interleaved").x;
      }
      ImGui::TableSetupColumn(to_string(static_cast<PlanColumn>(c)), cf, width, static_cast<ImGuiID>(c));
    }
    ImGui::TableHeadersRow();
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
      if (specs->SpecsCount > 0) {
        const int32_t before = p.selected >= 0 ? t.rows[static_cast<size_t>(p.selected)].rank : -1;
        t.sort(static_cast<PlanColumn>(specs->Specs[0].ColumnUserID),
               specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending);
        for (size_t i = 0; i < t.rows.size(); ++i)
          if (t.rows[i].rank == before) p.selected = static_cast<int32_t>(i);
      }
      specs->SpecsDirty = false;
    }
    for (size_t i = 0; i < t.rows.size(); ++i) {
      const PlanRow& r = t.rows[i];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      char id[16];
      std::snprintf(id, sizeof id, "%d", r.rank);
      if (ImGui::Selectable(id, p.selected == static_cast<int32_t>(i), ImGuiSelectableFlags_SpanAllColumns)) {
        p.selected = static_cast<int32_t>(i);
        picked = static_cast<int32_t>(i);
      }
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(r.config.c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::Text("%.4f", r.plan.iteration_s);
      ImGui::TableSetColumnIndex(3);
      ImGui::Text("%.1f%%", 100 * r.plan.mfu);
      ImGui::TableSetColumnIndex(4);
      ImGui::Text("%.0f", r.plan.tokens_per_s);
      ImGui::TableSetColumnIndex(5);
      ImGui::Text("%.1f", r.plan.peak_memory_bytes / (1024.0 * 1024.0 * 1024.0));
      ImGui::TableSetColumnIndex(6);
      ImGui::TextUnformatted(r.plan.fidelity.c_str());
    }
    ImGui::EndTable();
  }
  return picked;
}

}  // namespace trainsim::ui
