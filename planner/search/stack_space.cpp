#include "planner/search/stack_space.hpp"

#include <algorithm>

#include "models/schedules/schedule.hpp"
#include "models/workload/job/stack.hpp"
#include "planner/search/space.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::search {

using models::workload::CpAlgo;
using models::workload::Job;
using models::workload::JobSpec;
using sim::config::Json;

namespace {

// Keeps the values of `values` the stack allows; records the others under `dimension`. Throws
// when none is left (a stack file listing nothing the planner can search for this job).
template <typename T, typename Name>
void keep_allowed(std::vector<T>& values, const char* dimension, const char* what, Name name,
                  const std::vector<std::string>& allowed, const models::stack::StackSpec& stack,
                  StackExclusions& excluded) {
  std::vector<T> kept;
  for (const T& v : values) {
    if (models::stack::allows(allowed, name(v)))
      kept.push_back(v);
    else
      excluded[dimension].push_back(name(v));
  }
  if (kept.empty())
    throw ConfigError(dimension,
                      "stack \"" + stack.name + "\" (" + stack.framework + ") runs none of the " + what +
                          " the planner searches for this job",
                      "pin --" + std::string(dimension) + ", or use another --stack");
  values = std::move(kept);
}

// The context-parallel algorithm of the candidates with cp > 1: the job's when the stack runs it
// (or when it is pinned: then cp > 1 is searched only if the stack runs it), else the stack's
// first one. False when cp > 1 cannot be searched.
bool cp_algorithm(const JobSpec& spec, bool pinned, const models::stack::StackFeatures& f, CpAlgo& algo) {
  algo = spec.cp_algo;
  if (models::stack::allows(f.cp_algos, std::string(to_string(algo)))) return true;
  if (pinned || f.cp_algos.empty()) return false;
  algo = models::workload::read_option<CpAlgo>(Json(f.cp_algos.front()), "stack.features.cp_algos[0]");
  return true;
}

// The job as the planner would resolve its first candidate, for the stack's feature check: the
// pinned values and the options the planner does not search are the job's, every enumerated
// dimension takes the first value the (narrowed) space keeps.
Job probe(const SearchSpace& s, const JobSpec& spec, const Job& hw) {
  Job j = hw;
  static_cast<models::workload::JobOptions&>(j) = spec;
  j.schedule = models::schedules::ScheduleRegistry::instance().all()[s.schedules.front()].name;
  j.zero = s.zero.front();
  j.recompute = s.recompute.front();
  j.cp = s.cp.front();
  if (s.cp_algo) j.cp_algo = static_cast<CpAlgo>(s.cp_algo - 1);
  j.ep = s.ep.front();
  // Layer splits, shard groups and partial recompute depend on the candidate: filtered per
  // candidate (enumerate), so the probe takes values every stack runs.
  j.layers = {hw.model.layers};
  j.dp = 1;
  j.dp_shard = j.dp_cp();
  j.recompute_layers = hw.model.layers;
  return j;
}

}  // namespace

