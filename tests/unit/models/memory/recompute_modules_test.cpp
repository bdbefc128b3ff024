// Per-module selective recompute (models/llm/recompute_modules.hpp) and FP8 primary weights
// (fp8_param_gather): what each module stops keeping, what it costs to redo, how jobs name them.
#include "models/llm/recompute_modules.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/memory/footprint.hpp"
#include "models/workload/dag/stage_memory.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models {
namespace {

using sim::config::Json;
using testing::with;

// Llama 3 8B at 8K tokens, one micro-batch, no TP: T = 8192, h = 4096, f = 14336, SwiGLU.
double layer_bytes(const std::string& recompute, std::optional<uint32_t> modules, double quantized = 0.0) {
  const llm::ModelSpec m = testing::model("llama3-8b");
  return static_cast<double>(
      memory::layer_activation_bytes(m, 1, 8192, 1, false, recompute, true, quantized, modules).count());
}

TEST(RecomputeModules, EachModuleDropsWhatOnlyItNeeded) {
  const double T = 8192, h = 4096, f = 14336;
  const double none = layer_bytes("none", std::nullopt);
  // Fused attention keeps no scores: the attention core's recompute keeps the same.
  EXPECT_EQ(layer_bytes("selective", std::nullopt), none);
  EXPECT_EQ(layer_bytes("selective", llm::kRecomputeCoreAttn), none);
  // layernorm: the two norm outputs (QKV and fc1 inputs), 2 bytes each.
  EXPECT_NEAR(layer_bytes("selective", llm::kRecomputeLayernorm), none - 2 * T * h * 2, 1.0);
  // mlp: the fc1 input, the two fc1 outputs (gate, up) and the activation output.
  EXPECT_NEAR(layer_bytes("selective", llm::kRecomputeMlp), none - T * h * 2 - T * 3 * f * 2, 1.0);
  // Together: the fc1 input is dropped once.
  EXPECT_NEAR(layer_bytes("selective", llm::kRecomputeLayernorm | llm::kRecomputeMlp),
              none - 2 * T * h * 2 - T * 3 * f * 2, 1.0);
  // Under FP8 the norm outputs were kept as 1-byte casts: layernorm saves 1 byte each.
  EXPECT_NEAR(layer_bytes("selective", llm::kRecomputeLayernorm, 1.0),
              layer_bytes("none", std::nullopt, 1.0) - 2 * T * h, 1.0);
  // Modules only count under selective recompute.
  EXPECT_EQ(layer_bytes("none", llm::kRecomputeLayernorm), none);
}

Json mini_moe(const Json& extra = Json::object()) {
  return with(Json{{"model", testing::mini_deepseek(1024, 0)},
                   {"stack", "research"},
                   {"cluster", "dgx-h100"},
                   {"gpus", 8},
                   {"ep", 8},
                   {"global_batch", 16}},
              extra);
}

int64_t chunk_bytes(const Json& j) {
  const workload::Job job = testing::job(j);
  return workload::chunk_activation_bytes(job, 0);
}

TEST(RecomputeModules, MoeModulesShrinkTheMoeBlock) {
  auto sel = [](const Json& modules) { return Json{{"recompute", "selective"}, {"recompute_modules", modules}}; };
  const int64_t core = chunk_bytes(mini_moe({{"recompute", "selective"}}));
  const int64_t act = chunk_bytes(mini_moe(sel({"moe_act"})));
  const int64_t shared = chunk_bytes(mini_moe(sel({"shared_experts"})));
  const int64_t mla = chunk_bytes(mini_moe(sel({"mla_up_proj"})));
  const int64_t whole = chunk_bytes(mini_moe(sel({"moe"})));
  const int64_t ln = chunk_bytes(mini_moe(sel("layernorm,moe_act")));
  EXPECT_LT(act, core);
  EXPECT_LT(shared, core);
  EXPECT_LT(mla, core);
  EXPECT_LT(whole, act);
  EXPECT_LT(whole, shared);
  EXPECT_LT(ln, act);
  EXPECT_EQ(chunk_bytes(mini_moe(sel({"core_attn"}))), core);
}

TEST(RecomputeModules, RedoneModulesCostTime) {
  auto recompute_time = [](const Json& j) {
    const workload::SimulationResult r = workload::simulate(testing::job(j));
    EXPECT_TRUE(r.fits);
    return std::make_pair(r.stages[0].time.recompute, r.iteration);
  };
  auto sel = [](const Json& modules) { return Json{{"recompute", "selective"}, {"recompute_modules", modules}}; };
  const auto base = recompute_time(mini_moe());
  const auto ln = recompute_time(mini_moe(sel({"layernorm"})));
  const auto act = recompute_time(mini_moe(sel({"moe_act"})));
  const auto whole = recompute_time(mini_moe(sel({"moe"})));
  const auto mlp = recompute_time(mini_moe(sel({"mlp"})));  // the dense first layer's MLP
  EXPECT_EQ(base.first, sim::Time::zero());
  for (const auto& r : {ln, act, whole, mlp}) {
    EXPECT_GT(r.first, sim::Time::zero());
    EXPECT_GT(r.second, base.second);
  }
  // The whole block (its GEMMs and all-to-alls again) costs more than its activation alone.
  EXPECT_GT(whole.first, act.first);
  EXPECT_GT(whole.second, act.second);
}

std::string config_error(const Json& j) {
  try {
    testing::job(j);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RecomputeModules, JobsNameThemOrAreTold) {
  // Without --recompute selective, naming modules is an error naming the field and the fix.
  const std::string no_sel = config_error(mini_moe({{"recompute_modules", {"moe_act"}}}));
  EXPECT_NE(no_sel.find("recompute_modules"), std::string::npos) << no_sel;
  EXPECT_NE(no_sel.find("--recompute selective"), std::string::npos) << no_sel;
  const std::string typo = config_error(mini_moe({{"recompute", "selective"}, {"recompute_modules", "moe_ac"}}));
  EXPECT_NE(typo.find("did you mean \"moe_act\""), std::string::npos) << typo;
  EXPECT_NE(config_error(mini_moe({{"recompute", "selective"}, {"recompute_modules", Json::array()}})).find("empty"),
            std::string::npos);
  // A stack that only recomputes the attention core refuses the rest.
  const std::string stack = config_error(with(
      mini_moe({{"recompute", "selective"}, {"recompute_modules", {"layernorm"}}}), {{"stack", "megatron-core-2024"}}));
  EXPECT_NE(stack.find("recompute_modules"), std::string::npos) << stack;
  // The default under selective is the attention core; the report's config lists the modules.
  const workload::Job j =
      testing::job(mini_moe({{"recompute", "selective"}, {"recompute_modules", "layernorm,moe_act"}}));
  EXPECT_EQ(j.recompute_modules, llm::kRecomputeLayernorm | llm::kRecomputeMoeAct);
  EXPECT_EQ(j.to_json().at("recompute_modules"), (Json{"layernorm", "moe_act"}));
  EXPECT_EQ(testing::job(mini_moe({{"recompute", "selective"}})).recompute_modules, llm::kRecomputeCoreAttn);
  EXPECT_TRUE(testing::job(mini_moe()).to_json().at("recompute_modules").is_null());
  EXPECT_EQ(llm::recompute_modules_string(llm::kRecomputeMoe | llm::kRecomputeCoreAttn), "core_attn,moe");
}

TEST(RecomputeModules, TorchOpCheckpointingKeepsEveryOtherMatmul) {
  // Llama 3 8B, T = 8192, no TP: input h, wq 4096, wv 1024, w1 14336, w2 4096 (the 1st, 3rd, 5th
  // and 7th matmuls), the attention output 4096 (bf16) and 32 fp32 log-sum-exps per token.
  const double T = 8192;
  EXPECT_NEAR(layer_bytes("selective", llm::kRecomputeOps),
              T * (4096 + 4096 + 1024 + 14336 + 4096 + 4096) * 2 + T * 32 * 4, 1.0);
  EXPECT_LT(layer_bytes("selective", llm::kRecomputeOps), 0.5 * layer_bytes("none", std::nullopt));
  // torchtitan's selective checkpointing is this policy; it redoes the norms, RoPE, the
  // activation and the wk, wo and w3 matmuls before each backward.
  const Json tt{{"model", "llama3-8b"}, {"stack", "torchtitan"}, {"cluster", "dgx-h100"}, {"gpus", 8},
                {"global_batch", 8},    {"seq_len", 2048}};
  const workload::Job j = testing::job(with(tt, {{"recompute", "selective"}}));
  EXPECT_EQ(j.recompute_modules, llm::kRecomputeOps);
  EXPECT_EQ(j.to_json().at("recompute_modules"), (Json{"ops"}));
  const workload::SimulationResult none = workload::simulate(testing::job(tt)), ops = workload::simulate(j);
  EXPECT_GT(ops.stages[0].time.recompute, sim::Time::zero());
  EXPECT_GT(ops.iteration, none.iteration);
  EXPECT_LT(ops.stages[0].memory.activation_per_chunk, none.stages[0].memory.activation_per_chunk);
  // Megatron's modules are not torchtitan's, and the op policy is not Megatron's.
  EXPECT_NE(
      config_error(with(tt, {{"recompute", "selective"}, {"recompute_modules", {"layernorm"}}})).find("torchtitan"),
      std::string::npos);
  EXPECT_NE(
      config_error(mini_moe({{"recompute", "selective"}, {"recompute_modules", {"ops"}}})).find("recompute_modules"),
      std::string::npos);
}

TEST(EagerOps, TorchCompileFusesWhatEagerPyTorchRunsOpByOp) {
  const Json tt{{"model", "llama3-8b"}, {"stack", "torchtitan"}, {"cluster", "dgx-h100"}, {"gpus", 8},
                {"global_batch", 8},    {"seq_len", 2048}};
  const workload::SimulationResult eager = workload::simulate(testing::job(tt)),
                                   compiled = workload::simulate(testing::job(with(tt, {{"torch_compile", true}})));
  // RMSNorm in fp32 op by op, complex RoPE, silu * mul and repeat_kv cost HBM passes and launches
  // that the fused kernels do not; the GEMMs and attention are the same.
  EXPECT_GT(eager.iteration, compiled.iteration);
  EXPECT_LT(eager.iteration.seconds(), 1.5 * compiled.iteration.seconds());
  EXPECT_EQ(eager.model_flops, compiled.model_flops);
  // Per element, an eager RMSNorm forward moves 36 bytes in 8 kernels against the fused 4 in one.
  llm::LayerShape s{1, 2048, 1, false, true};
  const llm::ModelSpec m = testing::model("llama3-8b");
  const llm::LayerKernels fused = llm::layer_kernels(m, s);
  s.eager_elementwise = true;
  const llm::LayerKernels op_by_op = llm::layer_kernels(m, s);
  auto norm = [](const llm::Kernels& ks, int& n) {
    double bytes = 0;
    n = 0;
    for (const auto& k : ks)
      if (k.name == "attn.norm.fwd") bytes += k.bytes, ++n;
    return bytes;
  };
  int n_fused = 0, n_eager = 0;
  EXPECT_DOUBLE_EQ(norm(op_by_op.attn.pre_fwd, n_eager), 9.0 * norm(fused.attn.pre_fwd, n_fused));
  EXPECT_EQ(n_fused, 1);
  EXPECT_EQ(n_eager, 8);
  // Megatron-Core's kernels are fused already: it has nothing to compile.
  const std::string refused = config_error(with(mini_moe(), {{"torch_compile", true}}));
  EXPECT_NE(refused.find("torch_compile"), std::string::npos) << refused;
}

// torchtitan before 2025 compiled the blocks but not the loss: the fp32 cross-entropy stays eager
// ops, with their time and the stack's eager_logits_bytes per logit alive in its backward.
TEST(EagerOps, CompileLossFusesTheLossOnlyWhenTheJobCompilesIt) {
  const Json tt{{"model", "llama3-8b"}, {"stack", "torchtitan"}, {"cluster", "dgx-h100"}, {"gpus", 8},
                {"global_batch", 8},    {"seq_len", 2048},       {"torch_compile", true}};
  const workload::Job both = testing::job(tt), blocks = testing::job(with(tt, {{"compile_loss", false}}));
  EXPECT_FALSE(both.eager_loss());
  EXPECT_TRUE(blocks.eager_loss());
  EXPECT_EQ(blocks.to_json().at("compile_loss"), false);
  const workload::SimulationResult a = workload::simulate(both), b = workload::simulate(blocks);
  EXPECT_GT(b.iteration, a.iteration);
  // Only the loss is eager: the blocks are fused in both (much less than the fully eager step).
  const workload::SimulationResult eager = workload::simulate(testing::job(with(tt, {{"torch_compile", false}})));
  EXPECT_LT(b.iteration - a.iteration, eager.iteration - b.iteration);
  // The loss's working set: eager_logits_bytes (12) instead of logits_bytes (6) per logit, of
  // 2,048 tokens x 128,256 vocabulary entries on each GPU.
  const double logits = 2048.0 * 128256.0;
  EXPECT_NEAR(static_cast<double>((b.stages[0].memory.buffers - a.stages[0].memory.buffers).count()),
              (both.stack.memory.eager_logits_bytes - both.stack.memory.logits_bytes) * logits, 1e6);
  // Without torch_compile the flag changes nothing.
  const workload::Job plain = testing::job(with(tt, {{"torch_compile", false}, {"compile_loss", false}}));
  EXPECT_EQ(workload::simulate(plain).iteration, eager.iteration);
}

TEST(Fp8ParamGather, WeightsAreTheirOwnFp8Copy) {
  const llm::ModelSpec m = testing::model("llama3-8b");
  memory::StageMemoryInput in;
  in.model = &m;
  in.layers = in.layers_per_chunk = 32;
  in.seq_len = 8192;
  in.fp8 = true;
  in.quantized_bytes = 1.0;
  in.fp8_weight_cache = 2.0;  // value + transpose
  const double transformer = 32 * m.layer_parameters();
  const memory::StageMemory bf16_weights = memory::stage_memory(in);
  in.fp8_params = true;
  const memory::StageMemory fp8_weights = memory::stage_memory(in);
  // The layers' 16-bit weights become 1-byte FP8 weights, and the cache keeps only the transpose.
  EXPECT_NEAR(static_cast<double>((bf16_weights.weights - fp8_weights.weights).count()), transformer, 2.0);
  EXPECT_NEAR(static_cast<double>((bf16_weights.fp8_state - fp8_weights.fp8_state).count()), transformer, 2.0);
  // A stack without cached FP8 weights (torchtitan's float8 all-gather) keeps 16-bit weights.
  in.fp8_weight_cache = 0.0;
  EXPECT_EQ(memory::stage_memory(in).weights, bf16_weights.weights);
  in.fp8_weight_cache = 2.0;
  // Without FP8 training the flag changes nothing here.
  in.fp8 = false;
  EXPECT_EQ(memory::stage_memory(in).weights, bf16_weights.weights);
}

}  // namespace
}  // namespace trainsim::models
