#pragma once
// The usage text (`trainsim help`, `trainsim COMMAND --help`): one section per command, the job
// flags the commands that read a job share, and what every command takes. Written by hand; a unit
// test checks that each section names exactly the flags its command accepts (flags.hpp).

#include <ostream>
#include <string>
#include <vector>

namespace trainsim::planner::cli {

struct UsageSection {
  std::string command;  // "simulate"
  std::string text;     // its usage lines; "(job flags)" stands for job_flags_usage()
};

// The commands' sections, in the order `trainsim help` prints them (a command may have several).
const std::vector<UsageSection>& usage_sections();
// The job flags: every key of a job file, as a flag.
const std::string& job_flags_usage();
// The flags every command takes.
const std::string& common_usage();

// The whole usage.
void print_help(std::ostream& out);
// One command's sections, the job flags when it reads a job, and what every command takes.
// Throws ConfigError for an unknown command.
void print_command_help(std::ostream& out, const std::string& command);

}  // namespace trainsim::planner::cli
