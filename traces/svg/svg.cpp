#include "traces/svg/svg.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>

#include "sim/error.hpp"

namespace trainsim::traces {

std::string svg_number(double v, int decimals) {
  if (!std::isfinite(v)) return "0";
  decimals = std::clamp(decimals, 0, 9);
  char buf[400];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  TRAINSIM_ASSERT(res.ec == std::errc(), "cannot format ", v);
  std::string s(buf, res.ptr);
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);  // "-0.00"
  return s;
}

std::string svg_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') break;
        out += c;
    }
  }
  return out;
}

namespace {

void attr(std::string& out, const char* name, double v) {
  out += ' ';
  out += name;
  out += "=\"";
  out += svg_number(v);
  out += '"';
}

void attr(std::string& out, const char* name, std::string_view v) {
  if (v.empty()) return;
  out += ' ';
  out += name;
  out += "=\"";
  out += svg_escape(v);
  out += '"';
}

// Closes an element: "/>" without a tooltip, "><title>…</title></tag>" with one.
void close(std::string& out, const char* tag, std::string_view tooltip) {
  if (tooltip.empty()) {
    out += "/>\n";
    return;
  }
  out += "><title>";
  out += svg_escape(tooltip);
  out += "</title></";
  out += tag;
  out += ">\n";
}

}  // namespace

SvgCanvas::SvgCanvas(double width, double height) : width_(width), height_(height) {}

void SvgCanvas::open_group(std::string_view cls) {
  body_ += "<g";
  attr(body_, "class", cls);
  body_ += ">\n";
  ++depth_;
}

void SvgCanvas::close_group() {
  TRAINSIM_ASSERT(depth_ > 0, "close_group without open_group");
  body_ += "</g>\n";
  --depth_;
}

void SvgCanvas::rect(double x, double y, double w, double h, std::string_view fill, std::string_view cls,
                     std::string_view tooltip) {
  body_ += "<rect";
  attr(body_, "class", cls);
  attr(body_, "x", x);
  attr(body_, "y", y);
  attr(body_, "width", std::max(0.0, w));
  attr(body_, "height", std::max(0.0, h));
  attr(body_, "fill", fill);
  close(body_, "rect", tooltip);
}

void SvgCanvas::circle(double cx, double cy, double r, std::string_view fill, std::string_view stroke,
                       std::string_view tooltip) {
  body_ += "<circle";
  attr(body_, "cx", cx);
  attr(body_, "cy", cy);
  attr(body_, "r", r);
  attr(body_, "fill", fill);
  attr(body_, "stroke", stroke);
  close(body_, "circle", tooltip);
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width,
                     std::string_view dash) {
  body_ += "<line";
  attr(body_, "x1", x1);
  attr(body_, "y1", y1);
  attr(body_, "x2", x2);
  attr(body_, "y2", y2);
  attr(body_, "stroke", stroke);
  attr(body_, "stroke-width", stroke_width);
  attr(body_, "stroke-dasharray", dash);
  body_ += "/>\n";
}

void SvgCanvas::polyline(const std::vector<Point>& points, std::string_view stroke, double stroke_width) {
  body_ += "<polyline points=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    if (i) body_ += ' ';
    body_ += svg_number(points[i].x);
    body_ += ',';
    body_ += svg_number(points[i].y);
  }
  body_ += "\" fill=\"none\"";
  attr(body_, "stroke", stroke);
  attr(body_, "stroke-width", stroke_width);
  body_ += "/>\n";
}

void SvgCanvas::text(double x, double y, std::string_view s, double size, std::string_view anchor,
                     std::string_view fill, double rotate, std::string_view weight) {
  body_ += "<text";
  attr(body_, "x", x);
  attr(body_, "y", y);
  attr(body_, "font-size", size);
  if (anchor != "start") attr(body_, "text-anchor", anchor);
  attr(body_, "fill", fill);
  attr(body_, "font-weight", weight);
  if (rotate != 0) {
    body_ += " transform=\"rotate(";
    body_ += svg_number(rotate);
    body_ += ' ';
    body_ += svg_number(x);
    body_ += ' ';
    body_ += svg_number(y);
    body_ += ")\"";
  }
  body_ += '>';
  body_ += svg_escape(s);
  body_ += "</text>\n";
}

