// `trainsim plan --cluster A,B,C` (planner/cli/plan_compare.*): the list and price parsing, the
// one-cluster plan left as it was, the table's columns, the JSON's shape, the sweep, the plot and
// the errors (one line each, exit 2; nothing fits: exit 3).
#include "planner/cli/plan_compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "planner/cli/args.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/errors.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {
namespace {

using sim::config::Json;

// A small job, quick to plan: few re-simulations, the analytic network.
const std::vector<std::string> kJob = {"plan", "--model",   "llama3-8b", "--gpus",    "32",       "--global-batch",
                                       "128",  "--seq-len", "4096",      "--network", "analytic", "--top",
                                       "3",    "--rerank",  "4",         "--threads", "2"};
const std::string kThree = "dgx-a100,dgx-h100,dgx-h200";

struct Outcome {
  int rc = 0;
  std::string out, err;
};

// `trainsim` with kJob and `extra`, as main.cpp runs it: the exit code, stdout and the error line.
Outcome plan(const std::vector<std::string>& extra, std::vector<std::string> base = kJob) {
  base.insert(base.end(), extra.begin(), extra.end());
  std::vector<const char*> argv = {"trainsim"};
  for (const auto& a : base) argv.push_back(a.c_str());
  Outcome r;
  std::ostringstream out, err;
  Args args;
  try {
    args = parse_args(static_cast<int>(argv.size()), argv.data());
    r.rc = run_plan(args, out);
  } catch (...) {
    r.rc = report_error(std::current_exception(), args, err);
  }
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The text without the "timing:" line (how long the search took).
std::string without_timing(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("timing:", 0) != 0) out += line + "\n";
  return out;
}

TEST(PlanCompare, ClusterListSplitsAtCommas) {
  EXPECT_TRUE(cluster_list(Json{{"cluster", "dgx-h100"}}).empty());  // one cluster: the usual plan
  EXPECT_TRUE(cluster_list(Json{{"cluster", Json{{"name", "x"}}}}).empty());
  EXPECT_TRUE(cluster_list(Json{{"model", "llama3-8b"}}).empty());
  EXPECT_EQ(cluster_list(Json{{"cluster", "dgx-h100,gb200-nvl72"}}),
            (std::vector<std::string>{"dgx-h100", "gb200-nvl72"}));
  EXPECT_EQ(cluster_list(Json{{"cluster", "dgx-h100, my/cluster.json"}}),
            (std::vector<std::string>{"dgx-h100", "my/cluster.json"}));
  for (const char* bad : {"dgx-h100,", ",dgx-h100", "dgx-h100,,dgx-a100", "dgx-h100,dgx-h100"}) {
    try {
      cluster_list(Json{{"cluster", bad}});
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path(), "cluster") << bad;
    }
  }
}

TEST(PlanCompare, OnePriceForAllOrOnePerCluster) {
  EXPECT_EQ(cluster_prices("2.5", 3), (std::vector<double>{2.5, 2.5, 2.5}));
  EXPECT_EQ(cluster_prices("2,3.5,0", 3), (std::vector<double>{2, 3.5, 0}));
  EXPECT_EQ(cluster_prices("0", 2), (std::vector<double>{0, 0}));
  for (const char* bad : {"2,3", "2,3,4,5", "2,x,3", "2,-1,3", "2,,3"})
    EXPECT_THROW(cluster_prices(bad, 3), ConfigError);
}

