#pragma once
// The flag table: every flag `trainsim` accepts besides the job flags, how the parser stores it
// and which commands take it. parse_args accepts exactly these and the job schema's keys;
// check_command_flags rejects a flag given to a command that does not take it (never silently
// ignored); the usage text (usage.cpp) is checked against this table by a unit test.

#include <string>
#include <vector>

#include "planner/cli/args.hpp"

namespace trainsim::planner::cli {

enum class FlagKind {
  kValue,       // --flag VALUE, kept in Args::command_options["flag"]
  kSwitch,      // --flag alone, kept in Args::options
  kBoolSwitch,  // --flag, --flag true|false: kept in Args::options when true
  kRepeated,    // --flag VALUE, repeatable (--override, --fault, --rate)
  kOwn,         // parsed into its own Args field (--json, --help, --log, --time-limit, --trace, ...)
};

struct CommandFlag {
  std::string name;                   // "--top"
  FlagKind kind;                      // how parse_args stores it
  std::vector<std::string> commands;  // the commands that take it; empty: every command
  std::string hint;                   // the fix when another command gets it; empty: "drop it, or run ..."
};

// Every command `trainsim` runs, in the order of the usage.
const std::vector<std::string>& command_names();
// Every flag besides the job flags.
const std::vector<CommandFlag>& command_flags();
// The entry of `name` ("--top"), or nullptr.
const CommandFlag* find_command_flag(const std::string& name);
// The job flags (--model, --tp, ...: the job schema's keys) `command` takes: all of them for the
// commands that read a job, a few for collective and topology, none for list and config.
std::vector<std::string> job_flags_of(const std::string& command);
// Every flag `command` accepts: its job flags and the table's entries for it.
std::vector<std::string> flags_of(const std::string& command);
// What `trainsim list` lists.
const std::vector<std::string>& list_categories();

// Throws ConfigError for the first flag of Args::given that `args.command` does not take, and for
// the combinations only one command allows (--gpus MIN:MAX, --trace without --replay on validate).
void check_command_flags(const Args& args);

}  // namespace trainsim::planner::cli
