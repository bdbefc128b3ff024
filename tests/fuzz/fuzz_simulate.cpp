// `simulate` end to end on small jobs: the input is a job JSON, capped to 64 GPUs and 64
// micro-batches and run under an event and a solver budget (the caps keep each execution short,
// not safe: bad input must still fail cleanly).
#include "fuzz_common.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_clean([&] {
    const sim::config::Json j = fuzz::json_of(data, size);
    const models::workload::Job job = models::workload::resolve_job(models::workload::parse_job(j));
    if (job.gpus > 64 || job.microbatches > 64) return;
    models::workload::SimulateOptions opts;
    opts.event_limit = 200'000;
    opts.solver_limit = 2'000'000;
    (void)models::workload::simulate(job, opts);
  });
  return 0;
}
