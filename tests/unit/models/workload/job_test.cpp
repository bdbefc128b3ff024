#include "models/workload/job/job.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/workload/dag/stage_memory.hpp"
#include "sim/error.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::with;

Json base() {
  return Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"tp", 2}, {"pp", 4},
              {"global_batch", 64}};
}

std::string error_of(const Json& j) {
  return testing::config_error([&] { resolve_job(parse_job(j)); });
}

TEST(Job, DerivesDataParallelSizeAndMicroBatches) {
  const Job j = testing::job(base());
  EXPECT_EQ(j.dp, 8);            // 64 / (2 * 4)
  EXPECT_EQ(j.microbatches, 8);  // 64 / (8 * 1)
  EXPECT_EQ(j.seq_len, 8192);    // the model's
  EXPECT_EQ(j.gpu.name, "h100-sxm-80gb");
  EXPECT_TRUE(j.sp);  // default on with TP
  EXPECT_EQ(j.stage_layers(0), 8);
  // dp = gpus / (tp pp); microbatches = global_batch / (dp micro_batch).
  for (const auto& [gpus, tp, pp, mb, gb] : {std::tuple{128, 8, 2, 2, 512}, std::tuple{16, 1, 1, 4, 64},
                                             std::tuple{24, 2, 4, 1, 33}, std::tuple{8, 8, 1, 1, 1}}) {
    const Job k = testing::job(
        with(base(), Json{{"gpus", gpus}, {"tp", tp}, {"pp", pp}, {"micro_batch", mb}, {"global_batch", gb}}));
    EXPECT_EQ(k.dp, gpus / (tp * pp));
    EXPECT_EQ(k.microbatches, gb / (k.dp * mb));
  }
  // An explicit dp that agrees is accepted.
  EXPECT_EQ(testing::job(with(base(), Json{{"dp", 8}})).dp, 8);
}

TEST(Job, SequenceParallelismNeedsTensorParallelism) {
  EXPECT_FALSE(testing::job(with(base(), Json{{"tp", 1}, {"gpus", 32}})).sp);
  EXPECT_FALSE(testing::job(with(base(), Json{{"sp", false}})).sp);
}

// kernel_dispatch is written for a DGX's x86 host; a Grace host (GB200 / GB300 NVL72) issues each
// kernel 2.75x slower (the cluster's host_dispatch_scale, TransformerEngine #2053).
TEST(Job, KernelDispatchFollowsTheClustersHostCpu) {
  const Json x86 = with(base(), Json{{"stack", "research"}, {"kernel_dispatch", "10us"}});
  EXPECT_EQ(testing::job(x86).kernel_dispatch, sim::Time::us(10));
  const Json grace = with(x86, Json{{"cluster", "gb200-nvl72"}, {"gpus", 72}, {"global_batch", 72}, {"pp", 4}});
  EXPECT_EQ(testing::job(grace).kernel_dispatch, sim::Time::ns(27500));
  EXPECT_EQ(
      testing::job(with(grace, Json{{"cluster", "dgx-b200"}, {"gpus", 64}, {"global_batch", 64}})).kernel_dispatch,
      sim::Time::us(10));
  // The Transformer Engine stacks' own default.
  EXPECT_EQ(testing::job(with(base(), Json{{"stack", "megatron-bridge-2025"}})).kernel_dispatch, sim::Time::us(18));
}

