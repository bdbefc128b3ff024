#include "ui/scene/what_if.hpp"

#include <gtest/gtest.h>

#include "models/presets/catalog.hpp"
#include "sim/error.hpp"
#include "ui/scene/plan_table.hpp"

namespace trainsim::ui {
namespace {

using sim::config::Json;

const Json kJob = {{"model", "llama3.2-1b"}, {"cluster", "dgx-h100"}, {"gpus", 16},     {"tp", 2}, {"pp", 2},
                   {"micro_batch", 1},       {"global_batch", 32},    {"seq_len", 2048}};

TEST(WhatIf, KnobsSetTheParallelShapeAndDpFollows) {
  const WhatIfBase base = what_if_base(kJob);
  WhatIf w = what_if_of(models::workload::resolve_job(base.spec));
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.pp, 2);
  EXPECT_EQ(w.schedule, "1f1b");
  const models::workload::Job same = apply_what_if(base, w);
  EXPECT_EQ(same.dp, 4);
  w.tp = 4;
  w.pp = 1;
  w.micro_batch = 2;
  const models::workload::Job j = apply_what_if(base, w);
  EXPECT_EQ(j.tp, 4);
  EXPECT_EQ(j.pp, 1);
  EXPECT_EQ(j.dp, 4);
  EXPECT_EQ(j.micro_batch, 2);
  EXPECT_EQ(j.microbatches, 4);  // 32 / (4 x 2)
}

TEST(WhatIf, BandwidthMultipliersScaleTheCluster) {
  const WhatIfBase base = what_if_base(kJob);
  WhatIf w = what_if_of(models::workload::resolve_job(base.spec));
  const models::workload::Job before = apply_what_if(base, w);
  w.inter_node_bandwidth = 2;
  w.intra_node_bandwidth = 0.5;
  const models::workload::Job after = apply_what_if(base, w);
  EXPECT_DOUBLE_EQ(after.cluster.nic_bandwidth.bytes_per_second(), 2 * before.cluster.nic_bandwidth.bytes_per_second());
  EXPECT_DOUBLE_EQ(after.cluster.nvlink_bandwidth.bytes_per_second(),
                   0.5 * before.cluster.nvlink_bandwidth.bytes_per_second());
  w.inter_node_bandwidth = 0;
  EXPECT_THROW(apply_what_if(base, w), ConfigError);
}

TEST(WhatIf, RejectedShapesNameTheField) {
  const WhatIfBase base = what_if_base(kJob);
  WhatIf w = what_if_of(models::workload::resolve_job(base.spec));
  w.tp = 3;  // does not divide the heads or the GPUs
  try {
    apply_what_if(base, w);
    FAIL() << "tp 3 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.path().find("tp"), std::string::npos) << e.path();
  }
}

TEST(PlanTable, RanksSortsAndLoadsPlans) {
  const PlanTable t = plan_table(kJob, 8, 8, 1);
  ASSERT_EQ(t.rows.size(), 8u);
  for (size_t i = 1; i < t.rows.size(); ++i) EXPECT_EQ(t.rows[i].rank, t.rows[i - 1].rank + 1);
  PlanTable sorted = t;
  sorted.sort(PlanColumn::kMemory, true);
  for (size_t i = 1; i < sorted.rows.size(); ++i)
    EXPECT_LE(sorted.rows[i - 1].plan.peak_memory_bytes, sorted.rows[i].plan.peak_memory_bytes);
  sorted.sort(PlanColumn::kRank, true);
  for (size_t i = 0; i < sorted.rows.size(); ++i) EXPECT_EQ(sorted.rows[i].rank, t.rows[i].rank);
  // The plans search every parallel dimension: the job's own tp/pp do not pin them.
  const models::workload::Job best = t.job(0);
  EXPECT_EQ(best.tp, t.rows[0].plan.candidate.tp);
  EXPECT_EQ(best.pp, t.rows[0].plan.candidate.pp);
  // A picked plan is the what-if base: unchanged knobs give the plan back.
  WhatIfBase base{t.job_spec(0), t.hardware};
  const models::workload::Job again = apply_what_if(base, what_if_of(best));
  EXPECT_EQ(again.tp, best.tp);
  EXPECT_EQ(again.zero, best.zero);
  EXPECT_EQ(again.recompute, best.recompute);
}

// A plan at TP 1 has sequence parallelism off and expert TP pinned to 1: a new TP from the panel
// takes expert TP = TP and turns sequence parallelism on, so an MoE plan stays valid.
TEST(WhatIf, NewTpOnAPickedPlanResetsExpertTpAndSp) {
  const Json moe = {{"model", "mixtral-8x7b"},
                    {"cluster", "dgx-h100"},
                    {"gpus", 64},
                    {"tp", 1},
                    {"pp", 4},
                    {"ep", 8},
                    {"etp", 1},
                    {"sp", false},
                    {"global_batch", 64},
                    {"seq_len", 4096}};
  const WhatIfBase base = what_if_base(moe);
  WhatIf w = what_if_of(models::workload::resolve_job(base.spec));
  w.tp = 2;
  const models::workload::Job j = apply_what_if(base, w);
  EXPECT_EQ(j.tp, 2);
  EXPECT_EQ(j.etp, 2);
  EXPECT_TRUE(j.sp);
}

// An explicit cluster.network scales too: NVLink fields by the scale-up multiplier, others by the
// scale-out one.
TEST(WhatIf, ExplicitNetworkBandwidthsScale) {
  Json job = kJob;
  Json cluster = models::presets::resolve("clusters", "dgx-h100", "cluster");
  cluster["network"] = {{"builder", "rail_optimized"}, {"gpus_per_node", 8},    {"nvlink_bandwidth", "400GBps"},
                        {"nic_bandwidth", "40GBps"},   {"servers_per_unit", 4}, {"spines", 2}};
  job["cluster"] = cluster;
  const WhatIfBase base = what_if_base(job);
  WhatIf w = what_if_of(models::workload::resolve_job(base.spec));
  w.inter_node_bandwidth = 2;
  w.intra_node_bandwidth = 0.5;
  const models::workload::Job j = apply_what_if(base, w);
  EXPECT_EQ(j.cluster.network["nic_bandwidth"], "80GBps");
  EXPECT_EQ(j.cluster.network["nvlink_bandwidth"], "200GBps");
}

}  // namespace
}  // namespace trainsim::ui
