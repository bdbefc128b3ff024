#include "models/failure/profile.hpp"
#include "sim/config/schema.hpp"

#include <algorithm>
#include <cmath>

#include "models/failure/law.hpp"
#include "models/presets/catalog.hpp"
#include "sim/checked.hpp"

namespace trainsim::models::failure {

using sim::config::Json;

namespace {

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

constexpr double kMaxRate = 1000.0;

double positive(const Json& j, const std::string& p, const char* what) {
  if (!j.is_number())
    throw ConfigError(p, std::string("expected a number (") + what + "), got " + sim::config::show(j));
  const double v = j.get<double>();
  if (!(v > 0) || !std::isfinite(v))
    throw ConfigError(p, std::string("must be positive (") + what + "), got " + sim::config::show(j),
                      "give a rate above 0; leave a kind out of the failures by making it rare, e.g. 1e-12");
  // Above this, times between events underflow what a run can resolve (1e308 became NaN).
  if (v > kMaxRate)
    throw ConfigError(p, std::string("at most 1000 (") + what + "), got " + sim::config::show(j),
                      "a component failing more than 1000 times an hour never lets a job run");
  return v;
}

// A straggler's speed or bandwidth share: in [1e-6, 1) (sim::kMinSlowdownFactor: slower is a
// failure, and would stretch durations past the clock).
double slowdown_factor(const Json& j, const std::string& p) {
  const double v = sim::config::read_number(j, p, 0.0, 1.0);
  if (v <= 0 || v >= 1) throw ConfigError(p, "must be strictly between 0 and 1, got " + sim::config::show(j));
  if (v < sim::kMinSlowdownFactor)
    throw ConfigError(p, "must be at least 1e-6, got " + sim::config::show(j),
                      "a component slower than that has failed: count it in the failure rates instead");
  return v;
}

sim::Bandwidth positive_bandwidth(const Json& j, const std::string& p) {
  const sim::Bandwidth b = sim::config::read_bandwidth(j, p);
  if (!(b.bytes_per_second() > 0))
    throw ConfigError(p, "must be above zero, got " + sim::config::show(j),
                      "give the tier's bandwidth, e.g. \"1TBps\"");
  return b;
}

sim::Time non_negative_time(const Json& j, const std::string& p) {
  const sim::Time t = sim::config::read_time(j, p);
  if (t < sim::Time::zero()) throw ConfigError(p, "must not be negative, got " + sim::config::show(j));
  return t;
}

}  // namespace

const std::vector<std::string>& component_kinds() {
  static const std::vector<std::string> kinds = {"gpu",    "hbm",  "nvswitch", "nic",    "cable",
                                                 "switch", "host", "software", "storage"};
  return kinds;
}

const sim::config::Schema<ComponentSpec>& component_schema() {
  static const sim::config::Schema<ComponentSpec> schema = [] {
    sim::config::Schema<ComponentSpec> s(
        "failure component",
        "One component kind's failure process (`components.KIND` of a failure profile). Counts come from the job: "
        "gpu and hbm per GPU, nvswitch per NVSwitch of the topology, nic per NIC, cable per inter-node cable, "
        "switch per fabric switch, host and software per node, storage once per job.");
    s.custom("law", "string", "\"exponential\"", "Failure law: exponential | weibull (`trainsim list failure-laws`).",
             [](ComponentSpec& c, const Json& j, const std::string& p) {
               c.law = sim::config::read_string(j, p);
               FailureLawRegistry::instance().get(c.law, p);
             })
        .custom("rate", "number > 0", std::nullopt, "Failures per component-hour (1 / MTTF of one component).",
                [](ComponentSpec& c, const Json& j, const std::string& p) {
                  c.rate = positive(j, p, "failures per component-hour");
                })
        .custom(
            "shape", "number > 0", "1", "Weibull shape k (< 1 infant mortality, > 1 wear-out).",
            [](ComponentSpec& c, const Json& j, const std::string& p) { c.shape = positive(j, p, "Weibull shape"); })
        .custom("age", "duration", "\"0h\"", "Service age of the components when the run starts (Weibull).",
                [](ComponentSpec& c, const Json& j, const std::string& p) { c.age = non_negative_time(j, p); })
        .enumeration("detection", &ComponentSpec::detection, {"heartbeat", "timeout"}, "heartbeat",
                     "How the failure shows: the process dies (heartbeat) or the job hangs until the collective "
                     "timeout.")
        .boolean("replace", &ComponentSpec::replace, false,
                 "Recovery swaps the node for a spare (the fault is in the node's hardware).")
        .string("source", &ComponentSpec::source, "", "Where the rate comes from.");
    return s;
  }();
  return schema;
}

const sim::config::Schema<StragglerSpec>& straggler_schema() {
  static const sim::config::Schema<StragglerSpec> schema = [] {
    sim::config::Schema<StragglerSpec> s("straggler",
                                         "A straggler process (`slow_gpu` per GPU, `slow_link` per inter-node cable): "
                                         "onsets slow the iteration, by as much as re-simulating it with the component "
                                         "degraded says, until the component is found and removed.");
    s.custom("rate", "number > 0", std::nullopt, "Onsets per component-hour.",
             [](StragglerSpec& c, const Json& j, const std::string& p) { c.rate = positive(j, p, "onsets per hour"); })
        .custom("factor", "number in [1e-6, 1)", std::nullopt,
                "A slow GPU's speed, or a degraded link's share of its bandwidth.",
                [](StragglerSpec& c, const Json& j, const std::string& p) { c.factor = slowdown_factor(j, p); })
        .custom("detection", "duration", std::nullopt, "Onset to removal of the component.",
                [](StragglerSpec& c, const Json& j, const std::string& p) { c.detection = non_negative_time(j, p); })
        .string("source", &StragglerSpec::source, "", "Where the numbers come from.");
    return s;
  }();
  return schema;
}

const sim::config::Schema<StorageSpec>& storage_schema() {
  static const sim::config::Schema<StorageSpec> schema = [] {
    sim::config::Schema<StorageSpec> s("checkpoint storage",
                                       "The persistent checkpoint tier (`storage` of a failure profile).");
    s.custom("write_bandwidth", "bandwidth > 0", std::nullopt, "Aggregate write bandwidth.",
             [](StorageSpec& c, const Json& j, const std::string& p) { c.write = positive_bandwidth(j, p); })
        .custom("read_bandwidth", "bandwidth > 0", std::nullopt, "Aggregate read bandwidth.",
                [](StorageSpec& c, const Json& j, const std::string& p) { c.read = positive_bandwidth(j, p); })
        .custom("node_bandwidth", "bandwidth > 0", std::nullopt, "One node's client bandwidth to the tier.",
                [](StorageSpec& c, const Json& j, const std::string& p) { c.node = positive_bandwidth(j, p); })
        .string("source", &StorageSpec::source, "", "Where the numbers come from.");
    return s;
  }();
  return schema;
}

const sim::config::Schema<FailureProfile>& failure_profile_schema() {
  static const sim::config::Schema<FailureProfile> schema = [] {
    sim::config::Schema<FailureProfile> s(
        "failure profile",
        "Failure rates, detection and recovery times, spares, the checkpoint storage tier and stragglers "
        "(`trainsim reliability --failures NAME|FILE`; presets in models/presets/failures/).");
    s.string("name", &FailureProfile::name, "", "Profile name.")
        .string("description", &FailureProfile::description, "", "One line for `trainsim list failures`.")
        .custom("components", "object", std::nullopt,
                "One failure process per component kind (gpu, hbm, nvswitch, nic, cable, switch, host, software, "
                "storage), all required; see the failure component table.",
                [](FailureProfile& f, const Json& j, const std::string& p) {
                  if (!j.is_object()) throw ConfigError(p, "expected an object mapping component kinds to processes");
                  for (auto it = j.begin(); it != j.end(); ++it) {
                    const auto& kinds = component_kinds();
                    if (std::find(kinds.begin(), kinds.end(), it.key()) == kinds.end()) {
                      const std::string near = sim::config::did_you_mean(it.key(), kinds);
                      throw ConfigError(
                          child(p, it.key()), "unknown component kind",
                          near.empty() ? "valid: " + sim::config::join(kinds) : "did you mean \"" + near + "\"?");
                    }
                    ComponentSpec c;
                    component_schema().parse(*it, child(p, it.key()), c);
                    f.components[it.key()] = c;
                  }
                  for (const auto& k : component_kinds())
                    if (!f.components.count(k))
                      throw ConfigError(child(p, k), "missing component kind", "give every kind a rate");
                })
        .custom("heartbeat_timeout", "duration", std::nullopt, "A dead process is noticed after this.",
                [](FailureProfile& f, const Json& j, const std::string& p) {
                  f.heartbeat_timeout = non_negative_time(j, p);
                })
        .custom("collective_timeout", "duration", std::nullopt,
                "A hung collective is noticed after this (NCCL watchdog).",
                [](FailureProfile& f, const Json& j, const std::string& p) {
                  f.collective_timeout = non_negative_time(j, p);
                })
        .custom("diagnosis", "duration", std::nullopt, "Finding the faulty node once the failure is noticed.",
                [](FailureProfile& f, const Json& j, const std::string& p) { f.diagnosis = non_negative_time(j, p); })
        .custom("restart", "duration", std::nullopt,
                "Rescheduling, process start and communicator init (the checkpoint read comes on top).",
                [](FailureProfile& f, const Json& j, const std::string& p) { f.restart = non_negative_time(j, p); })
        .custom("repair", "duration", std::nullopt, "A failed node is back in the spare pool after this.",
                [](FailureProfile& f, const Json& j, const std::string& p) { f.repair = non_negative_time(j, p); })
        .number("spare_fraction", &FailureProfile::spare_fraction, 0.0, 1.0, 0.0,
                "Spare nodes as a share of the job's nodes, rounded up (`--spares` overrides).")
        .integer("min_spares", &FailureProfile::min_spares, 0, sim::config::kUnboundedInt, 0, "At least this many.")
        .number("async_interference", &FailureProfile::async_interference, 0.0, 0.9, 0.0,
                "Training slowdown while an asynchronous or in-memory checkpoint copies in the background.")
        .integer("persist_every", &FailureProfile::persist_every, 1, 1000000, 1,
                 "In-memory checkpointing: in-memory checkpoints per write to the persistent tier.")
        .custom("storage", "object", std::nullopt, "The persistent checkpoint tier (checkpoint storage table).",
                [](FailureProfile& f, const Json& j, const std::string& p) { storage_schema().parse(j, p, f.storage); })
        .custom(
            "slow_gpu", "object", std::nullopt, "Slow-GPU stragglers, per GPU (straggler table).",
            [](FailureProfile& f, const Json& j, const std::string& p) { straggler_schema().parse(j, p, f.slow_gpu); })
        .custom("slow_link", "object", std::nullopt, "Degraded-link stragglers, per inter-node cable.",
                [](FailureProfile& f, const Json& j, const std::string& p) {
                  straggler_schema().parse(j, p, f.slow_link);
                });
    s.sources(&FailureProfile::sources);
    return s;
  }();
  return schema;
}

FailureProfile parse_failure_profile(const Json& j, const std::string& path) {
  FailureProfile f;
  failure_profile_schema().parse(j, path, f);
  return f;
}

FailureProfile load_failure_profile(const std::string& ref, const std::vector<std::string>& rates, double scale) {
  const std::string path = presets::is_file_reference(ref) ? ref : "--failures";
  FailureProfile f = parse_failure_profile(presets::resolve("failures", ref, "--failures"), path);
  for (const std::string& item : rates) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw ConfigError("--rate", "expected KIND=RATE, got \"" + item + "\"", "e.g. --rate gpu=2e-5 (per GPU-hour)");
    const std::string kind = item.substr(0, eq), text = item.substr(eq + 1);
    const auto it = f.components.find(kind);
    if (it == f.components.end()) {
      const std::string near = sim::config::did_you_mean(kind, component_kinds());
      throw ConfigError(
          "--rate", "unknown component kind \"" + kind + "\"",
          near.empty() ? "valid: " + sim::config::join(component_kinds()) : "did you mean \"" + near + "\"?");
    }
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size())
      throw ConfigError("--rate", "\"" + text + "\" is not a number (in \"" + item + "\")",
                        "give failures per component-hour, e.g. 2e-5");
    it->second.rate = positive(Json(v), "--rate " + kind, "failures per component-hour");
    it->second.source = "--rate on the command line";
  }
  for (auto& [kind, c] : f.components) {
    c.rate *= scale;
    if (!(c.rate <= kMaxRate))
      throw ConfigError("--failure-scale",
                        "makes the " + kind + " rate " + std::to_string(c.rate) + " per component-hour, above 1000",
                        "give a smaller scale");
  }
  return f;
}

}  // namespace trainsim::models::failure