TEST(PlanCompare, OneClusterKeepsTheOnePlanReport) {
  const Outcome text = plan({"--cluster", "dgx-h100"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_EQ(text.out.rfind("trainsim plan: llama3-8b on 32 x ", 0), 0u) << text.out;
  EXPECT_EQ(text.out.find("fits  "), std::string::npos);
  const Outcome json = plan({"--cluster", "dgx-h100", "--json"});
  ASSERT_EQ(json.rc, 0) << json.err;
  const Json j = Json::parse(json.out);
  EXPECT_TRUE(j.contains("plans"));
  EXPECT_FALSE(j.contains("clusters"));
  EXPECT_EQ(j["cluster"], "dgx-h100");
  // A list of one price is the price (the same bytes as the number alone).
  EXPECT_EQ(without_timing(plan({"--cluster", "dgx-h100", "--tokens", "1T", "--price-per-gpu-hour", "2.5"}).out),
            without_timing(plan({"--cluster", "dgx-h100", "--tokens", "1T", "--price-per-gpu-hour", "2.50"}).out));
}

TEST(PlanCompare, EachRowIsTheOneClusterPlansWinner) {
  const Outcome both = plan({"--cluster", "dgx-a100,dgx-h100", "--json"});
  ASSERT_EQ(both.rc, 0) << both.err;
  const Json j = Json::parse(both.out);
  for (const std::string cluster : {"dgx-a100", "dgx-h100"}) {
    const Outcome one = plan({"--cluster", cluster, "--json"});
    ASSERT_EQ(one.rc, 0) << one.err;
    const Json single = Json::parse(one.out);
    const Json* row = nullptr;
    for (const auto& r : j["clusters"])
      if (r["cluster"] == cluster) row = &r;
    ASSERT_NE(row, nullptr) << cluster;
    EXPECT_EQ((*row)["plan"], single["plans"][0]) << cluster;
    EXPECT_EQ((*row)["searched"], single["searched"]);
    EXPECT_EQ((*row)["feasible"], single["feasible"]);
  }
}

TEST(PlanCompare, TableHasARowPerClusterWithItsEconomics) {
  const Outcome r = plan({"--cluster", kThree, "--tokens", "1T", "--price-per-gpu-hour", "1.5,2.5,3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream in(r.out);
  std::string heading, sub, header;
  std::getline(in, heading);
  std::getline(in, sub);
  std::getline(in, header);
  EXPECT_EQ(
      heading.rfind("trainsim plan: llama3-8b on 32 GPUs of each of 3 clusters, global batch 128 x 4096 tokens", 0), 0u)
      << heading;
  size_t at = 0;
  for (const char* column : {"cluster", "GPU", "GPUs", "fits", "configuration", "iter(s)", "tokens/s", "MFU", "days",
                             "GPU-h", "cost $", "MWh"}) {
    const size_t next = header.find(column, at);
    ASSERT_NE(next, std::string::npos) << column << " in: " << header;
    at = next + 1;
  }
  int best = 0;
  for (const std::string cluster : {"dgx-a100", "dgx-h100", "dgx-h200"}) {
    std::string row;
    std::getline(in, row);
    EXPECT_EQ(row.rfind(cluster, 0), 0u) << row;
    EXPECT_NE(row.find(" yes  "), std::string::npos) << row;
    best += row.find("<- best time") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(best, 1);
  EXPECT_NE(r.out.find("dense BF16 peak"), std::string::npos);
  EXPECT_NE(r.out.find("tokens/s against dgx-a100: dgx-h100 "), std::string::npos) << r.out;
  // Without --tokens: the economics per million tokens.
  const Outcome per_token = plan({"--cluster", kThree});
  ASSERT_EQ(per_token.rc, 0) << per_token.err;
  EXPECT_NE(per_token.out.find("GPU-h/Mtok"), std::string::npos);
  EXPECT_NE(per_token.out.find("kWh/Mtok"), std::string::npos);
  EXPECT_EQ(per_token.out.find("cost $"), std::string::npos);
}

TEST(PlanCompare, JsonHasARowPerClusterAndTheBest) {
  const Outcome r = plan({"--cluster", kThree, "--tokens", "1T", "--price-per-gpu-hour", "1.5,2.5,3", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["objective"], "time");
  EXPECT_EQ(j["mfu_peak"], "bf16_dense");
  EXPECT_EQ(j["stack"], "megatron-core-2025");
  ASSERT_EQ(j["clusters"].size(), 3u);
  const std::vector<std::string> names = {"dgx-a100", "dgx-h100", "dgx-h200"};
  const std::vector<double> prices = {1.5, 2.5, 3};
  for (size_t i = 0; i < 3; ++i) {
    const Json& row = j["clusters"][i];
    EXPECT_EQ(row["cluster"], names[i]);
    EXPECT_EQ(row["gpus"], 32);
    EXPECT_EQ(row["fits"], true);
    EXPECT_EQ(row["price_per_gpu_hour"], prices[i]);
    EXPECT_FALSE(row.contains("best_of_cluster"));  // a sweep's
    const Json& p = row["plan"];
    for (const char* key : {"description", "iteration_time_s", "tokens_per_s", "mfu", "days", "gpu_hours", "cost",
                            "energy_mwh", "peak_memory_bytes"})
      EXPECT_TRUE(p.contains(key)) << key;
    EXPECT_NEAR(p["cost"].get<double>(), p["gpu_hours"].get<double>() * prices[i], 1e-6 * p["cost"].get<double>());
    EXPECT_GT(row["energy_kwh_per_million_tokens"].get<double>(), 0);
  }
  EXPECT_EQ(j["best"]["gpus"], 32);
  EXPECT_NE(std::find(names.begin(), names.end(), j["best"]["cluster"].get<std::string>()), names.end());
}

TEST(PlanCompare, SweepGivesARowPerClusterAndSize) {
  const Outcome r = plan({"--cluster", "dgx-a100,dgx-h100", "--gpus", "16:32", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["clusters"].size(), 4u);
  int best = 0;
  for (const auto& row : j["clusters"]) best += row["best_of_cluster"].get<bool>() ? 1 : 0;
  EXPECT_EQ(best, 2);
  EXPECT_EQ(j["clusters"][0]["gpus"], 16);
  EXPECT_EQ(j["clusters"][1]["gpus"], 32);
  EXPECT_EQ(j["clusters"][2]["cluster"], "dgx-h100");
  const Outcome text = plan({"--cluster", "dgx-a100,dgx-h100", "--gpus", "16:32"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("<- best of dgx-a100"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("<- best of dgx-h100"), std::string::npos) << text.out;
}

TEST(PlanCompare, PlotsBarsOrTimeVsGpus) {
  const auto dir = std::filesystem::temp_directory_path() / "trainsim_plan_compare_test";
  std::filesystem::create_directories(dir);
  auto read = [](const std::filesystem::path& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  const auto bars = dir / "bars.svg", lines = dir / "lines.svg";
  ASSERT_EQ(plan({"--cluster", kThree, "--tokens", "1T", "--plot", bars.string()}).rc, 0);
  const std::string b = read(bars);
  EXPECT_EQ(b.rfind("<svg ", 0), 0u);
  EXPECT_NE(b.find("<g class=\"bars\">"), std::string::npos);
  EXPECT_NE(b.find("days to train 1T tokens"), std::string::npos);
  EXPECT_NE(b.find("energy (MWh"), std::string::npos);
  EXPECT_NE(b.find(">dgx-h200</text>"), std::string::npos);
  ASSERT_EQ(plan({"--cluster", "dgx-a100,dgx-h100", "--gpus", "16:32", "--plot", lines.string()}).rc, 0);
  const std::string l = read(lines);
  EXPECT_NE(l.find("<g class=\"clusters\">"), std::string::npos);
  EXPECT_NE(l.find("<g class=\"legend\">"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(PlanCompare, BadInputIsOneLineAndExitTwo) {
  const Outcome unknown = plan({"--cluster", "dgx-a100,dgx-h10"});
  EXPECT_EQ(unknown.rc, kExitBadInput);
  EXPECT_EQ(unknown.err.rfind("error: --cluster: ", 0), 0u) << unknown.err;
  EXPECT_NE(unknown.err.find("dgx-h100"), std::string::npos) << unknown.err;  // did you mean
  EXPECT_EQ(unknown.out, "");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--cluster", "dgx-a100,,dgx-h100"}, "error: --cluster: "},
      {{"--cluster", "dgx-a100,dgx-a100"}, "error: --cluster: "},
      {{"--cluster", kThree, "--price-per-gpu-hour", "2,3"}, "error: --price-per-gpu-hour: "},
      {{"--cluster", "dgx-h100", "--price-per-gpu-hour", "2,3"}, "error: --price-per-gpu-hour: "},
      {{"--cluster", kThree, "--emit", "megatron", "--out", "x"}, "error: --emit: "},
      {{"--cluster", kThree, "--override", "cluster.nic_bandwidth=800Gbps"}, "error: --override: "},
  };
  for (const auto& [extra, prefix] : cases) {
    const Outcome r = plan(extra);
    EXPECT_EQ(r.rc, kExitBadInput) << r.err;
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(PlanCompare, NothingFitsAnywhereIsExitThreeAfterTheTable) {
  const Outcome r = plan({"--cluster", "dgx-a100,dgx-h100"}, {"plan", "--model", "llama3-70b", "--gpus", "8",
                                                              "--global-batch", "8", "--network", "analytic"});
  EXPECT_EQ(r.rc, kExitDoesNotFit) << r.err;
  EXPECT_NE(r.out.find("dgx-a100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    no  "), std::string::npos) << r.out;
  EXPECT_EQ(r.err.rfind("error: plan: no cluster in the list", 0), 0u) << r.err;
}

}  // namespace
}  // namespace trainsim::planner::cli
