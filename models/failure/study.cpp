#include "models/failure/study.hpp"

#include <algorithm>
#include <cmath>

#include "models/failure/young_daly.hpp"
#include "sim/checked.hpp"

namespace trainsim::models::failure {

using sim::config::Json;

namespace {

constexpr double kHour = 3600.0, kDay = 86400.0;
constexpr uint64_t kSearchSeed = 0x5EA5C4ED1A7E5EEDULL;  // xor-ed into the seed for the interval search
constexpr double kMaxRunYears = 100.0;  // longer runs are input errors (and beyond sim::Time's range soon)

sim::Time seconds(double s) { return sim::Time::from_seconds_ceil(s); }

// Per-checkpoint cost the closed forms see: the stall plus the work lost to background copies.
double effective_delta(const CheckpointCosts& c) {
  return c.stall.seconds() + c.interference * c.interference_window.seconds();
}

double run_length(const MonteCarloConfig& c) { return c.work ? c.work->seconds() : c.horizon->seconds(); }

}  // namespace

RestoreTraffic restore_traffic(double params, int64_t gpus, int64_t dp_cp, int64_t dp_shard, int64_t zero,
                               bool broadcast, sim::Bandwidth nic_per_gpu) {
  // Copies of the weights (2 bytes a parameter) and of the optimizer state (12) the replicas
  // hold: ZeRO-1/2 shard the optimizer over each shard group, ZeRO-3 the weights too; HSDP
  // (dp_shard < dp_cp) keeps dp_cp / dp_shard copies of what it shards.
  const double shard = static_cast<double>(std::max<int64_t>(1, dp_cp / std::max<int64_t>(1, dp_shard)));
  const double all = static_cast<double>(dp_cp);
  const double weights = 2.0 * params * (zero >= 3 ? shard : all);
  const double optimizer = 12.0 * params * (zero >= 1 ? shard : all);
  RestoreTraffic t;
  if (!broadcast) {
    t.read = sim::Bytes::checked(weights + optimizer, "checkpoint", "a smaller model");
    return t;
  }
  // One copy read, the rest sent over the network: each GPU receives its share of the difference.
  t.read = sim::Bytes::checked(14.0 * params, "checkpoint", "a smaller model");
  const double per_gpu = (weights + optimizer - 14.0 * params) / static_cast<double>(gpus);
  t.broadcast = seconds(std::max(0.0, per_gpu) / nic_per_gpu.bytes_per_second());
  return t;
}

ReliabilityModel reliability_model(const workload::Job& job, const Inventory& inventory, sim::Time iteration,
                                   const FailureProfile& profile, const ReliabilityOptions& options,
                                   const StragglerSlowdowns& slowdowns) {
  if (options.tokens.has_value() == options.horizon.has_value())
    throw ConfigError("--tokens", "give the tokens to train or the days to run, one of them",
                      "pass --tokens 15T or --days 54");
  ReliabilityModel m;
  m.inventory = inventory;
  m.iteration = iteration;
  m.checkpoint_strategy = options.checkpoint;
  m.tokens_per_s = static_cast<double>(job.global_batch * job.seq_len) / iteration.seconds();
  const int64_t gpn = std::max<int64_t>(1, job.cluster.gpus_per_node);

  // What a checkpoint holds: bf16 weights (2 bytes per parameter) and the fp32 master copy with
  // Adam's two moments (12), as Megatron's distributed checkpoint saves them.
  const double params = job.model.parameters();
  CheckpointInput& in = m.checkpoint_input;
  in.state = sim::Bytes::checked(params * 14.0, "checkpoint", "a smaller model");
  const RestoreTraffic restore = restore_traffic(
      params, job.gpus, job.dp_cp(), job.dp_shard, job.zero, options.broadcast_restore,
      job.cluster.nic_bandwidth * (static_cast<double>(job.cluster.nics_per_node) / static_cast<double>(gpn)));
  in.restore_read = restore.read;
  in.restore_extra = restore.broadcast;
  in.gpus = job.gpus;
  in.nodes = inventory.nodes;
  in.host_link = job.cluster.host_link_bandwidth;
  in.node_network = job.cluster.nic_bandwidth * static_cast<double>(job.cluster.nics_per_node);
  in.storage = profile.storage;
  if (options.storage_write) in.storage.write = *options.storage_write;
  if (options.storage_read) in.storage.read = *options.storage_read;
  in.async_interference = profile.async_interference;
  in.persist_every = profile.persist_every;
  m.checkpoint = CheckpointRegistry::instance().get(options.checkpoint, "--checkpoint").costs(in);

  MonteCarloConfig& c = m.config;
  if (options.tokens) {
    if (!(*options.tokens > 0)) throw ConfigError("--tokens", "must be positive", "e.g. --tokens 15T");
    const double work_s = *options.tokens / m.tokens_per_s;
    if (work_s > kMaxRunYears * 365.0 * kDay) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "would take %.3g years of failure-free compute at %.4g tokens/s",
                    work_s / 365.0 / kDay, m.tokens_per_s);
      throw ConfigError("--tokens", buf, "train fewer tokens or use more GPUs");
    }
    c.work = seconds(work_s);
  } else {
    c.horizon = *options.horizon;
  }
  double total_rate = 0, detect_sum = 0;  // per hour
  for (const auto& kind : component_kinds()) {
    const ComponentSpec& spec = profile.components.at(kind);
    const int64_t count = inventory.counts.count(kind) ? inventory.counts.at(kind) : 0;
    if (count == 0) continue;
    FailureProcess f;
    f.kind = kind;
    f.count = count;
    f.law = &FailureLawRegistry::instance().get(spec.law, "components." + kind + ".law");
    f.params = LawParams{spec.rate, spec.shape, spec.age.seconds() / kHour};
    f.detection = spec.detection == "timeout" ? profile.collective_timeout : profile.heartbeat_timeout;
    f.replace = spec.replace;
    c.failures.push_back(f);
    total_rate += static_cast<double>(count) * spec.rate;
    detect_sum += static_cast<double>(count) * spec.rate * f.detection.seconds();
  }
  const int64_t cables = inventory.counts.count("cable") ? inventory.counts.at("cable") : 0;
  c.stragglers.push_back(StragglerProcess{"slow_gpu", profile.slow_gpu.rate * static_cast<double>(job.gpus),
                                          profile.slow_gpu.detection, std::max(1.0, slowdowns.slow_gpu), true});
  if (cables > 0)
    c.stragglers.push_back(StragglerProcess{"slow_link", profile.slow_link.rate * static_cast<double>(cables),
                                            profile.slow_link.detection, std::max(1.0, slowdowns.slow_link), false});
  c.diagnosis = profile.diagnosis;
  c.restart = profile.restart;
  c.repair = profile.repair;
  c.checkpoint = m.checkpoint;
  c.spares = options.spares
                 ? *options.spares
                 : std::max<int64_t>(
                       profile.min_spares,
                       sim::checked_int64(std::ceil(profile.spare_fraction * static_cast<double>(inventory.nodes)),
                                          "spare_fraction", "a fraction of the job's nodes"));
  c.elastic = options.elastic;
  c.dp = job.dp;
  const int64_t replica_gpus = std::max<int64_t>(1, job.gpus / std::max<int64_t>(1, job.dp));
  c.nodes_per_replica = std::max<int64_t>(1, replica_gpus / gpn);
  c.replicas_per_node = std::max<int64_t>(1, gpn / replica_gpus);
  if (options.interval) {
    if (*options.interval <= sim::Time::zero())
      throw ConfigError("--checkpoint-interval", "must be positive", "e.g. --checkpoint-interval 30min");
    if (*options.interval < iteration) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "%.4g s is shorter than one iteration (%.4g s): checkpoints are taken between iterations",
                    options.interval->seconds(), iteration.seconds());
      throw ConfigError("--checkpoint-interval", buf, "checkpoint at most once per iteration");
    }
    if (options.interval->seconds() > run_length(c)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%.4g h is longer than the run (%.4g h of %s)",
                    options.interval->seconds() / kHour, run_length(c) / kHour,
                    c.work ? "failure-free compute" : "wall clock");
      throw ConfigError("--checkpoint-interval", buf, "checkpoint more often, or drop it to search for the best");
    }
    c.interval = *options.interval;
  }
  m.mtbf = seconds(kHour / total_rate);
  m.mean_recovery = seconds(detect_sum / total_rate) + profile.diagnosis + profile.restart + m.checkpoint.restore;
  return m;
}