TEST(Job, FlagsStyleJsonParsesEveryKey) {
  // The CLI turns --flag value pairs into exactly this JSON: numbers stay numbers, sizes and
  // durations stay strings with units, booleans are booleans.
  const Json flags = Json::parse(R"({
    "model": "llama3-70b", "cluster": "dgx-h100", "gpu": "h200-sxm-141gb", "gpus": 512, "tp": 8, "pp": 4,
    "dp": 16, "vp": 5, "sp": false, "zero": 1, "recompute": "selective", "micro_batch": 2,
    "global_batch": 1024, "seq_len": 4096, "schedule": "interleaved", "precision": "fp8",
    "attention": "unfused", "overlap_grad_reduce": false, "overlap_p2p": false, "scatter_gather": false,
    "bucket_size": "40MB", "kernel_dispatch": "3us", "seed": 7})");
  const JobSpec spec = parse_job(flags);
  EXPECT_EQ(spec.bucket_size, sim::Bytes(40'000'000));
  EXPECT_EQ(spec.kernel_dispatch, sim::Time::us(3));
  const Job j = resolve_job(spec);
  EXPECT_EQ(j.model.name, "llama3-70b");
  EXPECT_EQ(j.gpu.name, "h200-sxm-141gb");  // overrides the cluster's GPU
  EXPECT_EQ(j.cluster.name, "dgx-h100");
  EXPECT_EQ(j.dp, 16);
  EXPECT_EQ(j.vp, 5);
  EXPECT_FALSE(j.sp);
  EXPECT_EQ(j.zero, 1);
  EXPECT_EQ(j.recompute, Recompute::kSelective);
  EXPECT_EQ(j.microbatches, 32);  // 1024 / (16 x 2)
  EXPECT_EQ(j.seq_len, 4096);
  EXPECT_EQ(j.precision, compute::Precision::kFp8);
  EXPECT_EQ(j.attention, Attention::kUnfused);
  EXPECT_FALSE(j.overlap_grad_reduce);
  EXPECT_FALSE(j.overlap_p2p);
  EXPECT_FALSE(j.scatter_gather);
  EXPECT_EQ(j.seed, 7);
  // Defaults: 1F1B, bf16, flash, 160 MB buckets, overlap on; the default stack's (megatron-core-2025,
  // Transformer Engine modules) 18 us dispatch on an x86 host.
  const Job d = testing::job(base());
  EXPECT_EQ(d.schedule, "1f1b");
  EXPECT_EQ(d.precision, compute::Precision::kBf16);
  EXPECT_EQ(d.attention, Attention::kFlash);
  EXPECT_EQ(d.bucket_size, sim::Bytes(160'000'000));
  EXPECT_EQ(d.kernel_dispatch, sim::Time::us(18));
  EXPECT_TRUE(d.overlap_grad_reduce && d.overlap_p2p && d.scatter_gather);
  EXPECT_EQ(d.vp, 1);
  EXPECT_EQ(d.zero, 0);
  EXPECT_EQ(d.recompute, Recompute::kNone);
}

TEST(Job, InlineObjectsAndFiles) {
  const Job j = testing::job(with(base(), Json{{"model", testing::gpt(8, 1024, 16, 1000, 512)},
                                               {"cluster", testing::ideal_cluster()},
                                               {"gpus", 8},
                                               {"tp", 2},
                                               {"pp", 2},
                                               {"global_batch", 4}}));
  EXPECT_EQ(j.model.name, "gpt-test");
  EXPECT_EQ(j.cluster.name, "ideal");
  EXPECT_EQ(j.gpu.name, "h100-sxm-80gb");  // the inline cluster names a GPU preset
  EXPECT_EQ(j.seq_len, 512);
  // Errors inside an inline model carry its path.
  EXPECT_EQ(error_of(with(base(), Json{{"model", testing::gpt(8, 1000, 16, 1000, 512)}})),
            "model.heads: heads (16) must divide hidden (1000) (choose heads so that hidden/heads is a whole head "
            "dimension, or give head_dim)");
  EXPECT_EQ(error_of(with(base(), Json{{"model", 3}})),
            "model: expected a model preset name, a JSON file path or an object, got an integer");
  EXPECT_EQ(error_of(with(base(), Json{{"model", "llama3-9b"}})),
            "model: unknown model preset \"llama3-9b\" (did you mean \"llama3-8b\"?)");
}

