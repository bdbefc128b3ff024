#include "models/failure/checkpoint.hpp"

#include <algorithm>

namespace trainsim::models::failure {

using sim::config::Json;

namespace {
sim::Time transfer(double bytes, sim::Bandwidth bw) {
  return sim::Time::from_seconds_ceil(bytes / bw.bytes_per_second());
}
}  // namespace

sim::Time snapshot_time(const CheckpointInput& in) {
  return transfer(static_cast<double>(in.state.count()) / static_cast<double>(in.gpus), in.host_link);
}

sim::Time storage_write_time(const CheckpointInput& in) {
  const double bytes = static_cast<double>(in.state.count());
  return std::max(transfer(bytes, in.storage.write), transfer(bytes / static_cast<double>(in.nodes), in.storage.node));
}

sim::Time storage_read_time(const CheckpointInput& in) {
  const double bytes = static_cast<double>(in.restore_read.count());
  return std::max(transfer(bytes, in.storage.read), transfer(bytes / static_cast<double>(in.nodes), in.storage.node)) +
         in.restore_extra;
}

sim::Time peer_copy_time(const CheckpointInput& in) {
  return transfer(static_cast<double>(in.state.count()) / static_cast<double>(in.nodes), in.node_network);
}

Json CheckpointCosts::to_json() const {
  return Json{{"stall_s", stall.seconds()},      {"persist_s", persist.seconds()},
              {"interference", interference},    {"interference_window_s", interference_window.seconds()},
              {"restore_s", restore.seconds()},  {"write_s", write.seconds()},
              {"snapshot_s", snapshot.seconds()}};
}

}  // namespace trainsim::models::failure
