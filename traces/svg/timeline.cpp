#include "traces/svg/timeline.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <sstream>
#include <vector>

#include "traces/svg/svg.hpp"

namespace trainsim::traces {

namespace {

using sim::TaskIndex;
using sim::task::StreamId;
using sim::task::TaskGraph;
using sim::task::TaskKind;

// Tableau 10 plus grey: distinct in colour and in lightness.
constexpr std::array<const char*, kTimelineCategories> kColors = {
    "#4e79a7", "#f28e2b", "#b07aa1", "#59a14f", "#e15759", "#76b7b2",
    "#edc948", "#ff9da7", "#9c755f", "#bab0ac", "#7f7f7f",
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

struct Rect {
  int64_t start = 0, end = 0;  // ns
  uint8_t category = 0;
  uint32_t count = 0;
  TaskIndex first = 0;
};

struct Row {
  StreamId stream = 0;
  std::vector<Rect> rects;
};

// Rectangles of one stream: consecutive tasks separated by less than `merge_ns` merge when they
// have the same category or either side is shorter than `merge_ns`; a merged rectangle takes the
// category that covers most of it. Each new rectangle then starts at least `merge_ns` after the
// previous one, so a row holds at most span / merge_ns + 1 of them.
std::vector<Rect> stream_rects(const TaskGraph& g, const sim::task::TaskExecutor& exec, StreamId s,
                               const std::vector<uint8_t>& category, double merge_ns, size_t& tasks) {
  std::vector<Rect> out;
  std::array<int64_t, kTimelineCategories> covered{};
  const auto settle = [&] {
    if (out.empty() || out.back().count < 2) return;
    const auto best = std::max_element(covered.begin(), covered.end());
    out.back().category = static_cast<uint8_t>(best - covered.begin());
  };
  for (const TaskIndex i : g.stream_tasks(s)) {
    const sim::Time st = exec.start_time(i), en = exec.end_time(i);
    if (st.is_infinite() || en.is_infinite()) continue;
    ++tasks;
    const int64_t a = st.count_ns(), b = en.count_ns();
    const uint8_t c = category[i];
    if (!out.empty()) {
      Rect& cur = out.back();
      const double gap = static_cast<double>(a - cur.end);
      const bool small = static_cast<double>(b - a) < merge_ns || static_cast<double>(cur.end - cur.start) < merge_ns;
      if (gap < merge_ns && (c == cur.category || small)) {
        cur.end = std::max(cur.end, b);
        ++cur.count;
        covered[c] += b - a;
        continue;
      }
    }
    settle();
    covered.fill(0);
    covered[c] = b - a;
    out.push_back(Rect{a, b, c, 1, i});
  }
  settle();
  return out;
}

std::string time_unit_label(int64_t span_ns, double& scale) {
  if (span_ns >= 1'000'000'000) {
    scale = 1e-9;
    return "time (s)";
  }
  if (span_ns >= 1'000'000) {
    scale = 1e-6;
    return "time (ms)";
  }
  scale = 1e-3;
  return "time (us)";
}

}  // namespace

const char* to_string(TimelineCategory c) {
  switch (c) {
    case TimelineCategory::kForward: return "forward";
    case TimelineCategory::kBackward: return "backward";
    case TimelineCategory::kRecompute: return "recompute";
    case TimelineCategory::kOptimizer: return "optimizer";
    case TimelineCategory::kTp: return "TP communication";
    case TimelineCategory::kDp: return "DP communication";
    case TimelineCategory::kPp: return "PP send/recv";
    case TimelineCategory::kCp: return "CP communication";
    case TimelineCategory::kEp: return "EP all-to-all";
    case TimelineCategory::kMemory: return "memory copies";
    case TimelineCategory::kOtherComm: return "other communication";
  }
  return "?";
}

const char* timeline_colour(TimelineCategory c) { return kColors[static_cast<size_t>(c)]; }

TimelineCategory timeline_category(TaskKind kind, std::string_view label) {
  if (kind == TaskKind::kMemory || contains(label, "offload") || contains(label, "d2h") || contains(label, "h2d"))
    return TimelineCategory::kMemory;
  if (kind == TaskKind::kCompute) {
    if (starts_with(label, "recompute")) return TimelineCategory::kRecompute;
    if (contains(label, "optimizer")) return TimelineCategory::kOptimizer;
    if (contains(label, "bwd") || contains(label, "grad")) return TimelineCategory::kBackward;
    return TimelineCategory::kForward;
  }
  if (starts_with(label, "tp_")) return TimelineCategory::kTp;
  if (starts_with(label, "pp_")) return TimelineCategory::kPp;
  if (starts_with(label, "cp_")) return TimelineCategory::kCp;
  if (starts_with(label, "ep_") || contains(label, "moe") || contains(label, "dispatch") || contains(label, "combine"))
    return TimelineCategory::kEp;
  if (starts_with(label, "dp_") || starts_with(label, "zero") || contains(label, "embedding_grad"))
    return TimelineCategory::kDp;
  return TimelineCategory::kOtherComm;
}

std::string timeline_svg(const TaskGraph& g, const sim::task::TaskExecutor& exec, const TimelineOptions& o,
                         TimelineStats* stats) {
  // Per-task category, and the span of the iteration.
  std::vector<uint8_t> category(g.size());
  int64_t span = 0;
  for (TaskIndex i = 0; i < g.size(); ++i) {
    const auto& spec = g.task(i).spec;
    category[i] = static_cast<uint8_t>(timeline_category(spec.kind, g.label(spec.label)));
    const sim::Time en = exec.end_time(i);
    if (!en.is_infinite() && !exec.start_time(i).is_infinite()) span = std::max(span, en.count_ns());
  }
  span = std::max<int64_t>(span, 1);

  // Rows sorted by (rank, stream id).
  std::vector<StreamId> order(g.stream_count());
  std::iota(order.begin(), order.end(), StreamId{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](StreamId a, StreamId b) { return g.stream(a).rank < g.stream(b).rank; });

  constexpr double kLeft = 170, kRight = 30, kTop = 64, kAxis = 56;
  const double plot_w = std::max(100.0, o.width - kLeft - kRight);
  const double ns_per_px = static_cast<double>(span) / plot_w;

  // Merge at one pixel, coarser until the rectangles fit the cap.
  std::vector<Row> rows;
  size_t total = 0, tasks = 0;
  double merge_px = 1;
  for (;; merge_px *= 2) {
    rows.clear();
    total = tasks = 0;
    for (const StreamId s : order) {
      Row r{s, stream_rects(g, exec, s, category, merge_px * ns_per_px, tasks)};
      total += r.rects.size();
      rows.push_back(std::move(r));
    }
    if (total <= o.max_rects || merge_px > plot_w) break;
  }

  std::array<bool, kTimelineCategories> used{};
  for (const Row& r : rows)
    for (const Rect& x : r.rects) used[x.category] = true;
  std::vector<LegendEntry> legend;
  for (int c = 0; c < kTimelineCategories; ++c)
    if (used[static_cast<size_t>(c)])
      legend.push_back({to_string(static_cast<TimelineCategory>(c)), kColors[static_cast<size_t>(c)], false});

  const double rows_h = o.row_height * static_cast<double>(rows.size());
  const double legend_h = 8 + 18 * static_cast<double>(legend.size());
  SvgCanvas svg(o.width, kTop + rows_h + kAxis + legend_h + 16);
  std::ostringstream css;
  for (size_t c = 0; c < kColors.size(); ++c) css << ".c" << c << "{fill:" << kColors[c] << "}";
  svg.set_style(css.str());

  double scale = 1;
  const std::string unit = time_unit_label(span, scale);
  svg.open_group("title");
  svg.text(kLeft, 22, o.title, 16, "start", "#222", 0, "bold");
  std::ostringstream sub;
  sub << "iteration " << svg_number(static_cast<double>(span) * 1e-6, 3) << " ms, " << rows.size() << " streams, "
      << tasks << " tasks";
  if (total < tasks) sub << " (" << total << " bars after merging)";
  svg.text(kLeft, 42, sub.str(), 12, "start", "#555");
  svg.close_group();

  Axis x{0, static_cast<double>(span) * scale, false, unit, {}};
  Axis y{0, 1, false, "", {}, true};  // rows, not numbers: no ticks
  Chart chart(svg, kLeft, kTop, plot_w, rows_h, x, y);

  svg.open_group("rows");
  for (size_t k = 0; k < rows.size(); ++k) {
    const double top = kTop + o.row_height * static_cast<double>(k);
    const auto& info = g.stream(rows[k].stream);
    svg.rect(kLeft, top, plot_w, o.row_height, k % 2 ? "#f4f4f4" : "#fbfbfb", "row");
    std::ostringstream name;
    name << "rank " << info.rank << " " << g.label(info.label);
    svg.text(kLeft - 8, top + o.row_height - 3, name.str(), std::min(11.0, o.row_height - 2), "end", "#333");
  }
  svg.close_group();
  chart.draw_axes();

  const bool tooltips = total <= o.max_tooltips;
  const double bar_h = std::max(1.0, o.row_height - 3);
  svg.open_group("tasks");
  for (size_t k = 0; k < rows.size(); ++k) {
    const double top = kTop + o.row_height * static_cast<double>(k) + 1.5;
    for (const Rect& r : rows[k].rects) {
      const double x0 = chart.px(static_cast<double>(r.start) * scale);
      const double x1 = chart.px(static_cast<double>(r.end) * scale);
      std::ostringstream tip;
      if (tooltips && r.count == 1)
        tip << g.display_name(r.first) << " (" << svg_number(static_cast<double>(r.end - r.start) * 1e-3, 3) << " us)";
      else if (tooltips)
        tip << r.count << " tasks from " << g.display_name(r.first);
      std::string cls = "c";
      cls += std::to_string(r.category);
      svg.rect(x0, top, std::max(x1 - x0, 0.5), bar_h, {}, cls, tip.str());
    }
  }
  svg.close_group();

  draw_legend(svg, kLeft, kTop + rows_h + kAxis, legend);

  if (stats) *stats = TimelineStats{rows.size(), tasks, total, span, merge_px};
  return svg.str();
}

}  // namespace trainsim::traces
