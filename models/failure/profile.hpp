#pragma once
// A reliability profile: how often each kind of component fails, how failures are detected and
// recovered from, the checkpoint storage tier, and stragglers. Profiles are data
// (models/presets/failures/*.json) parsed through the schemas here, so every rate and time can be
// overridden from a file or `--rate KIND=RATE`, and each records its source.

#include <map>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::models::failure {

// The component kinds failure processes are defined for, in report order:
// gpu, hbm, nvswitch, nic, cable, switch, host, software, storage.
const std::vector<std::string>& component_kinds();

struct ComponentSpec {
  std::string law = "exponential";  // a registered failure law (law.hpp)
  double rate = 0;                  // failures per component-hour (> 0)
  double shape = 1;                 // Weibull shape
  sim::Time age;                    // service age of the cohort when the run starts (Weibull)
  std::string detection;            // heartbeat (the process dies) | timeout (the job hangs)
  bool replace = false;             // recovery swaps the node for a spare (hardware in the node)
  std::string source;
};

struct StragglerSpec {
  double rate = 0;      // onsets per component-hour (GPU for slow GPUs, inter-node cable for links)
  double factor = 1;    // a slow GPU's speed, or a degraded link's share of its bandwidth, in (0, 1)
  sim::Time detection;  // onset to removal
  std::string source;
};

struct StorageSpec {
  sim::Bandwidth write, read;  // aggregate of the checkpoint tier, per direction
  sim::Bandwidth node;         // one node's client bandwidth to the tier
  std::string source;
};

struct FailureProfile {
  std::string name, description;
  std::map<std::string, ComponentSpec> components;  // every kind of component_kinds()
  sim::Time heartbeat_timeout;                      // a dead process is noticed after this
  sim::Time collective_timeout;                     // a hung collective is noticed after this (NCCL watchdog)
  sim::Time diagnosis;                              // finding the faulty node once noticed
  sim::Time restart;          // rescheduling, process start, communicator init (not the checkpoint read)
  sim::Time repair;           // a failed node is back in the spare pool after this
  double spare_fraction = 0;  // spare nodes as a share of the job's nodes (rounded up)
  int64_t min_spares = 0;
  double async_interference = 0;  // training slowdown while an asynchronous checkpoint copies
  int64_t persist_every = 1;      // in-memory checkpoints per write to the persistent tier
  StorageSpec storage;
  StragglerSpec slow_gpu, slow_link;
  std::map<std::string, std::string> sources;
};

const sim::config::Schema<FailureProfile>& failure_profile_schema();
const sim::config::Schema<ComponentSpec>& component_schema();
const sim::config::Schema<StragglerSpec>& straggler_schema();
const sim::config::Schema<StorageSpec>& storage_schema();

// Parses a profile object (a preset's or a file's JSON); errors name the field under `path`.
FailureProfile parse_failure_profile(const sim::config::Json& j, const std::string& path);

// The profile named by `ref` (preset name or JSON file), with `--rate KIND=RATE` items applied
// and every component failure rate multiplied by `scale` (> 0); straggler rates are not scaled.
FailureProfile load_failure_profile(const std::string& ref, const std::vector<std::string>& rates, double scale);

}  // namespace trainsim::models::failure
