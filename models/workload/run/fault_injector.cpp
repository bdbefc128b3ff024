#include "models/workload/run/fault_injector.hpp"

#include <sstream>

#include "models/workload/run/network_runner.hpp"
#include "models/workload/run/slow_compute.hpp"

namespace trainsim::models::workload {

using sim::config::Json;

namespace {
std::string when(sim::Time t) { return t == sim::Time::zero() ? "the start" : sim::to_string(t); }
}  // namespace

FaultInjector::FaultInjector(sim::task::TaskExecutor& exec, const Workload& w, const Job& job,
                             std::vector<Fault> faults, NetworkCommRunner* network, SlowComputeRunner* slow)
    : exec_(exec), engine_(exec.engine()), w_(w), job_(job), network_(network), slow_(slow) {
  for (Fault& f : faults) outcomes_.push_back(FaultOutcome{std::move(f), false, sim::Time::infinite(), ""});
}

void FaultInjector::arm() {
  engine_.signals().on_task_end.connect([this](sim::TaskIndex, sim::Time) { task_ended(); });
  // Links dead from the start that cut the job apart: it stops before anything runs.
  if (network_ != nullptr)
    if (const std::string why = network_->disconnected(); !why.empty())
      pending_.push_back(engine_.schedule_at(sim::Time::zero(), [this, why] { stop(why); }));
  for (size_t k = 0; k < outcomes_.size(); ++k) {
    const Fault& f = outcomes_[k].fault;
    // A slow GPU's runner knows the time its speed drops (tasks straddling it slow part-way).
    if (f.kind == Fault::Kind::kGpuSlow)
      for (const uint32_t slot : SlowComputeRunner::slots_of(w_, job_, f.gpu)) slow_->slow_down(slot, f.factor, f.at);
    pending_.push_back(engine_.schedule_at(f.at, [this, k] { strike(k); }));
  }
}

void FaultInjector::strike(size_t k) {
  FaultOutcome& o = outcomes_[k];
  const Fault& f = o.fault;
  o.struck = true;
  std::ostringstream effect;
  switch (f.kind) {
    case Fault::Kind::kLinkDown:
      if (const int32_t gpu = network_->nvswitch_gpu(f); gpu >= 0) {
        effect << "GPU " << gpu << " lost its NVLink at " << when(f.at) << ": the job stopped";
        o.effect = effect.str();
        stop(o.effect);
        return;
      }
      if (f.at == sim::Time::zero()) {
        effect << "dead from the start (routes avoid it)";
        o.rerouted_at = sim::Time::zero();
        break;
      }
      network_->fail_link(f);
      effect << "failed at " << when(f.at) << ": flows crossing it stalled";
      pending_.push_back(engine_.schedule_in(f.reroute_delay, [this, k] { reroute(k); }));
      break;
    case Fault::Kind::kLinkDegrade:
      if (f.at > sim::Time::zero()) network_->fail_link(f);
      effect << "capacity x" << f.factor << " from " << when(f.at);
      break;
    case Fault::Kind::kGpuDown:
      effect << "GPU " << f.gpu << " failed at " << when(f.at) << ": the job stopped";
      o.effect = effect.str();
      stop(o.effect);
      return;
    case Fault::Kind::kGpuSlow: effect << "compute at x" << f.factor << " speed from " << when(f.at); break;
  }
  o.effect = effect.str();
}

void FaultInjector::reroute(size_t k) {
  FaultOutcome& o = outcomes_[k];
  std::string why;
  if (!network_->reroute(why)) {
    o.effect += "; " + why + " after it: the job stopped at " + sim::to_string(engine_.now());
    stop(why + " (" + to_string(o.fault) + ")");
    return;
  }
  o.rerouted_at = engine_.now();
  o.effect += "; traffic rerouted at " + sim::to_string(engine_.now());
}

void FaultInjector::stop(const std::string& reason) {
  if (stopped_) return;
  stopped_ = true;
  stopped_at_ = engine_.now();
  stop_reason_ = reason;
  for (const sim::EventId e : pending_) engine_.cancel(e);
  exec_.stop();
}

void FaultInjector::task_ended() {
  // The iteration is over: faults still to come belong to a later one.
  if (++ended_ == exec_.graph().size())
    for (const sim::EventId e : pending_) engine_.cancel(e);
}

FaultReport FaultInjector::report() const {
  FaultReport r;
  r.faults = outcomes_;
  r.completed = !stopped_;
  r.stopped_at = stopped_at_;
  r.stop_reason = stop_reason_;
  const auto& g = exec_.graph();
  r.tasks = g.size();
  for (sim::task::TaskIndex i = 0; i < g.size(); ++i) {
    const bool done = !exec_.end_time(i).is_infinite();
    const bool compute = g.task(i).spec.kind == sim::task::TaskKind::kCompute;
    r.tasks_done += done;
    r.compute_tasks += compute;
    r.compute_tasks_done += done && compute;
  }
  for (FaultOutcome& o : r.faults) {
    if (o.struck) {
      if (o.fault.kind == Fault::Kind::kLinkDown && o.rerouted_at.is_infinite() && r.completed)
        o.effect += "; the run ended before traffic rerouted";
      continue;
    }
    o.effect = "not reached: the run ended at " + sim::to_string(engine_.now());
  }
  return r;
}

Json FaultReport::to_json() const {
  Json list = Json::array();
  for (const FaultOutcome& o : faults) {
    Json j{{"spec", to_string(o.fault)},
           {"kind", to_string(o.fault.kind)},
           {"at_s", o.fault.at.seconds()},
           {"struck", o.struck},
           {"effect", o.effect}};
    if (o.fault.kind == Fault::Kind::kLinkDown) {
      j["reroute_delay_s"] = o.fault.reroute_delay.seconds();
      j["rerouted_at_s"] = o.rerouted_at.is_infinite() ? Json(nullptr) : Json(o.rerouted_at.seconds());
    }
    list.push_back(j);
  }
  return Json{{"faults", list},
              {"completed", completed},
              {"stopped_at_s", completed ? Json(nullptr) : Json(stopped_at.seconds())},
              {"stop_reason", completed ? Json(nullptr) : Json(stop_reason)},
              {"tasks", tasks},
              {"tasks_done", tasks_done},
              {"compute_tasks", compute_tasks},
              {"compute_tasks_done", compute_tasks_done}};
}

}  // namespace trainsim::models::workload
