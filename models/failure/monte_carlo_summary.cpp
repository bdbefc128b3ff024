// Many runs of the Monte Carlo and their statistics (monte_carlo.hpp).
#include <algorithm>
#include <cmath>

#include "models/failure/monte_carlo.hpp"
#include "sim/log.hpp"

namespace trainsim::models::failure {

using sim::config::Json;

const char* to_string(Cause c) {
  switch (c) {
    case Cause::kCheckpointWrite: return "checkpoint_write";
    case Cause::kDetection: return "detection";
    case Cause::kDiagnosis: return "diagnosis";
    case Cause::kSpareWait: return "spare_wait";
    case Cause::kRestart: return "restart";
    case Cause::kCheckpointRead: return "checkpoint_read";
    case Cause::kRedoneWork: return "redone_work";
    case Cause::kStragglers: return "stragglers";
    case Cause::kElastic: return "elastic";
    case Cause::kCount: break;
  }
  return "?";
}

Json Quantiles::to_json(double scale) const {
  return Json{{"mean", mean * scale}, {"p10", p10 * scale}, {"p50", p50 * scale}, {"p90", p90 * scale}};
}

namespace {

Quantiles quantiles(std::vector<double> v) {
  Quantiles q;
  if (v.empty()) return q;
  double sum = 0;
  for (double x : v) sum += x;
  q.mean = sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  auto at = [&](double f) { return v[static_cast<size_t>(std::llround(f * static_cast<double>(v.size() - 1)))]; };
  q.p10 = at(0.1);
  q.p50 = at(0.5);
  q.p90 = at(0.9);
  return q;
}

}  // namespace

MonteCarloSummary run_monte_carlo(const MonteCarloConfig& config, uint64_t seed, int64_t runs) {
  if (runs < 1) throw ConfigError("--runs", "must be at least 1");
  MonteCarloSummary s;
  s.runs = runs;
  s.lost_by_kind_s.assign(config.failures.size(), 0.0);
  s.failures_by_kind.assign(config.failures.size(), 0.0);
  std::vector<double> wall, work, inter;
  wall.reserve(static_cast<size_t>(runs));
  double ettr = 0;
  for (int64_t r = 0; r < runs; ++r) {
    const RunOutcome o = simulate_run(config, seed, static_cast<uint64_t>(r));
    wall.push_back(o.wall);
    work.push_back(o.work);
    inter.push_back(static_cast<double>(o.interruptions));
    ettr += o.work / o.wall;
    for (size_t i = 0; i < kCauses; ++i) s.lost_s[i] += o.lost[i];
    for (size_t k = 0; k < config.failures.size(); ++k) {
      s.lost_by_kind_s[k] += o.lost_by_kind[k];
      s.failures_by_kind[k] += static_cast<double>(o.failures_by_kind[k]);
    }
  }
  const double n = static_cast<double>(runs);
  s.ettr = ettr / n;
  for (auto& x : s.lost_s) x /= n;
  for (auto& x : s.lost_by_kind_s) x /= n;
  for (auto& x : s.failures_by_kind) x /= n;
  s.wall_s = quantiles(std::move(wall));
  s.work_s = quantiles(std::move(work));
  s.interruptions = quantiles(std::move(inter));
  TRAINSIM_LOG_DEBUG(kFailure, "Monte Carlo: ", runs, " runs (seed ", seed, "), checkpoint interval ",
                     config.interval.seconds(), " s: wall mean ", s.wall_s.mean / 86400.0, " days (p10 ",
                     s.wall_s.p10 / 86400.0, ", p90 ", s.wall_s.p90 / 86400.0, "), ", s.interruptions.mean,
                     " interruptions per run, ETTR ", s.ettr);
  return s;
}

double monte_carlo_cost(const MonteCarloConfig& config, uint64_t seed, int64_t runs) {
  double sum = 0;
  for (int64_t r = 0; r < runs; ++r) {
    const RunOutcome o = simulate_run(config, seed, static_cast<uint64_t>(r));
    sum += config.work ? o.wall : -o.work;
  }
  TRAINSIM_LOG_DEBUG(kFailure, "Monte Carlo cost: ", runs, " runs (seed ", seed, "), checkpoint interval ",
                     config.interval.seconds(), " s: mean ", config.work ? "wall " : "negated work ",
                     sum / static_cast<double>(runs) / 86400.0, " days");
  return sum / static_cast<double>(runs);
}

}  // namespace trainsim::models::failure
