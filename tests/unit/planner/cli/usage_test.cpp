// The usage text against the parser's flag table (planner/cli/usage.*, flags.*): each command's
// section names every flag the command accepts and no other, the job flags section names every
// job key, every flag of the table parses, and `trainsim list` names every category. A flag added
// to the parser without its usage line fails here.
#include "planner/cli/usage.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "planner/cli/args.hpp"
#include "planner/cli/flags.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {
namespace {

// Every "--flag" a text names.
std::set<std::string> named_flags(const std::string& text) {
  std::set<std::string> out;
  static const std::regex flag("--[a-z0-9][a-z0-9-]*");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
    out.insert(it->str());
  return out;
}

// What the usage says `command` takes: its sections, the job flags when a section refers to them,
// and what every command takes.
std::set<std::string> usage_flags(const std::string& command) {
  std::string text = common_usage();
  for (const UsageSection& s : usage_sections())
    if (s.command == command) {
      text += s.text;
      if (s.text.find("(job flags)") != std::string::npos) text += job_flags_usage();
    }
  return named_flags(text);
}

std::string joined(const std::set<std::string>& flags) {
  std::string out;
  for (const auto& f : flags) out += (out.empty() ? "" : " ") + f;
  return out;
}

TEST(Usage, EveryCommandHasASection) {
  for (const std::string& c : command_names()) {
    const auto& s = usage_sections();
    EXPECT_TRUE(std::any_of(s.begin(), s.end(), [&](const UsageSection& u) { return u.command == c; })) << c;
  }
  for (const UsageSection& s : usage_sections()) {
    const auto& names = command_names();
    EXPECT_NE(std::find(names.begin(), names.end(), s.command), names.end()) << s.command;
    // A section's lines are that command's.
    EXPECT_NE(s.text.find("trainsim " + s.command), std::string::npos) << s.text;
  }
}

TEST(Usage, EachSectionNamesExactlyTheFlagsItsCommandAccepts) {
  for (const std::string& c : command_names()) {
    const std::vector<std::string> accepted_list = flags_of(c);
    const std::set<std::string> accepted(accepted_list.begin(), accepted_list.end());
    const std::set<std::string> usage = usage_flags(c);
    std::set<std::string> missing, extra;
    std::set_difference(accepted.begin(), accepted.end(), usage.begin(), usage.end(),
                        std::inserter(missing, missing.end()));
    std::set_difference(usage.begin(), usage.end(), accepted.begin(), accepted.end(),
                        std::inserter(extra, extra.end()));
    EXPECT_TRUE(missing.empty()) << "`trainsim " << c << "` accepts flags its usage does not list: " << joined(missing);
    EXPECT_TRUE(extra.empty()) << "the usage of `trainsim " << c << "` names flags it rejects: " << joined(extra);
  }
}

TEST(Usage, JobFlagsSectionNamesEveryJobKey) {
  std::set<std::string> keys;
  for (const auto& f : models::workload::job_schema().fields()) keys.insert(flag_name(f.key));
  EXPECT_EQ(joined(named_flags(job_flags_usage())), joined(keys));
}

TEST(Usage, EveryFlagTheWholeHelpNamesExists) {
  std::ostringstream help;
  print_help(help);
  std::set<std::string> all;
  for (const std::string& c : command_names())
    for (const std::string& f : flags_of(c)) all.insert(f);
  for (const std::string& f : named_flags(help.str())) EXPECT_TRUE(all.count(f)) << f << " is in the help only";
}

TEST(Usage, ListNamesEveryCategory) {
  std::string line;
  for (const UsageSection& s : usage_sections())
    if (s.command == "list") line += s.text;
  const auto at = line.find("trainsim list ");
  ASSERT_NE(at, std::string::npos);
  std::string words = line.substr(at + 14);
  words = words.substr(0, words.find_first_of(" \n"));
  std::set<std::string> named;
  std::stringstream in(words);
  for (std::string w; std::getline(in, w, '|');) named.insert(w);
  const std::set<std::string> kinds(list_categories().begin(), list_categories().end());
  EXPECT_EQ(joined(named), joined(kinds));
}

// Every flag of the table parses for a command that takes it (none is in the table without a
// parser), and every other command rejects it with one ConfigError naming it.
TEST(Usage, EveryTableFlagParsesAndOnlyItsCommandsTakeIt) {
  for (const CommandFlag& f : command_flags()) {
    if (f.name == "--help") continue;  // handled before any command runs
    const std::string value = f.name == "--json"         ? "true"
                              : f.name == "--time-limit" ? "1h"
                              : f.name == "--fidelity"   ? "full"
                                                         : "x";
    const bool takes_value = f.kind != FlagKind::kSwitch;
    for (const std::string& c : command_names()) {
      std::vector<std::string> words = {"trainsim", c, f.name};
      if (takes_value) words.push_back(value);
      if (f.name == "--trace" && c == "validate") words.insert(words.end(), {"--replay", "iteration"});
      std::vector<const char*> argv;
      for (const auto& w : words) argv.push_back(w.c_str());
      Args args;
      ASSERT_NO_THROW(args = parse_args(static_cast<int>(argv.size()), argv.data())) << f.name;
      ASSERT_EQ(args.given.front(), f.name);
      const bool accepted = f.commands.empty() || std::count(f.commands.begin(), f.commands.end(), c) > 0;
      if (accepted) {
        EXPECT_NO_THROW(check_command_flags(args)) << f.name << " on " << c;
      } else {
        try {
          check_command_flags(args);
          ADD_FAILURE() << f.name << " accepted by " << c;
        } catch (const ConfigError& e) {
          EXPECT_EQ(e.path(), f.name);
        }
      }
    }
  }
}

TEST(Usage, JobFlagsOnlyWhereTheCommandReadsThem) {
  const char* tp[] = {"trainsim", "list", "models", "--tp", "2"};
  Args list = parse_args(5, tp);
  EXPECT_THROW(check_command_flags(list), ConfigError);
  const char* net[] = {"trainsim", "topology", "--cluster", "dgx-h100", "--gpus", "8", "--network", "flow"};
  EXPECT_THROW(check_command_flags(parse_args(8, net)), ConfigError);
  const char* coll[] = {"trainsim", "collective", "--cluster", "dgx-h100", "--gpus", "8", "--network", "flow"};
  EXPECT_NO_THROW(check_command_flags(parse_args(8, coll)));
  const char* sim[] = {"trainsim", "simulate", "--stack", "nemo-24.07", "--seed", "3"};
  EXPECT_NO_THROW(check_command_flags(parse_args(6, sim)));
}

TEST(Usage, CommandHelpHasItsSectionAndTheJobFlags) {
  std::ostringstream out;
  print_command_help(out, "simulate");
  EXPECT_NE(out.str().find("--stack S"), std::string::npos);
  EXPECT_NE(out.str().find("--fault SPEC"), std::string::npos);
  EXPECT_EQ(out.str().find("trainsim plan"), std::string::npos);
  std::ostringstream topo;
  print_command_help(topo, "topology");
  EXPECT_EQ(topo.str().find("--stack"), std::string::npos);
  std::ostringstream none;
  EXPECT_THROW(print_command_help(none, "simulat"), ConfigError);
}

}  // namespace
}  // namespace trainsim::planner::cli
