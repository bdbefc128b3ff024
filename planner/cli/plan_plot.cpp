#include "planner/cli/plan_plot.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "planner/search/candidate.hpp"
#include "traces/svg/svg.hpp"

namespace trainsim::planner::cli {

namespace {

using traces::Axis;
using traces::Chart;
using traces::LegendEntry;
using traces::Point;
using traces::SvgCanvas;

constexpr double kWidth = 960, kHeight = 600, kLeft = 90, kTop = 60, kPlotW = 640, kPlotH = 460;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
const char* const kFront = "#4e79a7";
const char* const kTopColor = "#f28e2b";
const char* const kLimit = "#e15759";

void heading(SvgCanvas& svg, const std::string& title, const std::string& subtitle) {
  svg.open_group("title");
  svg.text(kLeft, 24, title, 16, "start", "#222", 0, "bold");
  svg.text(kLeft, 44, subtitle, 12, "start", "#555");
  svg.close_group();
}

}  // namespace

std::string pareto_svg(const search::SearchResult& r, double memory_limit_bytes, int64_t top,
                       const std::string& title) {
  const size_t n_top = std::min(r.plans.size(), static_cast<size_t>(std::max<int64_t>(top, 0)));
  double max_mem = memory_limit_bytes / kGiB, max_t = 0;
  for (const auto& p : r.memory_front) {
    max_mem = std::max(max_mem, p.peak_memory_bytes / kGiB);
    max_t = std::max(max_t, p.iteration_s);
  }
  for (size_t i = 0; i < n_top; ++i) {
    max_mem = std::max(max_mem, r.plans[i].peak_memory_bytes / kGiB);
    max_t = std::max(max_t, r.plans[i].iteration_s);
  }
  SvgCanvas svg(kWidth, kHeight);
  std::ostringstream sub;
  sub << r.memory_front.size() << " plans on the time vs memory front, top " << n_top << " of " << r.feasible
      << " that fit, " << r.gpus << " GPUs";
  heading(svg, title, sub.str());
  Chart chart(svg, kLeft, kTop, kPlotW, kPlotH, Axis{0, max_mem * 1.08 + 1e-9, false, "peak memory per GPU (GiB)", {}},
              Axis{0, max_t * 1.1 + 1e-12, false, "iteration time (s)", {}});
  chart.draw_axes();

  svg.open_group("limit");
  const double lx = chart.px(memory_limit_bytes / kGiB);
  svg.line(lx, kTop, lx, kTop + kPlotH, kLimit, 1.5, "6 4");
  std::ostringstream limit;
  limit << "usable " << traces::svg_number(memory_limit_bytes / kGiB, 1) << " GiB";
  svg.text(lx - 4, kTop + 12, limit.str(), 11, "end", kLimit);
  svg.close_group();

  // The front by memory, the fastest last.
  std::vector<const search::Plan*> front;
  for (const auto& p : r.memory_front) front.push_back(&p);
  std::stable_sort(front.begin(), front.end(), [](const search::Plan* a, const search::Plan* b) {
    return a->peak_memory_bytes < b->peak_memory_bytes;
  });
  svg.open_group("front");
  std::vector<Point> line;
  for (const auto* p : front) line.push_back({chart.px(p->peak_memory_bytes / kGiB), chart.py(p->iteration_s)});
  if (line.size() > 1) svg.polyline(line, kFront, 1.5);
  for (size_t i = 0; i < front.size(); ++i) {
    std::ostringstream tip;
    tip << search::describe(front[i]->candidate) << ": " << traces::svg_number(front[i]->iteration_s, 3) << " s, "
        << traces::svg_number(front[i]->peak_memory_bytes / kGiB, 1) << " GiB";
    svg.circle(line[i].x, line[i].y, 3.5, kFront, {}, tip.str());
  }
  svg.close_group();

  svg.open_group("top");
  // Plans drawn within 10 pixels of an earlier one share its label ("#1, #4, #6"): equal
  // estimates would otherwise print their numbers over each other.
  struct Label {
    double x, y;
    std::vector<size_t> ranks;
  };
  std::vector<Label> labels;
  for (size_t i = 0; i < n_top; ++i) {
    const auto& p = r.plans[i];
    const double x = chart.px(p.peak_memory_bytes / kGiB), y = chart.py(p.iteration_s);
    std::ostringstream tip;
    tip << "#" << i + 1 << " " << search::describe(p.candidate) << ": " << traces::svg_number(p.iteration_s, 3)
        << " s (" << p.fidelity << "), " << traces::svg_number(p.peak_memory_bytes / kGiB, 1) << " GiB";
    svg.circle(x, y, i == 0 ? 7 : 5, kTopColor, "#222", tip.str());
    auto near = std::find_if(labels.begin(), labels.end(),
                             [&](const Label& l) { return std::abs(l.x - x) < 10 && std::abs(l.y - y) < 10; });
    if (near == labels.end())
      labels.push_back({x, y, {i + 1}});
    else
      near->ranks.push_back(i + 1);
  }
  for (const Label& l : labels) {
    std::ostringstream text;
    for (size_t k = 0; k < l.ranks.size() && k < 4; ++k) text << (k ? ", #" : "#") << l.ranks[k];
    if (l.ranks.size() > 4) text << " +" << l.ranks.size() - 4;
    svg.text(l.x + 8, l.y - 6, text.str(), 11, "start", "#222", 0, l.ranks.front() == 1 ? "bold" : "");
  }
  svg.close_group();

  traces::draw_legend(svg, kLeft + kPlotW + 20, kTop,
                      {{"Pareto front (estimate)", kFront, true},
                       {"ranked plans (#1 best)", kTopColor, true},
                       {"usable memory", kLimit, false}});
  return svg.str();
}

std::string sweep_svg(const std::vector<SizeResult>& rows, size_t best, const std::string& title) {
  double lo = 0, hi = 0, max_t = 0;
  std::vector<double> ticks;
  for (const auto& row : rows) {
    if (!row.ok) continue;
    const double g = static_cast<double>(row.gpus);
    lo = lo == 0 ? g : std::min(lo, g);
    hi = std::max(hi, g);
    max_t = std::max(max_t, row.result.plans.front().iteration_s);
    ticks.push_back(g);
  }
  SvgCanvas svg(kWidth, kHeight);
  std::ostringstream sub;
  sub << rows.size() << " cluster sizes, " << ticks.size() << " with a plan that fits";
  heading(svg, title, sub.str());
  if (lo == 0) lo = hi = 1;
  const double pad = hi > lo ? 1.08 : 2;
  Chart chart(svg, kLeft, kTop, kPlotW, kPlotH, Axis{lo / pad, hi * pad, true, "GPUs", ticks},
              Axis{0, max_t * 1.1 + 1e-12, false, "iteration time of the best plan (s)", {}});
  chart.draw_axes();
  svg.open_group("sizes");
  std::vector<Point> line;
  for (const auto& row : rows)
    if (row.ok)
      line.push_back({chart.px(static_cast<double>(row.gpus)), chart.py(row.result.plans.front().iteration_s)});
  if (line.size() > 1) svg.polyline(line, kFront, 1.5);
  size_t k = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].ok) continue;
    const auto& p = rows[i].result.plans.front();
    std::ostringstream tip;
    tip << rows[i].gpus << " GPUs: " << search::describe(p.candidate) << ", " << traces::svg_number(p.iteration_s, 3)
        << " s";
    svg.circle(line[k].x, line[k].y, 4, kFront, {}, tip.str());
    ++k;
  }
  svg.close_group();
  svg.open_group("best");
  if (best < rows.size() && rows[best].ok) {
    const double x = chart.px(static_cast<double>(rows[best].gpus)),
                 y = chart.py(rows[best].result.plans.front().iteration_s);
    std::ostringstream label;
    label << "best: " << rows[best].gpus << " GPUs";
    svg.circle(x, y, 7, kTopColor, "#222");
    svg.text(x + 10, y - 8, label.str(), 12, "start", "#222", 0, "bold");
  }
  svg.close_group();
  traces::draw_legend(svg, kLeft + kPlotW + 20, kTop,
                      {{"best plan per size", kFront, true}, {"best size (objective)", kTopColor, true}});
  return svg.str();
}