std::string SvgCanvas::str() const {
  TRAINSIM_ASSERT(depth_ == 0, "unbalanced SVG groups: ", depth_, " open");
  std::string out;
  out.reserve(body_.size() + style_.size() + 512);
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"";
  out += svg_number(width_, 0);
  out += "\" height=\"";
  out += svg_number(height_, 0);
  out += "\" viewBox=\"0 0 ";
  out += svg_number(width_, 0);
  out += ' ';
  out += svg_number(height_, 0);
  out += "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
  if (!style_.empty()) {
    out += "<defs><style>";
    out += style_;  // CSS: written as given (callers pass fixed class rules)
    out += "</style></defs>\n";
  }
  out += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  out += body_;
  out += "</svg>\n";
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target, bool log) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  if (log) {
    if (lo <= 0) return ticks;
    const int first = static_cast<int>(std::floor(std::log10(lo) - 1e-9));
    const int last = static_cast<int>(std::ceil(std::log10(hi) + 1e-9));
    const bool fine = std::log10(hi / lo) < 2.5;  // fewer than about three decades
    for (int e = first; e <= last; ++e) {
      const double p = std::pow(10.0, e);
      for (const double m : {1.0, 2.0, 5.0}) {
        if (m != 1.0 && !fine) continue;
        const double v = m * p;
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
      }
    }
    return ticks;
  }
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  const double start = std::ceil(lo / step - 1e-9);
  for (double k = start;; k += 1) {
    const double v = k * step;
    if (v > hi + step * 1e-9) break;
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

std::string tick_label(double v, double step) {
  int decimals = 0;
  if (step > 0 && std::isfinite(step)) {
    decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    decimals = std::clamp(decimals, 0, 6);
  }
  // Trim trailing zeros that the step does not need (e.g. log ticks 0.5, 1, 2).
  std::string s = svg_number(v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

Chart::Chart(SvgCanvas& canvas, double left, double top, double width, double height, Axis x, Axis y)
    : canvas_(canvas), left_(left), top_(top), width_(width), height_(height), x_(std::move(x)), y_(std::move(y)) {
  TRAINSIM_ASSERT(!x_.log || x_.lo > 0, "log axis needs a positive range");
  TRAINSIM_ASSERT(!y_.log || y_.lo > 0, "log axis needs a positive range");
}

namespace {
double fraction(const Axis& a, double v) {
  if (a.log) {
    const double lo = std::log10(a.lo), hi = std::log10(a.hi);
    return hi > lo ? (std::log10(std::max(v, 1e-300)) - lo) / (hi - lo) : 0.5;
  }
  return a.hi > a.lo ? (v - a.lo) / (a.hi - a.lo) : 0.5;
}

double label_step(const std::vector<double>& ticks, const Axis& a) {
  if (a.log) return 0;  // per-tick below
  return ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
}

std::string axis_tick_label(const Axis& a, const std::vector<double>& ticks, double v) {
  if (a.log) return tick_label(v, v >= 1 ? 1 : v);
  return tick_label(v, label_step(ticks, a));
}
}  // namespace

double Chart::px(double x) const { return left_ + fraction(x_, x) * width_; }
double Chart::py(double y) const { return top_ + (1 - fraction(y_, y)) * height_; }

void Chart::draw_axes() {
  canvas_.open_group("axes");
  const std::vector<double> xt =
      x_.no_ticks ? std::vector<double>{} : (x_.ticks.empty() ? nice_ticks(x_.lo, x_.hi, 8, x_.log) : x_.ticks);
  const std::vector<double> yt =
      y_.no_ticks ? std::vector<double>{} : (y_.ticks.empty() ? nice_ticks(y_.lo, y_.hi, 6, y_.log) : y_.ticks);
  const double bottom = top_ + height_;
  for (const double v : xt) {
    const double x = px(v);
    canvas_.line(x, top_, x, bottom, "#e6e6e6", 1);
    canvas_.line(x, bottom, x, bottom + 5, "#444", 1);
    canvas_.text(x, bottom + 18, axis_tick_label(x_, xt, v), 11, "middle", "#444");
  }
  for (const double v : yt) {
    const double y = py(v);
    canvas_.line(left_, y, left_ + width_, y, "#e6e6e6", 1);
    canvas_.line(left_ - 5, y, left_, y, "#444", 1);
    canvas_.text(left_ - 8, y + 4, axis_tick_label(y_, yt, v), 11, "end", "#444");
  }
  canvas_.line(left_, bottom, left_ + width_, bottom, "#444", 1);
  canvas_.line(left_, top_, left_, bottom, "#444", 1);
  if (!x_.label.empty()) canvas_.text(left_ + width_ / 2, bottom + 40, x_.label, 13, "middle", "#222");
  if (!y_.label.empty()) canvas_.text(left_ - 50, top_ + height_ / 2, y_.label, 13, "middle", "#222", -90);
  canvas_.close_group();
}

double draw_legend(SvgCanvas& canvas, double x, double y, const std::vector<LegendEntry>& entries) {
  constexpr double kRow = 18;
  size_t longest = 0;
  for (const auto& e : entries) longest = std::max(longest, e.label.size());
  const double w = 30 + 6.5 * static_cast<double>(longest);
  const double h = 8 + kRow * static_cast<double>(entries.size());
  canvas.open_group("legend");
  canvas.rect(x, y, w, h, "#ffffff");
  canvas.line(x, y, x + w, y, "#bbb");
  canvas.line(x, y + h, x + w, y + h, "#bbb");
  canvas.line(x, y, x, y + h, "#bbb");
  canvas.line(x + w, y, x + w, y + h, "#bbb");
  for (size_t i = 0; i < entries.size(); ++i) {
    const double ry = y + 4 + kRow * static_cast<double>(i);
    if (entries[i].marker)
      canvas.circle(x + 13, ry + 9, 5, entries[i].color);
    else
      canvas.rect(x + 7, ry + 3, 12, 12, entries[i].color);
    canvas.text(x + 25, ry + 13, entries[i].label, 11);
  }
  canvas.close_group();
  return h;
}

void write_svg_file(const std::string& path, const std::string& svg, const std::string& option) {
  const char* hint = "check that the directory exists and is writable";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f.is_open()) throw ConfigError(option, "cannot write " + path, hint);
  f.write(svg.data(), static_cast<std::streamsize>(svg.size()));
  f.flush();
  if (!f) throw ConfigError(option, "cannot write " + path, hint);
}

}  // namespace trainsim::traces
