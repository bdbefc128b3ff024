// The real-vs-simulated plot (traces/kineto/plot.*): both panels, one row per stream, bars in the
// three colours, balanced markup, the step difference in the subtitle, same input same bytes.
#include "traces/kineto/plot.hpp"

#include <gtest/gtest.h>

#include <set>

#include "tests/unit/traces/count_occurrences.hpp"
#include "tests/unit/traces/kineto_test_job.hpp"
#include "traces/kineto/compare.hpp"

namespace trainsim::traces {
namespace {

using testing::count;

TEST(KinetoPlot, BothPanelsOnOneAxis) {
  const KinetoTrace real = load_kineto_trace(test::kExampleTrace);
  const KinetoComparison c = compare_kineto(real, test::kExampleTrace, test::example_job());
  const std::string svg = kineto_compare_svg(real, c.simulated_trace, "example");
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(count(svg, "<g"), count(svg, "</g>"));
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
  EXPECT_NE(svg.find("measured (the trace)"), std::string::npos);
  EXPECT_NE(svg.find("simulated (trainsim, the same rank)"), std::string::npos);
  // The example is trainsim's own export of this job: the same streams in both panels, and no
  // difference in the step.
  std::set<int64_t> streams;
  for (const KinetoKernel& k : real.kernels) streams.insert(k.stream);
  EXPECT_EQ(count(svg, ">real stream "), streams.size());
  EXPECT_EQ(count(svg, ">sim stream "), streams.size());
  EXPECT_NE(svg.find("(+0.0%)"), std::string::npos) << svg.substr(0, 800);
  EXPECT_GT(count(svg, "fill=\"#4e79a7\""), 10u);  // compute bars
  EXPECT_GT(count(svg, "fill=\"#e15759\""), 2u);   // NCCL bars
  EXPECT_EQ(svg, kineto_compare_svg(real, c.simulated_trace, "example"));
}

// A trace whose kernels all ran 1.25x longer shows a longer measured step than the simulated one.
TEST(KinetoPlot, SlowerTraceShowsTheDifference) {
  KinetoTrace real = load_kineto_trace(test::kExampleTrace);
  const KinetoComparison c = compare_kineto(real, test::kExampleTrace, test::example_job());
  for (KinetoKernel& k : real.kernels) {
    k.start = sim::Time::ns(k.start.count_ns() * 5 / 4);
    k.duration = sim::Time::ns(k.duration.count_ns() * 5 / 4);
  }
  for (KinetoStep& s : real.steps) {
    s.start = sim::Time::ns(s.start.count_ns() * 5 / 4);
    s.end = sim::Time::ns(s.end.count_ns() * 5 / 4);
  }
  const std::string svg = kineto_compare_svg(real, c.simulated_trace, "slower");
  EXPECT_NE(svg.find("(-20.0%)"), std::string::npos) << svg.substr(0, 800);
}

}  // namespace
}  // namespace trainsim::traces
