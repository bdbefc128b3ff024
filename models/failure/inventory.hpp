#pragma once
// How many components of each kind (profile.hpp) a job runs on, from its cluster and topology:
// gpu and hbm per GPU, nvswitch per NVSwitch node of the topology, nic per NIC (the cluster's NICs
// per node), cable per cable that leaves a server, switch per fabric switch (leaf, spine, core,
// router), host and software per node, storage once.

#include <cstdint>
#include <map>
#include <string>

#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::failure {

struct Inventory {
  std::map<std::string, int64_t> counts;  // kind -> components
  int64_t nodes = 0;                      // servers the job occupies
  sim::config::Json to_json() const;
};

// Builds the job's topology (ConfigError at "cluster.network" when it cannot be built).
Inventory count_components(const workload::Job& job);

}  // namespace trainsim::models::failure
