#pragma once
// Monte Carlo of a whole training run under failures. Each run follows the wall clock:
//   training advances at full speed (or slower while a straggler, a lost replica or a background
//   checkpoint copy holds it back) and checkpoints every `interval` of work;
//   component failures arrive from every failure process (law.hpp) on the wall clock, also during
//   recovery; a failure rolls the work back to the last restorable checkpoint and starts a
//   recovery: detection, diagnosis, waiting for a spare node when the failed hardware must be
//   swapped and none is free (or, elastic, going on without one data-parallel replica), restart,
//   checkpoint read. A failure during recovery starts it over.
//   stragglers slow the run from their onset until found; a slow GPU is then evicted (checkpoint,
//   restart on a spare; with no spare free and no elastic shrinking it stays until the next
//   restart), a degraded link is routed around.
// Runs are independent and seeded by (seed, run index): the same inputs give the same numbers
// whatever else runs. The configuration is typed (sim::Time); a run samples continuous times and
// reports them, and the statistics over runs, as seconds in doubles (means of many runs are not
// whole nanoseconds).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/failure/checkpoint.hpp"
#include "models/failure/law.hpp"
#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::models::failure {

// Where the wall clock beyond the failure-free compute goes.
enum class Cause : uint8_t {
  kCheckpointWrite,  // stalls and background-copy slowdowns
  kDetection,
  kDiagnosis,
  kSpareWait,
  kRestart,
  kCheckpointRead,
  kRedoneWork,  // work lost since the last restorable checkpoint, done again
  kStragglers,  // slowed iterations and evictions
  kElastic,     // running with fewer data-parallel replicas
  kCount
};
inline constexpr size_t kCauses = static_cast<size_t>(Cause::kCount);
const char* to_string(Cause c);

struct FailureProcess {
  std::string kind;
  int64_t count = 0;                    // components
  const FailureLawInfo* law = nullptr;  // registered law
  LawParams params;                     // rate per component-hour, shape, age (hours)
  sim::Time detection;                  // failure to noticing it
  bool replace = false;                 // needs a spare node
};

struct StragglerProcess {
  std::string kind;            // "slow_gpu" | "slow_link"
  double onsets_per_hour = 0;  // whole job
  sim::Time detection;         // onset to removal
  double slowdown = 1;         // iteration time with the straggler / without (>= 1)
  bool evict = false;          // removal restarts the job on a spare (a GPU); else it is routed around
};

struct MonteCarloConfig {
  // Exactly one: train until `work` of failure-free compute is done, or run for `horizon`.
  std::optional<sim::Time> work, horizon;
  std::vector<FailureProcess> failures;
  std::vector<StragglerProcess> stragglers;
  sim::Time diagnosis, restart, repair;
  CheckpointCosts checkpoint;
  sim::Time interval;  // work between checkpoints (> 0)
  int64_t spares = 0;  // spare nodes at the start
  bool elastic = false;
  int64_t dp = 1;                 // data-parallel replicas (elastic runs go on with fewer)
  int64_t nodes_per_replica = 1;  // nodes one replica spans (at least 1)
  int64_t replicas_per_node = 1;  // replicas one node holds (at least 1)
  // Skip whole checkpoint cycles when nothing else happens (exact; off only to test that).
  bool skip_cycles = true;
};

// One run's outcome, in seconds.
struct RunOutcome {
  double wall = 0, work = 0;  // wall clock; failure-free compute done (the target, or by the horizon)
  int64_t interruptions = 0;
  std::array<double, kCauses> lost{};
  std::vector<double> lost_by_kind;  // per failure process (everything its failures cost)
  std::vector<int64_t> failures_by_kind;
};

struct Quantiles {
  double mean = 0, p10 = 0, p50 = 0, p90 = 0;
  sim::config::Json to_json(double scale) const;  // values times `scale`
};

struct MonteCarloSummary {
  int64_t runs = 0;
  Quantiles wall_s, interruptions, work_s;
  double ettr = 0;                       // mean over runs of work / wall
  std::array<double, kCauses> lost_s{};  // means
  std::vector<double> lost_by_kind_s;    // means, per failure process
  std::vector<double> failures_by_kind;  // means
};

// Throws ConfigError for impossible configurations (no process, zero interval, ...).
RunOutcome simulate_run(const MonteCarloConfig& config, uint64_t seed, uint64_t run);
MonteCarloSummary run_monte_carlo(const MonteCarloConfig& config, uint64_t seed, int64_t runs);
// Mean wall clock (work mode) or negated mean work (horizon mode) over runs 0..runs-1: smaller is
// better; common random numbers make candidates of one search comparable.
double monte_carlo_cost(const MonteCarloConfig& config, uint64_t seed, int64_t runs);

}  // namespace trainsim::models::failure
