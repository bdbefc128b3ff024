#include "traces/kineto/plot.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <sstream>
#include <vector>

#include "traces/svg/svg.hpp"

namespace trainsim::traces {

namespace {

enum Kind : uint8_t { kCompute, kComm, kCopy };
constexpr std::array<const char*, 3> kKindColor = {"#4e79a7", "#e15759", "#bab0ac"};
constexpr std::array<const char*, 3> kKindName = {"compute kernels", "NCCL communication", "memory copies and sets"};

Kind kind_of(const KinetoKernel& k) {
  if (k.category != "kernel") return kCopy;
  std::string lower = k.name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("nccl") != std::string::npos ? kComm : kCompute;
}

struct Bar {
  int64_t start = 0, end = 0;  // ns from the step's start
  Kind kind = kCompute;
  int count = 0;
};
struct Lane {
  int64_t stream = 0;
  std::vector<Bar> bars;
};

// The first step's kernels per stream, merged below `merge_ns`.
std::vector<Lane> lanes(const KinetoTrace& t, int64_t merge_ns, int64_t& span) {
  const int64_t lo = t.steps.empty() ? 0 : t.steps.front().start.count_ns();
  const int64_t hi = t.steps.empty() ? INT64_MAX : t.steps.front().end.count_ns();
  std::map<int64_t, std::vector<const KinetoKernel*>> by_stream;
  for (const KinetoKernel& k : t.kernels)
    if (k.end().count_ns() > lo && k.start.count_ns() < hi) by_stream[k.stream].push_back(&k);
  std::vector<Lane> out;
  span = std::max<int64_t>(span, hi == INT64_MAX ? 0 : hi - lo);
  for (auto& [stream, ks] : by_stream) {
    std::stable_sort(ks.begin(), ks.end(), [](const auto* a, const auto* b) { return a->start < b->start; });
    Lane lane{stream, {}};
    for (const KinetoKernel* k : ks) {
      const int64_t s = std::max(lo, k->start.count_ns()) - lo, e = std::min(hi, k->end().count_ns()) - lo;
      span = std::max(span, e);
      const Kind kind = kind_of(*k);
      if (!lane.bars.empty() && lane.bars.back().kind == kind && s - lane.bars.back().end < merge_ns) {
        lane.bars.back().end = std::max(lane.bars.back().end, e);
        ++lane.bars.back().count;
      } else {
        lane.bars.push_back({s, e, kind, 1});
      }
    }
    out.push_back(std::move(lane));
  }
  return out;
}

}  // namespace

std::string kineto_compare_svg(const KinetoTrace& real, const KinetoTrace& simulated, const std::string& title,
                               double width) {
  constexpr double kLeft = 170, kRight = 30, kTop = 70, kRow = 16, kPanelGap = 30, kAxis = 56;
  const double plot_w = std::max(100.0, width - kLeft - kRight);
  // The longer step sets the axis; merging at one pixel of it.
  int64_t span = 1;
  lanes(real, 1, span);
  lanes(simulated, 1, span);
  const auto merge_ns = static_cast<int64_t>(static_cast<double>(span) / plot_w);
  int64_t real_span = 0, sim_span = 0;
  const std::vector<Lane> a = lanes(real, merge_ns, real_span), b = lanes(simulated, merge_ns, sim_span);

  const double panel_a = kRow * static_cast<double>(a.size()), panel_b = kRow * static_cast<double>(b.size());
  const double rows_h = 20 + panel_a + kPanelGap + panel_b;
  SvgCanvas svg(width, kTop + rows_h + kAxis + 8 + 18 * 3 + 16);
  svg.open_group("title");
  svg.text(kLeft, 22, title, 16, "start", "#222", 0, "bold");
  std::ostringstream sub;
  sub << "first profiler step: measured " << svg_number(static_cast<double>(real_span) * 1e-6, 3) << " ms, simulated "
      << svg_number(static_cast<double>(sim_span) * 1e-6, 3) << " ms";
  if (real_span > 0)
    sub << " (" << (sim_span >= real_span ? "+" : "")
        << svg_number(100.0 * (static_cast<double>(sim_span) / static_cast<double>(real_span) - 1.0), 1) << "%)";
  svg.text(kLeft, 44, sub.str(), 12, "start", "#555");
  svg.close_group();

  Axis x{0, static_cast<double>(span) * 1e-6, false, "time in the step (ms)", {}};
  Axis y{0, 1, false, "", {}, true};
  Chart chart(svg, kLeft, kTop, plot_w, rows_h, x, y);
  auto draw_panel = [&](const std::vector<Lane>& lanes_, double top, const char* heading, const char* who) {
    svg.text(kLeft, top + 14, heading, 12, "start", "#222", 0, "bold");
    for (size_t r = 0; r < lanes_.size(); ++r) {
      const double y0 = top + 20 + kRow * static_cast<double>(r);
      svg.rect(kLeft, y0, plot_w, kRow, r % 2 ? "#f4f4f4" : "#fbfbfb");
      std::ostringstream name;
      name << who << " stream " << lanes_[r].stream;
      svg.text(kLeft - 8, y0 + kRow - 4, name.str(), 11, "end", "#333");
      for (const Bar& bar : lanes_[r].bars) {
        const double x0 = chart.px(static_cast<double>(bar.start) * 1e-6);
        const double x1 = chart.px(static_cast<double>(bar.end) * 1e-6);
        std::ostringstream tip;
        tip << kKindName[bar.kind] << ": " << bar.count << " kernel" << (bar.count == 1 ? "" : "s") << ", "
            << svg_number(static_cast<double>(bar.start) * 1e-3, 1) << "-"
            << svg_number(static_cast<double>(bar.end) * 1e-3, 1) << " us";
        svg.rect(x0, y0 + 2, std::max(0.5, x1 - x0), kRow - 4, kKindColor[bar.kind], {}, tip.str());
      }
    }
  };
  svg.open_group("measured");
  draw_panel(a, kTop, "measured (the trace)", "real");
  svg.close_group();
  svg.open_group("simulated");
  draw_panel(b, kTop + 20 + panel_a + kPanelGap - 20, "simulated (trainsim, the same rank)", "sim");
  svg.close_group();
  chart.draw_axes();
  std::vector<LegendEntry> legend;
  for (size_t k = 0; k < kKindColor.size(); ++k) legend.push_back({kKindName[k], kKindColor[k], false});
  draw_legend(svg, kLeft, kTop + rows_h + kAxis, legend);
  return svg.str();
}

}  // namespace trainsim::traces
