// Every flag or config key the emitters write exists in the framework release they target: the
// flag sets are planner/emit/flags/*.json (extracted from the frameworks' sources by
// planner/emit/flags/extract.py), found through TRAINSIM_EMIT_FLAGS_DIR.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "emit_test_support.hpp"
#include "planner/emit/detail/megatron_args.hpp"
#include "written_flags.hpp"

namespace trainsim::planner::emit {
namespace {

using testing::Json;
using testing::with;
using testing::Written;

// The flag-set file an emitter's output is checked against, per framework it writes for, for a
// job on its software stack: Megatron-LM flags (the megatron and slurm emitters) against the
// Megatron-Core release the stack targets (megatron_core_minor: megatron-core-2024 -> core_r0.8.0,
// Megatron-Bridge v0.1 (25.09) -> core_v0.14.0, megatron-core-2025, Megatron-Bridge v0.2 (25.11) and
// stacks naming no Megatron-Core release -> core_v0.15.0); the other
// frameworks have one pinned set each (NeMo's is v2.4.0, also for nemo-24.07).
std::string flag_set_file(const std::string& emitter, const std::string& framework, const models::workload::Job& job) {
  if (framework == "megatron-lm" && (emitter == "megatron" || emitter == "slurm")) {
    static const std::map<int, std::string> megatron = {{8, "megatron-lm_core_r0.8.0.json"},
                                                        {14, "megatron-lm_core_v0.14.0.json"},
                                                        {15, "megatron-lm_core_v0.15.0.json"}};
    const auto it = megatron.find(detail::megatron_core_minor(job));
    return it == megatron.end() ? "" : it->second;
  }
  static const std::map<std::pair<std::string, std::string>, std::string> table = {
      {{"slurm", "slurm"}, "slurm_24.11.7.json"},
      {{"nemo", "nemo"}, "nemo_v2.4.0.json"},
      {{"deepspeed", "deepspeed"}, "deepspeed_v0.16.9.json"},
      {{"deepspeed", "megatron-deepspeed"}, "megatron-deepspeed_4efb479.json"},
      {{"torchtitan", "torchtitan"}, "torchtitan_v0.2.1.json"},
  };
  const auto it = table.find({emitter, framework});
  return it == table.end() ? "" : it->second;
}

const std::set<std::string>& flag_set(const std::string& file) {
  static std::map<std::string, std::set<std::string>> cache;
  auto [it, fresh] = cache.try_emplace(file);
  if (fresh) {
    std::ifstream in(std::string(TRAINSIM_EMIT_FLAGS_DIR) + "/" + file);
    EXPECT_TRUE(in) << "no flag set " << TRAINSIM_EMIT_FLAGS_DIR << "/" << file;
    if (in) it->second = nlohmann::json::parse(in).at("flags").get<std::set<std::string>>();
  }
  return it->second;
}

// What `file` of `emitter` writes.
std::vector<Written> written(const std::string& emitter, const EmittedFile& file) {
  if (file.name == "ds_config.json") {
    std::vector<Written> out;
    testing::json_keys(nlohmann::ordered_json::parse(file.content), "", out);
    return out;
  }
  if (file.name == "torchtitan.toml") return testing::toml_keys(file.content);
  if (file.name == "nemo_recipe.py") return testing::nemo_keys(file.content);
  return testing::shell_flags(file.content, emitter == "deepspeed" ? "megatron-deepspeed" : "megatron-lm");
}

// Mixtral 8x7B with a token capacity factor (no preset has one): the preset file, edited.
Json mixtral_with_capacity() {
  std::ifstream in(std::string(TRAINSIM_EMIT_FLAGS_DIR) + "/../../../models/presets/models/mixtral-8x7b.json");
  Json model = Json::parse(in);
  model["moe"]["capacity_factor"] = 1.25;
  return model;
}

// Base jobs and the options laid over them: every option an emitter can write.
std::vector<std::pair<std::string, Json>> job_matrix() {
  const Json l70 = testing::llama70b();  // tp 8, pp 4, vp 5 interleaved, selective, ZeRO-1
  const Json flat = with(l70, Json{{"vp", 1}, {"schedule", "1f1b"}, {"gpus", 128}, {"global_batch", 64}});
  const Json l8 = {{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 8}, {"global_batch", 64}};
  const Json cp = {{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"tp", 2}, {"cp", 4},
                   {"seq_len", 131072},    {"global_batch", 16}};
  const Json mixtral = {
      {"model", "mixtral-8x7b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"tp", 2}, {"pp", 4}, {"ep", 8}, {"zero", 1},
      {"global_batch", 256},     {"seq_len", 4096}};
  const Json b200_mx = testing::llama70b_b200("mxfp8"), b200_nv = testing::llama70b_b200("nvfp4");
  std::vector<std::pair<std::string, Json>> m = {
      {"llama70b", l70},
      {"zero 0", with(l70, Json{{"zero", 0}})},
      {"zero 2", with(l70, Json{{"zero", 2}})},
      {"zero 3", with(l70, Json{{"zero", 3}})},
      {"zero 3 hsdp no-reshard prefetch 2", with(l8, Json{{"gpus", 32},
                                                          {"zero", 3},
                                                          {"dp_shard", 8},
                                                          {"reshard_after_forward", false},
                                                          {"prefetch_layers", 2},
                                                          {"offload_optimizer", true}})},
      {"zero 1 hsdp", with(l70, Json{{"dp_shard", 4}})},
      {"recompute none", with(l70, Json{{"recompute", "none"}})},
      {"recompute full", with(l70, Json{{"recompute", "full"}})},
      {"recompute full 3 layers", with(l70, Json{{"recompute", "full"}, {"recompute_layers", 3}})},
      {"fp8 param gather", with(l70, Json{{"precision", "fp8"}, {"fp8_param_gather", true}})},
      {"fp16 unfused", with(l70, Json{{"precision", "fp16"}, {"attention", "unfused"}})},
      {"overlaps", with(l70, Json{{"tp_comm_overlap", true}, {"overlap_param_gather", true}})},
      {"no overlap",
       with(l70, Json{{"overlap_grad_reduce", false}, {"overlap_p2p", false}, {"scatter_gather", false}})},
      {"bucket 40MB seed 7 dp weight", with(l70, Json{{"bucket_size", "40MB"}, {"seed", 7}, {"dp_comm_weight", 2.0}})},
      {"offload optimizer", with(l70, Json{{"offload_optimizer", true}})},
      {"bf16 optimizer states", with(l70, Json{{"zero", 1}, {"optimizer_states", "bf16"}})},
      {"offload activations", with(l8, Json{{"recompute", "none"}, {"offload_activations", true}, {"zero", 1}})},
      {"offload activations full", with(l8, Json{{"recompute", "full"}, {"offload_activations", true}})},
      {"1f1b", flat},
      {"gpipe", with(flat, Json{{"schedule", "gpipe"}})},
      {"zb-h1", with(flat, Json{{"schedule", "zb-h1"}})},
      {"zb-h2", with(flat, Json{{"schedule", "zb-h2"}})},
      {"zb-v", with(flat, Json{{"schedule", "zb-v"}, {"vp", 2}})},
      {"breadth-first", with(flat, Json{{"schedule", "breadth-first"}, {"vp", 2}})},
      {"first/last layout", with(flat, Json{{"pp_layout", "18,21,21,20"}})},
      {"first/last layout vp",
       with(flat, Json{{"vp", 2}, {"schedule", "interleaved"}, {"pp_layout", "9,10,10,11,9,10,10,11"}})},
      {"custom layout", with(flat, Json{{"pp_layout", "19,22,20,19"}})},
      {"cp ring", with(cp, Json{{"cp_algo", "ring"}})},
      {"cp ulysses", with(cp, Json{{"cp_algo", "ulysses"}})},
      {"cp hybrid", with(cp, Json{{"cp_algo", "hybrid"}, {"tp", 4}, {"gpus", 128}})},
      {"mixtral", mixtral},
      {"mixtral etp 1 zb-h1 full", with(mixtral, Json{{"etp", 1}, {"schedule", "zb-h1"}, {"recompute", "full"}})},
      {"mixtral capacity 1.25", with(mixtral, Json{{"model", mixtral_with_capacity()}})},
      {"mixtral allgather", with(mixtral, Json{{"moe_dispatcher", "allgather"}})},
      {"mixtral flex aux_free", with(mixtral, Json{{"moe_dispatcher", "flex"}, {"moe_balance", "aux_free"}})},
      {"qwen3", Json{{"model", "qwen3-30b-a3b"},
                     {"cluster", "dgx-h100"},
                     {"gpus", 16},
                     {"ep", 8},
                     {"zero", 1},
                     {"global_batch", 64}}},
      {"deepseek-v3", Json{{"model", "deepseek-v3"},
                           {"cluster", "dgx-h100"},
                           {"gpus", 64},
                           {"tp", 8},
                           {"ep", 8},
                           {"global_batch", 64}}},
      {"no recipe (llama2-13b)", with(l8, Json{{"model", "llama2-13b"}, {"tp", 8}})},
      {"gpt3 learned positions", Json{{"model", "gpt3-175b"},
                                      {"cluster", "dgx-h100"},
                                      {"gpus", 512},
                                      {"tp", 8},
                                      {"pp", 8},
                                      {"zero", 1},
                                      {"global_batch", 512}}},
      {"mxfp8 param gather (b200)", with(b200_mx, Json{{"fp8_param_gather", true}})},
      {"mxfp8 overlaps (b200)", with(b200_mx, Json{{"tp_comm_overlap", true}, {"overlap_param_gather", true}})},
      {"mxfp8 tp 1 (b200)", with(b200_mx, Json{{"tp", 1}, {"pp", 8}, {"vp", 1}, {"schedule", "1f1b"}})},
      {"nvfp4 param gather (b200)", with(b200_nv, Json{{"fp8_param_gather", true}})},
      {"nvfp4 tp overlap zero 0 (b200)",
       with(b200_nv, Json{{"tp_comm_overlap", true}, {"zero", 0}, {"fp8_param_gather", true}})},
      {"deepseek-v3 mxfp8 (b200)", Json{{"model", "deepseek-v3"},
                                        {"cluster", "dgx-b200"},
                                        {"gpus", 256},
                                        {"pp", 8},
                                        {"ep", 32},
                                        {"global_batch", 256},
                                        {"precision", "mxfp8"},
                                        {"fp8_param_gather", true}}},
      {"gpt3 2021 (fp16, unfused, full recompute, interleaved)", Json{{"model", "gpt3-175b"},
                                                                      {"cluster", "dgx-a100"},
                                                                      {"gpus", 512},
                                                                      {"tp", 8},
                                                                      {"pp", 8},
                                                                      {"vp", 2},
                                                                      {"schedule", "interleaved"},
                                                                      {"zero", 0},
                                                                      {"sp", false},
                                                                      {"recompute", "full"},
                                                                      {"precision", "fp16"},
                                                                      {"attention", "unfused"},
                                                                      {"global_batch", 512}}},
  };
  return m;
}

// Checks every flag the emitters write for `job` against the flag set its stack picks; returns
// how many were checked. `missing` keeps each failure reported once.
size_t check_job(const std::string& name, const models::workload::Job& job, std::set<std::string>& missing) {
  size_t checked = 0;
  for (const std::string emitter : {"megatron", "nemo", "deepspeed", "torchtitan", "slurm"}) {
    std::vector<EmittedFile> files;
    try {
      files = emit(emitter, job);
    } catch (const ConfigError&) {
      continue;  // a refusal (tested in the emitters' own tests)
    }
    for (const auto& f : files)
      for (const Written& w : written(emitter, f)) {
        const std::string set_file = flag_set_file(emitter, w.framework, job);
        EXPECT_FALSE(set_file.empty()) << emitter << " writes for " << w.framework << " on stack " << job.stack.name
                                       << ", which has no flag set";
        if (set_file.empty()) return checked;
        ++checked;
        if (flag_set(set_file).count(w.flag) == 0 && missing.insert(set_file + emitter + w.flag).second)
          ADD_FAILURE() << emitter << " (" << f.name << ", job \"" << name << "\", stack " << job.stack.name
                        << ") writes " << w.flag << ", which is not in planner/emit/flags/" << set_file;
      }
  }
  return checked;
}

// The matrix on every stack whose features allow each job (the research stack runs them all; on
// another a job its stack refuses, or its recipe defaults make invalid, is skipped), checked
// against the flag sets the stack picks.
TEST(EmitterFlags, EveryWrittenFlagExistsInTheTargetedRelease) {
  std::set<std::string> missing;  // reported once each
  // Names checked per stack (about 3/4 of what the matrix gives today: a job that stops resolving
  // on a stack shows up here).
  const std::map<std::string, size_t> at_least = {
      {"research", 6000},  {"megatron-core-2025", 4500}, {"megatron-core-2024", 4500}, {"nemo-24.07", 3000},
      {"deepspeed", 2000}, {"torchtitan", 600},          {"megatron-lm-2021", 300}};
  for (const auto& [stack, least] : at_least) {
    size_t checked = 0, jobs = 0;
    for (const auto& [name, spec] : job_matrix()) {
      models::workload::Job job;
      try {
        job = testing::job(with(spec, Json{{"stack", stack}}));
      } catch (const std::exception& e) {
        if (stack == "research")  // runs every schedule and feature
          ADD_FAILURE() << "job \"" << name << "\" does not resolve: " << e.what();
        continue;
      }
      ++jobs;
      checked += check_job(name, job, missing);
    }
    EXPECT_GT(checked, least) << stack << ": " << jobs << " jobs";
  }
}

// Megatron-Core 0.14 (Megatron-Bridge 25.09): the matrix written for that release, its NVFP4 jobs
// falling back to MXFP8, checked against core_v0.14.0 (no stack preset targets it, so the job's
// stack target is set here).
TEST(EmitterFlags, Core014FlagsExistInCore014) {
  std::set<std::string> missing;
  size_t checked = 0;
  for (const auto& [name, spec] : job_matrix()) {
    auto job = testing::job(with(spec, Json{{"stack", "research"}}));  // runs every job of the matrix
    job.stack.target = "NVIDIA/Megatron-LM@core_v0.14.0";
    ASSERT_EQ(detail::megatron_core_minor(job), 14);
    for (const std::string emitter : {"megatron", "slurm"})
      for (const auto& f : emit(emitter, job))
        for (const Written& w : written(emitter, f)) {
          if (w.framework != "megatron-lm") continue;
          ++checked;
          if (flag_set("megatron-lm_core_v0.14.0.json").count(w.flag) == 0 && missing.insert(w.flag).second)
            ADD_FAILURE() << emitter << " (job \"" << name << "\") writes " << w.flag
                          << " for Megatron-Core 0.14, which is not in megatron-lm_core_v0.14.0.json";
        }
  }
  EXPECT_GT(checked, 2000u);
}

// The flag set follows the stack: Megatron-Core 0.8 for megatron-core-2024 (and its flags are a
// smaller set), 0.15 for megatron-core-2025 and for stacks that name no Megatron-Core release.
TEST(EmitterFlags, TheStackPicksTheFlagSet) {
  auto on = [](const std::string& stack) {
    return testing::job(
        with(testing::llama70b(), Json{{"stack", stack}, {"zero", 1}, {"vp", 1}, {"schedule", "1f1b"}}));
  };
  EXPECT_EQ(flag_set_file("megatron", "megatron-lm", on("megatron-core-2024")), "megatron-lm_core_r0.8.0.json");
  EXPECT_EQ(flag_set_file("slurm", "megatron-lm", on("megatron-core-2024")), "megatron-lm_core_r0.8.0.json");
  EXPECT_EQ(flag_set_file("megatron", "megatron-lm", on("megatron-core-2025")), "megatron-lm_core_v0.15.0.json");
  EXPECT_EQ(flag_set_file("megatron", "megatron-lm", on("nemo-24.07")), "megatron-lm_core_v0.15.0.json");
  EXPECT_EQ(flag_set_file("nemo", "nemo", on("nemo-24.07")), "nemo_v2.4.0.json");
  EXPECT_EQ(flag_set_file("deepspeed", "deepspeed", on("deepspeed")), "deepspeed_v0.16.9.json");
  EXPECT_LT(flag_set("megatron-lm_core_r0.8.0.json").size(), flag_set("megatron-lm_core_v0.15.0.json").size());
  for (const std::string f : {"--use-megatron-fsdp", "--data-parallel-sharding-strategy"}) {
    EXPECT_EQ(flag_set("megatron-lm_core_v0.15.0.json").count(f), 1u) << f;
    EXPECT_EQ(flag_set("megatron-lm_core_r0.8.0.json").count(f), 0u) << f;
  }
  // NVFP4 arrives in 0.15; the MXFP8 recipe is in 0.14 (and 0.12), not in 0.8.
  for (const std::string f : {"--fp4-format", "--fp4-recipe", "--fp4-param-gather"}) {
    EXPECT_EQ(flag_set("megatron-lm_core_v0.15.0.json").count(f), 1u) << f;
    EXPECT_EQ(flag_set("megatron-lm_core_v0.14.0.json").count(f), 0u) << f;
  }
  for (const std::string f : {"--fp8-recipe", "--reuse-grad-buf-for-mxfp8-param-ag"}) {
    EXPECT_EQ(flag_set("megatron-lm_core_v0.14.0.json").count(f), 1u) << f;
    EXPECT_EQ(flag_set("megatron-lm_core_r0.8.0.json").count(f), 0u) << f;
  }
}

// The parsers see what they should: a known flag of each kind is found.
TEST(EmitterFlags, ParsersFindEachKindOfName) {
  const auto job = testing::job(with(testing::llama70b(), Json{{"tp_comm_overlap", true}}));
  auto has = [&](const std::string& emitter, const std::string& flag) {
    for (const auto& f : emit(emitter, job))
      for (const Written& w : written(emitter, f))
        if (w.flag == flag) return true;
    return false;
  };
  EXPECT_TRUE(has("megatron", "--tensor-model-parallel-size"));
  EXPECT_FALSE(has("megatron", "--nproc-per-node"));  // torchrun's, not Megatron's
  EXPECT_TRUE(has("slurm", "sbatch:--gpus-per-node"));
  EXPECT_TRUE(has("slurm", "srun:--kill-on-bad-exit"));
  EXPECT_TRUE(has("deepspeed", "zero_optimization.reduce_bucket_size"));
  EXPECT_TRUE(has("deepspeed", "launcher:--hostfile"));
  EXPECT_TRUE(has("deepspeed", "--zero-stage"));
  EXPECT_TRUE(has("torchtitan", "parallelism.tensor_parallel_degree"));
  EXPECT_TRUE(has("torchtitan", "compile.enable"));
  EXPECT_TRUE(has("nemo", "MegatronStrategy.tensor_model_parallel_size"));
  EXPECT_TRUE(has("nemo", "DistributedDataParallelConfig.bucket_size"));
  EXPECT_TRUE(has("nemo", "MegatronCommOverlapCallback.tp_comm_overlap"));
  EXPECT_TRUE(has("nemo", "recipes.llama3_70b"));
  EXPECT_TRUE(has("nemo", "AttnBackend.flash"));
}

// Each flag-set file names its pinned release and holds a sorted, non-empty list.
TEST(EmitterFlags, FlagSetFilesArePinned) {
  for (const std::string file : {"megatron-lm_core_r0.8.0.json", "megatron-lm_core_v0.14.0.json",
                                 "megatron-lm_core_v0.15.0.json", "nemo_v2.4.0.json", "deepspeed_v0.16.9.json",
                                 "megatron-deepspeed_4efb479.json", "torchtitan_v0.2.1.json", "slurm_24.11.7.json"}) {
    std::ifstream in(std::string(TRAINSIM_EMIT_FLAGS_DIR) + "/" + file);
    ASSERT_TRUE(in) << file;
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("commit").get<std::string>().size(), 40u) << file;
    const auto flags = j.at("flags").get<std::vector<std::string>>();
    EXPECT_GT(flags.size(), 100u) << file;
    EXPECT_TRUE(std::is_sorted(flags.begin(), flags.end())) << file;
  }
}

}  // namespace
}  // namespace trainsim::planner::emit