StackExclusions restrict_to_stack(SearchSpace& s, const JobSpec& spec, const Json& given, const Job& hw) {
  const models::stack::StackSpec& stack = hw.stack;
  const models::stack::StackFeatures& f = stack.features;
  auto pinned = [&](const char* key) { return given.contains(key) && !given.at(key).is_null(); };
  StackExclusions excluded;
  const auto& schedules = models::schedules::ScheduleRegistry::instance().all();
  if (!pinned("schedule"))
    keep_allowed(
        s.schedules, "schedule", "pipeline schedules", [&](uint8_t i) { return schedules[i].name; }, f.schedules, stack,
        excluded);
  if (!pinned("zero"))
    keep_allowed(
        s.zero, "zero", "ZeRO stages", [](int64_t z) { return std::to_string(z); },
        [&] {
          std::vector<std::string> names;
          for (const int64_t z : f.zero) names.push_back(std::to_string(z));
          return names;
        }(),
        stack, excluded);
  if (!pinned("recompute"))
    keep_allowed(
        s.recompute, "recompute", "recompute modes", [](Recompute r) { return std::string(to_string(r)); }, f.recompute,
        stack, excluded);
  CpAlgo algo = spec.cp_algo;
  const bool cp_ok = cp_algorithm(spec, pinned("cp_algo"), f, algo);
  if (!pinned("cp") && !cp_ok && s.cp.size() > 1) {
    s.cp = {1};
    excluded["cp"].push_back("> 1");
  }
  if (algo != spec.cp_algo && std::any_of(s.cp.begin(), s.cp.end(), [](int64_t c) { return c > 1; })) {
    s.cp_algo = static_cast<uint8_t>(static_cast<uint8_t>(algo) + 1);
    excluded["cp_algo"].push_back(to_string(spec.cp_algo));
  }
  if (!pinned("ep") && !f.expert_parallel && s.ep.size() > 1) {
    s.ep = {1};
    excluded["ep"].push_back("> 1");
  }
  if (!f.expert_folding && s.ep.size() > 1) {
    s.folding = false;
    excluded["ep"].push_back("beyond dp (parallel folding)");
  }
  if (!f.uneven_layout) {
    s.uneven = false;
    excluded["pp_layout"].push_back("uneven");
  }
  // The stack's recipe decides sequence parallelism (megatron-lm-2021 predates it) unless pinned.
  if (!pinned("sp") && stack.defaults.contains("sp") && !spec.sp && s.sp == std::vector<bool>{true}) {
    s.sp = {false};
    excluded["sp"].push_back("true");
  }
  // The MoE token dispatcher: the stack's, searched for candidates with ep > 1 (expand_dispatchers).
  if (hw.model.moe && !pinned("moe_dispatcher"))
    for (const std::string& d : f.moe_dispatchers)
      s.moe_dispatchers.push_back(static_cast<uint8_t>(
          static_cast<uint8_t>(models::workload::read_option<models::llm::MoeDispatcher>(Json(d), "moe_dispatcher")) +
          1));
  // A stack that compiles no MXFP8 model with TP (torchtitan): a compiled MXFP8 job searches tp 1.
  if (!pinned("tp") && f.mxfp8_tp_refuses_compile && spec.torch_compile &&
      spec.precision == models::compute::Precision::kMxfp8 && s.tp.size() > 1) {
    s.tp = {1};
    excluded["tp"].push_back("> 1 (torch_compile with mxfp8)");
  }
  // A stack whose async TP runs only compiled (torchtitan): an eager job with tp_comm_overlap
  // searches tp 1 (where the overlap is a no-op).
  if (!pinned("tp") && f.async_tp_needs_compile && spec.tp_comm_overlap && !spec.torch_compile && s.tp.size() > 1) {
    s.tp = {1};
    excluded["tp"].push_back("> 1 (tp_comm_overlap without torch_compile)");
  }
  // Pinned options that only some candidates could run on this stack: filtered per candidate.
  if (!f.hybrid_shard && spec.dp_shard) s.dp_shard = *spec.dp_shard;
  if (!f.recompute_layers && spec.recompute_layers) s.recompute_layers = *spec.recompute_layers;
  models::workload::check_stack_features(probe(s, spec, hw));
  return excluded;
}

void expand_dispatchers(const SearchSpace& space, Enumeration& en) {
  if (space.moe_dispatchers.size() < 2) {
    if (space.moe_dispatchers.size() == 1)
      for (Candidate& c : en.candidates)
        if (c.ep > 1) c.moe_dispatcher = space.moe_dispatchers.front();
    return;
  }
  std::vector<Candidate> out;
  out.reserve(en.candidates.size());
  for (const Candidate& c : en.candidates) {
    if (c.ep <= 1) {
      out.push_back(c);
      continue;
    }
    for (const uint8_t d : space.moe_dispatchers) {
      Candidate x = c;
      x.moe_dispatcher = d;
      out.push_back(x);
    }
    en.considered += static_cast<int64_t>(space.moe_dispatchers.size()) - 1;
  }
  en.candidates = std::move(out);
}

}  // namespace trainsim::planner::search