TEST(Job, PipelineLayoutTakesTheReportsShorthand) {
  // "bxk" is k virtual stages of b layers, as reports print layouts; 0 leaves a chunk only the
  // LM head (and MTP). llama3-8b has 32 layers.
  const Job a = testing::job(with(base(), Json{{"pp_layout", "7,9x2,7"}}));
  EXPECT_EQ(a.layers, (std::vector<int64_t>{7, 9, 9, 7}));
  const Job b = testing::job(with(base(), Json{{"pp_layout", "11x2,10,0"}}));
  EXPECT_EQ(b.layers, (std::vector<int64_t>{11, 11, 10, 0}));
  EXPECT_NE(error_of(with(base(), Json{{"pp_layout", "8x,8,8,8"}})).find("is not a comma-separated list"),
            std::string::npos);
  EXPECT_NE(error_of(with(base(), Json{{"pp_layout", "8x0,8,8,8,8"}})).find("is not a comma-separated list"),
            std::string::npos);
}

TEST(Job, DivisibilityErrorsNameTheFieldAndTheFix) {
  EXPECT_EQ(error_of(with(base(), Json{{"tp", 3}})),
            "tp: heads (32) must be divisible by tp (3) (choose --tp among the divisors of 32: 1, 2, 4, 8, 16, 32)");
  EXPECT_EQ(error_of(with(base(), Json{{"tp", 16}, {"gpus", 128}})),
            "tp: kv_heads (8) must be divisible by tp (16) (choose --tp among the divisors of 8: 1, 2, 4, 8)");
  Json odd_ffn = testing::gpt(8, 1024, 16, 1000, 512);
  odd_ffn["ffn_hidden"] = 1000;
  EXPECT_EQ(error_of(with(base(), Json{{"model", odd_ffn}, {"tp", 16}, {"gpus", 64}, {"pp", 1}})),
            "tp: ffn_hidden (1000) must be divisible by tp (16) (choose a --tp that divides 1000)");
  EXPECT_EQ(error_of(with(base(), Json{{"gpus", 60}})),
            "gpus: 60 GPUs cannot be split into model-parallel groups of tp*pp = 8 GPUs (use a multiple of 8 GPUs, "
            "e.g. 56 or 64)");
  EXPECT_EQ(error_of(with(base(), Json{{"gpus", 4}, {"pp", 1}, {"tp", 8}})),
            "gpus: 4 GPUs cannot be split into model-parallel groups of tp*pp = 8 GPUs (use a multiple of 8 GPUs, "
            "e.g. 8)");
  EXPECT_EQ(error_of(with(base(), Json{{"dp", 4}})),
            "dp: dp (4) must equal gpus/(tp*pp) = 8 (drop --dp or set --gpus 32)");
  Json wide = testing::gpt(8, 2400, 24, 1000, 512);
  EXPECT_EQ(error_of(with(base(), Json{{"model", wide}, {"tp", 12}, {"pp", 1}, {"gpus", 24}, {"global_batch", 2}})),
            "tp: tp (12) larger than an NVLink domain must be a multiple of its 8 GPUs (use --tp at most 8)");
  EXPECT_EQ(
      error_of(with(base(), Json{{"global_batch", 60}})),
      "global_batch: global_batch (60) is not divisible by dp*micro_batch = 8 (use a multiple of 8, e.g. 56 or 64)");
  EXPECT_EQ(error_of(with(base(), Json{{"global_batch", 64}, {"micro_batch", 3}})),
            "global_batch: global_batch (64) is not divisible by dp*micro_batch = 24 (use a multiple of 24, e.g. 48 "
            "or 72)");
  // Layers that do not divide over pp*vp take the planner's split (lighter first and last
  // stages, Megatron's account-for-embedding/loss); only a split that leaves a stage empty fails.
  EXPECT_EQ(testing::job(with(base(), Json{{"pp", 3}, {"gpus", 48}})).layers, (std::vector<int64_t>{10, 11, 11}));
  EXPECT_EQ(testing::job(with(base(), Json{{"schedule", "interleaved"}, {"vp", 3}})).layers,
            (std::vector<int64_t>{1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1}));
  EXPECT_EQ(
      error_of(with(
          base(), Json{{"model", testing::gpt(4, 1024, 8, 1000, 512)}, {"pp", 8}, {"gpus", 64}, {"global_batch", 64}})),
      "pp: layers (4) do not divide over pp*vp = 8, and lighter first and last stages cannot take up the "
      "difference (choose pp*vp among the divisors of 4: 1, 2, 4, or give --pp-layout)");
}

