// README.md's tables are checked against the tree, as docs/config-reference.md is generated:
// "What is in the box" names only folders that exist (a row's subfolders relative to it) and has a
// row for every top-level folder that builds something; "Accuracy" is tests/accuracy/summary.json
// rendered ({key} placeholders filled from its figures), and every figure is one an accuracy suite
// checks (summary.hpp). TRAINSIM_UPDATE_GOLDEN=1 rewrites the accuracy table from summary.json.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kRoot = TRAINSIM_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The lines of the first Markdown table after the heading `heading`, and the index of its first line.
std::vector<std::string> table_after(const std::vector<std::string>& lines, const std::string& heading,
                                     size_t* first = nullptr) {
  size_t i = 0;
  while (i < lines.size() && lines[i] != heading) ++i;
  while (i < lines.size() && lines[i].rfind("|", 0) != 0) ++i;
  if (first) *first = i;
  std::vector<std::string> out;
  for (; i < lines.size() && lines[i].rfind("|", 0) == 0; ++i) out.push_back(lines[i]);
  return out;
}

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  size_t start = 1;
  for (size_t bar = row.find(" |", start); bar != std::string::npos; bar = row.find(" |", start)) {
    std::string c = row.substr(start, bar - start);
    while (!c.empty() && c.front() == ' ') c.erase(c.begin());
    out.push_back(c);
    start = bar + 2;
  }
  return out;
}

// The `x/` tokens of a cell.
std::vector<std::string> folders_in(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex tick("`([A-Za-z0-9_./-]+/)`");
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), tick); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

TEST(Box, EveryFolderItNamesExists) {
  const auto rows = table_after(lines_of(read(kRoot / "README.md")), "## What is in the box");
  ASSERT_GT(rows.size(), 2u) << "README.md has no \"What is in the box\" table";
  for (size_t r = 2; r < rows.size(); ++r) {
    const std::vector<std::string> c = cells(rows[r]);
    ASSERT_EQ(c.size(), 2u) << rows[r];
    const std::vector<std::string> own = folders_in(c[0]);
    ASSERT_EQ(own.size(), 1u) << "a row names its folder first: " << rows[r];
    EXPECT_TRUE(fs::is_directory(kRoot / own[0])) << "README.md names `" << own[0] << "`, which does not exist";
    for (const std::string& sub : folders_in(c[1]))
      EXPECT_TRUE(fs::is_directory(kRoot / own[0] / sub) || fs::is_directory(kRoot / sub))
          << "README.md's row for `" << own[0] << "` names `" << sub << "`, which is neither `" << own[0] << sub
          << "` nor a folder of the repository";
  }
}

TEST(Box, EveryTopLevelFolderHasARow) {
  const auto rows = table_after(lines_of(read(kRoot / "README.md")), "## What is in the box");
  std::set<std::string> named;
  for (size_t r = 2; r < rows.size(); ++r)
    for (const std::string& f : folders_in(cells(rows[r]).at(0))) named.insert(f.substr(0, f.find('/') + 1));
  for (const auto& e : fs::directory_iterator(kRoot)) {
    const std::string name = e.path().filename().string();
    // A folder that builds something (the build trees have a CMakeCache.txt instead).
    if (!e.is_directory() || name[0] == '.' || !fs::exists(e.path() / "CMakeLists.txt")) continue;
    EXPECT_TRUE(named.count(name + "/")) << "README.md's \"What is in the box\" has no row for `" << name << "/`";
  }
}

// summary.json's table with its figures in place of the {key} placeholders.
std::vector<std::string> rendered(const Json& summary, std::set<std::string>* used = nullptr) {
  std::vector<std::string> out = {"| source (stack) | rows | median abs error | max abs error | target |",
                                  "| --- | --- | --- | --- | --- |"};
  static const std::regex placeholder(R"(\{([A-Za-z0-9_.]+)\})");
  const Json& figures = summary.at("figures");
  for (const Json& row : summary.at("table")) {
    std::string line = "|";
    for (const char* k : {"source", "rows", "median", "max", "target"}) {
      const std::string cell = row.at(k).get<std::string>();
      std::string filled;
      size_t last = 0;
      for (auto it = std::sregex_iterator(cell.begin(), cell.end(), placeholder); it != std::sregex_iterator(); ++it) {
        const std::string key = (*it)[1].str();
        filled += cell.substr(last, static_cast<size_t>(it->position()) - last);
        if (figures.contains(key)) {
          filled += figures.at(key).get<std::string>();
        } else {
          ADD_FAILURE() << "tests/accuracy/summary.json: {" << key << "} has no figure";
        }
        if (used) used->insert(key);
        last = static_cast<size_t>(it->position() + it->length());
      }
      line += " " + filled + cell.substr(last) + " |";
    }
    out.push_back(line);
  }
  return out;
}

TEST(Accuracy, TableIsTheSummaryRendered) {
  const Json summary = Json::parse(read(kRoot / "tests/accuracy/summary.json"));
  const std::vector<std::string> want = rendered(summary);
  std::vector<std::string> lines = lines_of(read(kRoot / "README.md"));
  size_t first = 0;
  const std::vector<std::string> have = table_after(lines, "## Accuracy", &first);
  ASSERT_FALSE(have.empty()) << "README.md has no \"Accuracy\" table";
  const char* update = std::getenv("TRAINSIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1" && have != want) {
    lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(first),
                lines.begin() + static_cast<std::ptrdiff_t>(first + have.size()));
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(first), want.begin(), want.end());
    std::ofstream out(kRoot / "README.md");
    for (const std::string& l : lines) out << l << "\n";
    return;
  }
  for (size_t i = 0; i < std::max(want.size(), have.size()); ++i)
    EXPECT_EQ(i < have.size() ? have[i] : "(none)", i < want.size() ? want[i] : "(none)")
        << "README.md's accuracy table is not tests/accuracy/summary.json rendered: rerun this test with "
           "TRAINSIM_UPDATE_GOLDEN=1";
}

// Every figure is in the table and checked by an accuracy suite: a stats key through
// expect_summary("key", ...), any other through expect_summary_figure("key", ...).
TEST(Accuracy, EveryFigureIsShownAndChecked) {
  const Json summary = Json::parse(read(kRoot / "tests/accuracy/summary.json"));
  std::set<std::string> used;
  rendered(summary, &used);
  std::string suites;
  for (const auto& e : fs::directory_iterator(kRoot / "tests/accuracy"))
    if (e.path().extension() == ".cpp") suites += read(e.path());
  for (auto it = summary.at("figures").begin(); it != summary.at("figures").end(); ++it) {
    const std::string& key = it.key();
    EXPECT_TRUE(used.count(key)) << "tests/accuracy/summary.json: figure " << key << " is not in the table";
    const std::string prefix = key.substr(0, key.rfind('.'));
    const std::string suffix = key.substr(key.rfind('.') + 1);
    const bool stats = (suffix == "rows" || suffix == "fit" || suffix == "median" || suffix == "max") &&
                       suites.find("expect_summary(\"" + prefix + "\"") != std::string::npos;
    EXPECT_TRUE(stats || suites.find("expect_summary_figure(\"" + key + "\"") != std::string::npos)
        << "no accuracy suite checks figure " << key;
  }
}

}  // namespace
