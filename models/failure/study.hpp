#pragma once
// A reliability study of one plan: the job's components and failure processes (inventory.hpp,
// profile.hpp), what its checkpoints cost (checkpoint.hpp), the best checkpoint interval found by
// the Monte Carlo (monte_carlo.hpp) beside the Young/Daly closed form (young_daly.hpp), and the
// expected wall clock, ETTR, interruptions and lost time by cause.

#include <optional>
#include <string>
#include <vector>

#include "models/failure/checkpoint.hpp"
#include "models/failure/inventory.hpp"
#include "models/failure/monte_carlo.hpp"
#include "models/failure/profile.hpp"
#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::models::failure {

struct ReliabilityOptions {
  std::string checkpoint = "sync";    // a registered checkpoint strategy
  std::optional<sim::Time> interval;  // work between checkpoints; null: the best the search finds
  std::optional<int64_t> spares;      // spare nodes; null: the profile's share of the job's nodes
  bool elastic = false;               // go on with fewer data-parallel replicas when no spare is free
  bool broadcast_restore = false;     // one reader per data-parallel group, then a broadcast (MegaScale)
  std::optional<double> tokens;       // train this many tokens, or
  std::optional<sim::Time> horizon;   // run for this long
  std::optional<sim::Bandwidth> storage_write, storage_read;  // override the profile's tier
  int64_t runs = 1000;
  uint64_t seed = 0;
};

// Iteration time with one straggler, over the iteration time without (from re-simulating the
// iteration with the component degraded); 1 = no effect.
struct StragglerSlowdowns {
  double slow_gpu = 1, slow_link = 1;
};

// Everything the Monte Carlo runs on, derived from the plan; cheap to build once the inventory
// is known (the planner builds one per candidate).
struct ReliabilityModel {
  Inventory inventory;
  CheckpointInput checkpoint_input;
  CheckpointCosts checkpoint;
  MonteCarloConfig config;  // interval unset (zero) until chosen
  sim::Time iteration;
  double tokens_per_s = 0;
  sim::Time mtbf;           // of the whole job: 1 / (sum over kinds of count x rate)
  sim::Time mean_recovery;  // detection (rate-weighted) + diagnosis + restart + checkpoint read
  std::string checkpoint_strategy;
};

// What a restart reads from the persistent tier: every data-parallel replica's copy of the
// weights and optimizer state it does not share through ZeRO (14 bytes a parameter in all, per
// copy); with `broadcast` one copy is read and the rest reaches the other replicas over their
// NICs (`nic_per_gpu` each).
struct RestoreTraffic {
  sim::Bytes read;
  sim::Time broadcast;
};
RestoreTraffic restore_traffic(double params, int64_t gpus, int64_t dp_cp, int64_t dp_shard, int64_t zero,
                               bool broadcast, sim::Bandwidth nic_per_gpu);

// Throws ConfigError for bad options (a checkpoint interval longer than the run or shorter than an
// iteration, a run of more than 100 years, ...).
ReliabilityModel reliability_model(const workload::Job& job, const Inventory& inventory, sim::Time iteration,
                                   const FailureProfile& profile, const ReliabilityOptions& options,
                                   const StragglerSlowdowns& slowdowns);

// Closed-form expected wall clock of the run (Daly at Daly's interval, times the straggler
// slowdown): the planner's goodput objective. In horizon mode, the expected wall clock of as much
// failure-free compute as the horizon is long.
sim::Time closed_form_time(const ReliabilityModel& m);

struct IntervalPoint {
  sim::Time interval;
  double cost_s = 0;  // mean wall clock (work mode) or minus mean work (horizon mode)
};

struct ReliabilityReport {
  ReliabilityModel model;
  std::vector<IntervalPoint> search;  // candidates tried (empty when the interval was given)
  sim::Time interval;                 // used for the summary
  sim::Time best_interval;            // best of the search (or the given one)
  sim::Time young_interval, daly_interval;
  sim::Time daly_time;  // Daly's expected wall clock at daly_interval (work mode)
  MonteCarloSummary summary;
  uint64_t seed = 0;
  bool interval_given = false;
  sim::config::Json to_json() const;
};

ReliabilityReport run_study(ReliabilityModel model, const ReliabilityOptions& options);

}  // namespace trainsim::models::failure
