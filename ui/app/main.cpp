// trainsim-ui: the viewer's executable. `trainsim ui ...` execs it with its own arguments (so its
// argv[1] is "ui"); errors end it as they end `trainsim` (planner/cli/errors.hpp).
#include <iostream>

#include "planner/cli/args.hpp"
#include "planner/cli/errors.hpp"
#include "planner/cli/ui.hpp"
#include "sim/error.hpp"
#include "ui/app/app.hpp"

int main(int argc, char** argv) {
  using namespace trainsim::planner::cli;
  Args args;
  try {
    args = parse_args(argc, argv);
    configure_logging(args);
    if (args.command != "ui")
      throw trainsim::ConfigError(args.command.empty() ? "trainsim-ui" : args.command,
                                  "trainsim-ui only runs the viewer", "run `trainsim ui [JOB.json | TRACE.json] ...`");
    const UiRequest r = ui_request(args);
    trainsim::ui::AppOptions o;
    o.job = r.job;
    o.trace = r.trace;
    o.screenshot = r.screenshot;
    o.regions = r.regions;
    o.width = r.width;
    o.height = r.height;
    o.plans = r.plans;
    o.threads = r.threads;
    return trainsim::ui::run_app(o);
  } catch (...) {
    return report_error(std::current_exception(), args, std::cerr);
  }
}
