#include "planner/search/search.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

#include "planner/search/distributed.hpp"
#include "planner/search/partial.hpp"
#include "planner/search/stack_space.hpp"
#include "sim/error.hpp"
#include "sim/log.hpp"

namespace trainsim::planner::search {

using models::workload::Job;
using models::workload::JobSpec;
using sim::config::Json;

namespace {

using shard::deserialize;
using shard::Entry;
using shard::front_of;
using shard::keep_best;
using shard::merge;
using shard::Partial;
using shard::serialize;
using shard::smaller;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Largest all-to-all group re-simulated on the flow network (see the flow re-rank below).
constexpr int64_t kMaxFlowAllToAll = 64;
// Work budgets of the flow re-ranking, in engine events (deterministic, unlike wall time; about
// 2-3 M events per second on one core): a plan whose flow simulation needs more than
// kFlowEventsPerPlan keeps its analytic time, and no new round starts past kFlowEventsTotal. A
// 64-GPU GPT-3 plan with TP 16 over two nodes needs 31 M events (13 s) on the flow network
// because its TP rings cross the NICs; the analytic network prices them in 16 K.
constexpr uint64_t kFlowEventsPerPlan = 2'000'000, kFlowEventsTotal = 12'000'000;
// The max-min solver's budget per plan, in flows solved (Engine::charge): LLaMA-3-405B plans on
// 16,384 H100 solve 0.6 M; a plan whose 512-rank ZeRO rings share the spines solved about 1,000
// flows at each of its 2 M events (80 s) before this bound.
constexpr uint64_t kFlowSolvedPerPlan = 10'000'000;
// The first flow round starts with its best kFlowProbe plans; when every one of them runs past
// the budget the re-ranking stops there (the others keep their analytic times), else the round
// goes on with the rest, as one round would. LLaMA-3-70B on 1,024 GPUs of gb200-nvl72: all ten
// of the first round need more than 2 M events (140 M for the first; the NVL72 fabric's events
// cost two to three times a DGX's), 10 s of flow simulation on 2 cores that kept no flow time.
constexpr size_t kFlowProbe = 4;

// Runs f(0..threads-1) on `threads` threads and rethrows the first failure (lowest thread index).
// Under MPI a failure on one rank would leave the others waiting in a collective: it aborts the
// job instead (an internal error: simulate() and the estimator throw nothing for valid plans).
template <typename F>
void run_threads(int threads, F f) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  auto guarded = [&](int t) {
    try {
      f(t);
    } catch (...) {
      errors[static_cast<size_t>(t)] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
  guarded(0);
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (e) {
      if (Distributed::instance().size() > 1) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          Distributed::instance().abort_others(x.what());
        }
      }
      std::rethrow_exception(e);
    }
}

// Names a resolve_job rejection by the field it names.
std::string rule_of_field(const std::string& path) { return "resolve: " + path; }

// The simulated numbers of one re-ranked plan.
struct Simulated {
  bool fits = false;
  bool over_budget = false;  // the flow re-simulation's work budget ran out (kFlowEventsPerPlan)
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, tflops = 0, peak = 0;
  uint64_t events = 0;    // engine events the simulation ran
  std::string breakdown;  // JSON text
};

std::string serialize(const std::vector<std::pair<int64_t, Simulated>>& v) {
  std::string out;
  put<uint64_t>(out, v.size());
  for (const auto& [i, s] : v) {
    put(out, i);
    put(out, s.fits);
    put(out, s.over_budget);
    put(out, s.events);
    put(out, s.iteration_s);
    put(out, s.tokens_per_s);
    put(out, s.mfu);
    put(out, s.tflops);
    put(out, s.peak);
    put_string(out, s.breakdown);
  }
  return out;
}

void deserialize(const std::string& in, std::map<int64_t, Simulated>& out) {
  size_t pos = 0;
  const auto n = take<uint64_t>(in, pos);
  for (uint64_t k = 0; k < n; ++k) {
    const auto i = take<int64_t>(in, pos);
    Simulated s;
    s.fits = take<bool>(in, pos);
    s.over_budget = take<bool>(in, pos);
    s.events = take<uint64_t>(in, pos);
    s.iteration_s = take<double>(in, pos);
    s.tokens_per_s = take<double>(in, pos);
    s.mfu = take<double>(in, pos);
    s.tflops = take<double>(in, pos);
    s.peak = take<double>(in, pos);
    s.breakdown = take_string(in, pos);
    out[i] = std::move(s);
  }
}

// Simulates `plans` (each on `network`) over all ranks and threads; every rank gets every result,
// in the order of `plans`.
std::vector<Simulated> simulate_all(const Job& hw, const JobSpec& base, const std::vector<Candidate>& plans,
                                    models::workload::Network network, int threads, double capacity,
                                    uint64_t event_limit = 0, uint64_t solver_limit = 0) {
  const Distributed& dist = Distributed::instance();
  const size_t ranks = static_cast<size_t>(dist.size()), me = static_cast<size_t>(dist.rank());
  std::vector<std::vector<std::pair<int64_t, Simulated>>> sims(static_cast<size_t>(threads));
  auto some = [&](int t) {
    for (size_t k = me + ranks * static_cast<size_t>(t); k < plans.size(); k += ranks * static_cast<size_t>(threads)) {
      Job job = plan_job(hw, base, plans[k]);
      job.network = network;
      models::workload::SimulateOptions opts;
      opts.event_limit = event_limit;
      opts.solver_limit = solver_limit;
      opts.route_threads = 1;  // the plans already run on every thread
      const double t0 = now_s();
      const models::workload::SimulationResult r = models::workload::simulate(job, opts);
      TRAINSIM_LOG_DEBUG(kPlanner, "simulated ", describe(plans[k]), " (",
                         network == models::workload::Network::kFlow ? "flow" : "analytic", "): ", r.events,
                         " events in ", now_s() - t0, " s");
      Simulated s;
      s.over_budget = r.over_budget;
      s.events = r.events;
      s.peak = static_cast<double>(r.peak_memory().count());
      // The simulator's own fit check uses all usable memory; the plan must also keep the headroom.
      s.fits = r.fits && r.simulated && s.peak <= capacity;
      if (s.fits) {
        s.iteration_s = r.iteration.seconds();
        s.tokens_per_s = r.tokens_per_s;
        s.mfu = r.mfu;
        s.tflops = r.model_tflops_per_gpu;
        s.breakdown = r.stages[static_cast<size_t>(r.critical_stage)].time.to_json().dump();
      }
      sims[static_cast<size_t>(t)].emplace_back(static_cast<int64_t>(k), std::move(s));
    }
  };
  run_threads(threads, some);
  std::vector<std::pair<int64_t, Simulated>> mine;
  for (auto& v : sims) mine.insert(mine.end(), v.begin(), v.end());
  std::map<int64_t, Simulated> got;
  const std::vector<std::string> parts = dist.gather(serialize(mine));
  std::string merged;
  if (dist.root()) {
    for (const auto& g : parts) deserialize(g, got);
    std::vector<std::pair<int64_t, Simulated>> flat(got.begin(), got.end());
    merged = serialize(flat);
  }
  got.clear();
  deserialize(dist.broadcast(merged), got);
  std::vector<Simulated> out(plans.size());
  for (auto& [k, v] : got) out[static_cast<size_t>(k)] = std::move(v);
  return out;
}

// run_search's state across its phases.
struct Search {
  const Job& hw;
  const JobSpec& base;
  const SearchOptions& opt;
  const Distributed& dist;
  double t0 = 0, t1 = 0;  // when the estimate and the re-simulation started
  SearchResult res{};
  Enumeration en{};
  int64_t seq = 0;
  size_t keep = 0;  // best entries kept per process: enough for the report and the re-rank
  int threads = 1;
  size_t ranks = 1, me = 0, total = 0;
  double capacity = 0, tokens_per_iter = 0;
  Partial all{};                               // every process's estimates, merged
  size_t n_sim = 0;                            // re-simulated on the analytic network
  std::vector<Plan> sim_plans{}, est_plans{};  // simulated (best first), estimated only
};

// The space, its enumeration and the search's sizes.
Search start_search(const Job& hw, const JobSpec& base, const Json& given, const SearchOptions& opt) {
  Search s{hw, base, opt, Distributed::instance()};
  s.t0 = now_s();
  s.res.gpus = base.gpus;
  const SearchSpace space = make_space(base, given, hw, opt.space);
  s.seq = base.seq_len.value_or(hw.model.seq_len);
  s.en = enumerate(space, hw, base.gpus, base.global_batch, s.seq);
  expand_dispatchers(space, s.en);
  s.res.considered = s.en.considered;
  s.res.stack = hw.stack.name;
  s.res.stack_excluded = space.stack_excluded;
  s.keep = static_cast<size_t>(std::max(opt.keep, opt.rerank));
  s.threads = std::max(1, opt.threads);
  s.ranks = static_cast<size_t>(s.dist.size());
  s.me = static_cast<size_t>(s.dist.rank());
  s.total = s.en.candidates.size();
  if (s.dist.root()) {
    TRAINSIM_LOG_DEBUG(kPlanner, "space: ", s.en.considered, " configurations of ", base.gpus, " GPUs, ", s.total,
                       " pass the divisibility rules; ", s.threads, " threads x ", s.ranks, " ranks");
    for (const auto& r : s.en.rejected) TRAINSIM_LOG_DEBUG(kPlanner, "pruned by \"", r.first, "\": ", r.second);
  }
  return s;
}

// Fast estimate of this process's share: candidate i belongs to rank i % ranks, then to thread
// (i / ranks) % threads.
Partial estimate_share(const Search& s) {
  const SearchOptions& opt = s.opt;
  const size_t ranks = s.ranks, me = s.me, total = s.total;
  const int threads = s.threads;
  std::vector<Partial> parts(static_cast<size_t>(threads));
  auto work = [&](int t) {
    Estimator est(s.hw, s.base, opt.headroom);
    Partial& p = parts[static_cast<size_t>(t)];
    std::vector<Entry> feasible;
    std::string why;
    int64_t step = 0;
    for (size_t i = me + ranks * static_cast<size_t>(t); i < total; i += ranks * static_cast<size_t>(threads)) {
      Entry e{s.en.candidates[i], {}};
      const Verdict v = est.estimate(e.c, e.e, &why);
      if (v == Verdict::kInvalid) {
        ++p.rejected[rule_of_field(why)];
      } else if (v == Verdict::kDoesNotFit) {
        ++p.valid;
        ++p.rejected["memory: does not fit"];
        if (!p.has_smallest || smaller(e, p.smallest)) {
          p.smallest = e;
          p.has_smallest = true;
        }
      } else {
        ++p.valid;
        ++p.feasible;
        e.score = opt.score ? opt.score(e.c, e.e.iteration_s) : e.e.iteration_s;
        feasible.push_back(e);
      }
      if (t == 0 && me == 0 && opt.progress && (++step & 4095) == 0)
        opt.progress(static_cast<int64_t>(i), static_cast<int64_t>(total));
    }
    p.front = front_of(feasible);
    keep_best(feasible, s.keep);
    p.best = std::move(feasible);
  };
  run_threads(threads, work);
  Partial local;
  for (auto& p : parts) merge(local, std::move(p), s.keep);
  if (opt.progress && me == 0) opt.progress(static_cast<int64_t>(total), static_cast<int64_t>(total));
  return local;
}

// Gathers at rank 0, merges, and tells every rank which plans to re-simulate; records the counts.
void gather_estimates(Search& s, const Partial& local) {
  const Distributed& dist = s.dist;
  Partial& all = s.all;
  std::string shared;
  {
    const std::vector<std::string> got = dist.gather(serialize(local));
    if (dist.root()) {
      for (const auto& g : got) merge(all, deserialize(g), s.keep);
      shared = serialize(all);
    }
    all = deserialize(dist.broadcast(shared));
  }
  for (const auto& [k, n] : s.en.rejected) all.rejected[k] += n;
  s.res.valid = all.valid;
  s.res.feasible = all.feasible;
  s.res.rejected = all.rejected;
  s.res.estimate_s = now_s() - s.t0;
  if (dist.root() && sim::log::enabled(sim::log::Category::kPlanner, sim::log::Level::kDebug)) {
    TRAINSIM_LOG_DEBUG(kPlanner, "estimate: ", all.valid, " valid, ", all.feasible, " fit in memory, ",
                       s.res.estimate_s, " s");
    for (const auto& r : all.rejected)  // not a structured binding: the log macro's lambda captures it
      if (s.en.rejected.find(r.first) == s.en.rejected.end())
        TRAINSIM_LOG_DEBUG(kPlanner, "pruned by \"", r.first, "\": ", r.second);
  }
}

// The fix for the rule that removed the most.
std::string hint_for(const std::string& worst) {
  if (worst.find("tp*cp*pp") != std::string::npos)
    return "use a GPU count with more divisors (a multiple of gpus_per_node), or unpin --tp / --pp / --cp";
  if (worst.find("global_batch") != std::string::npos)
    return "use a global batch with more divisors (a multiple of the GPU count's data-parallel sizes)";
  if (worst.find("layers") != std::string::npos) return "choose --pp (and --vp) dividing the layers, or unpin them";
  return "unpin dimensions (drop --tp, --pp, --vp, --schedule, ...)";
}

// Throws when no candidate passes the rules, or none fits in memory.
void check_found(const Search& s) {
  const Partial& all = s.all;
  if (all.valid == 0) {
    std::string worst;
    int64_t most = -1;
    for (const auto& [k, n] : all.rejected)
      if (n > most) {
        most = n;
        worst = k;
      }
    throw ConfigError("gpus",
                      "no parallel configuration of " + std::to_string(s.base.gpus) + " GPUs passes the rules (" +
                          std::to_string(s.res.considered) + " considered; most removed by \"" + worst + "\")",
                      hint_for(worst));
  }
  if (all.feasible == 0) {
    char need[200];
    const double usable = usable_memory_bytes(s.hw, s.opt.headroom);
    if (all.smallest.e.peak_memory_bytes <= usable && all.smallest.e.host_memory_bytes > 0)
      std::snprintf(need, sizeof need,
                    "the smallest (%s) fits the GPU but its offloads keep %.1f GiB per GPU on the "
                    "host, which has %.1f GiB (cluster host_memory)",
                    describe(all.smallest.c).c_str(), all.smallest.e.host_memory_bytes / 1073741824.0,
                    s.hw.cluster.host_memory.gib());
    else
      std::snprintf(need, sizeof need, "the smallest (%s) needs %.1f GiB per GPU, %.1f GiB usable",
                    describe(all.smallest.c).c_str(), all.smallest.e.peak_memory_bytes / 1073741824.0,
                    usable / 1073741824.0);
    throw PlanError("plan",
                    "none of the " + std::to_string(all.valid) + " valid configurations of " +
                        std::to_string(s.base.gpus) + " GPUs fits in memory: " + need,
                    "use more GPUs, a larger --headroom, a shorter --seq-len or a smaller --global-batch; or unpin "
                    "--recompute / --zero / --tp / --pp");
  }
}

// A kept entry as a plan: with the simulated numbers when `sim` is given, else the estimate's.
Plan to_plan(const Search& s, const Entry& e, const Simulated* sim, const std::string& fidelity) {
  Plan p;
  p.candidate = e.c;
  p.estimate = e.e;
  p.peak_memory_bytes = e.e.peak_memory_bytes;
  p.fidelity = fidelity;
  if (sim) {
    p.simulated = true;
    p.iteration_s = sim->iteration_s;
    p.tokens_per_s = sim->tokens_per_s;
    p.mfu = sim->mfu;
    p.model_tflops_per_gpu = sim->tflops;
    p.peak_memory_bytes = sim->peak;
    p.breakdown = Json::parse(sim->breakdown);
  } else {
    p.iteration_s = e.e.iteration_s;
    p.tokens_per_s = s.tokens_per_iter / p.iteration_s;
  }
  p.score = s.opt.score ? s.opt.score(p.candidate, p.iteration_s) : p.iteration_s;
  return p;
}

// Best first: score, then the candidate's key.
bool by_time(const Plan& a, const Plan& b) {
  if (a.score != b.score) return a.score < b.score;
  return a.candidate < b.candidate;
}

// Re-simulates the best with the discrete-event simulation on the analytic network (the schedule,
// overlaps and memory timeline exactly; collectives as alpha-beta formulas); the rest stay estimates.
void rerank_analytic(Search& s) {
  const Partial& all = s.all;
  s.t1 = now_s();
  s.capacity = usable_memory_bytes(s.hw, s.opt.headroom);
  const size_t n_sim = std::min(all.best.size(), static_cast<size_t>(std::max<int64_t>(s.opt.rerank, 0)));
  s.n_sim = n_sim;
  std::vector<Candidate> first_round;
  for (size_t k = 0; k < n_sim; ++k) first_round.push_back(all.best[k].c);
  const std::vector<Simulated> analytic =
      simulate_all(s.hw, s.base, first_round, models::workload::Network::kAnalytic, s.threads, s.capacity);
  s.res.simulated = static_cast<int64_t>(n_sim);
  if (s.dist.root()) {
    TRAINSIM_LOG_DEBUG(kPlanner, "re-rank: the best ", n_sim, " of ", all.best.size(),
                       " kept estimates re-simulated on the analytic network");
    for (size_t k = 0; k < n_sim; ++k)
      TRAINSIM_LOG_DEBUG(kPlanner, "  #", k + 1, " ", describe(first_round[k]), ": estimate ",
                         all.best[k].e.iteration_s, " s, simulated ",
                         analytic[k].fits ? std::to_string(analytic[k].iteration_s) + " s" : "does not fit");
  }

  s.tokens_per_iter = static_cast<double>(s.base.global_batch) * static_cast<double>(s.seq);
  for (size_t k = 0; k < all.best.size(); ++k) {
    if (k < n_sim) {
      if (!analytic[k].fits) continue;  // the exact check disagrees: dropped (tests keep this empty)
      s.sim_plans.push_back(to_plan(s, all.best[k], &analytic[k], "analytic"));
    } else {
      s.est_plans.push_back(to_plan(s, all.best[k], nullptr, "estimate"));
    }
  }
  std::sort(s.sim_plans.begin(), s.sim_plans.end(), by_time);
}

// Simulates the best plans again on the job's own flow network (contention and routing) until
// the best rerank_flow plans by their most faithful time all have a flow time (a plan the flow
// network slows down makes way for the next), within 3 x rerank_flow flow simulations. Plans with
// an all-to-all over more than kMaxFlowAllToAll ranks stay at analytic fidelity: the flow network
// solves the n^2 concurrent flows of such an all-to-all, minutes per iteration at 256 ranks.
void rerank_flow(Search& s) {
  std::vector<Plan>& sim_plans = s.sim_plans;
  const size_t want = static_cast<size_t>(s.opt.rerank_flow), budget = 3 * want;
  std::vector<Candidate> over;  // plans whose flow simulation ran out of its work budget
  auto flow_ok = [&](const Plan& p) {
    const Candidate& c = p.candidate;
    const int64_t a2a = std::max<int64_t>(s.hw.model.moe ? c.ep : 1, c.cp);  // EP and (at most) the Ulysses group
    return a2a <= kMaxFlowAllToAll && std::find(over.begin(), over.end(), c) == over.end();
  };
  size_t done = 0;
  uint64_t spent = 0;  // engine events of every flow simulation so far
  while (done < budget && spent < kFlowEventsTotal) {
    // The best `want` plans the flow network can take; those without a flow time yet.
    std::vector<size_t> todo;
    size_t eligible = 0;
    for (size_t k = 0; k < sim_plans.size() && eligible < want; ++k) {
      if (!flow_ok(sim_plans[k])) continue;
      ++eligible;
      if (sim_plans[k].fidelity != "flow") todo.push_back(k);
    }
    if (todo.empty()) break;
    if (done + todo.size() > budget) todo.resize(budget - done);
    std::vector<Candidate> round;
    for (const size_t k : todo) round.push_back(sim_plans[k].candidate);
    auto flow_sims = [&](std::vector<Candidate>::const_iterator a, std::vector<Candidate>::const_iterator b) {
      return simulate_all(s.hw, s.base, std::vector<Candidate>(a, b), models::workload::Network::kFlow, s.threads,
                          s.capacity, kFlowEventsPerPlan, kFlowSolvedPerPlan);
    };
    const bool probe = done == 0 && round.size() > kFlowProbe;
    std::vector<Simulated> flow = flow_sims(round.begin(), probe ? round.begin() + kFlowProbe : round.end());
    bool stop = false;
    if (probe) {
      stop = std::all_of(flow.begin(), flow.end(), [](const Simulated& f) { return f.over_budget; });
      if (stop) {
        round.resize(kFlowProbe);
        todo.resize(kFlowProbe);
      } else {
        const std::vector<Simulated> rest = flow_sims(round.begin() + kFlowProbe, round.end());
        flow.insert(flow.end(), rest.begin(), rest.end());
      }
    }
    done += todo.size();
    for (size_t r = 0; r < round.size(); ++r) {
      spent += flow[r].events;
      if (flow[r].over_budget) over.push_back(round[r]);
    }
    if (s.dist.root())
      for (size_t r = 0; r < round.size(); ++r)
        TRAINSIM_LOG_DEBUG(kPlanner, "re-rank on the flow network: ", describe(round[r]), ": analytic ",
                           sim_plans[todo[r]].iteration_s, " s, flow ",
                           flow[r].fits ? std::to_string(flow[r].iteration_s) + " s" : "does not fit");
    std::vector<Plan> next;
    for (size_t k = 0; k < sim_plans.size(); ++k) {
      const auto it = std::find(todo.begin(), todo.end(), k);
      if (it == todo.end()) {
        next.push_back(std::move(sim_plans[k]));
        continue;
      }
      const Simulated& f = flow[static_cast<size_t>(it - todo.begin())];
      if (f.over_budget) {  // keeps its analytic time
        next.push_back(std::move(sim_plans[k]));
        continue;
      }
      if (f.fits) next.push_back(to_plan(s, Entry{sim_plans[k].candidate, sim_plans[k].estimate, 0.0}, &f, "flow"));
    }
    sim_plans = std::move(next);
    std::sort(sim_plans.begin(), sim_plans.end(), by_time);
    if (stop) {
      s.res.flow_stopped = true;
      break;
    }
  }
  s.res.simulated_flow = static_cast<int64_t>(done - over.size());
  s.res.flow_over_budget = static_cast<int64_t>(over.size());
}

// The reported plans (simulated first, then estimated) and the memory front.
void finish(Search& s) {
  SearchResult& res = s.res;
  res.simulate_s = now_s() - s.t1;
  res.plans = std::move(s.sim_plans);
  res.plans.insert(res.plans.end(), s.est_plans.begin(), s.est_plans.end());
  if (res.plans.empty())
    throw PlanError("plan",
                    "the discrete-event simulation found none of the " + std::to_string(s.n_sim) +
                        " best estimated plans fitting in memory (the estimate and the simulator disagree)",
                    "run with a larger --rerank, or report it: it is a bug in the planner's memory estimate");
  if (res.plans.size() > static_cast<size_t>(s.opt.keep)) res.plans.resize(static_cast<size_t>(s.opt.keep));
  for (const Entry& e : s.all.front) {
    Plan p;
    p.candidate = e.c;
    p.estimate = e.e;
    p.iteration_s = e.e.iteration_s;
    p.score = e.score;
    p.tokens_per_s = s.tokens_per_iter / p.iteration_s;
    p.peak_memory_bytes = e.e.peak_memory_bytes;
    res.memory_front.push_back(std::move(p));
  }
}

}  // namespace

Job plan_job(const Job& hardware, const JobSpec& base, const Candidate& c) {
  Job job = hardware;
  JobSpec spec = base;
  apply(c, hardware, spec);
  models::workload::resolve_parallel(spec, job);
  return job;
}

SearchResult run_search(const Job& hw, const JobSpec& base, const Json& given, const SearchOptions& opt) {
  Search s = start_search(hw, base, given, opt);
  gather_estimates(s, estimate_share(s));
  check_found(s);
  rerank_analytic(s);
  if (base.network == models::workload::Network::kFlow && opt.rerank_flow > 0) rerank_flow(s);
  finish(s);
  return std::move(s.res);
}

}  // namespace trainsim::planner::search
