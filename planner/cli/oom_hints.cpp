#include "planner/cli/oom_hints.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "models/workload/job/job.hpp"

namespace trainsim::planner::cli {

using models::workload::Recompute;
using sim::config::Json;

namespace {

struct Change {
  std::string text;  // as the user would type it
  Json patch;        // keys to set (null: erase)
};

std::vector<Change> candidates(const models::workload::Job& j) {
  std::vector<Change> out;
  if (j.recompute != Recompute::kFull)
    out.push_back({"--recompute full", Json{{"recompute", "full"}, {"recompute_modules", nullptr}}});
  if (j.recompute == Recompute::kNone) out.push_back({"--recompute selective", Json{{"recompute", "selective"}}});
  if (j.recompute == Recompute::kFull && j.recompute_layers < *std::max_element(j.layers.begin(), j.layers.end()))
    out.push_back({"--recompute-layers (every layer)", Json{{"recompute_layers", nullptr}}});
  if (j.micro_batch > 1)
    out.push_back({"--micro-batch " + std::to_string(j.micro_batch / 2), Json{{"micro_batch", j.micro_batch / 2}}});
  if (j.zero < 3) out.push_back({"--zero " + std::to_string(j.zero + 1), Json{{"zero", j.zero + 1}}});
  out.push_back({"--tp " + std::to_string(j.tp * 2), Json{{"tp", j.tp * 2}, {"dp", nullptr}}});
  out.push_back({"--pp " + std::to_string(j.pp * 2), Json{{"pp", j.pp * 2}, {"dp", nullptr}, {"pp_layout", nullptr}}});
  // Context parallelism is offered for long sequences only (16K tokens and more), where it is how
  // the frameworks fit them; below, a larger TP or PP saves the same activations with less traffic.
  if (j.cp == 1 && j.seq_len >= 16384) out.push_back({"--cp 2", Json{{"cp", 2}, {"dp", nullptr}}});
  if (!j.offload_optimizer) out.push_back({"--offload-optimizer", Json{{"offload_optimizer", true}}});
  return out;
}

// The most device memory and the most host memory (offloads) a stage of `j` uses per GPU.
std::pair<sim::Bytes, sim::Bytes> peak_of(const models::workload::Job& j) {
  sim::Bytes peak, host;
  for (const auto& s : models::workload::stage_memory_reports(j)) {
    peak = std::max(peak, s.memory.total());
    host = std::max(host, s.memory.host);
  }
  return {peak, host};
}

}  // namespace

std::string oom_hint(const Json& job, const models::workload::SimulationResult& r) {
  const sim::Bytes now = r.peak_memory();
  struct Priced {
    std::string text;
    double saved_gib;
    bool fits;
  };
  std::vector<Priced> priced;
  for (const Change& c : candidates(r.job)) {
    Json patched = job;
    for (auto it = c.patch.begin(); it != c.patch.end(); ++it) {
      if (it->is_null())
        patched.erase(it.key());
      else
        patched[it.key()] = *it;
    }
    try {
      const models::workload::Job changed = models::workload::resolve_job(models::workload::parse_job(patched));
      const auto [peak, host] = peak_of(changed);
      if (peak >= now) continue;
      // Fits: on the device, and what it offloads in the host's memory (when the cluster says).
      priced.push_back({c.text, (now - peak).gib(), peak <= r.capacity && changed.cluster.holds_on_host(host)});
    } catch (const std::exception&) {
      // Not a valid job (TP past the heads, PP past the layers, a stack without the feature):
      // not a suggestion.
    }
  }
  std::stable_sort(priced.begin(), priced.end(), [](const Priced& a, const Priced& b) {
    return a.fits != b.fits ? a.fits : a.saved_gib > b.saved_gib;
  });
  if (priced.empty()) return "no single change of recompute, micro-batch, ZeRO, TP, PP or offload helps: use more GPUs";
  std::string out = "try ";
  const size_t n = std::min<size_t>(priced.size(), 4);
  for (size_t i = 0; i < n; ++i) {
    char saved[96];
    std::snprintf(saved, sizeof saved, " (-%.1f GiB%s)", priced[i].saved_gib, priced[i].fits ? ", fits" : "");
    out += (i == 0 ? "" : i + 1 == n ? ", or " : ", ") + priced[i].text + saved;
  }
  return out;
}

}  // namespace trainsim::planner::cli
