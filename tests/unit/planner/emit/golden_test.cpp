// Golden launch configs (STYLE conv. 13 and 14): tests/golden/emit/<case>/job.json is a job file;
// expected/<emitter>/ holds every file that emitter writes for it, compared byte for byte. The
// directory comes from CMake (TRAINSIM_EMIT_GOLDEN_DIR). After an intended change, regenerate with
// TRAINSIM_UPDATE_GOLDEN=1 and review the diff of tests/golden/emit in the commit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "emit_test_support.hpp"

#ifndef TRAINSIM_EMIT_GOLDEN_DIR
#error "TRAINSIM_EMIT_GOLDEN_DIR must be defined by CMake"
#endif

namespace trainsim::planner::emit {
namespace {

namespace fs = std::filesystem;

// Every case folder; README.md in tests/golden/emit says what each covers.
const std::vector<std::string> kCases = {
    "llama3_70b_interleaved_h100", "mixtral_8x7b_ep_zb_h1",     "llama3_8b_cp_ring_128k",
    "llama3_8b_zero3_hsdp",        "llama3_70b_first_last_fp8", "llama3_70b_custom_layout",
    "llama3_70b_b200_mxfp8",       "llama3_70b_gb200_nvfp4",    "gpt_oss_b200_recompute_modules",
};

fs::path golden_dir() { return fs::path(TRAINSIM_EMIT_GOLDEN_DIR); }

bool update_mode() {
  const char* v = std::getenv("TRAINSIM_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) != "" && std::string(v) != "0";
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "line N: expected ... got ..." for the first differing line.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(a, la)), hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "same lines, different bytes (line endings?)";
    if (!ha || !hb || la != lb)
      return "first difference at line " + std::to_string(line) + ":\n  expected: " + (ha ? la : "<end of file>") +
             "\n  got:      " + (hb ? lb : "<end of file>");
  }
}

TEST(EmitGoldenCases, EveryCaseFolderIsListedAndHasAJob) {
  std::set<std::string> listed(kCases.begin(), kCases.end());
  for (const auto& e : fs::directory_iterator(golden_dir()))
    if (e.is_directory()) {
      EXPECT_TRUE(listed.count(e.path().filename().string())) << e.path() << " is not listed";
    }
  for (const auto& c : kCases) EXPECT_TRUE(fs::exists(golden_dir() / c / "job.json")) << c;
}

class EmitGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(EmitGolden, EveryEmitterMatchesItsExpectedFiles) {
  const fs::path dir = golden_dir() / GetParam();
  const auto job = testing::job(testing::Json::parse(read(dir / "job.json")));
  for (const auto& name : EmitterRegistry::instance().names()) {
    const auto files = emit(name, job);
    const auto again = emit(name, job);
    ASSERT_EQ(files.size(), again.size());
    for (size_t i = 0; i < files.size(); ++i) ASSERT_EQ(files[i].content, again[i].content) << "nondeterministic";
    const fs::path expected = dir / "expected" / name;
    if (update_mode()) {
      fs::remove_all(expected);
      write_files(expected.string(), files);
      continue;
    }
    std::set<std::string> on_disk, emitted;
    if (fs::is_directory(expected))
      for (const auto& e : fs::directory_iterator(expected)) on_disk.insert(e.path().filename().string());
    for (const auto& f : files) {
      emitted.insert(f.name);
      const fs::path p = expected / f.name;
      if (!fs::exists(p)) {
        ADD_FAILURE() << "missing " << p << "; create it with TRAINSIM_UPDATE_GOLDEN=1 and review it";
        continue;
      }
      const std::string want = read(p);
      EXPECT_TRUE(want == f.content) << p << " differs; " << first_difference(want, f.content)
                                     << "\nIf the change is intended, regenerate with TRAINSIM_UPDATE_GOLDEN=1 and "
                                        "review the diff.";
    }
    EXPECT_EQ(on_disk, emitted) << "files in " << expected << " differ from what --emit " << name << " writes";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, EmitGolden, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace trainsim::planner::emit
