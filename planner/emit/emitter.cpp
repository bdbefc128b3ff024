#include "planner/emit/emitter.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::emit {

std::vector<EmittedFile> emit(const std::string& name, const models::workload::Job& job, const std::string& path) {
  return EmitterRegistry::instance().get(name, path).emit(job);
}

std::vector<std::string> write_files(const std::string& dir, const std::vector<EmittedFile>& files) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw ConfigError("--out", "no output directory given", "pass --out DIR");
  std::error_code ec;
  fs::create_directories(fs::path(dir), ec);
  if (ec || !fs::is_directory(fs::path(dir)))
    throw ConfigError("--out", "cannot create directory \"" + dir + "\"" + (ec ? ": " + ec.message() : ""),
                      "choose a writable directory");
  std::vector<std::string> written;
  for (const auto& f : files) {
    TRAINSIM_ASSERT(!f.name.empty() && f.name.find('/') == std::string::npos, "bad emitted file name \"", f.name, "\"");
    const fs::path p = fs::path(dir) / f.name;
    {
      std::ofstream out(p, std::ios::binary | std::ios::trunc);
      out << f.content;
      out.close();
      if (!out) throw ConfigError("--out", "cannot write \"" + p.string() + "\"", "choose a writable directory");
    }
    if (f.executable) {
      fs::permissions(p, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add,
                      ec);
      if (ec)
        throw ConfigError("--out", "cannot make \"" + p.string() + "\" executable: " + ec.message(),
                          "choose a directory on a file system that keeps permissions");
    }
    written.push_back(p.string());
  }
  return written;
}

}  // namespace trainsim::planner::emit
