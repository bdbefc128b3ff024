// Every number a user can give, at both ends of its accepted range (issue 22: "check overflow in
// every multiplication of user-given counts"). The fields come from the schemas themselves, so a
// new field is covered without touching this file. Each value goes into a small job (a 4-layer
// model on 8 GPUs, or an 8-expert MoE one) that `simulate` and, when it is small enough, `plan`
// run. The outcome must be a result, a ConfigError (exit 2) or a PlanError (exit 3); an internal
// error or any other exception fails here, and under the sanitizer build (.ci/sanitize) a signed
// overflow or an out-of-range conversion aborts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/llm/model_spec.hpp"
#include "models/presets/catalog.hpp"
#include "models/stack/stack_spec.hpp"
#include "models/workload/job/job.hpp"
#include "planner/cli/args.hpp"
#include "planner/cli/commands.hpp"
#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {
namespace {

using sim::config::Json;

Json tiny_model(bool moe) {
  Json m = {{"name", "tiny"},
            {"layers", 4},
            {"hidden", 1024},
            {"heads", 16},
            {"kv_heads", 4},
            {"ffn_hidden", 4096},
            {"vocab", 32000},
            {"seq_len", 2048},
            {"activation", "swiglu"},
            {"norm", "rmsnorm"},
            {"position", "rope"},
            {"bias", false},
            {"tied_embeddings", false},
            {"dropout", false}};
  if (moe)
    m["moe"] = {{"experts", 8},
                {"top_k", 2},
                {"expert_ffn_hidden", 2048},
                {"shared_experts", 0},
                {"capacity_factor", nullptr},
                {"layer_freq", 1},
                {"first_dense_layers", 0},
                {"router_skew", 0}};
  return m;
}

// The job every case starts from: inline model, cluster, GPU and stack, so each schema's fields can
// be set in place.
Json base_job(bool moe) {
  Json cluster = models::presets::find("clusters", "dgx-h100", "cluster");
  cluster["gpu"] = models::presets::find("gpus", "h100-sxm-80gb", "gpu");
  Json job = {{"model", tiny_model(moe)},
              {"cluster", cluster},
              {"stack", models::presets::find("stacks", "megatron-core-2025", "stack")},
              {"gpus", 8},
              {"tp", 2},
              {"pp", 2},
              {"micro_batch", 1},
              {"global_batch", 8},
              {"schedule", "1f1b"}};
  if (moe) job["ep"] = 2;
  return job;
}

// The two ends of a field's range, as JSON values; none for fields without one.
std::vector<Json> extremes(const std::string& type, const std::optional<std::pair<double, double>>& range) {
  if (range) {
    const bool integral = type.rfind("integer", 0) == 0;
    // 2^63 as a double is one past int64's largest value.
    auto to_int = [](double v) { return v >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(v); };
    if (integral) return {Json(to_int(range->first)), Json(to_int(range->second))};
    return {Json(range->first), Json(range->second)};
  }
  if (type == "bytes" || type == "size") return {Json("0B"), Json("1EiB")};
  if (type == "bandwidth") return {Json("1Kbps"), Json("1EBps")};
  if (type == "duration") return {Json("0ns"), Json("73000d")};
  if (type == "FLOP rate") return {Json("1FLOPS"), Json("1e21FLOPS")};
  return {};
}

struct Outcome {
  std::string what;  // "" when the command ended as it should
};

// Runs `trainsim COMMAND FILE EXTRA...` in process, as main.cpp would.
Outcome run(const std::string& command, const std::string& file, std::vector<std::string> extra) {
  std::vector<std::string> words = {"trainsim", command, file, "--time-limit", "60s"};
  words.insert(words.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  std::ostringstream out;
  try {
    const Args args = parse_args(static_cast<int>(argv.size()), argv.data());
    const int rc = command == "plan" ? run_plan(args, out) : run_simulate(args, out);
    if (rc != kExitOk && rc != kExitBadInput && rc != kExitDoesNotFit) return {"exit code " + std::to_string(rc)};
  } catch (const ConfigError&) {
  } catch (const PlanError&) {
  } catch (const std::exception& e) {
    return {e.what()};
  }
  return {};
}

// Sets `key` (in the object at `where` of the base job) to each extreme and runs the job.
template <class T>
void check_schema(const sim::config::Schema<T>& schema, bool moe, const std::vector<std::string>& where) {
  const std::string dir = testing::TempDir();
  int cases = 0;
  for (const auto& field : schema.fields()) {
    for (const Json& value : extremes(field.type, field.range)) {
      Json job = base_job(moe);
      Json* obj = &job;
      for (const auto& k : where) obj = &(*obj)[k];
      (*obj)[field.key] = value;
      const std::string file = dir + "/extreme.json";
      std::ofstream(file) << job.dump();
      const std::string label = schema.name() + "." + field.key + " = " + value.dump();
      const Outcome sim = run("simulate", file, {});
      EXPECT_EQ(sim.what, "") << "simulate with " << label;
      // The planner too, when the job stays small enough to search in a moment.
      bool small = false;
      try {
        const auto resolved = models::workload::resolve_job(models::workload::parse_job(job));
        small = resolved.gpus <= 64 && resolved.microbatches <= 64;
      } catch (const std::exception&) {
      }
      if (small) {
        const Outcome plan = run("plan", file, {"--tokens", "1B", "--top", "1"});
        EXPECT_EQ(plan.what, "") << "plan with " << label;
      }
      ++cases;
    }
  }
  EXPECT_GT(cases, 0) << schema.name() << " has no ranged field";
}

TEST(ExtremeValues, JobFields) { check_schema(models::workload::job_schema(), false, {}); }
TEST(ExtremeValues, ModelFields) { check_schema(models::llm::model_schema(), false, {"model"}); }
TEST(ExtremeValues, MoeFields) { check_schema(models::llm::moe_schema(), true, {"model", "moe"}); }
TEST(ExtremeValues, ClusterFields) { check_schema(models::hardware::cluster_schema(), false, {"cluster"}); }
TEST(ExtremeValues, GpuFields) { check_schema(models::hardware::gpu_schema(), false, {"cluster", "gpu"}); }
TEST(ExtremeValues, StackFields) { check_schema(models::stack::stack_schema(), false, {"stack"}); }

}  // namespace
}  // namespace trainsim::planner::cli
