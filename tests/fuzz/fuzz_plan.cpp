// `plan` end to end on small problems: the input is a job JSON without the parallel layout; the
// search runs when it asks for at most 16 GPUs, with 2 re-simulations and none on the flow network.
#include "fuzz_common.hpp"
#include "models/workload/job/job.hpp"
#include "planner/search/search.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_clean([&] {
    const sim::config::Json j = fuzz::json_of(data, size);
    const models::workload::JobSpec spec = models::workload::parse_job(j);
    if (spec.gpus > 16 || spec.global_batch > 64) return;
    const models::workload::Job hw = models::workload::resolve_hardware(spec);
    planner::search::SearchOptions o;
    o.threads = 1;
    o.rerank = 2;
    o.rerank_flow = 0;
    (void)planner::search::run_search(hw, spec, j, o);
  });
  return 0;
}
