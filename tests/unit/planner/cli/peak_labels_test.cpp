// Every utilization names its peak (models/compute/peaks.hpp, docs/precision.md): in the reports of
// `simulate` and `plan` (table, sweep, cluster comparison), text and JSON, an MFU figure is against
// a named dense peak, and an FP8 job's figure against the FP8 peak stands beside the BF16 one. A
// report that prints a utilization without its peak fails here.
#include <gtest/gtest.h>

#include <cctype>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "models/compute/peaks.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/presets/catalog.hpp"
#include "planner/cli/args.hpp"
#include "planner/cli/commands.hpp"
#include "planner/cli/errors.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {
namespace {

using sim::config::Json;

struct Outcome {
  int rc = 0;
  std::string out, err;
};

Outcome run(const std::string& command, const std::vector<std::string>& flags) {
  std::vector<std::string> words = {"trainsim", command};
  words.insert(words.end(), flags.begin(), flags.end());
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  Outcome r;
  std::ostringstream out, err;
  Args args;
  try {
    args = parse_args(static_cast<int>(argv.size()), argv.data());
    r.rc = command == "plan" ? run_plan(args, out) : run_simulate(args, out);
  } catch (...) {
    r.rc = report_error(std::current_exception(), args, err);
  }
  r.out = out.str();
  r.err = err.str();
  return r;
}

const std::vector<std::string> kFp8 = {"--model",   "llama3-8b",      "--cluster",   "dgx-h100",  "--gpus",
                                       "8",         "--global-batch", "16",          "--seq-len", "2048",
                                       "--network", "analytic",       "--precision", "fp8"};
const std::vector<std::string> kPlan = {"--top", "3", "--rerank", "2", "--rerank-flow", "0", "--threads", "2"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// Each "MFU" of the text is "MFU(PEAK)" (a column) or "MFU x% of dense PEAK peak"; returns the
// offending lines.
std::string unnamed_mfu(const std::string& text) {
  static const std::regex named(
      R"(^MFU(\((BF16|FP16|FP8|MXFP8|NVFP4)\)| [0-9.]+% of dense (BF16|FP16|FP8|MXFP8|NVFP4) peak))");
  std::istringstream in(text);
  std::string line, bad;
  while (std::getline(in, line))
    for (size_t at = line.find("MFU"); at != std::string::npos; at = line.find("MFU", at + 3)) {
      // "constant-MFU" and the like name a method, not a figure.
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '-')) continue;
      if (!std::regex_search(line.substr(at), named)) bad += line + "\n";
    }
  return bad;
}

// Every numeric "mfu" or "mfu_*" key of the JSON has its "<key>_peak" beside it; returns the paths
// without.
void unnamed_mfu_keys(const Json& j, const std::string& path, std::string& bad) {
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) unnamed_mfu_keys(j[i], path + "[" + std::to_string(i) + "]", bad);
    return;
  }
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (it->is_number() && (k == "mfu" || k.rfind("mfu_", 0) == 0) && !j.contains(k + "_peak"))
      bad += path + "." + k + " ";
    unnamed_mfu_keys(*it, path + "." + k, bad);
  }
}

std::string unnamed_mfu_keys(const std::string& text) {
  std::string bad;
  unnamed_mfu_keys(Json::parse(text), "", bad);
  return bad;
}

// H100's dense BF16 over FP8 peak. Reports print numbers to 9 significant digits: compare to 1e-8.
double fp8_over_bf16() {
  const auto gpu = models::hardware::parse_gpu(models::presets::find("gpus", "h100-sxm-80gb", "gpu"), "gpu");
  return gpu.peak_bf16 / gpu.peak_fp8;
}