sim::Time closed_form_time(const ReliabilityModel& m) {
  const double delta = effective_delta(m.checkpoint);
  const double lo = std::max({m.iteration.seconds(), m.checkpoint.persist.seconds(), 1.0});
  const double tau = std::max(lo, daly_interval(seconds(delta), m.mtbf).seconds());
  const sim::Time work = m.config.work ? *m.config.work : *m.config.horizon;
  const double t = daly_expected_time(work, seconds(tau), seconds(delta), m.mean_recovery, m.mtbf).seconds();
  // Stragglers: the share of time they slow the run, and the evictions' restarts.
  double straggle = 0;
  for (const auto& s : m.config.stragglers) {
    const double per_s = s.onsets_per_hour / kHour;
    straggle += per_s * s.detection.seconds() * (1.0 - 1.0 / s.slowdown);
    if (s.evict)
      straggle +=
          per_s * (m.checkpoint.stall + m.checkpoint.persist + m.config.restart + m.checkpoint.restore).seconds();
  }
  return seconds(t * (1.0 + straggle));
}

ReliabilityReport run_study(ReliabilityModel model, const ReliabilityOptions& options) {
  ReliabilityReport r;
  r.seed = options.seed;
  const double delta = effective_delta(model.checkpoint);
  r.young_interval = young_interval(seconds(delta), model.mtbf);
  r.daly_interval = daly_interval(seconds(delta), model.mtbf);
  MonteCarloConfig& c = model.config;
  const double length = run_length(c);
  if (options.interval) {
    r.interval_given = true;
    r.interval = r.best_interval = c.interval;
  } else {
    // Log-spaced candidates around Daly's interval (or the shortest sensible one when
    // checkpoints stall nothing), then a finer pass between the best one's neighbours; common
    // random numbers (the same runs) for every candidate.
    const double lo = std::min(length, std::max({model.iteration.seconds(), model.checkpoint.persist.seconds(), 1.0}));
    const double base = std::clamp(r.daly_interval.seconds(), lo, length);
    const int64_t runs = std::min<int64_t>(options.runs, 200);
    auto evaluate = [&](double tau) {
      c.interval = seconds(std::clamp(tau, lo, length));
      for (const auto& p : r.search)
        if (p.interval == c.interval) return;
      // Streams of their own, so the reported runs are not the ones that chose the interval.
      r.search.push_back(IntervalPoint{c.interval, monte_carlo_cost(c, options.seed ^ kSearchSeed, runs)});
    };
    for (int i = -8; i <= 8; ++i) evaluate(base * std::pow(16.0, i / 8.0));
    auto best = [&] {
      return std::min_element(r.search.begin(), r.search.end(), [](const IntervalPoint& a, const IntervalPoint& b) {
        return a.cost_s != b.cost_s ? a.cost_s < b.cost_s : a.interval < b.interval;
      });
    };
    const double b = best()->interval.seconds();
    for (int i = -4; i <= 4; ++i) evaluate(b * std::pow(std::sqrt(2.0), i / 4.0));
    std::sort(r.search.begin(), r.search.end(),
              [](const IntervalPoint& a, const IntervalPoint& b2) { return a.interval < b2.interval; });
    r.interval = r.best_interval = best()->interval;
    c.interval = r.interval;
  }
  r.summary = run_monte_carlo(c, options.seed, options.runs);
  if (c.work) {
    const double lo = std::max({model.iteration.seconds(), model.checkpoint.persist.seconds(), 1.0});
    r.daly_time = daly_expected_time(*c.work, seconds(std::max(lo, r.daly_interval.seconds())), seconds(delta),
                                     model.mean_recovery, model.mtbf);
  }
  r.model = std::move(model);
  return r;
}