TEST(Job, ScheduleAndShardingErrors) {
  EXPECT_EQ(error_of(with(base(), Json{{"vp", 2}})),
            "vp: schedule \"1f1b\" does not use virtual stages, got vp = 2 (use --schedule interleaved or drop --vp)");
  EXPECT_EQ(error_of(with(base(), Json{{"schedule", "interleaved"}, {"vp", 2}, {"global_batch", 48}})),
            "global_batch: interleaved 1F1B needs the number of micro-batches (6) to be a multiple of pp (4) (pick "
            "--global-batch so that global_batch/(dp*micro_batch) is a multiple of pp)");
  // ZeRO-3 / FSDP combine with pipeline parallelism (torchtitan, breadth-first pipelines).
  EXPECT_EQ(error_of(with(base(), Json{{"zero", 3}})), "");
  EXPECT_EQ(error_of(with(base(), Json{{"schedule", "1f1bb"}}))
                .rfind("schedule: unknown pipeline schedule \"1f1bb\" (did you mean \"1f1b\"? valid: ", 0),
            0u);
  EXPECT_EQ(error_of(with(base(), Json{{"gpus", 100000}})),
            "gpus: 100000 GPUs exceed cluster \"dgx-h100\"'s maximum of 65536 (use at most 65536 GPUs)");
  // A precision the GPU cannot run is the job's error, before anything is sized.
  EXPECT_EQ(error_of(with(base(), Json{{"precision", "fp8"}, {"cluster", "dgx-a100"}})),
            "precision: fp8 GEMMs need a GPU with FP8 tensor cores; a100-sxm-80gb has none (use --precision bf16 or "
            "an H100/H200/B200 GPU)");
  EXPECT_EQ(error_of(with(base(), Json{{"precision", "mxfp8"}}))
                .rfind("precision: mxfp8 needs tensor cores with "
                       "block scaling (Blackwell); h100-sxm-80gb",
                       0),
            0u);
}

TEST(Job, ClosedSchemaSuggestsTheNearestKey) {
  EXPECT_EQ(error_of(with(base(), Json{{"micro_bach", 2}})),
            "micro_bach: unknown key in job (did you mean \"micro_batch\"?)");
  EXPECT_EQ(error_of(with(base(), Json{{"pipeline_parallel", 2}})).rfind("pipeline_parallel: unknown key in job", 0),
            0u);
  Json missing = base();
  missing.erase("global_batch");
  EXPECT_EQ(error_of(missing).rfind("global_batch: missing required key", 0), 0u);
  EXPECT_EQ(error_of(with(base(), Json{{"tp", 2.5}})).rfind("tp: expected an integer, got 2.5", 0), 0u);
  EXPECT_EQ(error_of(with(base(), Json{{"bucket_size", 40}})).rfind("bucket_size: expected a string like", 0), 0u);
  EXPECT_EQ(error_of(with(base(), Json{{"recompute", "ful"}})),
            "recompute: unknown value \"ful\" (did you mean \"full\"?)");
}

