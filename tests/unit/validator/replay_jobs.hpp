#pragma once
// The replay matrix (tests/replay/*.job.json): every pipeline schedule and parallel dimension at
// least once, on a toy model, at most 8 ranks. The MPI replay test (tests/replay/CMakeLists.txt)
// runs the same files.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"
#include "sim/config/json_input.hpp"
#include "validator/replay/program.hpp"

namespace trainsim::replay_jobs {

struct ReplayCase {
  std::string name;       // the file's name without .job.json, as a test name
  sim::config::Json job;  // with the model file's path made absolute
};

inline std::vector<ReplayCase> replay_matrix() {
  std::vector<ReplayCase> out;
  const std::filesystem::path dir = TRAINSIM_REPLAY_DIR;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string file = e.path().filename().string();
    const std::string suffix = ".job.json";
    if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    sim::config::Json j = sim::config::parse_json(text.str(), file);
    j["model"] = (dir / j["model"].get<std::string>()).string();
    std::string name = file.substr(0, file.size() - suffix.size());
    std::replace(name.begin(), name.end(), '-', '_');
    out.push_back({name, j});
  }
  std::sort(out.begin(), out.end(), [](const ReplayCase& a, const ReplayCase& b) { return a.name < b.name; });
  return out;
}

// The job simulated at full fidelity, as a replay program.
inline validator::replay::Program program_of(const sim::config::Json& job_json) {
  const models::workload::Job job = models::workload::resolve_job(models::workload::parse_job(job_json));
  models::workload::SimulateOptions opt;
  opt.fidelity = models::workload::Fidelity::kFullRanks;
  validator::replay::Program p;
  opt.after_run = [&](const models::workload::Workload& w, const sim::task::TaskExecutor& exec) {
    p = validator::replay::build_program(w, exec);
  };
  (void)models::workload::simulate(job, opt);
  return p;
}

}  // namespace trainsim::replay_jobs