Json ReliabilityReport::to_json() const {
  const MonteCarloConfig& c = model.config;
  Json lost = Json::object();
  for (size_t i = 0; i < kCauses; ++i) lost[to_string(static_cast<Cause>(i))] = summary.lost_s[i] / kHour;
  Json by_kind = Json::object(), count_kind = Json::object(), components = Json::object();
  for (size_t k = 0; k < c.failures.size(); ++k) {
    const auto& f = c.failures[k];
    by_kind[f.kind] = summary.lost_by_kind_s[k] / kHour;
    count_kind[f.kind] = summary.failures_by_kind[k];
    components[f.kind] = Json{{"count", f.count},
                              {"law", f.law->name},
                              {"rate_per_hour", f.params.rate},
                              {"expected_failures_per_day", static_cast<double>(f.count) * f.params.rate * 24.0},
                              {"detection_s", f.detection.seconds()},
                              {"replace", f.replace}};
  }
  Json stragglers = Json::object();
  for (const auto& s : c.stragglers)
    stragglers[s.kind] = Json{
        {"onsets_per_day", s.onsets_per_hour * 24.0}, {"detection_s", s.detection.seconds()}, {"slowdown", s.slowdown}};
  Json search_j = Json::array();
  for (const auto& p : search)
    search_j.push_back(Json{{"interval_s", p.interval.seconds()},
                            {c.work ? "expected_days" : "trained_days", (c.work ? p.cost_s : -p.cost_s) / kDay}});
  Json j{{"schema_version", 1},
         {"mode", c.work ? "tokens" : "horizon"},
         {"runs", summary.runs},
         {"seed", seed},
         {"expected_days", summary.wall_s.to_json(1.0 / kDay)},
         {"ideal_days", c.work ? Json(c.work->seconds() / kDay) : Json(nullptr)},
         {"trained_days", summary.work_s.to_json(1.0 / kDay)},
         {"ettr", summary.ettr},
         {"interruptions", summary.interruptions.to_json(1.0)},
         {"lost_hours_by_cause", lost},
         {"lost_hours_by_component", by_kind},
         {"failures_by_component", count_kind},
         {"checkpoint_strategy", model.checkpoint_strategy},
         {"checkpoint_interval_s", interval.seconds()},
         {"checkpoint_interval_given", interval_given},
         {"best_checkpoint_interval_s", best_interval.seconds()},
         {"young_daly_interval_s", daly_interval.seconds()},
         {"young_interval_s", young_interval.seconds()},
         {"daly_expected_days", c.work ? Json(daly_time.seconds() / kDay) : Json(nullptr)},
         {"mtbf_hours", model.mtbf.seconds() / kHour},
         {"mean_recovery_s", model.mean_recovery.seconds()},
         {"iteration_s", model.iteration.seconds()},
         {"tokens_per_s", model.tokens_per_s},
         {"checkpoint", model.checkpoint.to_json()},
         {"checkpoint_bytes", model.checkpoint_input.state.count()},
         {"restore_read_bytes", model.checkpoint_input.restore_read.count()},
         {"spares", c.spares},
         {"elastic", c.elastic},
         {"components", components},
         {"stragglers", stragglers},
         {"interval_search", search_j}};
  return j;
}

}  // namespace trainsim::models::failure
