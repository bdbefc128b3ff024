#include "models/failure/monte_carlo.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>

#include "models/failure/spare_pool.hpp"
#include "sim/deadline.hpp"
#include "sim/error.hpp"
#include "sim/log.hpp"
#include "sim/rng.hpp"

namespace trainsim::models::failure {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHour = 3600.0;

void check(const MonteCarloConfig& c) {
  if (c.work.has_value() == c.horizon.has_value())
    throw ConfigError("reliability", "give either the work to train or the horizon to run for, not both or neither",
                      "pass --tokens or --days");
  if (c.work && *c.work <= sim::Time::zero()) throw ConfigError("--tokens", "the run has no work to do");
  if (c.horizon && *c.horizon <= sim::Time::zero()) throw ConfigError("--days", "must be positive");
  if (c.interval <= sim::Time::zero())
    throw ConfigError("--checkpoint-interval", "must be positive", "e.g. --checkpoint-interval 30min");
  for (const auto& f : c.failures)
    if (!f.law || !(f.params.rate > 0) || f.count < 0)
      throw ConfigError("failures." + f.kind, "needs a law, a positive rate and a component count");
  if (c.dp < 1 || c.nodes_per_replica < 1 || c.replicas_per_node < 1)
    throw ConfigError("reliability", "replica layout must be positive");
}

// Runtime state of one failure process.
struct Proc {
  const FailureProcess* spec = nullptr;
  double cohort = 0;             // original components still in service
  double cohort_next = kInf;     // seconds
  std::vector<double> renewals;  // failure times of replacements (laws with memory)
  double next = kInf;
  size_t next_renewal = SIZE_MAX;  // which renewal is `next`, SIZE_MAX: the cohort
};

class Run {
 public:
  Run(const MonteCarloConfig& c, uint64_t seed, uint64_t run)
      : c_(c),
        rng_(seed, run),
        pool_(c.spares, c.repair.seconds(), c.elastic, c.dp, c.nodes_per_replica, c.replicas_per_node) {}
  RunOutcome go();

 private:
  enum class Phase : uint8_t { kWork, kStall, kDown, kDone };
  enum class Event : uint8_t {
    kMilestone,
    kPhaseEnd,
    kPersist,
    kInterference,
    kStragglerEnd,
    kStragglerOnset,
    kFailure,
    kHorizon
  };

  double rate_factors(double& slow, double& elastic, double& interf) const;
  void accrue(double te);
  void begin_checkpoint();
  void end_stall();
  void fail(size_t k);
  void start_down(int kind, bool evict);
  void redraw(size_t k);
  void refresh_next(Proc& p);
  void try_cycle_jump(double external);
  bool waiting_for_spare() const;

  const MonteCarloConfig& c_;
  sim::Rng rng_;
  SparePool pool_;
  RunOutcome out_;
  std::vector<Proc> procs_;
  std::vector<double> onset_;  // next onset time per straggler process

