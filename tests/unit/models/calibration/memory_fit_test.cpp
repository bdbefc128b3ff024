#include "models/calibration/runs/memory_fit.hpp"

#include <gtest/gtest.h>

#include "models/hardware/calibration.hpp"
#include "models/presets/catalog.hpp"

namespace trainsim::models::calibration {
namespace {

using sim::config::Json;

// A run of one stage whose true reserve is `truth`: fixed + truth * reservable is what it logged.
MemoryRun run(const std::string& stack, double fixed, double reservable, double truth, double prior = 0.05) {
  return MemoryRun{stack, fixed + truth * reservable, 0.0, prior, {StagePeak{fixed, reservable}}};
}

TEST(MemoryFit, PeakIsTheLargestStage) {
  const std::vector<StagePeak> stages{{60, 10}, {50, 40}};
  EXPECT_DOUBLE_EQ(peak_gib(stages, 0.0), 60.0);
  EXPECT_DOUBLE_EQ(peak_gib(stages, 0.5), 70.0);  // the second stage takes over
}

TEST(MemoryFit, RecoversTheReserveOfTheRuns) {
  const std::vector<MemoryRun> runs{run("torchtitan", 40, 30, 0.2), run("torchtitan", 20, 50, 0.2),
                                    run("torchtitan", 60, 10, 0.2)};
  const auto fits = fit_memory(runs);
  ASSERT_EQ(fits.size(), 1u);
  const MemoryFit& f = fits[0];
  EXPECT_TRUE(f.fitted) << f.note;
  EXPECT_NEAR(f.value, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(f.prior, 0.05);
  EXPECT_EQ(f.runs, (std::vector<size_t>{0, 1, 2}));
  EXPECT_NEAR(f.error_before[1], (20 + 0.05 * 50) / (20 + 0.2 * 50) - 1, 1e-12);
  EXPECT_LT(f.median_after, 1e-12);
  EXPECT_LT(f.median_cv, 1e-12);
  EXPECT_GT(f.median_before, 0.05);
}

// The median: one run far off (an allocator retry storm, a leak) does not move the others.
TEST(MemoryFit, OneOddRunDoesNotSetTheReserve) {
  std::vector<MemoryRun> runs{run("s", 40, 30, 0.1), run("s", 30, 30, 0.1), run("s", 50, 20, 0.1),
                              run("s", 40, 30, 0.9)};
  const MemoryFit f = fit_memory(runs).at(0);
  EXPECT_NEAR(f.value, 0.1, 1e-12);
  EXPECT_NEAR(f.error_after[0], 0.0, 1e-12);
  EXPECT_LT(f.error_after[3], -0.2);
}

// With several stages, the reserve that reproduces the peak is the one at which the first stage
// reaches it.
TEST(MemoryFit, TheFirstStageToReachThePeakSetsIt) {
  MemoryRun r{"s", 75, 0.0, 0.0, {{60, 10}, {50, 40}}};  // stage 1 reaches 75 at 0.625, stage 0 at 1.5
  MemoryRun q = r;
  q.measured_gib = 62;  // stage 0 reaches 62 at 0.2, stage 1 at 0.3
  EXPECT_NEAR(fit_memory({r, r}).at(0).value, 0.625, 1e-12);
  EXPECT_NEAR(fit_memory({q, q}).at(0).value, 0.2, 1e-12);
  EXPECT_NEAR(peak_gib(r.stages, 0.625), 75.0, 1e-12);
  EXPECT_NEAR(peak_gib(q.stages, 0.2), 62.0, 1e-12);
}

TEST(MemoryFit, KeptWithoutEvidenceForIt) {
  // One run: nothing to cross-validate.
  auto one = fit_memory({run("s", 40, 30, 0.3)});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_FALSE(one[0].fitted);
  EXPECT_EQ(one[0].value, 0.05);
  EXPECT_NE(one[0].note.find("one run"), std::string::npos);
  // Runs that disagree around the prior: each predicted from the other does worse than the prior.
  auto split = fit_memory({run("s", 40, 30, 0.0, 0.1), run("s", 40, 30, 0.2, 0.1)});
  EXPECT_FALSE(split[0].fitted);
  EXPECT_NE(split[0].note.find("leave-one-out"), std::string::npos);
  EXPECT_EQ(split[0].error_after, split[0].error_before);
  // Runs that logged no peak, or a stack of them: no fit at all.
  MemoryRun none = run("t", 40, 30, 0.2);
  none.measured_gib = 0;
  EXPECT_TRUE(fit_memory({none, none}).empty());
  // The reserve stays in the schema's range: a peak above every stage at a reserve of 1 says 1.
  const auto capped = fit_memory({run("s", 10, 10, 3.0), run("s", 10, 20, 3.0)});
  EXPECT_DOUBLE_EQ(capped[0].value, 1.0);
}

// Every run ran: the reserve stops where one of them (peak logged or not) would no longer fit.
TEST(MemoryFit, NoReserveLeavesARunThatRanWithoutMemory) {
  std::vector<MemoryRun> runs{run("s", 40, 30, 0.4), run("s", 30, 30, 0.4), run("s", 50, 20, 0.4)};
  for (auto& r : runs) r.capacity_gib = 80;
  MemoryRun silent = run("s", 60, 40, 0.0);  // logged no peak; fits up to (80 - 60) / 40 = 0.5
  silent.measured_gib = 0;
  silent.capacity_gib = 80;
  runs.push_back(silent);
  EXPECT_NEAR(fit_memory(runs).at(0).value, 0.4, 1e-12);  // below the cap
  runs[3].stages[0].fixed_gib = 70;                       // now fits up to 0.25
  const MemoryFit f = fit_memory(runs).at(0);
  EXPECT_TRUE(f.fitted);
  EXPECT_NEAR(f.value, 0.25, 1e-12);
  EXPECT_EQ(f.capped_by, 3);
  EXPECT_NE(f.note.find("capped at 0.25"), std::string::npos);
  // A run that fits at no reserve is off for another reason and caps nothing.
  runs[3].stages[0].fixed_gib = 90;
  EXPECT_NEAR(fit_memory(runs).at(0).value, 0.4, 1e-12);
}

TEST(MemoryFit, OneFitPerStackAndTheCalibrationFile) {
  const std::vector<MemoryRun> runs{run("torchtitan", 40, 30, 0.2), run("megatron-bridge-2025", 50, 20, 0.1, 0.0),
                                    run("torchtitan", 30, 40, 0.2), run("megatron-bridge-2025", 60, 30, 0.1, 0.0)};
  const auto fits = fit_memory(runs);
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_EQ(fits[0].stack, "megatron-bridge-2025");
  EXPECT_EQ(fits[0].runs, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(fits[1].stack, "torchtitan");

  Json cal = presets::find("calibrations", "h100-sxm-80gb-measured", "calibration");
  write_memory_fit(cal, fits, {"a", "b", "c", "d"});
  EXPECT_EQ(cal["stack_overrides"]["torchtitan"]["memory.allocator_fragmentation"], 0.2);
  EXPECT_EQ(cal["stack_overrides"]["megatron-bridge-2025"]["memory.allocator_fragmentation"], 0.1);
  EXPECT_NE(cal["sources"]["torchtitan.memory.allocator_fragmentation"].get<std::string>().find("2 runs"),
            std::string::npos);
  ASSERT_EQ(cal["fit"]["memory"].size(), 2u);
  EXPECT_EQ(cal["fit"]["memory"][1]["runs"][1]["id"], "c");
  // A valid calibration file, the reserve applied to jobs on that stack.
  const hardware::Calibration parsed = hardware::parse_calibration(cal, "calibration");
  EXPECT_EQ(parsed.stack_overrides["torchtitan"]["memory.allocator_fragmentation"], 0.2);
}

}  // namespace
}  // namespace trainsim::models::calibration
