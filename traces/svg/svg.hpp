#pragma once
// A small deterministic SVG writer: a canvas of primitives (rectangles, circles, lines,
// polylines, text, groups), a chart area mapping data to pixels with axes, ticks and labels
// (linear or log10), and a legend. Numbers are written with a fixed number of decimals through
// std::to_chars (locale-independent), so the same calls give the same bytes every run (conv. 13).
// No external libraries.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainsim::traces {

// `v` with exactly `decimals` decimals ("12.50"); "-0.00" is written "0.00", non-finite as "0".
std::string svg_number(double v, int decimals = 2);
// Escapes &, <, >, " and ' for text and attribute values; control characters other than tab and
// newline are dropped (XML 1.0 does not allow them).
std::string svg_escape(std::string_view s);

struct Point {
  double x = 0, y = 0;
};

class SvgCanvas {
 public:
  SvgCanvas(double width, double height);

  double width() const { return width_; }
  double height() const { return height_; }

  // A <style> block in <defs>, written once after the opening tag (e.g. ".c0{fill:#4e79a7}").
  void set_style(std::string css) { style_ = std::move(css); }

  // <g class="cls"> ... </g>; groups must be balanced before str().
  void open_group(std::string_view cls);
  void close_group();

  // `fill` and `stroke` are SVG paints ("#4e79a7", "none"); empty means "not written".
  // `cls` is a class attribute (empty: none); `tooltip` becomes a <title> child (empty: none).
  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view cls = {},
            std::string_view tooltip = {});
  void circle(double cx, double cy, double r, std::string_view fill, std::string_view stroke = {},
              std::string_view tooltip = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width = 1,
            std::string_view dash = {});
  void polyline(const std::vector<Point>& points, std::string_view stroke, double stroke_width = 1);
  // anchor: "start", "middle" or "end"; rotate: degrees about (x, y).
  void text(double x, double y, std::string_view s, double size = 12, std::string_view anchor = "start",
            std::string_view fill = "#222", double rotate = 0, std::string_view weight = {});

  // The whole document, "<svg ...>...</svg>\n". Throws InternalError if groups are unbalanced.
  std::string str() const;
  size_t size_bytes() const { return body_.size(); }

 private:
  double width_, height_;
  std::string style_;
  std::string body_;
  int depth_ = 0;
};

// One axis of a chart: the data range [lo, hi] and how it maps to pixels.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;           // log10 scale (lo and hi must be > 0)
  std::string label;          // written beside the axis
  std::vector<double> ticks;  // explicit tick positions; empty: "nice" ticks chosen automatically
  bool no_ticks = false;      // no ticks, labels or grid (a timeline's row axis)
};

// Round-number tick positions covering [lo, hi], about `target` of them (1, 2 or 5 times a power
// of ten apart); for a log axis, the powers of ten inside the range (with 2 and 5 times them when
// the range spans fewer than three decades).
std::vector<double> nice_ticks(double lo, double hi, int target, bool log);
// A tick label: the fewest decimals (up to 6) that tell ticks `step` apart, with "k"/"M" never used.
std::string tick_label(double v, double step);

// A chart area of a canvas: data coordinates to pixels, axes with ticks, labels and a light grid.
class Chart {
 public:
  // The plot area is the rectangle (left, top, width, height) in canvas pixels.
  Chart(SvgCanvas& canvas, double left, double top, double width, double height, Axis x, Axis y);

  double px(double x) const;
  double py(double y) const;
  double left() const { return left_; }
  double top() const { return top_; }
  double width() const { return width_; }
  double height() const { return height_; }

  // The frame, ticks, tick labels, grid lines and axis labels, in a <g class="axes">.
  void draw_axes();

 private:
  SvgCanvas& canvas_;
  double left_, top_, width_, height_;
  Axis x_, y_;
};

struct LegendEntry {
  std::string label;
  std::string color;
  bool marker = false;  // a circle instead of a square swatch
};

// A legend box with its top-left corner at (x, y), one entry per row, in a <g class="legend">.
// Returns the height it took.
double draw_legend(SvgCanvas& canvas, double x, double y, const std::vector<LegendEntry>& entries);

// Writes `svg` to `path`; throws ConfigError{option, "cannot write <path>", hint} on failure.
void write_svg_file(const std::string& path, const std::string& svg, const std::string& option);

}  // namespace trainsim::traces
