#include "models/collectives/collective.hpp"

#include <algorithm>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::models::collectives {

bool AlgorithmInfo::supports(CollectiveOp op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

AlgorithmRegistry& AlgorithmRegistry::mutable_instance() {
  static AlgorithmRegistry registry;
  return registry;
}

const AlgorithmRegistry& AlgorithmRegistry::instance() { return mutable_instance(); }

AlgorithmRegistry::Registrar::Registrar(AlgorithmInfo info) {
  auto& e = mutable_instance().entries_;
  e.push_back(std::move(info));
  std::sort(e.begin(), e.end(), [](const AlgorithmInfo& a, const AlgorithmInfo& b) { return a.name < b.name; });
}

const AlgorithmInfo& AlgorithmRegistry::get(const std::string& name, const std::string& path) const {
  std::vector<std::string> names;
  for (const auto& a : entries_) {
    if (a.name == name) return a;
    names.push_back(a.name);
  }
  const std::string near = sim::config::did_you_mean(name, names);
  std::string hint = near.empty() ? std::string() : "did you mean \"" + near + "\"? ";
  hint += "valid: " + sim::config::join(names);
  throw ConfigError(path, "unknown collective algorithm \"" + name + "\"", hint);
}

void check_plan(const CollectiveSpec& spec, int32_t n, const CollectivePlan& plan) {
  TRAINSIM_ASSERT(n >= 1 && n <= 64, "check_plan handles 1 to 64 ranks, got ", n);
  const int32_t c = plan.chunks;
  const uint64_t all = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  // held[r][k]: the set of ranks whose contribution to chunk k rank r holds (0 = no data).
  std::vector<std::vector<uint64_t>> held(static_cast<size_t>(n), std::vector<uint64_t>(static_cast<size_t>(c), 0));
  const bool gather = spec.op == CollectiveOp::kAllGather;
  for (int32_t r = 0; r < n; ++r)
    for (int32_t k = 0; k < c; ++k)
      if (!gather || k == r) held[static_cast<size_t>(r)][static_cast<size_t>(k)] = uint64_t{1} << r;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const auto before = held;  // transfers of a step read the state at the step's start
    for (const Transfer& t : plan.steps[s].transfers) {
      TRAINSIM_ASSERT(t.src >= 0 && t.src < n && t.dst >= 0 && t.dst < n && t.chunk >= 0 && t.chunk < c,
                      "transfer out of range in step ", s);
      const uint64_t data = before[static_cast<size_t>(t.src)][static_cast<size_t>(t.chunk)];
      TRAINSIM_ASSERT(data != 0, "step ", s, ": rank ", t.src, " sends chunk ", t.chunk, " it does not hold");
      uint64_t& dst = held[static_cast<size_t>(t.dst)][static_cast<size_t>(t.chunk)];
      if (t.reduce) {
        TRAINSIM_ASSERT((dst & data) == 0, "step ", s, ": chunk ", t.chunk, " reduced twice into rank ", t.dst);
        dst |= data;
      } else {
        dst = data;
      }
    }
  }
  for (int32_t r = 0; r < n; ++r)
    for (int32_t k = 0; k < c; ++k) {
      const uint64_t h = held[static_cast<size_t>(r)][static_cast<size_t>(k)];
      switch (spec.op) {
        case CollectiveOp::kAllReduce:
          TRAINSIM_ASSERT(h == all, "all-reduce: rank ", r, " chunk ", k, " is not fully reduced");
          break;
        case CollectiveOp::kAllGather:
          TRAINSIM_ASSERT(h == (uint64_t{1} << k), "all-gather: rank ", r, " lacks chunk ", k);
          break;
        case CollectiveOp::kReduceScatter:
          if (k == r) TRAINSIM_ASSERT(h == all, "reduce-scatter: rank ", r, " chunk ", k, " is not fully reduced");
          break;
        default: TRAINSIM_ASSERT(false, "check_plan does not know ", to_string(spec.op));
      }
    }
}

sim::Bytes bytes_sent(const CollectivePlan& plan, int32_t r) {
  sim::Bytes total;
  for (const Step& s : plan.steps)
    for (const Transfer& t : s.transfers)
      if (t.src == r) total += t.bytes;
  return total;
}

}  // namespace trainsim::models::collectives
