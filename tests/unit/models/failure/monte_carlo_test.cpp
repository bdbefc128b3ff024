// The Monte Carlo against closed forms: Daly's expected wall clock for exponential failures,
// interruptions = rate x exposure, the time identity (wall = work + every loss), determinism.
#include "models/failure/monte_carlo.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "models/failure/young_daly.hpp"

namespace trainsim::models::failure {
namespace {

using sim::Time;

const FailureLawInfo& law(const char* name) { return FailureLawRegistry::instance().get(name, "law"); }

// One exponential process of `count` components at `mtbf_h` for the whole job; checkpoints stall
// `delta`, recovery is exactly `restart` (no detection, diagnosis or read), no stragglers.
MonteCarloConfig daly_setup(double mtbf_h, Time delta, Time restart, Time work, Time interval) {
  MonteCarloConfig c;
  c.work = work;
  FailureProcess f;
  f.kind = "gpu";
  f.count = 1000;
  f.law = &law("exponential");
  f.params.rate = 1.0 / (mtbf_h * 1000.0);
  c.failures.push_back(f);
  c.restart = restart;
  c.checkpoint.stall = delta;
  c.interval = interval;
  return c;
}

TEST(MonteCarlo, MatchesDalysExpectedTimeForExponentialFailures) {
  const Time delta = Time::s(300), restart = Time::s(600), work = Time::s(30 * 86400), mtbf = Time::s(10 * 3600);
  for (const Time tau : {Time::s(1800), Time::s(3600), Time::s(4 * 3600)}) {
    const MonteCarloConfig c = daly_setup(10.0, delta, restart, work, tau);
    const MonteCarloSummary s = run_monte_carlo(c, 7, 2000);
    const double daly = daly_expected_time(work, tau, delta, restart, mtbf).seconds();
    // Standard error of the mean is about 0.2% here; 1% is five of them.
    EXPECT_NEAR(s.wall_s.mean / daly, 1.0, 0.01) << "tau " << tau.seconds();
  }
}

TEST(MonteCarlo, InterruptionsAreRateTimesExposure) {
  const MonteCarloConfig c = daly_setup(5.0, Time::s(120), Time::s(900), Time::s(20 * 86400), Time::s(3600));
  const MonteCarloSummary s = run_monte_carlo(c, 3, 2000);
  // Failures arrive on the wall clock (also during recovery): E[N] = E[wall] / MTBF.
  EXPECT_NEAR(s.interruptions.mean / (s.wall_s.mean / (5.0 * 3600.0)), 1.0, 0.01);
}

TEST(MonteCarlo, NoFailuresCostsOnlyTheCheckpoints) {
  MonteCarloConfig c = daly_setup(1e12, Time::s(60), Time::s(600), Time::s(100 * 3600), Time::s(3600));
  const RunOutcome o = simulate_run(c, 1, 0);
  EXPECT_EQ(o.interruptions, 0);
  // 100 checkpoints (the last one at the end) of a minute each; the periodic skip must be exact.
  EXPECT_NEAR(o.wall, 100 * 3600.0 + 100 * 60.0, 1e-6);
  c.work.reset();
  c.horizon = Time::s(10 * 3600);
  const RunOutcome h = simulate_run(c, 1, 0);
  EXPECT_NEAR(h.wall, 10 * 3600.0, 1e-9);
  // 9 checkpoints complete in 10 h (9 x 61 min = 9 h 9 min), then 51 minutes of work.
  EXPECT_NEAR(h.work, 9 * 3600.0 + 51 * 60.0, 1e-6);
}

// Every second of the wall clock is compute kept, or one of the causes.
void expect_time_identity(const MonteCarloConfig& c, int runs) {
  for (int r = 0; r < runs; ++r) {
    const RunOutcome o = simulate_run(c, 11, static_cast<uint64_t>(r));
    double lost = 0;
    for (double x : o.lost) lost += x;
    EXPECT_NEAR(o.wall, o.work + lost, 1e-6 * o.wall) << "run " << r;
    double by_kind = 0;
    for (double x : o.lost_by_kind) by_kind += x;
    const auto at = [&](Cause k) { return o.lost[static_cast<size_t>(k)]; };
    // What failures cost, by component, is everything but checkpoint writes, stragglers and elastic.
    EXPECT_NEAR(by_kind,
                at(Cause::kDetection) + at(Cause::kDiagnosis) + at(Cause::kSpareWait) + at(Cause::kRestart) +
                    at(Cause::kCheckpointRead) + at(Cause::kRedoneWork),
                1e-6 * o.wall);
  }
}

MonteCarloConfig rich_setup() {
  MonteCarloConfig c;
  c.work = Time::s(20 * 86400);
  FailureProcess gpu{"gpu", 4096, &law("exponential"), LawParams{1e-5, 1, 0}, Time::s(60), true};
  FailureProcess sw{"software", 512, &law("weibull"), LawParams{2e-5, 0.7, 0}, Time::s(600), false};
  c.failures = {gpu, sw};
  c.stragglers = {StragglerProcess{"slow_gpu", 0.2, Time::s(1800), 1.4, true},
                  StragglerProcess{"slow_link", 0.1, Time::s(7200), 1.1, false}};
  c.diagnosis = Time::s(300);
  c.restart = Time::s(600);
  c.repair = Time::s(48 * 3600);
  c.checkpoint.stall = Time::s(5);
  c.checkpoint.persist = Time::s(90);
  c.checkpoint.interference = 0.02;
  c.checkpoint.interference_window = Time::s(95);
  c.checkpoint.restore = Time::s(120);
  c.interval = Time::s(1200);
  c.spares = 2;
  c.dp = 64;
  c.nodes_per_replica = 4;
  return c;
}

TEST(MonteCarlo, WallClockIsWorkPlusEveryLoss) {
  MonteCarloConfig c = rich_setup();
  expect_time_identity(c, 20);
  c.elastic = true;
  c.spares = 0;
  expect_time_identity(c, 20);
  c.checkpoint.persist = Time::s(2000);  // longer than the interval: checkpoints wait for the last write
  expect_time_identity(c, 20);
}

TEST(MonteCarlo, SparesElasticAndWaiting) {
  MonteCarloConfig c = rich_setup();
  c.spares = 0;
  const MonteCarloSummary waiting = run_monte_carlo(c, 5, 50);
  EXPECT_GT(waiting.lost_s[static_cast<size_t>(Cause::kSpareWait)], 0);
  EXPECT_EQ(waiting.lost_s[static_cast<size_t>(Cause::kElastic)], 0);
  c.elastic = true;
  const MonteCarloSummary elastic = run_monte_carlo(c, 5, 50);
  EXPECT_EQ(elastic.lost_s[static_cast<size_t>(Cause::kSpareWait)], 0);
  EXPECT_GT(elastic.lost_s[static_cast<size_t>(Cause::kElastic)], 0);
  // Going on at 63/64 of the speed beats waiting two days for a repaired node.
  EXPECT_LT(elastic.wall_s.mean, waiting.wall_s.mean);
  c.elastic = false;
  c.spares = 1000;
  const MonteCarloSummary plenty = run_monte_carlo(c, 5, 50);
  EXPECT_EQ(plenty.lost_s[static_cast<size_t>(Cause::kSpareWait)], 0);
}

TEST(MonteCarlo, AFailureDuringASpareWaitDoesNotCutTheWaitShort) {
  // GPU failures need a node and there is none: each waits for a repaired one (48 h). Software
  // failures, however frequent, cannot shorten that wait (nothing runs while the job waits).
  MonteCarloConfig c = rich_setup();
  c.stragglers.clear();
  c.spares = 0;
  c.failures[1].law = &law("exponential");
  c.failures[1].params.shape = 1;
  auto wait_per_gpu_failure = [&](double software_rate) {
    c.failures[1].params.rate = software_rate;
    const MonteCarloSummary s = run_monte_carlo(c, 4, 100);
    return s.lost_s[static_cast<size_t>(Cause::kSpareWait)] / s.failures_by_kind[0];
  };
  const double rare = wait_per_gpu_failure(1e-12), frequent = wait_per_gpu_failure(1e-3);
  EXPECT_GT(rare, 10 * 3600.0);
  EXPECT_NEAR(frequent / rare, 1.0, 0.15);
}

TEST(MonteCarlo, SkippingCyclesIsExact) {
  for (const bool elastic : {false, true}) {
    MonteCarloConfig c = rich_setup();
    c.elastic = elastic;
    c.spares = elastic ? 0 : 2;
    MonteCarloConfig step = c;
    step.skip_cycles = false;
    for (uint64_t r = 0; r < 10; ++r) {
      const RunOutcome a = simulate_run(c, 21, r), b = simulate_run(step, 21, r);
      EXPECT_EQ(a.interruptions, b.interruptions) << "run " << r;
      EXPECT_NEAR(a.wall / b.wall, 1.0, 1e-9) << "run " << r;
      for (size_t i = 0; i < kCauses; ++i) EXPECT_NEAR(a.lost[i], b.lost[i], 1e-6 * a.wall) << "cause " << i;
    }
  }
}

TEST(MonteCarlo, AnEvictionsCheckpointIsRestorableOnlyOnceWritten) {
  // Slow GPUs found at once and evicted; each eviction's checkpoint takes an hour to write, and a
  // GPU failure lands in that hour: the work since the last regular checkpoint is redone.
  MonteCarloConfig c = daly_setup(1e12, Time::s(1), Time::s(60), Time::s(200 * 3600), Time::s(10 * 3600));
  c.checkpoint.persist = Time::s(3600);
  c.spares = 100;
  c.stragglers = {StragglerProcess{"slow_gpu", 0.05, Time::s(0), 1.5, true}};
  c.failures[0].params.rate = 1.0 / (2.0 * 1000.0);  // 2 h MTBF: often inside the hour
  const MonteCarloSummary s = run_monte_carlo(c, 8, 200);
  EXPECT_GT(s.lost_s[static_cast<size_t>(Cause::kRedoneWork)], 0);
  expect_time_identity(c, 10);
}

TEST(MonteCarlo, SameSeedSameRunsOtherSeedOtherRuns) {
  const MonteCarloConfig c = rich_setup();
  const RunOutcome a = simulate_run(c, 42, 3), b = simulate_run(c, 42, 3), d = simulate_run(c, 43, 3);
  EXPECT_EQ(a.wall, b.wall);
  EXPECT_EQ(a.interruptions, b.interruptions);
  EXPECT_EQ(a.lost, b.lost);
  EXPECT_NE(a.wall, d.wall);
}

TEST(MonteCarlo, StragglersCostTheirSlowdownWhileUndetected) {
  MonteCarloConfig c = daly_setup(1e12, Time::s(1), Time::s(0), Time::s(1000 * 3600), Time::s(3600));
  // One onset per 10 hours, 1 hour to find, iterations 1.5x slower meanwhile, routed around.
  c.stragglers = {StragglerProcess{"slow_link", 0.1, Time::s(3600), 1.5, false}};
  const MonteCarloSummary s = run_monte_carlo(c, 9, 400);
  // Onsets while one straggler is active are not counted again (one is found at a time), so they
  // take effect at lambda / (1 + lambda D) = 1 per 11 hours, each costing 1 h x (1 - 1/1.5) = 20 min.
  const double expected = s.wall_s.mean / (11 * 3600.0) * 1200.0;
  EXPECT_NEAR(s.lost_s[static_cast<size_t>(Cause::kStragglers)] / expected, 1.0, 0.05);
}

TEST(MonteCarlo, WeibullInfantMortalityFailsEarlier) {
  MonteCarloConfig c = daly_setup(2.0, Time::s(60), Time::s(600), Time::s(0), Time::s(3600));
  c.work.reset();
  c.horizon = Time::s(7 * 86400);
  const MonteCarloSummary expo = run_monte_carlo(c, 2, 500);
  c.failures[0].law = &law("weibull");
  c.failures[0].params.shape = 1.0;
  const MonteCarloSummary shape1 = run_monte_carlo(c, 2, 500);
  EXPECT_NEAR(shape1.interruptions.mean / expo.interruptions.mean, 1.0, 0.03);
  c.failures[0].params.shape = 0.5;
  const MonteCarloSummary infant = run_monte_carlo(c, 2, 500);
  // A new cohort with a decreasing hazard fails more in its first week than its long-run rate.
  EXPECT_GT(infant.interruptions.mean, 1.3 * expo.interruptions.mean);
}

TEST(MonteCarlo, RejectsImpossibleConfigurations) {
  MonteCarloConfig c = daly_setup(10, Time::s(1), Time::s(1), Time::s(3600), Time::s(0));
  EXPECT_THROW(simulate_run(c, 0, 0), ConfigError);
  c.interval = Time::s(60);
  c.horizon = Time::s(60);
  EXPECT_THROW(simulate_run(c, 0, 0), ConfigError);
}

}  // namespace
}  // namespace trainsim::models::failure
