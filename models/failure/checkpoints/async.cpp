// Fully asynchronous checkpointing (the copy to host memory also runs in the background, on a
// side stream, as in DataStates-LLM or ByteCheckpoint): no stall, but training runs
// `async_interference` slower while the copy and the write are under way, and the checkpoint is
// restorable only once written.
#include "models/failure/checkpoint.hpp"

namespace trainsim::models::failure {
namespace {
CheckpointStrategyInfo async_strategy() {
  return {"async", "no stall: the copy to host and the write run in the background, slowing training a little",
          [](const CheckpointInput& in) {
            CheckpointCosts c;
            c.write = storage_write_time(in);
            c.snapshot = snapshot_time(in);
            c.persist = c.snapshot + c.write;
            c.interference = in.async_interference;
            c.interference_window = c.persist;
            c.restore = storage_read_time(in);
            return c;
          }};
}
}  // namespace
}  // namespace trainsim::models::failure

TRAINSIM_REGISTER_CHECKPOINT(async, ::trainsim::models::failure::async_strategy())
