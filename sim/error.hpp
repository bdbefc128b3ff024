#pragma once
// One exception type per audience. Only planner/cli/main.cpp catches and decides exit codes.
//   ConfigError: bad user input (exit 2)   PlanError: configuration does not fit (exit 3)
//   InternalError: a broken invariant, raised by TRAINSIM_ASSERT (exit 1)

#include <sstream>
#include <stdexcept>
#include <string>

namespace trainsim {

// Bad input: `path` names the field (JSON path or --flag), `hint` says how to fix it.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string path, std::string message, std::string hint = "");
  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string path_, message_, hint_;
};

// A plan that cannot run: `component` is what overflows (e.g. "stage 0 memory").
class PlanError : public std::runtime_error {
 public:
  PlanError(std::string component, std::string message, std::string hint = "");
  const std::string& component() const { return component_; }

 private:
  std::string component_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {
[[noreturn]] void assertion_failed(const char* cond, const char* file, int line, const std::string& msg);
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace trainsim

// Internal invariant check, always on (never a substitute for input validation).
#define TRAINSIM_ASSERT(cond, ...)                                                                     \
  do {                                                                                                 \
    if (!(cond))                                                                                       \
      ::trainsim::detail::assertion_failed(#cond, __FILE__, __LINE__,                                  \
                                           ::trainsim::detail::concat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