namespace {

const char* const kClusterColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
const char* cluster_color(size_t i) { return kClusterColors[i % (sizeof kClusterColors / sizeof *kClusterColors)]; }

// One panel of bars, a bar per cluster (none where the cluster has no plan), its value on top and
// the cluster's name under it.
void bar_panel(SvgCanvas& svg, const ComparisonMetric& m, const std::vector<ClusterPlans>& clusters, double left,
               double width) {
  constexpr double kPanelTop = 90, kPanelH = 380;
  double hi = 0;
  for (const double v : m.values) hi = std::max(hi, v);
  const double n = static_cast<double>(std::max<size_t>(1, clusters.size()));
  Chart chart(svg, left, kPanelTop, width, kPanelH, Axis{0, n, false, "", {}, true},
              Axis{0, hi > 0 ? hi * 1.15 : 1, false, "", {}});
  chart.draw_axes();
  svg.open_group("bars");
  svg.text(left + width / 2, kPanelTop - 12, m.label, 12, "middle", "#222", 0, "bold");
  for (size_t i = 0; i < clusters.size(); ++i) {
    const double x0 = chart.px(static_cast<double>(i) + 0.15), x1 = chart.px(static_cast<double>(i) + 0.85);
    const double xm = (x0 + x1) / 2;
    svg.text(xm, kPanelTop + kPanelH + 14, clusters[i].cluster, 11, "end", "#222", -35);
    const double v = i < m.values.size() ? m.values[i] : -1;
    if (v < 0) {
      svg.text(xm, chart.py(0) - 6, "no plan", 10, "middle", "#888");
      continue;
    }
    std::ostringstream tip;
    tip << clusters[i].cluster << ": " << traces::svg_number(v, m.decimals);
    svg.rect(x0, chart.py(v), x1 - x0, chart.py(0) - chart.py(v), cluster_color(i), {}, tip.str());
    svg.text(xm, chart.py(v) - 5, traces::svg_number(v, m.decimals), 10, "middle", "#222");
  }
  svg.close_group();
}

}  // namespace

