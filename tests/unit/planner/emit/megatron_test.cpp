// --emit megatron: the plan -> Megatron-LM flag mapping (docs/emitters.md).
#include <gtest/gtest.h>

#include "emit_test_support.hpp"
#include "planner/emit/detail/megatron_args.hpp"

namespace trainsim::planner::emit {
namespace {

using testing::flag_value;
using testing::has_flag;
using testing::Json;
using testing::with;

std::string args(const Json& j) { return testing::file("megatron", testing::job(j), "megatron_args.sh"); }

TEST(MegatronEmitter, ParallelSizesAndBatch) {
  const std::string a = args(testing::llama70b());
  EXPECT_EQ(flag_value(a, "--tensor-model-parallel-size"), "8");
  EXPECT_EQ(flag_value(a, "--pipeline-model-parallel-size"), "4");
  EXPECT_EQ(flag_value(a, "--micro-batch-size"), "1");
  EXPECT_EQ(flag_value(a, "--global-batch-size"), "512");
  EXPECT_EQ(flag_value(a, "--seq-length"), "8192");
  EXPECT_TRUE(has_flag(a, "--sequence-parallel"));
  EXPECT_EQ(flag_value(a, "--recompute-granularity"), "selective");
  EXPECT_EQ(flag_value(a, "--recompute-method"), "");  // Megatron rejects a method with selective
  EXPECT_TRUE(has_flag(a, "--bf16"));
  EXPECT_EQ(flag_value(a, "--attention-backend"), "flash");
  EXPECT_TRUE(testing::contains(a, "export CUDA_DEVICE_MAX_CONNECTIONS=1"));
  EXPECT_TRUE(testing::contains(a, "exec torchrun --nnodes 32 --nproc-per-node 8"));
  EXPECT_TRUE(emit("megatron", testing::job(testing::llama70b()))[0].executable);
}

TEST(MegatronEmitter, VirtualStagesGiveLayersPerVirtualStage) {
  // --num-layers-per-virtual-pipeline-stage = layers / (pp x vp).
  for (const auto& [pp, vp] : {std::pair{4, 5}, std::pair{4, 2}, std::pair{2, 4}, std::pair{8, 5}}) {
    const int64_t gpus = 8 * pp * 2;
    const std::string a =
        args(with(testing::llama70b(), Json{{"gpus", gpus}, {"pp", pp}, {"vp", vp}, {"global_batch", 64}}));
    EXPECT_EQ(flag_value(a, "--num-layers-per-virtual-pipeline-stage"), std::to_string(80 / (pp * vp))) << pp << vp;
  }
  const std::string one = args(with(testing::llama70b(), Json{{"vp", 1}, {"schedule", "1f1b"}}));
  EXPECT_EQ(flag_value(one, "--num-layers-per-virtual-pipeline-stage"), "");
}

TEST(MegatronEmitter, ZeroStagesMapToTheDistributedOptimizerOrFsdp) {
  EXPECT_FALSE(has_flag(args(with(testing::llama70b(), Json{{"zero", 0}})), "--use-distributed-optimizer"));
  const std::string z1 = args(with(testing::llama70b(), Json{{"zero", 1}}));
  EXPECT_TRUE(has_flag(z1, "--use-distributed-optimizer"));
  EXPECT_FALSE(has_flag(z1, "--use-megatron-fsdp"));
  const std::string z3 = args(with(testing::llama70b(), Json{{"zero", 3}}));
  EXPECT_FALSE(has_flag(z3, "--use-distributed-optimizer"));
  EXPECT_TRUE(has_flag(z3, "--use-megatron-fsdp"));  // Megatron-Core >= 0.14
  EXPECT_EQ(flag_value(z3, "--data-parallel-sharding-strategy"), "optim_grads_params");
  EXPECT_FALSE(testing::contains(z3, "export CUDA_DEVICE_MAX_CONNECTIONS"));  // FSDP needs more than one queue
  // HSDP: shard groups of 4 of the 8 data-parallel ranks -> 2 distributed-optimizer instances.
  const std::string hsdp = args(with(testing::llama70b(), Json{{"zero", 1}, {"dp_shard", 4}}));
  EXPECT_EQ(flag_value(hsdp, "--num-distributed-optimizer-instances"), "2");
  // Overlap flags and the bucket in elements of fp32 gradients (160 MB -> 40M).
  const std::string ov = args(with(testing::llama70b(), Json{{"overlap_param_gather", true}}));
  EXPECT_TRUE(has_flag(ov, "--overlap-grad-reduce"));
  EXPECT_TRUE(has_flag(ov, "--overlap-param-gather"));
  EXPECT_EQ(flag_value(ov, "--ddp-bucket-size"), "40000000");
}

// The DP_ARGS flags a ZeRO stage gets from Megatron-Core 0.`minor`.
std::string dp_flags(int zero, int minor) {
  const auto j = testing::job(with(testing::llama70b(), Json{{"zero", zero}}));
  std::string out;
  for (const auto& g : detail::megatron_command(j, minor).groups)
    if (g.name == "DP_ARGS")
      for (const auto& a : g.args) out += a.flag + (a.value.empty() ? "" : " " + a.value) + " ";
  return out;
}

// ZeRO-2 and ZeRO-3 are Megatron FSDP (optim_grads, optim_grads_params): --use-megatron-fsdp from
// Megatron-Core 0.14, --use-custom-fsdp in 0.12-0.13, nothing before (core_r0.8.0 has neither
// flag: refused; its distributed optimizer is ZeRO-1).
TEST(MegatronEmitter, ShardedZeroIsMegatronFsdpFromCore012) {
  for (const int minor : {15, 14}) {
    EXPECT_EQ(dp_flags(2, minor).rfind("--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads ", 0), 0u)
        << dp_flags(2, minor);
    EXPECT_EQ(dp_flags(3, minor).rfind("--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params ", 0),
              0u)
        << dp_flags(3, minor);
  }
  EXPECT_EQ(dp_flags(2, 13).rfind("--use-custom-fsdp --data-parallel-sharding-strategy optim_grads ", 0), 0u)
      << dp_flags(2, 13);
  EXPECT_EQ(dp_flags(3, 12).rfind("--use-custom-fsdp --data-parallel-sharding-strategy optim_grads_params ", 0), 0u)
      << dp_flags(3, 12);
  EXPECT_FALSE(testing::contains(dp_flags(2, 15), "--ddp-bucket-size"));  // FSDP buckets by its own unit
  const auto z2 = testing::job(with(testing::llama70b(), Json{{"zero", 2}}));
  EXPECT_FALSE(testing::contains(args(with(testing::llama70b(), Json{{"zero", 2}})), "CUDA_DEVICE_MAX_CONNECTIONS=1"));
  EXPECT_EQ(testing::config_error([&] { detail::megatron_command(z2, 11); }),
            "zero: ZeRO-2 is not expressible in Megatron-Core 0.11: its distributed optimizer shards only optimizer "
            "states (ZeRO-1) and keeps a full gradient buffer per rank; Megatron FSDP (optim_grads) arrives in 0.12 "
            "(use --zero 1, or --emit deepspeed)");
  const auto z3 = testing::job(with(testing::llama70b(), Json{{"zero", 3}}));
  EXPECT_EQ(testing::config_error([&] { detail::megatron_command(z3, 8); }),
            "zero: ZeRO-3 is not expressible in Megatron-Core 0.8: Megatron FSDP (--use-custom-fsdp) arrives in 0.12 "
            "(use --zero 1, or --emit deepspeed or torchtitan)");
}

// The release comes from the stack's target: core_r0.8.0 -> 8, core_v0.15.0 -> 15; a stack of
// another framework (or Megatron-LM before Megatron-Core) gets the default and a note.
TEST(MegatronEmitter, VersionFollowsTheStack) {
  EXPECT_EQ(detail::megatron_core_minor(std::string("NVIDIA/Megatron-LM@core_r0.8.0")), 8);
  EXPECT_EQ(detail::megatron_core_minor(std::string("NVIDIA/Megatron-LM@core_v0.15.0")), 15);
  EXPECT_EQ(detail::megatron_core_minor(std::string("NVIDIA/Megatron-LM@core_r0.12.1")), 12);
  EXPECT_FALSE(detail::megatron_core_minor(std::string("NVIDIA/Megatron-LM@v2.5")));
  EXPECT_FALSE(detail::megatron_core_minor(std::string("NVIDIA/NeMo@8e3d65dcfe3504689bfc5b6e67d502780aacad41")));
  EXPECT_FALSE(detail::megatron_core_minor(std::string("NVIDIA/Megatron-LM@core_r0.x")));
  EXPECT_EQ(detail::megatron_core_minor(testing::job(testing::llama70b())), 15);
  EXPECT_EQ(detail::megatron_core_minor(testing::job(with(testing::llama70b(), Json{{"stack", "megatron-core-2024"}}))),
            8);
  const auto nemo = testing::job(with(testing::llama70b(), Json{{"stack", "nemo-24.07"}}));
  EXPECT_EQ(detail::megatron_core_minor(nemo), detail::kMegatronCoreMinor);
  auto noted = [](const models::workload::Job& j) {
    for (const auto& n : detail::megatron_command(j).notes)
      if (testing::contains(n, "not a Megatron-Core release of NVIDIA/Megatron-LM")) return true;
    return false;
  };
  EXPECT_TRUE(noted(nemo));
  EXPECT_FALSE(noted(testing::job(testing::llama70b())));
}

// Megatron-Core 0.8 (megatron-core-2024): only core_r0.8.0's flags; the rest are notes.
TEST(MegatronEmitter, Core08WritesOnlyItsFlags) {
  const Json mixtral = {
      {"model", "deepseek-v3"}, {"cluster", "dgx-h100"},        {"gpus", 64}, {"tp", 8}, {"ep", 8}, {"etp", 1},
      {"global_batch", 64},     {"stack", "megatron-core-2024"}};
  const std::string m = args(mixtral);
  for (const std::string f : {"--expert-tensor-parallel-size", "--moe-ffn-hidden-size", "--moe-layer-freq",
                              "--moe-shared-expert-intermediate-size", "--attention-backend"})
    EXPECT_FALSE(has_flag(m, f)) << f;
  EXPECT_TRUE(has_flag(m, "--expert-model-parallel-size"));
  EXPECT_TRUE(testing::contains(m, "export NVTE_FLASH_ATTN=1"));
  EXPECT_TRUE(testing::contains(m, "has no --expert-tensor-parallel-size")) << m;
  EXPECT_TRUE(testing::contains(m, "has no --moe-layer-freq")) << m;
  const Json cp = {{"model", "llama3-8b"},
                   {"cluster", "dgx-h100"},
                   {"gpus", 64},
                   {"tp", 2},
                   {"cp", 4},
                   {"cp_algo", "ring"},
                   {"seq_len", 131072},
                   {"global_batch", 16},
                   {"stack", "megatron-core-2024"}};
  const std::string c = args(cp);
  EXPECT_EQ(flag_value(c, "--context-parallel-size"), "4");
  // r0.8 runs ring (P2P) context parallelism only, and has no --cp-comm-type to say so.
  EXPECT_FALSE(has_flag(c, "--cp-comm-type"));
  const std::string u = args(with(testing::llama70b(), Json{{"stack", "megatron-core-2024"},
                                                            {"attention", "unfused"},
                                                            {"vp", 1},
                                                            {"schedule", "1f1b"},
                                                            {"gpus", 128},
                                                            {"global_batch", 64},
                                                            {"pp_layout", "18,21,21,20"}}));
  EXPECT_TRUE(testing::contains(u, "export NVTE_FLASH_ATTN=0"));
  EXPECT_TRUE(testing::contains(u, "export NVTE_FUSED_ATTN=0"));
  EXPECT_FALSE(has_flag(u, "--decoder-first-pipeline-num-layers"));
  EXPECT_TRUE(testing::contains(u, "has no --decoder-first/last-pipeline-num-layers")) << u;
}

TEST(MegatronEmitter, ActivationOffloadIsANoteNotAFlag) {
  const std::string a = args(Json{{"model", "llama3-8b"},
                                  {"cluster", "dgx-h100"},
                                  {"gpus", 8},
                                  {"global_batch", 64},
                                  {"recompute", "none"},
                                  {"offload_activations", true}});
  EXPECT_FALSE(testing::contains(a, "--cpu-offloading"));  // no such flag in megatron/training/arguments.py
  EXPECT_TRUE(testing::contains(a, "Activation offload is not expressible here")) << a;
}

TEST(MegatronEmitter, UnevenPipelines) {
  const Json base =
      with(testing::llama70b(), Json{{"gpus", 128}, {"vp", 1}, {"schedule", "1f1b"}, {"global_batch", 64}});
  const std::string fl = args(with(base, Json{{"pp_layout", "18,21,21,20"}}));
  EXPECT_EQ(flag_value(fl, "--decoder-first-pipeline-num-layers"), "18");
  EXPECT_EQ(flag_value(fl, "--decoder-last-pipeline-num-layers"), "20");
  EXPECT_EQ(flag_value(fl, "--pipeline-model-parallel-layout"), "");
  // With virtual stages Megatron wants --num-virtual-stages-per-pipeline-rank, not layers per stage.
  const std::string flv =
      args(with(base, Json{{"vp", 2}, {"schedule", "interleaved"}, {"pp_layout", "9,10,10,11,9,10,10,11"}}));
  EXPECT_EQ(flag_value(flv, "--decoder-first-pipeline-num-layers"), "18");
  EXPECT_EQ(flag_value(flv, "--decoder-last-pipeline-num-layers"), "22");
  EXPECT_EQ(flag_value(flv, "--num-virtual-stages-per-pipeline-rank"), "2");
  EXPECT_EQ(flag_value(flv, "--num-layers-per-virtual-pipeline-stage"), "");
  const std::string custom = args(with(base, Json{{"pp_layout", "19,22,20,19"}}));
  EXPECT_EQ(flag_value(custom, "--pipeline-model-parallel-layout"), "'Et*19|t*22|t*20|t*19L'");
  EXPECT_EQ(flag_value(custom, "--decoder-first-pipeline-num-layers"), "");
}

TEST(MegatronEmitter, ContextParallelCommTypes) {
  const Json cp = {{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"tp", 2}, {"cp", 4},
                   {"seq_len", 131072},    {"global_batch", 16}};
  const std::string ring = args(with(cp, Json{{"cp_algo", "ring"}}));
  EXPECT_EQ(flag_value(ring, "--context-parallel-size"), "4");
  EXPECT_EQ(flag_value(ring, "--cp-comm-type"), "p2p");
  EXPECT_EQ(flag_value(args(with(cp, Json{{"cp_algo", "ulysses"}})), "--cp-comm-type"), "a2a");
  const std::string hybrid = args(with(cp, Json{{"cp_algo", "hybrid"}, {"tp", 4}, {"gpus", 128}}));
  EXPECT_EQ(flag_value(hybrid, "--cp-comm-type"), "a2a+p2p");
  EXPECT_TRUE(testing::contains(hybrid, "--hierarchical-context-parallel-sizes 2 2"));
  // A hybrid whose Ulysses degree is the whole cp group is plain Ulysses.
  const std::string all_a2a = args(with(cp, Json{{"cp_algo", "hybrid"}, {"cp", 2}, {"gpus", 32}}));
  EXPECT_EQ(flag_value(all_a2a, "--cp-comm-type"), "a2a");
  EXPECT_EQ(flag_value(all_a2a, "--hierarchical-context-parallel-sizes"), "");
}

TEST(MegatronEmitter, MixtureOfExperts) {
  const Json mixtral = {
      {"model", "mixtral-8x7b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"tp", 2}, {"pp", 4}, {"ep", 8}, {"zero", 1},
      {"global_batch", 256},     {"seq_len", 4096}};
  const std::string a = args(mixtral);
  EXPECT_EQ(flag_value(a, "--num-experts"), "8");
  EXPECT_EQ(flag_value(a, "--moe-router-topk"), "2");
  EXPECT_EQ(flag_value(a, "--moe-ffn-hidden-size"), "14336");
  EXPECT_EQ(flag_value(a, "--expert-model-parallel-size"), "8");
  EXPECT_EQ(flag_value(a, "--expert-tensor-parallel-size"), "2");
  EXPECT_EQ(flag_value(a, "--moe-token-dispatcher-type"), "alltoall");
  EXPECT_TRUE(has_flag(a, "--moe-grouped-gemm"));
  EXPECT_EQ(flag_value(a, "--moe-layer-freq"), "");  // every layer is MoE
  EXPECT_TRUE(has_flag(a, "--group-query-attention"));
  EXPECT_EQ(flag_value(a, "--num-query-groups"), "8");
  const std::string ds = args(Json{
      {"model", "deepseek-v3"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"tp", 8}, {"ep", 8}, {"global_batch", 64}});
  EXPECT_EQ(flag_value(ds, "--moe-layer-freq"), "'([0]*3+[1]*58)'");
  EXPECT_EQ(flag_value(ds, "--moe-shared-expert-intermediate-size"), "2048");
}

TEST(MegatronEmitter, MoeDispatcherAndBalancing) {
  const Json mixtral = {
      {"model", "mixtral-8x7b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"tp", 2}, {"pp", 4}, {"ep", 8},
      {"global_batch", 256}};
  const std::string a = args(mixtral);
  EXPECT_EQ(flag_value(a, "--moe-router-load-balancing-type"), "aux_loss");
  EXPECT_EQ(flag_value(a, "--moe-aux-loss-coeff"), "1e-2");
  EXPECT_FALSE(has_flag(a, "--moe-enable-deepep"));
  const std::string g = args(with(mixtral, Json{{"moe_dispatcher", "allgather"}}));
  EXPECT_EQ(flag_value(g, "--moe-token-dispatcher-type"), "allgather");
  const std::string f = args(with(mixtral, Json{{"moe_dispatcher", "flex"}, {"moe_balance", "aux_free"}}));
  EXPECT_EQ(flag_value(f, "--moe-token-dispatcher-type"), "flex");
  EXPECT_TRUE(has_flag(f, "--moe-enable-deepep"));
  EXPECT_EQ(flag_value(f, "--moe-router-load-balancing-type"), "none");
  EXPECT_TRUE(has_flag(f, "--moe-router-enable-expert-bias"));
  EXPECT_EQ(flag_value(f, "--moe-router-score-function"), "sigmoid");
  EXPECT_FALSE(has_flag(f, "--moe-aux-loss-coeff"));
}

TEST(MegatronEmitter, RecomputePrecisionAndSchedules) {
  const std::string full = args(with(testing::llama70b(), Json{{"recompute", "full"}}));
  EXPECT_EQ(flag_value(full, "--recompute-method"), "uniform");
  EXPECT_EQ(flag_value(full, "--recompute-num-layers"), "1");
  const std::string block = args(with(testing::llama70b(), Json{{"recompute", "full"}, {"recompute_layers", 3}}));
  EXPECT_EQ(flag_value(block, "--recompute-method"), "block");
  EXPECT_EQ(flag_value(block, "--recompute-num-layers"), "3");
  const std::string fp8 = args(with(testing::llama70b(), Json{{"precision", "fp8"}, {"fp8_param_gather", true}}));
  EXPECT_TRUE(has_flag(fp8, "--bf16"));
  EXPECT_EQ(flag_value(fp8, "--fp8-format"), "hybrid");
  EXPECT_TRUE(has_flag(fp8, "--fp8-param-gather"));
  const std::string zb = args(with(testing::llama70b(), Json{{"vp", 1}, {"schedule", "zb-h1"}, {"stack", "research"}}));
  EXPECT_TRUE(testing::contains(zb, "Megatron-LM has no zero-bubble schedule")) << zb;
  const std::string plain = args(with(testing::llama70b(), Json{{"vp", 1}, {"schedule", "1f1b"}}));
  EXPECT_FALSE(testing::contains(plain, "zero-bubble"));
}

}  // namespace
}  // namespace trainsim::planner::emit

namespace trainsim::planner::emit {
namespace {
TEST(MegatronEmitter, Bf16OptimizerStatesUseThePrecisionAwareOptimizer) {
  const std::string m = args(with(testing::llama70b(), Json{{"optimizer_states", "bf16"}}));
  EXPECT_TRUE(has_flag(m, "--use-precision-aware-optimizer"));
  EXPECT_EQ(flag_value(m, "--exp-avg-dtype"), "bf16");
  EXPECT_EQ(flag_value(m, "--exp-avg-sq-dtype"), "bf16");
  EXPECT_FALSE(has_flag(args(testing::llama70b()), "--use-precision-aware-optimizer"));
}
}  // namespace
}  // namespace trainsim::planner::emit
