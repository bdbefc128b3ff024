// Blackwell pre-training runs, as recorded in ../shared/data/published_dev_2026.json:
// Megatron-Bridge 25.09 and 25.11 (NeMo containers) on DGX-B200, GB200 NVL72 and GB300 NVL72
// (Llama 3 8B-405B, DeepSeek-V3, Qwen3 30B-A3B / 235B-A22B, GPT-OSS 120B; BF16, FP8 current
// scaling, MXFP8) and NeMo 25.02-25.07 FP8 runs on B200 / GB200 (GPT-3 175B, Llama 3 / 3.1 / 4
// Scout, Nemotron-4 15B / 340B, Mixtral 8x7B / 8x22B). Tokens/s per GPU.
//
// Mapping (what the rows say, and what trainsim assumes where they are silent):
// - cluster: B200 -> dgx-b200, GB200 -> gb200-nvl72, GB300 -> gb300-nvl72 (72-GPU NVLink domain,
//   4-GPU trays; the recipes set NVLINK_DOMAIN_SIZE=72).
// - stack: megatron-bridge-2025 (the performance recipes of Megatron-Bridge 25.09 / 25.11 on
//   Megatron-Core 0.14 / 0.15: distributed optimizer, BF16 gradient reduction); the NeMo 25.0x
//   rows (NeMo 2.0 on Megatron-Core 0.11-0.13, the same performance scripts' lineage) use it too.
// - recipe knobs (Megatron-Bridge v0.2.0 / r0.1.0 scripts/performance): fp8_param_gather on the
//   FP8-CS rows, BF16 Adam moments on DeepSeek-V3, activation offload of N layers with FSDP.
//   CUDA graphs (cuda_graphs_of below).
// - precision: "BF16" bf16; "FP8-CS" and the 25.02-25.07 "FP8 (per-tensor, current scaling)" fp8;
//   "FP8-MX" mxfp8. The 25.09 rows have no precision column: the un-parenthesised value is taken as
//   FP8 current scaling and the parenthesised one as MXFP8 (the 25.11 tables label the same pair
//   'FP8-CS (FP8-MX)'); the NeMo 25.07 "variant B" rows likewise as MXFP8; the 25.02 rows as FP8.
// - FSDP column > 0: Megatron FSDP (ZeRO-3 over the data-parallel ranks); 0 or absent: the
//   distributed optimizer (ZeRO-1), as the recipes set.
// - models: the presets where trainsim has one (their shapes match the rows); Nemotron-4 from the
//   row's shape with NeMo's Nemotron config (squared-ReLU priced as GeLU, LayerNorm, RoPE, no
//   bias, untied, 256K vocabulary). DeepSeek-V3 'w/o MTP' rows drop the MTP module.
// - MoE: the tables force-balance the token distribution and are dropless (router_skew 0, the
//   presets' value), except the 25.09 token-drop recipes (below); the alltoall dispatcher of the
//   recipes.
// - vp: interleaved schedule when vp > 1; micro-batch and global batch as printed.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "accuracy_common.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/job/layout.hpp"
#include "models/workload/run/simulate.hpp"
#include "summary.hpp"

