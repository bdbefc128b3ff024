#include "planner/cli/errors.hpp"

#include <iostream>

#include "planner/cli/commands.hpp"
#include "sim/error.hpp"
#include "validator/replay/backend.hpp"
#include "validator/runner.hpp"

namespace trainsim::planner::cli {

namespace {
// One line whatever the message quotes: control characters (a newline in a value) written as
// escapes, as JSON would.
std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}
}  // namespace

int report_error(const std::exception_ptr& error, const Args& args, std::ostream& err) {
  std::cout.flush();
  try {
    std::rethrow_exception(error);
  } catch (const ConfigError& e) {
    const std::string path = display_path(e.path(), args);
    err << "error: "
        << one_line((path.empty() ? "" : path + ": ") + e.message() + (e.hint().empty() ? "" : " (" + e.hint() + ")"))
        << "\n";
    return kExitBadInput;
  } catch (const PlanError& e) {
    err << "error: " << one_line(e.what()) << "\n";
    return kExitDoesNotFit;
  } catch (const validator::NoGpuError& e) {
    err << "error: validate: " << one_line(e.what()) << "\n";
    return kExitNoGpu;
  } catch (const validator::replay::ReplayError& e) {
    err << "error: --replay: " << one_line(e.what()) << "\n";
    return kExitReplayFailed;
  } catch (const std::exception& e) {
    err << "internal error: " << one_line(e.what()) << "\n";
    return kExitInternal;
  }
}

}  // namespace trainsim::planner::cli
