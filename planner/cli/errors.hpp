#pragma once
// How an error ends a trainsim program: one line on `err`, and the exit code for its kind
// (commands.hpp: 2 bad input, 3 does not fit, 4 no GPU, 1 internal). Shared by `trainsim` and
// `trainsim-ui`, the viewer's executable.

#include <exception>
#include <ostream>

#include "planner/cli/args.hpp"

namespace trainsim::planner::cli {

int report_error(const std::exception_ptr& error, const Args& args, std::ostream& err);

}  // namespace trainsim::planner::cli
