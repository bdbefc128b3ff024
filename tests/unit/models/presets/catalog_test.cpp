#include "models/presets/catalog.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../test_support.hpp"
#include "models/hardware/calibration.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/llm/model_spec.hpp"

namespace trainsim::models::presets {
namespace {

std::vector<std::string> names(const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& p : list(kind)) out.push_back(p.name);
  return out;
}

TEST(Catalog, ListsEveryBuiltInPresetSorted) {
  EXPECT_EQ(names("gpus"),
            (std::vector<std::string>{"a100-sxm-40gb", "a100-sxm-80gb", "b200", "b300", "gb200", "gb300",
                                      "h100-sxm-80gb", "h100-sxm-96gb", "h200-sxm-141gb", "h800-sxm-80gb"}));
  EXPECT_EQ(names("clusters"), (std::vector<std::string>{"dgx-a100", "dgx-b200", "dgx-b300", "dgx-h100", "dgx-h200",
                                                         "dgx-h800", "gb200-nvl72", "gb300-nvl72", "vtrain-a100"}));
  const auto models = names("models");
  EXPECT_EQ(models.size(), 27u);
  EXPECT_TRUE(std::is_sorted(models.begin(), models.end()));
  for (const char* m : {"gpt3-175b", "llama3.2-1b", "llama3-8b", "llama3-70b", "llama3-405b", "megatron-1t",
                        "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b",
                        "gpt-oss-120b", "gpt-oss-20b", "llama4-scout", "gemma3-27b"})
    EXPECT_NE(std::find(models.begin(), models.end(), m), models.end()) << m;
  for (const auto& p : list("models")) EXPECT_FALSE(p.description.empty()) << p.name;
  EXPECT_TRUE(list("nothing").empty());
}

// Presets are data that pass through the same validator as user input (STYLE conv. 11), carry
// their own name, and record where every constant comes from (conv. 18).
TEST(Catalog, EveryPresetParsesAndRecordsItsSources) {
  for (const auto& p : list("models")) {
    const llm::ModelSpec m = llm::parse_model(find("models", p.name, "model"), "model");
    EXPECT_EQ(m.name, p.name);
    EXPECT_FALSE(m.source.empty()) << p.name;
  }
  for (const std::string kind : {"gpus", "clusters"})
    for (const auto& p : list(kind)) {
      const sim::config::Json j = find(kind, p.name, kind);
      EXPECT_EQ(j.at("name").get<std::string>(), p.name);
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "name" || it.key() == "description" || it.key() == "sources") continue;
        EXPECT_TRUE(j.at("sources").contains(it.key())) << p.name << "." << it.key() << " has no source";
      }
      if (kind == "gpus") {
        EXPECT_EQ(hardware::parse_gpu(j, "gpu").name, p.name);
      } else {
        const hardware::ClusterSpec c = hardware::parse_cluster(j, "cluster");
        // The cluster's GPU is itself a preset.
        EXPECT_NO_THROW(find("gpus", c.gpu, "cluster.gpu")) << p.name;
      }
    }
}

// A calibration preset was measured on a GPU preset and cites the measurements behind every
// constant it overrides.
TEST(Catalog, EveryCalibrationParsesAndRecordsItsSources) {
  for (const auto& p : list("calibrations")) {
    const hardware::Calibration c = hardware::parse_calibration(find("calibrations", p.name, "calibration"), p.name);
    EXPECT_EQ(c.name, p.name);
    EXPECT_NO_THROW(find("gpus", c.gpu, "calibration.gpu")) << p.name;
    for (const sim::config::Json* o : {&c.gpu_overrides, &c.cluster_overrides})
      for (auto it = o->begin(); it != o->end(); ++it)
        EXPECT_TRUE(c.sources.contains(it.key())) << p.name << "." << it.key() << " has no source";
  }
}

TEST(Catalog, UnknownPresetSuggestsTheNearestName) {
  EXPECT_EQ(testing::config_error([] { find("gpus", "h100", "--gpu"); }),
            "--gpu: unknown GPU preset \"h100\" (did you mean \"h100-sxm-80gb\"?)");
  EXPECT_EQ(testing::config_error([] { find("models", "llama3-9b", "model"); }),
            "model: unknown model preset \"llama3-9b\" (did you mean \"llama3-8b\"?)");
  EXPECT_EQ(testing::config_error([] { find("clusters", "selene-superpod-xyz", "cluster"); }),
            "cluster: unknown cluster preset \"selene-superpod-xyz\" (see `trainsim list clusters`, or give a JSON "
            "file)");
}

TEST(Catalog, FileReferences) {
  EXPECT_TRUE(is_file_reference("my-model.json"));
  EXPECT_TRUE(is_file_reference("dir/model"));
  EXPECT_FALSE(is_file_reference("llama3-8b"));
  EXPECT_FALSE(is_file_reference(".json"));  // too short to be a file name + extension
}

class CatalogFiles : public ::testing::Test {
 protected:
  // One directory per test: ctest runs the tests of this fixture in parallel processes, and one's
  // TearDown must not remove the other's files.
  std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      (std::string("trainsim_catalog_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

TEST_F(CatalogFiles, ResolvesFilesAndPresets) {
  const std::string f = write("tiny.json", testing::gpt(2, 64, 4, 100, 32).dump());
  EXPECT_EQ(resolve("models", f, "model").at("hidden"), 64);
  EXPECT_EQ(resolve("models", "llama3-8b", "model").at("hidden"), 4096);
}

TEST_F(CatalogFiles, UnreadableAndInvalidFilesNameThePath) {
  const std::string missing = (dir / "missing.json").string();
  EXPECT_EQ(testing::config_error([&] { load_json_file(missing, "model"); }),
            "model: cannot read file \"" + missing + "\" (check the path)");
  EXPECT_EQ(testing::config_error([&] { load_json_file(missing, missing); }),
            missing + ": cannot read the file (check the path)");
  const std::string bad = write("bad.json", "{\"layers\": 2,");
  const std::string msg = testing::config_error([&] { load_json_file(bad, "model"); });
  EXPECT_EQ(msg.rfind("model: \"" + bad + "\" is not valid JSON: parse error", 0), 0u) << msg;
}

}  // namespace
}  // namespace trainsim::models::presets
