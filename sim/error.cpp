#include "sim/error.hpp"

namespace trainsim {

namespace {
std::string format_line(const std::string& where, const std::string& message, const std::string& hint) {
  std::string out = where.empty() ? message : where + ": " + message;
  if (!hint.empty()) out += " (" + hint + ")";
  return out;
}
}  // namespace

ConfigError::ConfigError(std::string path, std::string message, std::string hint)
    : std::runtime_error(format_line(path, message, hint)),
      path_(std::move(path)),
      message_(std::move(message)),
      hint_(std::move(hint)) {}

PlanError::PlanError(std::string component, std::string message, std::string hint)
    : std::runtime_error(format_line(component, message, hint)), component_(std::move(component)) {}

namespace detail {
void assertion_failed(const char* cond, const char* file, int line, const std::string& msg) {
  std::string text = std::string("assertion `") + cond + "` failed at " + file + ":" + std::to_string(line);
  if (!msg.empty()) text += ": " + msg;
  throw InternalError(text);
}
}  // namespace detail

}  // namespace trainsim
