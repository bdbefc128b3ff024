#include "planner/cli/output_files.hpp"

#include <fstream>

#include "sim/error.hpp"

namespace trainsim::planner::cli {

void write_json_file(const std::string& path, const sim::config::Json& j, const std::string& flag) {
  std::ofstream f(path);
  if (!f) throw ConfigError(flag, "cannot write " + path, "give a writable path");
  f << j.dump(2) << "\n";
  if (!f) throw ConfigError(flag, "cannot write " + path, "give a writable path");
}

std::string file_stem(const std::string& path) {
  const auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0) base.resize(base.size() - 5);
  return base;
}

}  // namespace trainsim::planner::cli
