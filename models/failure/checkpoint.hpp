#pragma once
// Checkpoint strategies: what one checkpoint costs the training run. Each strategy registers from
// its own file (checkpoints/*.cpp) and turns the job's checkpoint (its size, the GPUs and nodes
// writing it, the storage tier) into four numbers the Monte Carlo uses:
//   stall         training stops this long for every checkpoint;
//   persist       after the stall, the checkpoint can be restored from only this much later (a
//                 failure before then falls back to the previous one);
//   interference  training runs this much slower while the checkpoint copies in the background,
//                 for `interference_window` after the stall;
//   restore       reading it back at a restart.

#include <functional>
#include <string>

#include "models/failure/profile.hpp"
#include "sim/config/schema.hpp"
#include "sim/registry.hpp"
#include "sim/units.hpp"

namespace trainsim::models::failure {

struct CheckpointInput {
  sim::Bytes state;         // unique model and optimizer state of the whole job (what is saved)
  sim::Bytes restore_read;  // bytes read from the persistent tier at a restart
  sim::Time restore_extra;  // on top of the read: the broadcast to the other replicas, if any
  int64_t gpus = 1, nodes = 1;
  sim::Bandwidth host_link;     // one GPU's device-to-host copy rate
  sim::Bandwidth node_network;  // one node's NICs together (copies to peer hosts)
  StorageSpec storage;
  double async_interference = 0;
  int64_t persist_every = 1;
};

struct CheckpointCosts {
  sim::Time stall, persist, interference_window, restore;
  double interference = 0;
  sim::Time write;     // the persistent tier's write of one checkpoint (for reports)
  sim::Time snapshot;  // one GPU's share copied to host memory (for reports)
  sim::config::Json to_json() const;
};

struct CheckpointStrategyInfo {
  static constexpr const char* kWhat = "checkpoint strategy";
  std::string name;
  std::string description;
  std::function<CheckpointCosts(const CheckpointInput&)> costs;
};

using CheckpointRegistry = sim::Registry<CheckpointStrategyInfo>;

// The building blocks strategies share. Every GPU saves an equal share (fully parallel save, as
// Megatron-Core's distributed checkpoint does), so a node moves state / nodes.
sim::Time snapshot_time(const CheckpointInput& in);       // a GPU's share to host memory
sim::Time storage_write_time(const CheckpointInput& in);  // the whole state to the persistent tier
sim::Time storage_read_time(const CheckpointInput& in);   // restore_read from it, plus restore_extra
sim::Time peer_copy_time(const CheckpointInput& in);      // a node's share to a peer host over its NICs

}  // namespace trainsim::models::failure

#define TRAINSIM_REGISTER_CHECKPOINT(id, info)                                                               \
  namespace {                                                                                                \
  const ::trainsim::models::failure::CheckpointRegistry::Registrar trainsim_checkpoint_registrar_##id{info}; \
  }
