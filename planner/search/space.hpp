#pragma once
// The planner's search space: every parallel configuration of a job over its model, cluster,
// GPU count and global batch. A dimension the user gave (a flag or a job-file key: --tp 8,
// --schedule interleaved, --zero 1, ...) is pinned to that value; every other one is enumerated.
// Enumeration applies the divisibility rules of resolve_job (heads and ffn by tp, tp inside an
// NVLink domain, gpus by tp*cp*pp, the batch by dp*micro_batch, layers by pp*vp or an uneven split,
// schedule shapes, experts by ep) and counts what each rule removed.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "models/workload/job/layout.hpp"
#include "planner/search/candidate.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::planner::search {

struct SpaceOptions {
  int64_t max_micro_batch = 16;  // micro-batch sizes: divisors of the per-replica batch up to this
  int64_t max_vp = 8;            // model chunks per rank for interleaved schedules
  int64_t max_cp = 32;           // context-parallel degrees: powers of two up to this ...
  int64_t min_cp_tokens = 2048;  // ... keeping at least this many tokens of a sequence per rank
};

// Which values each dimension takes.
struct SearchSpace {
  std::vector<int64_t> tp, cp, pp, vp, micro_batch, zero, ep, etp;  // etp: 0 stands for "= tp"
  std::vector<Recompute> recompute;
  std::vector<uint8_t> schedules;  // registry indices
  std::vector<bool> sp;
  bool pinned_dp = false;
  int64_t dp = 0;  // when pinned
  // What the job's software stack allows beyond the lists above (stack_space.hpp):
  bool uneven = true;   // uneven layer splits (lighter first and last stages)
  bool folding = true;  // MoE parallel folding (else ep divides dp and etp divides tp)
  uint8_t cp_algo = 0;  // Candidate::cp_algo of every candidate (0: the job's algorithm)
  // MoE token dispatchers searched for candidates with ep > 1 (Candidate::moe_dispatcher codes;
  // empty: the job's), and how expand_dispatchers multiplies them (stack_space.hpp).
  std::vector<uint8_t> moe_dispatchers;
  int64_t dp_shard = 0;           // > 0: a pinned shard group the stack cannot run as HSDP (zero > 0 needs dp*cp = it)
  int64_t recompute_layers = -1;  // >= 0: a pinned partial recompute the stack cannot run (full needs chunks <= it)
  std::string stack_rule;         // "stack NAME", the prefix of the rules of those two filters
  std::map<std::string, std::vector<std::string>> stack_excluded;  // dimension -> values the stack removed
};

// Builds the space for `spec` (the merged job: file + flags); `given` holds the keys the user set.
// The space holds only what the job's software stack runs (restrict_to_stack). Throws ConfigError
// for a value the planner cannot search around (--pp-layout) or the stack cannot run.
SearchSpace make_space(const models::workload::JobSpec& spec, const sim::config::Json& given,
                       const models::workload::Job& hardware, const SpaceOptions& options);

struct Enumeration {
  std::vector<Candidate> candidates;        // in a fixed order
  std::map<std::string, int64_t> rejected;  // rule -> configurations it removed
  int64_t considered = 0;                   // candidates + rejected
};

// Every configuration of the space for `gpus` GPUs that passes the divisibility rules.
Enumeration enumerate(const SearchSpace& space, const models::workload::Job& hardware, int64_t gpus,
                      int64_t global_batch, int64_t seq_len);

// The job spec of a candidate: `base` with the candidate's parallel fields set.
void apply(const Candidate& c, const models::workload::Job& hardware, models::workload::JobSpec& spec);

// Layers per virtual stage of an uneven candidate (first and last lighter; the job's default
// split, models/workload/job/layout.hpp); empty when even.
using models::workload::uneven_layout;

}  // namespace trainsim::planner::search
