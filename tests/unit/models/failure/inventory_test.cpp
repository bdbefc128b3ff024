// Component counts from the cluster and its topology.
#include "models/failure/inventory.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::failure {
namespace {

using sim::config::Json;

workload::Job job_of(int64_t gpus) {
  return testing::job(Json{{"model", "llama3-8b"},
                           {"cluster", "dgx-h100"},
                           {"gpus", gpus},
                           {"tp", 8},
                           {"global_batch", gpus / 8},
                           {"recompute", "full"}});
}

TEST(Inventory, CountsPerGpuNodeAndFabric) {
  const Inventory inv = count_components(job_of(16384));
  EXPECT_EQ(inv.nodes, 2048);
  EXPECT_EQ(inv.counts.at("gpu"), 16384);
  EXPECT_EQ(inv.counts.at("hbm"), 16384);
  EXPECT_EQ(inv.counts.at("host"), 2048);
  EXPECT_EQ(inv.counts.at("software"), 2048);
  EXPECT_EQ(inv.counts.at("nic"), 2048 * 8);
  EXPECT_EQ(inv.counts.at("storage"), 1);
  // The derived rail-optimized fabric: one NVSwitch fabric per server; GPU-to-leaf cables
  // (16,384) and leaf-to-spine cables (512 leaves x 8 spines) leave the servers.
  EXPECT_EQ(inv.counts.at("nvswitch"), 2048);
  EXPECT_EQ(inv.counts.at("cable"), 16384 + 512 * 8);
  EXPECT_EQ(inv.counts.at("switch"), 520);
}

TEST(Inventory, ScalesWithTheJob) {
  const Inventory a = count_components(job_of(1024)), b = count_components(job_of(2048));
  EXPECT_EQ(2 * a.counts.at("gpu"), b.counts.at("gpu"));
  EXPECT_EQ(2 * a.counts.at("host"), b.counts.at("host"));
  EXPECT_GT(b.counts.at("cable"), a.counts.at("cable"));
  EXPECT_EQ(a.counts.at("storage"), b.counts.at("storage"));
}

}  // namespace
}  // namespace trainsim::models::failure
