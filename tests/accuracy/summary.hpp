#pragma once
// The README's accuracy table (tests/accuracy/summary.json): its rows are templates whose figures
// ({key}) the suites measure. Each suite checks its figures here, as printed, so a change that moves
// a median or a maximum fails until summary.json says so; tests/readme/readme_test.cpp renders the
// table from the same file and checks README.md against it (docs.readme.*).

#include <string>

#include "accuracy_common.hpp"

namespace trainsim::accuracy {

// The figure texts summary.json holds: an absolute error (5.1%, 23%: one decimal below 20%), a
// signed error (-71%), a count (1,440), a ratio (1.10x), a number with `digits` decimals.
std::string error_text(double e);
std::string signed_error_text(double e);
std::string count_text(int64_t n);
std::string ratio_text(double r);
std::string number_text(double v, int digits);

// The figure `key` of summary.json must read `text`; a mismatch names the entry to write.
void expect_summary_figure(const std::string& key, const std::string& text);
// A suite's rows: "<key>.rows" (every row), "<key>.fit" (the rows that fit), "<key>.median" and
// "<key>.max" (|error| over the fitting rows); each checked when summary.json has it.
void expect_summary(const std::string& key, const Stats& s);

}  // namespace trainsim::accuracy