namespace trainsim::accuracy {
namespace {

std::string cluster_of(const std::string& gpu) {
  if (starts_with(gpu, "GB300")) return "gb300-nvl72";
  if (starts_with(gpu, "GB200")) return "gb200-nvl72";
  if (starts_with(gpu, "B200")) return "dgx-b200";
  return "";
}

bool blackwell(const Json& rec) { return !cluster_of(rec.at("cluster").at("gpu").get<std::string>()).empty(); }

// Whether the row is the parenthesised (alternative quantization granularity) variant.
bool alt_variant(const Json& rec) {
  const std::string id = rec.at("id").get<std::string>();
  return id.find("_alt") != std::string::npos || id.find("_variantB") != std::string::npos;
}

std::string precision_of(const Json& rec) {
  const std::string p = rec.at("precision").is_null() ? "" : rec.at("precision").get<std::string>();
  if (p == "BF16") return "bf16";
  if (p == "FP8-MX") return "mxfp8";
  if (p == "NVFP4") return "nvfp4";
  if (p == "FP8-CS") return "fp8";
  // 25.09 (no column) and NeMo 25.07 variant B: the parenthesised variant is MXFP8.
  return alt_variant(rec) ? "mxfp8" : "fp8";
}

Json model_of(const Json& m) {
  const std::string name = m.at("name").get<std::string>();
  static const std::map<std::string, std::string> presets{{"Llama 3 8B", "llama3-8b"},
                                                          {"Llama 3 70B", "llama3-70b"},
                                                          {"Llama 3.1 405B", "llama3-405b"},
                                                          {"DeepSeek-V3", "deepseek-v3"},
                                                          {"GPT OSS 120B", "gpt-oss-120b"},
                                                          {"Qwen3-30B-A3B", "qwen3-30b-a3b"},
                                                          {"Qwen3-235B-A22B", "qwen3-235b-a22b"},
                                                          {"GPT3-175B", "gpt3-175b"},
                                                          {"Mixtral 8x7B", "mixtral-8x7b"},
                                                          {"Mixtral 8x22B", "mixtral-8x22b"},
                                                          {"Llama 4 Scout (LLM part)", "llama4-scout"}};
  if (const auto it = presets.find(name); it != presets.end()) {
    Json j = models::presets::find("models", it->second, "model");
    j["seq_len"] = m.at("seq_len");
    return j;
  }
  // Nemotron-4: the row's shape with NeMo's Nemotron4Config.
  return Json{{"name", name},
              {"layers", m.at("layers")},
              {"hidden", m.at("hidden")},
              {"heads", m.at("heads")},
              {"kv_heads", m.at("kv_heads")},
              {"ffn_hidden", m.at("ffn_hidden")},
              {"vocab", m.at("vocab").is_null() ? Json(256000) : m.at("vocab")},
              {"seq_len", m.at("seq_len")},
              {"activation", "gelu"},
              {"norm", "layernorm"},
              {"position", "rope"},
              {"bias", false},
              {"tied_embeddings", false},
              {"dropout", false}};
}

// The CUDA graphs of the row's recipe (Megatron-Bridge scripts/performance): 25.11, v0.2.0
// workload_base_configs.py cuda_graph_impl / cuda_graph_scope (Llama 3 8B local full_iteration on
// every Blackwell GPU; Qwen3, DeepSeek-V3 and GPT-OSS transformer_engine scope lists; the 70B and
// 405B FP8 recipes none); 25.09, r0.1.0 perf matrices `cuda_graphs: true` (enable_cuda_graph:
// Megatron-Core's layer-wise graphs, `full`) for Llama 3 8B on B200 and MXFP8 on GB200, Qwen3
// 30B-A3B on B200 and GB200, Qwen3 235B-A22B on GB200. The NeMo 25.0x rows: none (their
// recipes are not pinned here).
Json cuda_graphs_of(const std::string& id, const std::string& name, const std::string& gpu, const std::string& prec) {
  const bool gb300 = starts_with(gpu, "GB300"), gb200 = starts_with(gpu, "GB200"), b200 = starts_with(gpu, "B200");
  const Json router{"moe_router", "moe_preprocess"}, attn_router{"attn", "moe_router", "moe_preprocess"};
  if (starts_with(id, "mbridge_25p11")) {
    if (name == "Llama 3 8B") return Json{"full_iteration"};
    if (name == "Qwen3-30B-A3B") return gb200 && prec != "mxfp8" ? attn_router : router;
    if (name == "Qwen3-235B-A22B") return gb300 ? router : gb200 ? attn_router : Json::array();
    if (name == "DeepSeek-V3") return gb300 ? attn_router : gb200 ? router : Json::array();
    if (name == "GPT OSS 120B" && gb300) return attn_router;
    return Json::array();
  }
  if (starts_with(id, "mbridge_25p09")) {
    const bool on = (name == "Llama 3 8B" && (b200 || (gb200 && prec == "mxfp8"))) ||
                    (name == "Qwen3-30B-A3B" && (b200 || gb200)) || (name == "Qwen3-235B-A22B" && gb200);
    return on ? Json{"full"} : Json::array();
  }
  return Json::array();
}

Json blackwell_job(const Json& rec) {
  const Json& p = rec.at("parallel");
  auto knob = [&](const char* k) { return !p.contains(k) || p.at(k).is_null() ? Json(1) : p.at(k); };
  Json model = model_of(rec.at("model"));
  const std::string notes = rec.value("notes", "");
  if (notes.find("without the MTP module") != std::string::npos) model["mtp_layers"] = 0;
  // Megatron-Bridge 25.09 (r0.1.0 scripts/performance/run_script.py) applies token drop to Qwen3
  // and to DeepSeek-V3 on B200 / GB200: apply_moe_token_drop, capacity factor 1.0 padded to
  // capacity (static shapes: no host synchronization in the dispatcher). 25.11 only on request.
  const std::string gpu_name = rec.at("cluster").at("gpu").get<std::string>();
  const std::string model_name = rec.at("model").at("name").get<std::string>();
  if (starts_with(rec.at("id").get<std::string>(), "mbridge_25p09") &&
      (starts_with(model_name, "Qwen3") || (model_name == "DeepSeek-V3" && !starts_with(gpu_name, "GB300")))) {
    model["moe"]["capacity_factor"] = 1.0;
    model["moe"]["pad_to_capacity"] = true;
  }
  Json job{{"stack", "megatron-bridge-2025"},
           {"model", model},
           {"cluster", cluster_of(rec.at("cluster").at("gpu").get<std::string>())},
           {"gpus", rec.at("cluster").at("gpus")},
           {"tp", knob("tp")},
           {"pp", knob("pp")},
           {"cp", knob("cp")},
           {"micro_batch", knob("micro_batch")},
           {"global_batch", p.at("global_batch")},
           {"precision", precision_of(rec)}};
  if (knob("ep").get<int>() > 1) {
    // Megatron-Bridge's MoE recipes set expert_tensor_parallel_size 1 (the rows' etp column is
    // empty). EP must divide a stage's tp x cp x dp ranks: the one row that prints more (the
    // 25.09 DeepSeek-V3 GB200 parenthesised variant, EP 64 with PP 8 on 256 GPUs) is read as the
    // largest EP its stages hold, and the table says so.
    const int64_t stage = job.at("gpus").get<int64_t>() / job.at("pp").get<int64_t>();
    job["ep"] = std::min<int64_t>(p.at("ep").get<int64_t>(), stage);
    job["etp"] = p.contains("etp") && !p.at("etp").is_null() ? p.at("etp") : Json(1);
  }
  const std::string id = rec.at("id").get<std::string>();
  // Megatron-Bridge's recipes gather FP8-CS parameters in FP8 (fp8_param_gather=True); MXFP8
  // parameters are gathered in BF16 through the gradient buffer (Megatron-Core 0.15
  // param_and_grad_buffer.py), so only per-tensor FP8 rows set it. DeepSeek-V3's recipes keep the
  // Adam moments in BF16 (precision-aware optimizer with exp_avg / exp_avg_sq bf16).
  // The stack's precision_defaults turn it on for fp8 and mxfp8; the rows keep the mapping above.
  job["fp8_param_gather"] = starts_with(id, "mbridge_") && job.at("precision") == "fp8";
  if (model.at("name") == "deepseek-v3") job["optimizer_states"] = "bf16";
  // Per-module selective recompute (recompute_modules) of the recipes (Megatron-Bridge
  // scripts/performance at r0.1.0 684a68616 for 25.09, v0.2.0 workload_base_configs.py for
  // 25.11): GPT-OSS 120B layernorm + moe_act on B200 and GB200 (GB300 uses CUDA graphs instead);
  // DeepSeek-V3 mla_up_proj on B200 and GB200, moe_act on GB300 (25.11).
  const std::string gpu = rec.at("cluster").at("gpu").get<std::string>();
  if (model.at("name") == "gpt-oss-120b" && !starts_with(gpu, "GB300")) {
    job["recompute"] = "selective";
    job["recompute_modules"] = {"layernorm", "moe_act"};
  }
  if (model.at("name") == "deepseek-v3" && starts_with(id, "mbridge_")) {
    job["recompute"] = "selective";
    job["recompute_modules"] = {starts_with(gpu, "GB300") ? "moe_act" : "mla_up_proj"};
  }
  // The 25.09 Llama 3 70B GB200 MXFP8 row prints micro-batch 2 beside gradient accumulation 16
  // (GBS 128 over dp 8): the recipe (configs/llama3/llama3_70b_llm_pretrain.yaml at r0.1.0
  // 684a68616, fp8_mx: mbs 1, tp 2, pp 4, vp 5) ran micro-batch 1, which the printed GA confirms.
  if (id == "mbridge_25p09_pretraining_LLAMA3_70B_GB200_noprec_64gpu_altquant") job["micro_batch"] = 1;
  const bool fsdp = p.contains("fsdp") && !p.at("fsdp").is_null() && p.at("fsdp").get<int>() > 0;
  // Megatron-Bridge pairs Megatron FSDP with layer-granular activation offload on Blackwell
  // (cpu_offloading_num_layers, scripts/performance configs at v0.2.0 / r0.1.0): Llama 3 70B
  // FP8-CS 40 layers on GB200 and 20 on GB300; Llama 3.1 405B FP8-CS at TP 2 on GB200 92 (25.11)
  // and 95 (25.09). The NeMo 25.07 405B FSDP row is taken as the 25.09 recipe.
  if (fsdp && (starts_with(id, "mbridge_") || starts_with(id, "nemo2507_"))) {
    const std::string name = rec.at("model").at("name").get<std::string>();
    const bool gb300 = job.at("cluster") == "gb300-nvl72";
    int64_t layers = 0;
    if (name == "Llama 3 70B" && starts_with(id, "mbridge_")) layers = gb300 ? 20 : 40;
    if (name == "Llama 3.1 405B") layers = starts_with(id, "mbridge_25p11") ? 92 : 95;
    if (layers > 0) job["offload_activation_layers"] = layers;
  }
  job["zero"] = fsdp ? 3 : 1;
  job["cuda_graph_scope"] =
      cuda_graphs_of(id, rec.at("model").at("name").get<std::string>(), gpu, job.at("precision").get<std::string>());
  if (knob("vp").get<int>() > 1) {
    job["vp"] = p.at("vp");
    job["schedule"] = "interleaved";
  }
  // Layers that do not divide over pp x vp chunks (DeepSeek-V3's 61 over 32): Megatron-Bridge's
  // pipeline_model_parallel_layout gives the embedding's chunk fewer layers and the last chunk only
  // the MTP module and the loss; trainsim's default (lighter first and last chunks) is used where
  // it exists.
  const int64_t chunks = knob("pp").get<int64_t>() * knob("vp").get<int64_t>();
  const int64_t L = model.at("layers").get<int64_t>();
  const int64_t k = (L + chunks - 1) / chunks, first = L - k * (chunks - 2);
  if (chunks > 2 && L % chunks != 0 && models::workload::uneven_layout(L, chunks).empty() && first > 0 && first <= k) {
    std::vector<int64_t> layout{first};
    layout.insert(layout.end(), static_cast<size_t>(chunks - 2), k);
    layout.push_back(0);
    job["pp_layout"] = layout;
  }
  return job;
}

struct Result {
  Row row;
  double peak_gib = 0, capacity_gib = 0;
  std::string error;
};

Result simulate_row(const Json& rec) {
  Result out;
  out.row.id = rec.at("id").get<std::string>();
  out.row.measured = rec.at("measured").at("tokens_per_s_per_gpu").get<double>();
  try {
    const Json job = blackwell_job(rec);
    out.row.job = job;
    const auto j = models::workload::resolve_job(models::workload::parse_job(job));
    const auto r = models::workload::simulate(j);
    out.row.fits = r.fits;
    if (r.fits) out.row.predicted = r.tokens_per_s / static_cast<double>(j.gpus);
    out.peak_gib = r.peak_memory().gib();
    out.capacity_gib = r.capacity.gib();
    char mem[64];
    std::snprintf(mem, sizeof mem, " mem %.1f/%.1f GiB", out.peak_gib, out.capacity_gib);
    out.row.config = cat(job.at("precision").get<std::string>(), " g", j.gpus, " t", j.tp, " p", j.pp, " v", j.vp, " c",
                         j.cp, " e", j.ep, " z", j.zero, " mb", j.micro_batch, mem);
  } catch (const std::exception& e) {
    out.error = e.what();
    out.row.fits = false;
    out.row.config = cat("ERROR ", e.what());
  }
  return out;
}

TEST(Blackwell, PretrainingTokensPerGpu) {
  const auto data = load_shared("published_dev_2026.json");
  if (!data) GTEST_SKIP() << "../shared/data/published_dev_2026.json not present";
  std::vector<Row> rows;
  std::vector<std::string> sources;  // per row
  size_t errors = 0;
  for (const auto& rec : *data) {
    if (!blackwell(rec) || !rec.at("measured").contains("tokens_per_s_per_gpu") ||
        rec.at("measured").at("tokens_per_s_per_gpu").is_null())
      continue;
    const Result r = simulate_row(rec);
    if (!r.error.empty()) ++errors;
    rows.push_back(r.row);
    sources.push_back(rec.at("source").get<std::string>());
  }
  ASSERT_EQ(rows.size(), 71u);
  print_table("Blackwell pre-training (Megatron-Bridge 25.09/25.11, NeMo 25.02-25.07), tokens/s per GPU", rows,
              "tokens/s");
  const Stats s = stats(rows);
  expect_summary("blackwell", s);
  // Observed 2026-11-28 (issue 32): 71 rows, 71 simulated, median |error| 9.6%, signed median
  // +9.0%, none rejected on memory. Each rack holds the job's nvlink_segment (64 of 72 GPUs for the
  // 256-GPU rows, as Slurm's --segment places them); FSDP rows offload the recipes' layers; the
  // recipes' recompute_modules are set; FP8-CS rows keep FP8 weights (fp8_param_gather); the
  // experts' GEMMs run per expert on Transformer Engine's 4 streams and the all-to-all dispatcher
  // sorts the received rows by local expert and back.
  // Target median <= 8% NOT met:
  // - Dense Llama 3 8B / 70B / 405B mostly within -12% to +14%; GPT-3 175B and Nemotron-4 340B
  //   pessimistic (-5% to -12%); MoE with small experts optimistic (Qwen3 30B-A3B +9% to +158%,
  //   GPT-OSS 120B +64% to +104%, Qwen3 235B -2% to +72%), DeepSeek-V3 +4% to +20%.
  // The bounds below guard this state against regressions; tighten them as the rest lands.
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(s.not_fitting, 0u);
  EXPECT_LE(s.median_abs, 0.10);
  // The stack's accuracy entries, one per GPU and kind of model (the band simulate and plan print):
  // MoE rows apart, as their errors are not the dense rows'.
  for (const char* gpu : {"b200", "gb200", "gb300"}) {
    const std::string cluster = std::string(gpu) == "b200" ? "dgx-b200" : std::string(gpu) + "-nvl72";
    for (const bool moe : {false, true}) {
      std::vector<Row> on;
      for (const auto& r : rows) {
        const Json& m = r.job.is_null() ? Json() : r.job.at("model");
        const bool is_moe = m.contains("moe") && !m.at("moe").is_null();
        if (!r.job.is_null() && r.job.at("cluster") == cluster && is_moe == moe) on.push_back(r);
      }
      expect_stack_accuracy("megatron-bridge-2025",
                            cat("tests/accuracy/blackwell_test.cpp ", gpu, moe ? " MoE" : " dense"), on);
    }
  }
  // Issue 34: `trainsim calibrate` on each source (a table of one container on one system),
  // leave-one-out (TRAINSIM_ACCURACY_CALIBRATE=all; 90 s on 2 cores). Target <= 5% median on every
  // source of 8 rows or more: met on 1 of 8 (docs/calibration.md): the small-expert MoE rows are
  // off by a mechanism no constant scales away, and the robust fit leaves them out.
  if (!slow_calibrations()) return;
  std::map<std::string, std::vector<Row>> by_source;
  for (size_t i = 0; i < rows.size(); ++i) by_source[sources[i]].push_back(rows[i]);
  size_t met = 0, sized = 0;
  for (const auto& [source, on] : by_source) {
    const auto dash = source.rfind(" — ");
    const CalibrationStats c = calibrate_rows(dash == std::string::npos ? source : source.substr(dash + 5), on,
                                              models::calibration::RunMetric::kTokensPerGpu);
    if (on.size() < 8) continue;
    ++sized;
    met += c.cv <= 0.05;
  }
  EXPECT_EQ(sized, 8u);
  EXPECT_GE(met, 1u);
}

}  // namespace
}  // namespace trainsim::accuracy
