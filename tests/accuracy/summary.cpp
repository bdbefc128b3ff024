#include "summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

namespace trainsim::accuracy {

namespace {
const Json& figures() {
  static const Json f = [] {
    std::ifstream in(TRAINSIM_ACCURACY_SUMMARY);
    return Json::parse(in).at("figures");
  }();
  return f;
}

std::string printed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
}  // namespace

std::string error_text(double e) { return printed(std::abs(e) < 0.1995 ? "%.1f%%" : "%.0f%%", 100.0 * e); }
std::string signed_error_text(double e) { return printed("%+.0f%%", 100.0 * e); }
std::string ratio_text(double r) { return printed("%.2fx", r); }
std::string number_text(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
std::string count_text(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void expect_summary_figure(const std::string& key, const std::string& text) {
  const Json& f = figures();
  ASSERT_TRUE(f.contains(key)) << "tests/accuracy/summary.json has no figure \"" << key << "\": add \"" << key
                               << "\": \"" << text << "\" (and regenerate README.md's table)";
  EXPECT_EQ(f.at(key).get<std::string>(), text) << "tests/accuracy/summary.json: \"" << key << "\" is now \"" << text
                                                << "\"; update it and regenerate README.md's accuracy table "
                                                   "(TRAINSIM_UPDATE_GOLDEN=1 build/tests/readme/readme_tests)";
}

void expect_summary(const std::string& key, const Stats& s) {
  const Json& f = figures();
  const bool any =
      f.contains(key + ".rows") || f.contains(key + ".fit") || f.contains(key + ".median") || f.contains(key + ".max");
  ASSERT_TRUE(any) << "tests/accuracy/summary.json has no figures \"" << key << ".*\"";
  if (f.contains(key + ".rows"))
    expect_summary_figure(key + ".rows", count_text(static_cast<int64_t>(s.n + s.not_fitting)));
  if (f.contains(key + ".fit")) expect_summary_figure(key + ".fit", count_text(static_cast<int64_t>(s.n)));
  if (f.contains(key + ".median")) expect_summary_figure(key + ".median", error_text(s.median_abs));
  if (f.contains(key + ".max")) expect_summary_figure(key + ".max", error_text(s.max_abs));
}

}  // namespace trainsim::accuracy