TEST(PeakLabels, SimulateNamesBothPeaksOfAnFp8Job) {
  const Outcome text = run("simulate", with(kFp8, {"--tp", "8"}));
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_EQ(unnamed_mfu(text.out), "");
  EXPECT_NE(text.out.find("of dense BF16 peak"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("of dense FP8 peak"), std::string::npos) << text.out;
  const Outcome json = run("simulate", with(kFp8, {"--tp", "8", "--json"}));
  ASSERT_EQ(json.rc, 0) << json.err;
  EXPECT_EQ(unnamed_mfu_keys(json.out), "");
  const Json j = Json::parse(json.out);
  EXPECT_EQ(j["mfu_peak"], "bf16_dense");
  EXPECT_EQ(j["mfu_low_precision_peak"], "fp8_dense");
  EXPECT_NEAR(j["mfu_low_precision"].get<double>(), j["mfu"].get<double>() * fp8_over_bf16(), 1e-8);
  EXPECT_LT(j["mfu_low_precision"].get<double>(), j["mfu"].get<double>());
}

TEST(PeakLabels, ABf16JobHasOnlyTheBf16Peak) {
  std::vector<std::string> bf16 = with(kFp8, {"--tp", "8"});
  bf16[13] = "bf16";
  const Outcome text = run("simulate", bf16);
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_EQ(unnamed_mfu(text.out), "");
  EXPECT_EQ(text.out.find("FP8 peak"), std::string::npos);
  const Json j = Json::parse(run("simulate", with(bf16, {"--json"})).out);
  EXPECT_EQ(j["mfu_peak"], "bf16_dense");
  EXPECT_FALSE(j.contains("mfu_low_precision"));
}

TEST(PeakLabels, PlanTablesAndJsonNameThePeaks) {
  const Outcome text = run("plan", with(kFp8, kPlan));
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_EQ(unnamed_mfu(text.out), "");
  EXPECT_NE(text.out.find("MFU(BF16)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("MFU(FP8)"), std::string::npos) << text.out;
  const Outcome json = run("plan", with(kFp8, with(kPlan, {"--json"})));
  ASSERT_EQ(json.rc, 0) << json.err;
  EXPECT_EQ(unnamed_mfu_keys(json.out), "");
  const Json p = Json::parse(json.out)["plans"][0];
  EXPECT_NEAR(p["mfu_low_precision"].get<double>(), p["mfu"].get<double>() * fp8_over_bf16(), 1e-8);
}

TEST(PeakLabels, SweepAndComparisonNameThePeaks) {
  std::vector<std::string> sweep = with(kFp8, kPlan);
  sweep[5] = "8:16";  // --gpus MIN:MAX
  const Outcome s = run("plan", sweep);
  ASSERT_EQ(s.rc, 0) << s.err;
  EXPECT_EQ(unnamed_mfu(s.out), "");
  EXPECT_NE(s.out.find("MFU(FP8)"), std::string::npos) << s.out;
  EXPECT_EQ(unnamed_mfu_keys(run("plan", with(sweep, {"--json"})).out), "");
  std::vector<std::string> compare = with(kFp8, kPlan);
  compare[3] = "dgx-h100,dgx-h200";
  const Outcome c = run("plan", compare);
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_EQ(unnamed_mfu(c.out), "");
  EXPECT_NE(c.out.find("MFU(FP8)"), std::string::npos) << c.out;
  EXPECT_EQ(unnamed_mfu_keys(run("plan", with(compare, {"--json"})).out), "");
}

// The checks themselves: an unnamed figure is caught.
TEST(PeakLabels, TheChecksCatchAnUnnamedFigure) {
  EXPECT_NE(unnamed_mfu("iter 1.0 s   MFU 40.1%\n"), "");
  EXPECT_NE(unnamed_mfu(" #  configuration   MFU   mem\n"), "");
  EXPECT_EQ(unnamed_mfu(" #  configuration   MFU(BF16)   MFU(FP8)\n"), "");
  EXPECT_EQ(unnamed_mfu("constant-MFU baseline\n"), "");
  EXPECT_NE(unnamed_mfu_keys(R"({"plans": [{"mfu": 0.4}]})"), "");
  EXPECT_NE(unnamed_mfu_keys(R"({"mfu": 0.4, "mfu_peak": "bf16_dense", "mfu_low_precision": 0.2})"), "");
  EXPECT_EQ(unnamed_mfu_keys(R"({"mfu": 0.4, "mfu_peak": "bf16_dense"})"), "");
}

}  // namespace
}  // namespace trainsim::planner::cli
