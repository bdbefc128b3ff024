// Checkpoint strategies from first principles: bytes over bandwidths.
#include "models/failure/checkpoint.hpp"

#include <gtest/gtest.h>

namespace trainsim::models::failure {
namespace {

using sim::Bandwidth;
using sim::Bytes;
using sim::Time;

CheckpointInput input() {
  CheckpointInput in;
  in.state = Bytes(int64_t{1'000'000'000'000});  // 1 TB
  in.restore_read = Bytes(int64_t{4'000'000'000'000});
  in.gpus = 1024;
  in.nodes = 128;
  in.host_link = Bandwidth::bytes_per_s(50e9);
  in.node_network = Bandwidth::bytes_per_s(400e9);
  in.storage.write = Bandwidth::bytes_per_s(500e9);
  in.storage.read = Bandwidth::bytes_per_s(1000e9);
  in.storage.node = Bandwidth::bytes_per_s(25e9);
  in.async_interference = 0.05;
  in.persist_every = 10;
  return in;
}

const CheckpointCosts costs(const char* name) {
  return CheckpointRegistry::instance().get(name, "--checkpoint").costs(input());
}

TEST(Checkpoints, RegistryHasTheStrategies) {
  EXPECT_EQ(CheckpointRegistry::instance().names(),
            (std::vector<std::string>{"async", "in-memory", "snapshot", "sync"}));
}

TEST(Checkpoints, BuildingBlocks) {
  const CheckpointInput in = input();
  // 1 TB / 1024 GPUs at 50 GB/s: 19.5 ms.
  EXPECT_NEAR(snapshot_time(in).seconds(), 1e12 / 1024 / 50e9, 1e-9);
  // 1 TB at 500 GB/s is 2 s; a node's 7.8 GB at 25 GB/s is 0.31 s: the tier sets the pace.
  EXPECT_NEAR(storage_write_time(in).seconds(), 2.0, 1e-9);
  EXPECT_NEAR(storage_read_time(in).seconds(), 4.0, 1e-9);
  EXPECT_NEAR(peer_copy_time(in).seconds(), 1e12 / 128 / 400e9, 1e-9);
  CheckpointInput slow_nodes = in;
  slow_nodes.storage.node = Bandwidth::bytes_per_s(1e9);
  EXPECT_NEAR(storage_write_time(slow_nodes).seconds(), 1e12 / 128 / 1e9, 1e-9);
}

TEST(Checkpoints, WhatEachStrategyStallsAndWhenItIsSafe) {
  const CheckpointCosts sync = costs("sync"), snap = costs("snapshot"), async = costs("async"),
                        mem = costs("in-memory");
  EXPECT_EQ(sync.stall, sync.write);
  EXPECT_EQ(sync.persist, Time::zero());
  EXPECT_EQ(snap.stall, snap.snapshot);
  EXPECT_EQ(snap.persist, snap.write);
  EXPECT_EQ(async.stall, Time::zero());
  EXPECT_EQ(async.persist, async.snapshot + async.write);
  EXPECT_DOUBLE_EQ(async.interference, 0.05);
  EXPECT_EQ(mem.stall, mem.snapshot);
  EXPECT_LT(mem.persist, snap.persist);
  EXPECT_LT(mem.restore, sync.restore);
  EXPECT_EQ(sync.restore, snap.restore);
}

}  // namespace
}  // namespace trainsim::models::failure
