// In-memory checkpointing with replication to peer hosts (Gemini, SOSP'23): each node snapshots
// its share to host memory and copies it to a peer host over its NICs; every `persist_every`-th
// checkpoint is also written to the slower persistent tier in the background. A restart restores
// from peer memory at network speed. Losing a node and its peer in the same recovery window is
// not modelled (single failures dominate), so the persistent tier is never read back here.
#include "models/failure/checkpoint.hpp"

namespace trainsim::models::failure {
namespace {
CheckpointStrategyInfo in_memory_strategy() {
  return {"in-memory", "snapshot to host memory replicated to a peer host; the persistent tier every k-th time",
          [](const CheckpointInput& in) {
            CheckpointCosts c;
            c.write = storage_write_time(in);
            c.snapshot = snapshot_time(in);
            c.stall = c.snapshot;
            const sim::Time peer = peer_copy_time(in);
            c.persist = peer;
            // The peer copy, and on average 1/k of a persistent write, share the network with training.
            c.interference = in.async_interference;
            c.interference_window =
                peer + sim::Time::from_seconds_ceil(c.write.seconds() / static_cast<double>(in.persist_every));
            c.restore = peer;  // only the replacement node needs its share back, from its peer
            return c;
          }};
}
}  // namespace
}  // namespace trainsim::models::failure

TRAINSIM_REGISTER_CHECKPOINT(in_memory, ::trainsim::models::failure::in_memory_strategy())
