#include "traces/svg/svg.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/error.hpp"
#include "tests/unit/traces/count_occurrences.hpp"

namespace trainsim::traces {
namespace {

using testing::count;

std::string sample() {
  SvgCanvas svg(400, 300);
  svg.set_style(".a{fill:#123456}");
  Chart chart(svg, 60, 20, 300, 200, Axis{0, 10, false, "x <units>", {}}, Axis{1, 1000, true, "y", {}});
  chart.draw_axes();
  svg.open_group("data");
  svg.rect(chart.px(1), chart.py(10), 10, 10, "#ff0000", "a", "tip \"1\" & <2>");
  svg.circle(chart.px(2), chart.py(100), 3, "#00ff00");
  svg.polyline({{0, 0}, {1.005, 2.5}}, "#000");
  svg.line(0, 0, 5, 5, "#000", 1, "4 2");
  svg.text(5, 5, "a < b & c", 10, "middle");
  svg.close_group();
  draw_legend(svg, 10, 10, {{"one", "#111111", false}, {"two", "#222222", true}});
  return svg.str();
}

TEST(SvgNumber, FixedDecimalsAndNoNegativeZero) {
  EXPECT_EQ(svg_number(1.0), "1.00");
  EXPECT_EQ(svg_number(-0.001), "0.00");
  EXPECT_EQ(svg_number(12.345, 1), "12.3");
  EXPECT_EQ(svg_number(2.5, 0), "2");
  EXPECT_EQ(svg_number(1.0 / 0.0), "0");
}

TEST(SvgEscape, EscapesMarkupAndDropsControlCharacters) {
  EXPECT_EQ(svg_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(svg_escape(std::string("x\x01y")), "xy");
}

TEST(Svg, WellFormedAndBalanced) {
  const std::string s = sample();
  EXPECT_EQ(s.rfind("<svg ", 0), 0u);
  EXPECT_EQ(s.substr(s.size() - 7), "</svg>\n");
  EXPECT_EQ(count(s, "<g"), count(s, "</g>"));
  EXPECT_EQ(count(s, "<text"), count(s, "</text>"));
  EXPECT_EQ(count(s, "<title>"), count(s, "</title>"));
  EXPECT_NE(s.find("a &lt; b &amp; c"), std::string::npos);
  EXPECT_NE(s.find("x &lt;units&gt;"), std::string::npos);
  EXPECT_NE(s.find("<title>tip &quot;1&quot; &amp; &lt;2&gt;</title>"), std::string::npos);
  EXPECT_EQ(s.find("a < b"), std::string::npos);
  EXPECT_NE(s.find("points=\"0.00,0.00 1.00,2.50\""), std::string::npos);  // round half to even at 2 dp is fine
}

TEST(Svg, SameCallsSameBytes) { EXPECT_EQ(sample(), sample()); }

TEST(Svg, UnbalancedGroupsAreAnInternalError) {
  SvgCanvas svg(10, 10);
  svg.open_group("x");
  EXPECT_THROW((void)svg.str(), InternalError);
}

TEST(NiceTicks, LinearAndLog) {
  EXPECT_EQ(nice_ticks(0, 10, 5, false), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(1, 1000, 5, true), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(nice_ticks(1, 10, 5, true), (std::vector<double>{1, 2, 5, 10}));
  EXPECT_EQ(tick_label(0.5, 0.1), "0.5");
  EXPECT_EQ(tick_label(20, 5), "20");
}

TEST(Svg, UnwritablePathIsAConfigError) {
  try {
    write_svg_file("/nonexistent/dir/x.svg", "<svg/>", "--plot");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "--plot");
    EXPECT_EQ(e.message(), "cannot write /nonexistent/dir/x.svg");
  }
}

}  // namespace
}  // namespace trainsim::traces
