#pragma once
// Shared helpers of the Chakra tests: the example traces' paths, the replay job on a preset
// cluster, and a check that a call throws a ConfigError naming a path and saying something.

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "models/workload/job/job.hpp"
#include "sim/error.hpp"

namespace trainsim::traces::chakra::test {

inline std::string example(const std::string& name) {
  return std::string(TRAINSIM_SOURCE_DIR) + "/traces/examples/chakra/" + name;
}

// The job a replay runs on: `cluster` (and `gpu` when set), one GPU per rank.
inline models::workload::Job replay_job(const std::string& cluster, int64_t ranks, const std::string& gpu = "",
                                        const std::string& network = "flow") {
  models::workload::JobSpec spec;
  spec.cluster = cluster;
  if (!gpu.empty()) spec.gpu = gpu;
  models::workload::Job job = models::workload::resolve_platform(spec);
  job.gpus = ranks;
  job.network = models::workload::read_option<models::workload::Network>(network, "network");
  return job;
}

// `f` throws a ConfigError whose path contains `path` and whose message contains `message`.
inline void expect_config_error(const std::function<void()>& f, const std::string& path, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "expected a ConfigError at " << path << ": " << message;
  } catch (const ConfigError& e) {
    EXPECT_NE(e.path().find(path), std::string::npos) << "path: " << e.path() << " / " << e.message();
    EXPECT_NE(e.message().find(message), std::string::npos) << "message: " << e.message();
    EXPECT_FALSE(e.hint().empty()) << e.path() << ": " << e.message();
  }
}

}  // namespace trainsim::traces::chakra::test
