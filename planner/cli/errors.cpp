#include "planner/cli/errors.hpp"

#include <iostream>

#include "planner/cli/commands.hpp"
#include "sim/error.hpp"
#include "validator/runner.hpp"

namespace trainsim::planner::cli {

int report_error(const std::exception_ptr& error, const Args& args, std::ostream& err) {
  std::cout.flush();
  try {
    std::rethrow_exception(error);
  } catch (const ConfigError& e) {
    const std::string path = display_path(e.path(), args);
    err << "error: " << (path.empty() ? "" : path + ": ") << e.message()
        << (e.hint().empty() ? "" : " (" + e.hint() + ")") << "\n";
    return kExitBadInput;
  } catch (const PlanError& e) {
    err << "error: " << e.what() << "\n";
    return kExitDoesNotFit;
  } catch (const validator::NoGpuError& e) {
    err << "error: validate: " << e.what() << "\n";
    return kExitNoGpu;
  } catch (const std::exception& e) {
    err << "internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace trainsim::planner::cli
