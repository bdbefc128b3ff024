#pragma once
// The example job of traces/examples (a 4-layer LLaMA-shaped model at TP 2 x PP 2 on 8 H100s),
// resolved the way the CLI resolves a job file, for the Kineto tests.

#include <string>

#include "models/presets/catalog.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::traces::test {

inline const std::string kExamples = std::string(TRAINSIM_SOURCE_DIR) + "/traces/examples/";
inline const std::string kExampleTrace = kExamples + "tiny-llama-tp2-pp2.rank0.json";
inline const std::string kTestData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/unit/traces/data/";

inline models::workload::Job example_job() {
  sim::config::Json j = models::presets::load_json_file(kExamples + "tiny-llama-tp2-pp2.job.json", "job");
  j["model"] = kExamples + j["model"].get<std::string>();
  return models::workload::resolve_job(models::workload::parse_job(j));
}

}  // namespace trainsim::traces::test
