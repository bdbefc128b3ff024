#pragma once
// The planner's search: enumerate the space (space.hpp), estimate every candidate with the fast
// model (estimator.hpp) on all threads of all MPI ranks, keep the feasible ones, rank them, then
// re-simulate the best with the discrete-event simulation and rank those again by simulated time.
// The result is the same bytes whatever the number of threads and ranks: work is split by
// candidate index, merged with a total order (objective, then the candidate's key), and the
// re-simulations are deterministic.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"
#include "planner/search/candidate.hpp"
#include "planner/search/estimator.hpp"
#include "planner/search/space.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::planner::search {

struct SearchOptions {
  SpaceOptions space;
  double headroom = 0.9;     // usable share of device memory
  int64_t keep = 10;         // plans reported
  int64_t rerank = 100;      // best plans re-simulated by the discrete-event simulation, analytic network
  int64_t rerank_flow = 10;  // the best of those simulated again on the flow-level network (network = flow)
  int threads = 1;           // per process
  // What the ranking minimises, from a plan and its (estimated or simulated) iteration time; empty:
  // the iteration time. Must be a pure function (called from every thread and rank).
  std::function<double(const Candidate&, double iteration_s)> score;
  // Called with (done, total) candidates from rank 0's first thread; may be empty.
  std::function<void(int64_t, int64_t)> progress;
};

// A plan as ranked: its estimate and, when re-simulated, the simulation's numbers.
struct Plan {
  Candidate candidate;
  Estimate estimate;
  bool simulated = false;
  std::string fidelity;    // "flow", "analytic" (discrete-event, alpha-beta network) or "estimate"
  double iteration_s = 0;  // simulated when `simulated`, else estimated
  double score = 0;        // SearchOptions::score of it (the iteration time by default)
  double tokens_per_s = 0, mfu = 0, model_tflops_per_gpu = 0;
  double peak_memory_bytes = 0;
  sim::config::Json breakdown;  // simulated time breakdown of the critical stage (null if not simulated)
};

struct SearchResult {
  int64_t gpus = 0;
  int64_t considered = 0;                   // configurations of the space
  int64_t valid = 0;                        // passing the divisibility and resolve rules
  int64_t feasible = 0;                     // fitting in memory
  std::map<std::string, int64_t> rejected;  // rule -> configurations removed (memory included)
  double estimate_s = 0, simulate_s = 0;    // wall time of each phase (rank 0)
  int64_t simulated = 0;                    // plans re-simulated on the analytic network
  int64_t simulated_flow = 0;               // of which also on the flow network
  int64_t flow_over_budget = 0;             // flow re-simulations stopped by their work budget (analytic time kept)
  bool flow_stopped = false;       // the first flow round's best plans all ran past the budget: no more were tried
  std::vector<Plan> plans;         // best first: flow-simulated by score, analytic-simulated, then estimates
  std::vector<Plan> memory_front;  // estimated time vs peak memory Pareto front, fastest first
  std::string stack;               // the software stack searched (its features bound the space)
  // Dimension -> the values the stack removed from the space (stack_space.hpp).
  std::map<std::string, std::vector<std::string>> stack_excluded;
};

// `hardware` has the resolved model, cluster, GPU; `base` the job spec (file + flags) with
// `given` the keys the user set (pinned dimensions). Throws PlanError when nothing fits and
// ConfigError when no configuration passes the divisibility rules.
SearchResult run_search(const models::workload::Job& hardware, const models::workload::JobSpec& base,
                        const sim::config::Json& given, const SearchOptions& options);

// The resolved job of a plan.
models::workload::Job plan_job(const models::workload::Job& hardware, const models::workload::JobSpec& base,
                               const Candidate& c);

}  // namespace trainsim::planner::search