  Phase phase_ = Phase::kWork;
  double t_ = 0, p_ = 0, saved_ = 0;
  double work_ = kInf, horizon_ = kInf, tau_ = 0;
  double next_ckpt_ = 0;
  bool final_ = false;
  double stall_end_ = 0, stall_work_ = 0;
  bool persist_pending_ = false;
  double persist_end_ = 0, persist_work_ = 0;
  double interf_end_ = -kInf;
  bool strag_ = false, strag_evict_ = false;
  double strag_end_ = 0, strag_slow_ = 1;
  // Recovery: phase boundaries (start, end, cause) and the failure process that caused it (-1:
  // a straggler's eviction).
  struct DownPhase {
    double start, end;
    Cause cause;
  };
  std::array<DownPhase, 5> down_{};
  size_t down_n_ = 0;
  double down_end_ = 0;
  int down_kind_ = -1;
  // Periodicity of checkpoint cycles (see try_cycle_jump).
  struct Mark {
    double t, p, saved;
    std::array<double, kCauses> lost;
    uint64_t epoch;
  };
  std::array<Mark, 3> marks_{};  // the last three cycle ends, oldest first
  int n_marks_ = 0;
  uint64_t epoch_ = 0;
};

double Run::rate_factors(double& slow, double& elastic, double& interf) const {
  slow = strag_ ? strag_slow_ : 1.0;
  const int64_t lost = pool_.lost_replicas();
  elastic = lost > 0 ? static_cast<double>(c_.dp) / static_cast<double>(c_.dp - lost) : 1.0;
  interf = t_ < interf_end_ ? c_.checkpoint.interference : 0.0;
  return (1.0 - interf) / (slow * elastic);
}

void Run::accrue(double te) {
  const double dt = te - t_;
  if (dt <= 0) return;
  switch (phase_) {
    case Phase::kWork: {
      double slow = 1, elastic = 1, interf = 0;
      const double r = rate_factors(slow, elastic, interf);
      p_ += dt * r;
      const double loss = dt * (1.0 - r);
      if (loss > 0) {
        // Shared between the causes in proportion to the logarithm of their slowdowns.
        const double a = std::log(slow), b = std::log(elastic), w = -std::log1p(-interf), sum = a + b + w;
        out_.lost[static_cast<size_t>(Cause::kStragglers)] += loss * a / sum;
        out_.lost[static_cast<size_t>(Cause::kElastic)] += loss * b / sum;
        out_.lost[static_cast<size_t>(Cause::kCheckpointWrite)] += loss * w / sum;
      }
      break;
    }
    case Phase::kStall: out_.lost[static_cast<size_t>(Cause::kCheckpointWrite)] += dt; break;
    case Phase::kDown:
      for (size_t i = 0; i < down_n_; ++i) {
        const double ov = std::min(te, down_[i].end) - std::max(t_, down_[i].start);
        if (ov <= 0) continue;
        out_.lost[static_cast<size_t>(down_[i].cause)] += ov;
        if (down_kind_ >= 0) out_.lost_by_kind[static_cast<size_t>(down_kind_)] += ov;
      }
      break;
    case Phase::kDone: break;
  }
}

void Run::refresh_next(Proc& p) {
  p.next = p.cohort_next;
  p.next_renewal = SIZE_MAX;
  for (size_t i = 0; i < p.renewals.size(); ++i)
    if (p.renewals[i] < p.next) {
      p.next = p.renewals[i];
      p.next_renewal = i;
    }
}

// Draws process k's next failure after the one at t_.
void Run::redraw(size_t k) {
  Proc& p = procs_[k];
  const FailureLawInfo& law = *p.spec->law;
  if (law.memoryless) {
    p.cohort_next = kHour * law.next_in_cohort(rng_, t_ / kHour, p.cohort, p.spec->params);
    p.next = p.cohort_next;
    return;
  }
  // The failed component is replaced by a new one with its own lifetime.
  if (p.next_renewal == SIZE_MAX) {
    p.cohort -= 1;
    p.cohort_next = p.cohort > 0 ? kHour * law.next_in_cohort(rng_, t_ / kHour, p.cohort, p.spec->params) : kInf;
  } else {
    p.renewals.erase(p.renewals.begin() + static_cast<std::ptrdiff_t>(p.next_renewal));
  }
  p.renewals.push_back(t_ + kHour * law.lifetime(rng_, p.spec->params));
  refresh_next(p);
}

void Run::begin_checkpoint() {
  // The next checkpoint waits for the previous one's background write.
  const double start = persist_pending_ ? std::max(t_, persist_end_) : t_;
  stall_end_ = start + c_.checkpoint.stall.seconds();
  stall_work_ = p_;
  next_ckpt_ = p_ + tau_;
  phase_ = Phase::kStall;
  if (stall_end_ <= t_) end_stall();
}

void Run::end_stall() {
  phase_ = Phase::kWork;
  const double persist = c_.checkpoint.persist.seconds();
  if (persist <= 0) {
    saved_ = stall_work_;
    persist_pending_ = false;
  } else {
    if (persist_pending_) saved_ = persist_work_;  // (only reached when the wait ended exactly now)
    persist_pending_ = true;
    persist_end_ = t_ + persist;
    persist_work_ = stall_work_;
  }
  if (c_.checkpoint.interference > 0) interf_end_ = t_ + c_.checkpoint.interference_window.seconds();
  if (final_) {
    phase_ = Phase::kDone;
    return;
  }
  // Periodicity bookkeeping.
  marks_[0] = marks_[1];
  marks_[1] = marks_[2];
  marks_[2] = Mark{t_, p_, saved_, out_.lost, epoch_};
  ++n_marks_;
}

void Run::start_down(int kind, bool evict) {
  ++epoch_;
  const bool needs_spare = kind >= 0 ? procs_[static_cast<size_t>(kind)].spec->replace : evict;
  const double detect = kind >= 0 ? procs_[static_cast<size_t>(kind)].spec->detection.seconds() : 0.0;
  const double diagnose = kind >= 0 ? c_.diagnosis.seconds() : 0.0;
  // An eviction first takes a checkpoint and waits for it to be restorable.
  const double prepare = evict ? c_.checkpoint.stall.seconds() + c_.checkpoint.persist.seconds() : 0.0;
  // Nodes still owed to an earlier failure of this recovery are waited for too.
  const double ready = needs_spare ? pool_.replace(t_) : pool_.ready_at();
  const double wait = std::max(0.0, ready - (t_ + detect + diagnose + prepare));
  pool_.restore_replicas();
  const Cause k_detect = evict ? Cause::kStragglers : Cause::kDetection;
  const Cause k_diag = evict ? Cause::kStragglers : Cause::kDiagnosis;
  const Cause k_wait = evict ? Cause::kStragglers : Cause::kSpareWait;
  const Cause k_restart = evict ? Cause::kStragglers : Cause::kRestart;
  const Cause k_read = evict ? Cause::kStragglers : Cause::kCheckpointRead;
  const double parts[5] = {detect + prepare, diagnose, wait, c_.restart.seconds(), c_.checkpoint.restore.seconds()};
  const Cause causes[5] = {k_detect, k_diag, k_wait, k_restart, k_read};
  double s = t_;
  down_n_ = 0;
  for (int i = 0; i < 5; ++i) {
    down_[down_n_++] = DownPhase{s, s + parts[i], causes[i]};
    s += parts[i];
  }
  down_end_ = s;
  down_kind_ = kind;
  phase_ = Phase::kDown;
  // The restart's health checks find a slow GPU; a degraded link stays until it is found.
  if (strag_ && strag_evict_) strag_ = false;
  interf_end_ = -kInf;
  final_ = false;
}

// While the job waits for a node nothing runs: software and other in-job failures cannot happen.
bool Run::waiting_for_spare() const {
  return phase_ == Phase::kDown && down_n_ > 2 && t_ >= down_[2].start && t_ < down_[2].end;
}

void Run::fail(size_t k) {
  if (waiting_for_spare() && !procs_[k].spec->replace) {
    redraw(k);
    return;
  }
  ++out_.interruptions;
  ++out_.failures_by_kind[k];
  // Roll back to the last restorable checkpoint (an eviction's checkpoint may still be writing).
  const double redo = p_ - saved_;
  if (redo > 0) {
    out_.lost[static_cast<size_t>(Cause::kRedoneWork)] += redo;
    out_.lost_by_kind[k] += redo;
    p_ = saved_;
  }
  next_ckpt_ = saved_ + tau_;
  persist_pending_ = false;
  start_down(static_cast<int>(k), false);
  redraw(k);
}

// Checkpoint cycles without other events repeat exactly: once two consecutive cycles match, skip
// whole cycles up to just before the next external event (state and losses shift linearly).
void Run::try_cycle_jump(double external) {
  if (!c_.skip_cycles || n_marks_ < 3) return;
  const Mark &a = marks_[0], &b = marks_[1], &m = marks_[2];
  if (a.epoch != epoch_ || b.epoch != epoch_ || m.epoch != epoch_ || m.t != t_) return;
  const double dt = m.t - b.t, dp = m.p - b.p;
  auto same = [](double x, double y) { return std::abs(x - y) <= 1e-9 * std::max(1.0, std::abs(x)); };
  if (!(dt > 0) || !same(b.t - a.t, dt) || !same(b.p - a.p, dp) || !same(m.saved - b.saved, dp) ||
      !same(b.saved - a.saved, dp))
    return;
  double n = std::floor((external - t_) / dt) - 1.0;
  if (work_ < kInf) n = std::min(n, std::floor((work_ - p_) / dp) - 2.0);
  if (!(n >= 1)) return;
  t_ += n * dt;
  p_ += n * dp;
  saved_ += n * dp;
  next_ckpt_ += n * dp;
  stall_work_ += n * dp;
  persist_end_ += n * dt;
  persist_work_ += n * dp;
  if (interf_end_ > -kInf) interf_end_ += n * dt;
  for (size_t i = 0; i < kCauses; ++i) out_.lost[i] += n * (m.lost[i] - b.lost[i]);
  n_marks_ = 0;
}

RunOutcome Run::go() {
  check(c_);
  work_ = c_.work ? c_.work->seconds() : kInf;
  horizon_ = c_.horizon ? c_.horizon->seconds() : kInf;
  tau_ = c_.interval.seconds();
  next_ckpt_ = tau_;
  out_.lost_by_kind.assign(c_.failures.size(), 0.0);
  out_.failures_by_kind.assign(c_.failures.size(), 0);
  procs_.resize(c_.failures.size());
  for (size_t k = 0; k < c_.failures.size(); ++k) {
    Proc& p = procs_[k];
    p.spec = &c_.failures[k];
    p.cohort = static_cast<double>(p.spec->count);
    p.cohort_next = p.cohort > 0 ? kHour * p.spec->law->next_in_cohort(rng_, 0.0, p.cohort, p.spec->params) : kInf;
    p.next = p.cohort_next;
  }
  onset_.resize(c_.stragglers.size());
  for (size_t j = 0; j < c_.stragglers.size(); ++j)
    onset_[j] = c_.stragglers[j].onsets_per_hour > 0
                    ? kHour * standard_exponential(rng_) / c_.stragglers[j].onsets_per_hour
                    : kInf;

  // A run that cannot finish (failures outpace progress, or lost nodes outpace repairs without
  // spares) would loop forever: past 10 M events or 1,000 simulated years it is bad input.
  constexpr uint64_t kMaxEvents = 10'000'000;
  constexpr double kMaxSeconds = 1000 * 365.25 * 86400.0;
  uint64_t events = 0;
  while (phase_ != Phase::kDone) {
    if ((events & 0xffff) == 0) sim::check_deadline();
    if (++events > kMaxEvents || t_ > kMaxSeconds) {
      char text[240];
      std::snprintf(
          text, sizeof text,
          "the run does not finish within 1,000 years or 10 M events: %.0f failures in %.0f days, %.1f%% of the work "
          "done",
          static_cast<double>(std::accumulate(out_.failures_by_kind.begin(), out_.failures_by_kind.end(), int64_t{0})),
          t_ / 86400.0, std::isfinite(work_) ? 100.0 * p_ / work_ : 0.0);
      throw ConfigError("--rate", text, "failures outpace the job: lower the rates, or add --spares or --elastic");
    }
    // The earliest event; ties resolve in the order of Event.
    double te = kInf;
    Event ev = Event::kHorizon;
    size_t which = 0;
    auto consider = [&](double time, Event e, size_t idx = 0) {
      if (time < te) {
        te = time;
        ev = e;
        which = idx;
      }
    };
    double target = 0;
    if (phase_ == Phase::kWork) {
      double slow = 1, elastic = 1, interf = 0;
      const double r = rate_factors(slow, elastic, interf);
      target = std::min(next_ckpt_, work_);
      consider(t_ + std::max(0.0, target - p_) / r, Event::kMilestone);
    }
    if (phase_ == Phase::kStall) consider(stall_end_, Event::kPhaseEnd);
    if (phase_ == Phase::kDown) consider(down_end_, Event::kPhaseEnd);
    if (persist_pending_) consider(persist_end_, Event::kPersist);
    if (interf_end_ > t_) consider(interf_end_, Event::kInterference);
    if (strag_) consider(strag_end_, Event::kStragglerEnd);
    double external = std::min(strag_ ? strag_end_ : kInf, horizon_);
    for (size_t j = 0; j < onset_.size(); ++j) {
      consider(onset_[j], Event::kStragglerOnset, j);
      external = std::min(external, onset_[j]);
    }
    for (size_t k = 0; k < procs_.size(); ++k) {
      consider(procs_[k].next, Event::kFailure, k);
      external = std::min(external, procs_[k].next);
    }
    if (horizon_ <= te) {
      te = horizon_;
      ev = Event::kHorizon;
    }
    accrue(te);
    t_ = te;
    switch (ev) {
      case Event::kHorizon: phase_ = Phase::kDone; break;
      case Event::kMilestone:
        p_ = target;
        if (p_ >= work_) final_ = true;
        begin_checkpoint();
        if (phase_ == Phase::kWork) try_cycle_jump(external);
        break;
      case Event::kPhaseEnd:
        if (phase_ == Phase::kStall) {
          end_stall();
          if (phase_ == Phase::kWork) try_cycle_jump(external);
        } else {
          phase_ = Phase::kWork;
          ++epoch_;
        }
        break;
      case Event::kPersist:
        saved_ = persist_work_;
        persist_pending_ = false;
        break;
      case Event::kInterference: break;
      case Event::kStragglerEnd:
        ++epoch_;
        if (strag_evict_) {
          if (!pool_.can_replace(t_)) {
            // Nothing to swap it for: it stays and slows the run until a restart replaces it.
            strag_end_ = kInf;
            break;
          }
          strag_ = false;
          // The eviction's checkpoint: restorable once its stall and write are done.
          next_ckpt_ = p_ + tau_;
          persist_pending_ = true;
          persist_work_ = p_;
          persist_end_ = t_ + c_.checkpoint.stall.seconds() + c_.checkpoint.persist.seconds();
          if (persist_end_ <= t_) {
            saved_ = p_;
            persist_pending_ = false;
          }
          start_down(-1, true);
        } else {
          strag_ = false;
        }
        break;
      case Event::kStragglerOnset: {
        const StragglerProcess& s = c_.stragglers[which];
        onset_[which] = t_ + kHour * standard_exponential(rng_) / s.onsets_per_hour;
        if (phase_ != Phase::kDown && !strag_) {
          strag_ = true;
          strag_evict_ = s.evict;
          strag_slow_ = s.slowdown;
          strag_end_ = t_ + s.detection.seconds();
          ++epoch_;
        }
        break;
      }
      case Event::kFailure: fail(which); break;
    }
  }
  out_.wall = t_;
  out_.work = c_.work ? work_ : p_;
  return out_;
}

}  // namespace

RunOutcome simulate_run(const MonteCarloConfig& config, uint64_t seed, uint64_t run) {
  RunOutcome o = Run(config, seed, run).go();
  TRAINSIM_LOG_TRACE(kFailure, "run ", run, " (seed ", seed, "): wall ", o.wall / 86400.0, " days, work ",
                     o.work / 86400.0, " days, ", o.interruptions, " interruptions");
  return o;
}

}  // namespace trainsim::models::failure