TEST(Job, ConfigJsonHoldsEveryResolvedValue) {
  const Job j = testing::job(base());
  const Json c = j.to_json();
  for (const char* key : {"model",
                          "cluster",
                          "gpu",
                          "gpus",
                          "tp",
                          "pp",
                          "dp",
                          "vp",
                          "sp",
                          "zero",
                          "recompute",
                          "micro_batch",
                          "global_batch",
                          "seq_len",
                          "schedule",
                          "precision",
                          "attention",
                          "microbatches",
                          "overlap_grad_reduce",
                          "overlap_p2p",
                          "scatter_gather",
                          "bucket_size_bytes",
                          "kernel_dispatch_s",
                          "seed"})
    EXPECT_TRUE(c.contains(key)) << key;
  EXPECT_EQ(c.at("dp"), 8);
  EXPECT_EQ(c.at("microbatches"), 8);
  EXPECT_EQ(c.at("precision"), "bf16");
  EXPECT_EQ(c.at("bucket_size_bytes"), 160'000'000);
}

}  // namespace
}  // namespace trainsim::models::workload

namespace trainsim::models::workload {
namespace {

// NVL72: a job places its ranks on a whole-tray share of each rack (Slurm --segment).
TEST(Job, NvlinkSegmentOnRackScaleDomains) {
  const auto segment = [](Json j) { return resolve_job(parse_job(j)).cluster.domain_gpus(); };
  const Json nvl = with(base(), Json{{"cluster", "gb200-nvl72"}, {"tp", 1}, {"pp", 1}});
  EXPECT_EQ(segment(with(nvl, Json{{"gpus", 256}, {"global_batch", 256}})), 64);  // 4 racks of 64
  EXPECT_EQ(segment(with(nvl, Json{{"gpus", 288}, {"global_batch", 288}})), 72);  // 4 whole racks
  EXPECT_EQ(segment(with(nvl, Json{{"gpus", 100}, {"global_batch", 100}})), 72);  // no share divides: packed
  EXPECT_EQ(segment(with(nvl, Json{{"gpus", 16}, {"global_batch", 16}})), 72);    // inside one rack
  EXPECT_EQ(segment(with(nvl, Json{{"gpus", 256}, {"global_batch", 256}, {"nvlink_segment", 32}})), 32);
  EXPECT_EQ(segment(with(base(), Json{{"nvlink_segment", 32}})), 8);  // a DGX: one node is the domain
  EXPECT_EQ(error_of(with(nvl, Json{{"gpus", 256}, {"global_batch", 256}, {"nvlink_segment", 70}})),
            "nvlink_segment: 70 GPUs is not a whole number of 4-GPU nodes within the 72-GPU NVLink domain (use a "
            "multiple of 4 up to 72, or drop --nvlink-segment)");
}

}  // namespace
}  // namespace trainsim::models::workload

namespace trainsim::models::workload {
namespace {

// Megatron's --cpu-offloading-num-layers: n of a chunk's L layers wait in host memory; the device
// keeps L - n + 1 layers' activations (one in flight).
TEST(Job, LayerGranularActivationOffload) {
  const Json j = with(base(), Json{{"pp", 1}, {"tp", 8}});  // one chunk of 32 layers
  const int64_t all = chunk_activation_bytes(resolve_job(parse_job(j)), 0);
  const int64_t kept =
      chunk_activation_bytes(resolve_job(parse_job(with(j, Json{{"offload_activation_layers", 16}}))), 0);
  EXPECT_NEAR(static_cast<double>(kept), static_cast<double>(all) * 17.0 / 32.0, 1.0);
  EXPECT_EQ(chunk_activation_bytes(resolve_job(parse_job(with(j, Json{{"offload_activation_layers", 99}}))), 0),
            all / 32);
  EXPECT_EQ(error_of(with(j, Json{{"offload_activation_layers", 4}, {"offload_activations", true}})),
            "offload_activation_layers: and offload_activations both offload the stored activations (keep one: "
            "--offload-activation-layers N (per layer) or --offload-activations (whole chunks))");
}

}  // namespace
}  // namespace trainsim::models::workload
