// One target per input file kind: job, model, cluster, GPU, calibration, failure profile, stack
// and network (`FUZZ_KIND` picks it at compile time, see CMakeLists.txt).
#include "fuzz_common.hpp"
#include "models/failure/profile.hpp"
#include "models/hardware/calibration.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/llm/model_spec.hpp"
#include "models/stack/stack_spec.hpp"
#include "models/workload/job/job.hpp"
#include "topology/graph.hpp"
#include "topology/spec.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_clean([&] {
    const sim::config::Json j = fuzz::json_of(data, size);
    const std::string kind = FUZZ_KIND;
    if (kind == "job") {
      (void)models::workload::resolve_job(models::workload::parse_job(j));
    } else if (kind == "model") {
      (void)models::llm::parse_model(j, "model");
    } else if (kind == "cluster") {
      (void)models::hardware::parse_cluster(j, "cluster");
    } else if (kind == "gpu") {
      (void)models::hardware::parse_gpu(j, "gpu");
    } else if (kind == "calibration") {
      (void)models::hardware::parse_calibration(j, "calibration");
    } else if (kind == "failures") {
      (void)models::failure::parse_failure_profile(j, "failures");
    } else if (kind == "stack") {
      (void)models::stack::parse_stack(j, "stack");
    } else if (kind == "network") {
      // A cluster file's "network" object, or the input itself.
      (void)topology::build_topology(j.is_object() && j.contains("network") ? j.at("network") : j, 64, "network");
    }
  });
  return 0;
}