std::string compare_svg(const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o,
                        const std::string& title) {
  const std::vector<ComparisonMetric> metrics = comparison_metrics(clusters, o);
  SvgCanvas svg(kWidth, kHeight);
  size_t fit = 0;
  for (const auto& c : clusters) fit += best_size_of(c, o) < c.sizes.size() ? 1 : 0;
  std::ostringstream sub;
  sub << clusters.size() << " clusters, " << fit
      << " with a plan that fits; the best plan of each (objective: " << o.objective << ")";
  heading(svg, title, sub.str());
  // Panels side by side, 90 pixels apart, with room for the tick labels on their left.
  const double gap = 90, left0 = 70;
  const double panel_w =
      (kWidth - left0 - 20 - gap * static_cast<double>(metrics.size() - 1)) / static_cast<double>(metrics.size());
  for (size_t k = 0; k < metrics.size(); ++k)
    bar_panel(svg, metrics[k], clusters, left0 + static_cast<double>(k) * (panel_w + gap), panel_w);
  return svg.str();
}

std::string compare_sweep_svg(const std::vector<ClusterPlans>& clusters, const PlanReportOptions& o,
                              const std::string& title) {
  double lo = 0, hi = 0, max_t = 0;
  std::vector<double> ticks;
  for (const auto& c : clusters)
    for (const auto& s : c.sizes) {
      if (!s.ok) continue;
      const double g = static_cast<double>(s.gpus);
      lo = lo == 0 ? g : std::min(lo, g);
      hi = std::max(hi, g);
      max_t = std::max(max_t, s.result.plans.front().iteration_s);
      if (std::find(ticks.begin(), ticks.end(), g) == ticks.end()) ticks.push_back(g);
    }
  std::sort(ticks.begin(), ticks.end());
  SvgCanvas svg(kWidth, kHeight);
  std::ostringstream sub;
  sub << clusters.size() << " clusters, " << ticks.size() << " cluster sizes with a plan that fits; the best size of "
      << "each cluster (objective: " << o.objective << ") marked";
  heading(svg, title, sub.str());
  if (lo == 0) lo = hi = 1;
  const double pad = hi > lo ? 1.08 : 2;
  Chart chart(svg, kLeft, kTop, kPlotW, kPlotH, Axis{lo / pad, hi * pad, true, "GPUs", ticks},
              Axis{0, max_t * 1.1 + 1e-12, false, "iteration time of the best plan (s)", {}});
  chart.draw_axes();
  std::vector<LegendEntry> legend;
  svg.open_group("clusters");
  for (size_t i = 0; i < clusters.size(); ++i) {
    const ClusterPlans& c = clusters[i];
    std::vector<Point> line;
    for (const auto& s : c.sizes)
      if (s.ok) line.push_back({chart.px(static_cast<double>(s.gpus)), chart.py(s.result.plans.front().iteration_s)});
    if (line.size() > 1) svg.polyline(line, cluster_color(i), 1.5);
    size_t k = 0;
    const size_t best = best_size_of(c, o);
    for (size_t j = 0; j < c.sizes.size(); ++j) {
      if (!c.sizes[j].ok) continue;
      const auto& p = c.sizes[j].result.plans.front();
      std::ostringstream tip;
      tip << c.cluster << ", " << c.sizes[j].gpus << " GPUs: " << search::describe(p.candidate) << ", "
          << traces::svg_number(p.iteration_s, 3) << " s";
      svg.circle(line[k].x, line[k].y, j == best ? 7 : 4, cluster_color(i), j == best ? "#222" : "", tip.str());
      ++k;
    }
    legend.push_back({c.cluster, cluster_color(i), true});
  }
  svg.close_group();
  traces::draw_legend(svg, kLeft + kPlotW + 20, kTop, legend);
  return svg.str();
}

}  // namespace trainsim::planner::cli
