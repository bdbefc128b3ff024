// Blackwell precisions (MXFP8, NVFP4) in every emitter, the release fallbacks and the Blackwell
// launch environment (docs/emitters.md, "Blackwell precisions").
#include <gtest/gtest.h>

#include <regex>

#include "emit_test_support.hpp"
#include "models/presets/catalog.hpp"
#include "planner/emit/detail/megatron_args.hpp"
#include "planner/emit/detail/megatron_precision.hpp"

namespace trainsim::planner::emit {
namespace {

using models::compute::Precision;
using testing::contains;
using testing::flag_value;
using testing::has_flag;
using testing::Json;
using testing::with;

std::string args(const Json& j) { return testing::file("megatron", testing::job(j), "megatron_args.sh"); }
std::string recipe(const Json& j) { return testing::file("nemo", testing::job(j), "nemo_recipe.py"); }
std::string toml(const Json& j) { return testing::file("torchtitan", testing::job(j), "torchtitan.toml"); }

// `text` with its wrapped comment lines joined, so that a note can be matched as one phrase.
std::string unwrapped(const std::string& text) {
  static const std::regex wrap(R"(\n# +)");
  return std::regex_replace(text, wrap, " ");
}
bool says(const std::string& text, const std::string& phrase) { return contains(unwrapped(text), phrase); }

// The rendered command line of `j` for Megatron-Core 0.`minor`, notes included.
std::string command(const Json& j, int minor) {
  const auto c = detail::megatron_command(testing::job(j), minor);
  return detail::render_megatron_arrays(c) + detail::render_megatron_notes(c);
}

TEST(BlackwellMegatron, Mxfp8IsTheMxfp8RecipeWithItsParameterGather) {
  const std::string m = args(with(testing::llama70b_b200("mxfp8"), Json{{"fp8_param_gather", true}}));
  EXPECT_TRUE(has_flag(m, "--bf16"));
  EXPECT_EQ(flag_value(m, "--fp8-format"), "e4m3");
  EXPECT_EQ(flag_value(m, "--fp8-recipe"), "mxfp8");
  EXPECT_TRUE(has_flag(m, "--fp8-param-gather"));
  EXPECT_TRUE(has_flag(m, "--reuse-grad-buf-for-mxfp8-param-ag"));
  EXPECT_FALSE(has_flag(m, "--fp4-format"));
  // Without the parameter gather: neither flag, and a note on Megatron-Core's memory warning.
  const std::string plain = args(testing::llama70b_b200("mxfp8"));
  EXPECT_FALSE(has_flag(plain, "--fp8-param-gather"));
  EXPECT_FALSE(has_flag(plain, "--reuse-grad-buf-for-mxfp8-param-ag"));
  EXPECT_TRUE(says(plain, "MXFP8 without --fp8-param-gather")) << plain;
}

// BF16 first/last layers: Megatron-Core 0.14+'s flags, NeMo's plugin fields, torchtitan's filter.
TEST(BlackwellEmitters, Bf16FirstAndLastLayers) {
  const Json edges = with(testing::llama70b_b200("nvfp4"), Json{{"bf16_first_layers", 2}, {"bf16_last_layers", 1}});
  const std::string m = args(edges);
  EXPECT_TRUE(has_flag(m, "--first-last-layers-bf16")) << m;
  EXPECT_EQ(flag_value(m, "--num-layers-at-start-in-bf16"), "2");
  EXPECT_EQ(flag_value(m, "--num-layers-at-end-in-bf16"), "1");
  EXPECT_FALSE(has_flag(args(testing::llama70b_b200("nvfp4")), "--first-last-layers-bf16"));
  const std::string r = recipe(edges);
  EXPECT_TRUE(contains(r, "    recipe.trainer.plugins.first_last_layers_bf16 = True\n")) << r;
  EXPECT_TRUE(contains(r, "    recipe.trainer.plugins.num_layers_at_start_in_bf16 = 2\n"));
  EXPECT_TRUE(contains(r, "    recipe.trainer.plugins.num_layers_at_end_in_bf16 = 1\n"));
  // FP8 with BF16 layers: Megatron-Core refuses them under delayed scaling, so current scaling.
  const std::string f = args(with(testing::llama70b_b200("fp8"), Json{{"bf16_first_layers", 1}}));
  EXPECT_TRUE(has_flag(f, "--first-last-layers-bf16"));
  EXPECT_EQ(flag_value(f, "--fp8-recipe"), "tensorwise");
  const std::string t =
      toml(with(testing::llama70b_b200("mxfp8"), Json{{"bf16_first_layers", 2}, {"bf16_last_layers", 1}}));
  EXPECT_TRUE(contains(t, "filter_fqns = [\"output\", \"layers.0.\", \"layers.1.\", \"layers.79.\"]")) << t;
}

TEST(BlackwellMegatron, Nvfp4IsTheFp4FormatAndRecipe) {
  const std::string n = args(with(testing::llama70b_b200("nvfp4"), Json{{"fp8_param_gather", true}}));
  EXPECT_TRUE(has_flag(n, "--bf16"));
  EXPECT_EQ(flag_value(n, "--fp4-format"), "e2m1");
  EXPECT_EQ(flag_value(n, "--fp4-recipe"), "nvfp4");
  EXPECT_TRUE(has_flag(n, "--fp4-param-gather"));
  EXPECT_FALSE(has_flag(n, "--fp8-format"));  // Megatron-LM refuses --fp4-format with --fp8-format
  EXPECT_FALSE(has_flag(n, "--fp8-param-gather"));
  EXPECT_TRUE(says(n, "NVFP4 parameter all-gather")) << n;
  // NVIDIA's NVFP4 recipes turn TP communication overlap off: a note when the plan overlaps it.
  const std::string ov = args(with(testing::llama70b_b200("nvfp4"), Json{{"tp_comm_overlap", true}}));
  EXPECT_TRUE(has_flag(ov, "--tp-comm-overlap"));
  EXPECT_TRUE(says(ov, "NVFP4 with --tp-comm-overlap")) << ov;
}

// Per-tensor FP8 stays per-tensor on Blackwell (hybrid format), scaled as the plan's stack scales
// it: current scaling (tensorwise) on the 2025 stacks, Megatron-LM's default (delayed) otherwise.
TEST(BlackwellMegatron, Fp8StaysPerTensorOnBlackwell) {
  const std::string f = args(testing::llama70b_b200("fp8"));
  EXPECT_EQ(flag_value(f, "--fp8-format"), "hybrid");
  EXPECT_EQ(flag_value(f, "--fp8-recipe"), "tensorwise") << f;
  Json delayed = models::presets::find("stacks", "megatron-core-2025", "stack");
  delayed["name"] = "delayed-scaling";
  delayed["kernels"]["fp8_recipe"] = "delayed";
  EXPECT_FALSE(has_flag(args(with(testing::llama70b_b200("fp8"), Json{{"stack", delayed}})), "--fp8-recipe"));
}

// An older release gets the nearest recipe it has, and a note naming what it lacks.
TEST(BlackwellMegatron, OlderReleasesFallBackToTheNearestRecipe) {
  EXPECT_EQ(detail::megatron_runnable_precision(Precision::kNvfp4, 15), Precision::kNvfp4);
  EXPECT_EQ(detail::megatron_runnable_precision(Precision::kNvfp4, 14), Precision::kMxfp8);
  EXPECT_EQ(detail::megatron_runnable_precision(Precision::kMxfp8, 12), Precision::kMxfp8);
  EXPECT_EQ(detail::megatron_runnable_precision(Precision::kMxfp8, 11), Precision::kFp8);
  EXPECT_EQ(detail::megatron_runnable_precision(Precision::kNvfp4, 8), Precision::kFp8);
  EXPECT_EQ(detail::megatron_runnable_precision(Precision::kBf16, 8), Precision::kBf16);
  const Json nv = with(testing::llama70b_b200("nvfp4"), Json{{"fp8_param_gather", true}});
  const std::string at14 = command(nv, 14);
  EXPECT_EQ(flag_value(at14, "--fp8-recipe"), "mxfp8");
  EXPECT_TRUE(has_flag(at14, "--reuse-grad-buf-for-mxfp8-param-ag"));
  EXPECT_FALSE(has_flag(at14, "--fp4-format"));
  EXPECT_TRUE(says(at14, "NVFP4: Megatron-Core 0.14 has no --fp4-format (0.15)")) << at14;
  const std::string at8 = command(with(testing::llama70b_b200("mxfp8"), Json{{"vp", 1}, {"schedule", "1f1b"}}), 8);
  EXPECT_EQ(flag_value(at8, "--fp8-format"), "hybrid");
  EXPECT_FALSE(has_flag(at8, "--fp8-recipe"));
  EXPECT_TRUE(says(at8, "MXFP8: Megatron-Core 0.8 has no --fp8-recipe mxfp8 (0.12)")) << at8;
}

// From Megatron-Core 0.12 Megatron-LM asks for CUDA_DEVICE_MAX_CONNECTIONS=1 only before
// Blackwell; on Blackwell the launch exports 32, as Megatron-Bridge's performance scripts do.
TEST(BlackwellMegatron, DeviceConnectionsOnBlackwell) {
  const std::string b = args(testing::llama70b_b200("bf16"));
  EXPECT_TRUE(contains(b, "export CUDA_DEVICE_MAX_CONNECTIONS=32")) << b;
  EXPECT_FALSE(contains(b, "CUDA_DEVICE_MAX_CONNECTIONS=1 "));
  EXPECT_TRUE(contains(command(with(testing::llama70b_b200("bf16"), Json{{"vp", 1}, {"schedule", "1f1b"}}), 8),
                       "export CUDA_DEVICE_MAX_CONNECTIONS=1 "));
  EXPECT_TRUE(contains(args(testing::llama70b()), "export CUDA_DEVICE_MAX_CONNECTIONS=1 "));  // H100
}

TEST(BlackwellMegatron, MegatronBridgeTargetsNameTheirMegatronCore) {
  EXPECT_EQ(detail::megatron_core_minor(std::string("NVIDIA-NeMo/Megatron-Bridge@v0.2.0")), 15);
  EXPECT_EQ(detail::megatron_core_minor(std::string("NVIDIA-NeMo/Megatron-Bridge@v0.1.0rc4")), 14);
  EXPECT_EQ(detail::megatron_core_minor(std::string("NVIDIA-NeMo/Megatron-Bridge@25.11")), 15);
  EXPECT_EQ(detail::megatron_core_minor(std::string("NVIDIA-NeMo/Megatron-Bridge@25.09")), 14);
  EXPECT_EQ(detail::megatron_core_minor(std::string("NVIDIA-NeMo/Megatron-Bridge@r0.2.0")), 15);
  // A stack on Megatron-Bridge 25.11 writes Megatron-LM's 0.15 flags and says where they go.
  auto j = testing::job(testing::llama70b_b200("nvfp4"));
  j.stack.name = "bridge";
  j.stack.target = "NVIDIA-NeMo/Megatron-Bridge@v0.2.0";
  const auto c = detail::megatron_command(j);
  const std::string m = detail::render_megatron_arrays(c) + detail::render_megatron_notes(c);
  EXPECT_EQ(flag_value(m, "--fp4-format"), "e2m1");
  EXPECT_TRUE(says(m, "which runs Megatron-Core 0.15")) << m;
  EXPECT_TRUE(says(testing::file("nemo", j, "nemo_recipe.py"), "cfg.mixed_precision = \"bf16_with_nvfp4_mixed\""));
  EXPECT_FALSE(detail::megatron_core_minor(std::string("NVIDIA-NeMo/Megatron-Bridge@v0.6.0")));
}

TEST(BlackwellNemo, Mxfp8FactoryAndTheGradientBufferReuse) {
  const std::string r = recipe(with(testing::llama70b_b200("mxfp8"), Json{{"fp8_param_gather", true}}));
  EXPECT_TRUE(contains(r, "import bf16_with_mxfp8_mixed\n"));
  EXPECT_TRUE(contains(r, "    recipe.trainer.plugins = bf16_with_mxfp8_mixed()\n"));
  EXPECT_TRUE(contains(r, "    recipe.trainer.plugins.fp8_param_gather = True\n"));
  EXPECT_TRUE(contains(r, "        fp8_param_gather=True,\n        reuse_grad_buf_for_mxfp8_param_ag=True,\n"));
  EXPECT_TRUE(contains(r, "    recipe.optim.config.reuse_grad_buf_for_mxfp8_param_ag = True\n"));
  const std::string plain = recipe(testing::llama70b_b200("mxfp8"));
  EXPECT_TRUE(contains(plain, "    recipe.trainer.plugins.fp8_param_gather = False\n"));
  EXPECT_FALSE(contains(plain, "reuse_grad_buf_for_mxfp8_param_ag"));
}

// NeMo 2.x has no NVFP4: MXFP8, the nearest, with a note naming Megatron-Bridge's recipe.
TEST(BlackwellNemo, Nvfp4IsMxfp8WithANote) {
  const std::string r = recipe(testing::llama70b_b200("nvfp4"));
  EXPECT_TRUE(contains(r, "    recipe.trainer.plugins = bf16_with_mxfp8_mixed()\n"));
  EXPECT_TRUE(says(r, "NVFP4: NeMo 2.x has no NVFP4 recipe")) << r;
  EXPECT_TRUE(says(r, "bf16_with_nvfp4_mixed"));
}

TEST(BlackwellTorchtitan, Mxfp8ConvertersAndCompile) {
  const std::string t = toml(with(testing::llama70b_b200("mxfp8"), Json{{"tp", 1}, {"pp", 8}, {"vp", 1}}));
  EXPECT_TRUE(contains(t, "converters = [\"quantize.linear.mx\"]\n")) << t;
  EXPECT_TRUE(contains(t, "[quantize.linear.mx]"));
  EXPECT_TRUE(contains(t, "recipe_name = \"mxfp8_cublas\"\n"));
  EXPECT_TRUE(contains(t, "filter_fqns = [\"output\"]"));
  EXPECT_FALSE(contains(t, "quantize.linear.float8"));
  // Compiled as the plan is priced: not behind its back (the casts want it: a note says so).
  EXPECT_FALSE(contains(t, "[compile]\nenable")) << t;
  EXPECT_TRUE(says(t, "MXFP8 without torch.compile (as the plan is priced)")) << t;
  const std::string compiled =
      toml(with(testing::llama70b_b200("mxfp8"),
                Json{{"tp", 1}, {"pp", 8}, {"vp", 1}, {"stack", "torchtitan"}, {"zero", 3}, {"torch_compile", true}}));
  EXPECT_TRUE(contains(compiled, "[compile]\nenable = true\n")) << compiled;
  EXPECT_FALSE(says(compiled, "MXFP8 without torch.compile"));
  // With TP torchtitan v0.2.1 refuses to compile an MXFP8 model: no compile, no async TP, a note.
  const std::string tp = toml(with(testing::llama70b_b200("mxfp8"), Json{{"tp_comm_overlap", true}}));
  EXPECT_FALSE(contains(tp, "[compile]\nenable"));
  EXPECT_FALSE(contains(tp, "enable_async_tensor_parallel"));
  EXPECT_TRUE(says(tp, "async TP (which needs it) is not written")) << tp;
  // MoE: the routed experts' grouped GEMMs in MXFP8 too.
  const std::string moe = toml(Json{{"model", "deepseek-v3"},
                                    {"cluster", "dgx-b200"},
                                    {"gpus", 256},
                                    {"pp", 8},
                                    {"ep", 32},
                                    {"global_batch", 256},
                                    {"precision", "mxfp8"}});
  EXPECT_TRUE(contains(moe, "converters = [\"quantize.linear.mx\", \"quantize.grouped_mm.mx\"]\n")) << moe;
  EXPECT_TRUE(contains(moe, "[quantize.grouped_mm.mx]\nrecipe_name = \"mxfp8\"\nfqns = [\"experts\"]"));
}

TEST(BlackwellTorchtitan, Nvfp4IsMxfp8WithANote) {
  const std::string t = toml(testing::llama70b_b200("nvfp4"));
  EXPECT_TRUE(contains(t, "converters = [\"quantize.linear.mx\"]\n"));
  EXPECT_TRUE(says(t, "NVFP4: torchtitan v0.2.1 has no NVFP4 training")) << t;
}

TEST(BlackwellDeepSpeed, BlockScaledPrecisionsAreBf16WithANote) {
  for (const std::string p : {"mxfp8", "nvfp4"}) {
    const auto j = testing::job(testing::llama70b_b200(p));
    const Json c = Json::parse(testing::file("deepspeed", j, "ds_config.json"));
    EXPECT_TRUE(c["bf16"]["enabled"].get<bool>()) << p;
    const std::string l = testing::file("deepspeed", j, "megatron_deepspeed.sh");
    EXPECT_TRUE(has_flag(l, "--bf16")) << p;
    EXPECT_TRUE(says(l, "Megatron-DeepSpeed has no block-scaled (MXFP8 or NVFP4) GEMMs")) << l;
  }
}

// The Slurm script carries the Megatron-LM precision flags and the Blackwell environment.
TEST(BlackwellSlurm, CarriesTheMegatronRecipe) {
  const std::string s = testing::file("slurm", testing::job(testing::llama70b_b200("nvfp4")), "train.sbatch");
  EXPECT_EQ(flag_value(s, "--fp4-format"), "e2m1");
  EXPECT_TRUE(contains(s, "CUDA_DEVICE_MAX_CONNECTIONS=32")) << s;
}

// On NVL72 the node is a 4-GPU tray and the NVLink domain a rack of 18: --segment keeps each group
// of nodes inside one rack (Slurm's topology/block plugin).
TEST(BlackwellSlurm, SegmentsKeepNodesInsideTheNvlinkDomain) {
  auto sbatch = [](const Json& j) { return testing::file("slurm", testing::job(j), "train.sbatch"); };
  const Json nvl = with(testing::llama70b_b200("mxfp8"), Json{{"cluster", "gb200-nvl72"}});
  EXPECT_TRUE(contains(sbatch(nvl),
                       "#SBATCH --nodes=16\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n"
                       "#SBATCH --segment=16\n"));
  EXPECT_TRUE(contains(sbatch(with(nvl, Json{{"gpus", 288}, {"global_batch", 288}})), "#SBATCH --segment=18\n"));
  // 256 GPUs: the job's nvlink_segment is 64 of each rack's 72 (16 trays), and Slurm's segments
  // match the simulated placement.
  const std::string odd = sbatch(with(nvl, Json{{"gpus", 256}}));
  EXPECT_TRUE(contains(odd, "#SBATCH --segment=16\n")) << odd;
  EXPECT_FALSE(says(odd, "are not a multiple of")) << odd;
  // 152 GPUs (38 trays): no whole-tray share of at least half a rack divides them, so the plan packs
  // racks of 18 trays and Slurm's segments of 2 differ; the script says so.
  const std::string packed = sbatch(with(nvl, Json{{"gpus", 152}, {"global_batch", 152}}));
  EXPECT_TRUE(says(packed, "are not a multiple of 18")) << packed;
  EXPECT_FALSE(contains(sbatch(testing::llama70b_b200("mxfp8")), "--segment"));  // 8-GPU NVLink nodes
}

TEST(BlackwellMegatron, CudaGraphsAreTheImplAndScopeFlags) {
  // Megatron-Bridge 25.11's Llama 3 8B recipe: the local whole-iteration graph.
  const Json it = with(testing::llama70b_b200("mxfp8"), Json{{"cuda_graph_scope", "full_iteration"}});
  const std::string v15 = command(it, 15);
  EXPECT_EQ(flag_value(v15, "--cuda-graph-impl"), "local");
  EXPECT_EQ(flag_value(v15, "--cuda-graph-scope"), "full_iteration");
  const std::string v14 = command(it, 14);  // before cuda_graph_impl: --enable-cuda-graph
  EXPECT_TRUE(has_flag(v14, "--enable-cuda-graph"));
  EXPECT_FALSE(has_flag(v14, "--cuda-graph-impl"));
  EXPECT_EQ(flag_value(v14, "--cuda-graph-scope"), "full_iteration");
  const std::string layer = command(with(testing::llama70b_b200("mxfp8"), Json{{"cuda_graph_scope", "attn"}}), 15);
  EXPECT_EQ(flag_value(layer, "--cuda-graph-impl"), "transformer_engine");
  EXPECT_EQ(flag_value(layer, "--cuda-graph-scope"), "attn");
  EXPECT_FALSE(has_flag(command(testing::llama70b_b200("mxfp8"), 15), "--cuda-graph-impl"));
  // The MoE recipes' scope list is more than the pinned flag takes: attn is emitted, the rest noted.
  const Json moe{{"model", "qwen3-30b-a3b"},
                 {"cluster", "dgx-b200"},
                 {"stack", "megatron-bridge-2025"},
                 {"gpus", 8},
                 {"ep", 8},
                 {"global_batch", 64},
                 {"cuda_graph_scope", Json{"attn", "moe_router", "moe_preprocess"}}};
  const std::string m = command(moe, 15);
  EXPECT_EQ(flag_value(m, "--cuda-graph-scope"), "attn");
  EXPECT_TRUE(says(m, "CUDA graph scope moe_router,moe_preprocess")) << m;
}

}  // namespace
}  // namespace trainsim::planner::emit
