#include "models/schedules/schedule.hpp"

#include <algorithm>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::models::schedules {

int virtual_stage(Placement pl, int stages, int stage, int chunk) {
  if (pl == Placement::kVShape && chunk % 2 == 1) return chunk * stages + (stages - 1 - stage);
  return chunk * stages + stage;
}

int chunk_of(Placement, int stages, int vs) { return vs / stages; }

int stage_of(Placement pl, int stages, int vs) {
  const int c = vs / stages, r = vs % stages;
  return pl == Placement::kVShape && c % 2 == 1 ? stages - 1 - r : r;
}

void check_schedule_shape(const ScheduleInfo& s, int stages, int microbatches, int virtual_stages) {
  if (s.fixed_virtual_stages > 0 && virtual_stages != s.fixed_virtual_stages)
    throw ConfigError("vp",
                      "schedule \"" + s.name + "\" runs exactly " + std::to_string(s.fixed_virtual_stages) +
                          " model chunks per rank, got vp = " + std::to_string(virtual_stages),
                      "set --vp " + std::to_string(s.fixed_virtual_stages));
  if (!s.interleaved && virtual_stages != 1)
    throw ConfigError(
        "vp", "schedule \"" + s.name + "\" does not use virtual stages, got vp = " + std::to_string(virtual_stages),
        "use --schedule interleaved or drop --vp");
  if (s.microbatches_multiple_of_stages && stages > 1 && microbatches % stages != 0)
    throw ConfigError("global_batch",
                      "interleaved 1F1B needs the number of micro-batches (" + std::to_string(microbatches) +
                          ") to be a multiple of pp (" + std::to_string(stages) + ")",
                      "pick --global-batch so that global_batch/(dp*micro_batch) is a multiple of pp");
}

}  // namespace trainsim::models::schedules
