#include "planner/search/search.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

#include "planner/search/distributed.hpp"
#include "planner/search/pareto.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::search {

using models::workload::Job;
using models::workload::JobSpec;
using sim::config::Json;

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Largest all-to-all group re-simulated on the flow network (see the flow re-rank below).
constexpr int64_t kMaxFlowAllToAll = 64;

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

struct Entry {
  Candidate c;
  Estimate e;
  double score = 0;  // what the ranking minimises: the estimated iteration time, or SearchOptions::score
};

// Best first: score, then the candidate's key (a total order).
bool faster(const Entry& a, const Entry& b) {
  if (a.score != b.score) return a.score < b.score;
  return a.c < b.c;
}

// What one process found: counts, its best entries and its memory front.
struct Partial {
  int64_t valid = 0, feasible = 0;
  Entry smallest{{}, {}};  // the valid candidate needing the least memory (when none fits)
  bool has_smallest = false;
  std::map<std::string, int64_t> rejected;
  std::vector<Entry> best, front;
};

void keep_best(std::vector<Entry>& v, size_t n) {
  std::sort(v.begin(), v.end(), faster);
  if (v.size() > n) v.resize(n);
}

std::vector<Entry> front_of(const std::vector<Entry>& v) {
  std::vector<TimeMemory> pts;
  pts.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) pts.push_back({v[i].e.iteration_s, v[i].e.peak_memory_bytes, i});
  std::vector<Entry> out;
  for (const size_t i : pareto_time_memory(pts, [&](size_t a, size_t b) { return v[a].c < v[b].c; }))
    out.push_back(v[i]);
  return out;
}

std::string serialize(const Partial& p) {
  std::string out;
  put(out, p.valid);
  put(out, p.feasible);
  put(out, p.has_smallest);
  put(out, p.smallest);
  put<uint64_t>(out, p.rejected.size());
  for (const auto& [k, n] : p.rejected) {
    put_string(out, k);
    put(out, n);
  }
  for (const auto* list : {&p.best, &p.front}) {
    put<uint64_t>(out, list->size());
    for (const Entry& e : *list) put(out, e);
  }
  return out;
}

Partial deserialize(const std::string& in) {
  Partial p;
  size_t pos = 0;
  p.valid = take<int64_t>(in, pos);
  p.feasible = take<int64_t>(in, pos);
  p.has_smallest = take<bool>(in, pos);
  p.smallest = take<Entry>(in, pos);
  const auto nr = take<uint64_t>(in, pos);
  for (uint64_t i = 0; i < nr; ++i) {
    std::string k = take_string(in, pos);
    p.rejected[k] += take<int64_t>(in, pos);
  }
  for (auto* list : {&p.best, &p.front}) {
    const auto n = take<uint64_t>(in, pos);
    for (uint64_t i = 0; i < n; ++i) list->push_back(take<Entry>(in, pos));
  }
  return p;
}

// Less memory first, then the candidate's key.
bool smaller(const Entry& a, const Entry& b) {
  if (a.e.peak_memory_bytes != b.e.peak_memory_bytes) return a.e.peak_memory_bytes < b.e.peak_memory_bytes;
  return a.c < b.c;
}

void merge(Partial& into, Partial&& from, size_t keep) {
  if (from.has_smallest && (!into.has_smallest || smaller(from.smallest, into.smallest))) {
    into.smallest = from.smallest;
    into.has_smallest = true;
  }
  into.valid += from.valid;
  into.feasible += from.feasible;
  for (const auto& [k, n] : from.rejected) into.rejected[k] += n;
  into.best.insert(into.best.end(), from.best.begin(), from.best.end());
  keep_best(into.best, keep);
  into.front.insert(into.front.end(), from.front.begin(), from.front.end());
  into.front = front_of(into.front);
}

// Names a resolve_job rejection by the field it names.
std::string rule_of_field(const std::string& path) { return "resolve: " + path; }

// The simulated numbers of one re-ranked plan.
struct Simulated {
  bool fits = false;
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, tflops = 0, peak = 0;
  std::string breakdown;  // JSON text
};

std::string serialize(const std::vector<std::pair<int64_t, Simulated>>& v) {
  std::string out;
  put<uint64_t>(out, v.size());
  for (const auto& [i, s] : v) {
    put(out, i);
    put(out, s.fits);
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
                                    models::workload::Network network, int threads, double capacity) {
  const Distributed& dist = Distributed::instance();
  const size_t ranks = static_cast<size_t>(dist.size()), me = static_cast<size_t>(dist.rank());
  std::vector<std::vector<std::pair<int64_t, Simulated>>> sims(static_cast<size_t>(threads));
  auto some = [&](int t) {
    for (size_t k = me + ranks * static_cast<size_t>(t); k < plans.size(); k += ranks * static_cast<size_t>(threads)) {
      Job job = plan_job(hw, base, plans[k]);
      job.network = network;
      const models::workload::SimulationResult r = models::workload::simulate(job);
      Simulated s;
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

}  // namespace

Job plan_job(const Job& hardware, const JobSpec& base, const Candidate& c) {
  Job job = hardware;
  JobSpec spec = base;
  apply(c, hardware, spec);
  models::workload::resolve_parallel(spec, job);
  return job;
}

SearchResult run_search(const Job& hw, const JobSpec& base, const Json& given, const SearchOptions& opt) {
  const Distributed& dist = Distributed::instance();
  const double t0 = now_s();
  SearchResult res;
  res.gpus = base.gpus;
  const SearchSpace space = make_space(base, given, hw, opt.space);
  const int64_t seq = base.seq_len.value_or(hw.model.seq_len);
  const Enumeration en = enumerate(space, hw, base.gpus, base.global_batch, seq);
  res.considered = en.considered;
  const size_t keep = static_cast<size_t>(std::max(opt.keep, opt.rerank));
  const int threads = std::max(1, opt.threads);
  const size_t ranks = static_cast<size_t>(dist.size()), me = static_cast<size_t>(dist.rank());
  const size_t total = en.candidates.size();

  // Fast estimate: candidate i belongs to rank i % ranks, then to thread (i / ranks) % threads.
  std::vector<Partial> parts(static_cast<size_t>(threads));
  auto work = [&](int t) {
    Estimator est(hw, base, opt.headroom);
    Partial& p = parts[static_cast<size_t>(t)];
    std::vector<Entry> feasible;
    std::string why;
    int64_t step = 0;
    for (size_t i = me + ranks * static_cast<size_t>(t); i < total; i += ranks * static_cast<size_t>(threads)) {
      Entry e{en.candidates[i], {}};
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
    keep_best(feasible, keep);
    p.best = std::move(feasible);
  };
  run_threads(threads, work);
  Partial local;
  for (auto& p : parts) merge(local, std::move(p), keep);
  if (opt.progress && me == 0) opt.progress(static_cast<int64_t>(total), static_cast<int64_t>(total));

  // Gather at rank 0, merge, and tell every rank which plans to re-simulate.
  Partial all;
  std::string shared;
  {
    const std::vector<std::string> got = dist.gather(serialize(local));
    if (dist.root()) {
      for (const auto& g : got) merge(all, deserialize(g), keep);
      shared = serialize(all);
    }
    all = deserialize(dist.broadcast(shared));
  }
  for (const auto& [k, n] : en.rejected) all.rejected[k] += n;
  res.valid = all.valid;
  res.feasible = all.feasible;
  res.rejected = all.rejected;
  res.estimate_s = now_s() - t0;
  if (all.valid == 0) {
    std::string worst;
    int64_t most = -1;
    for (const auto& [k, n] : all.rejected)
      if (n > most) {
        most = n;
        worst = k;
      }
    // The fix for the rule that removed the most.
    std::string hint = "unpin dimensions (drop --tp, --pp, --vp, --schedule, ...)";
    if (worst.find("tp*cp*pp") != std::string::npos)
      hint = "use a GPU count with more divisors (a multiple of gpus_per_node), or unpin --tp / --pp / --cp";
    else if (worst.find("global_batch") != std::string::npos)
      hint = "use a global batch with more divisors (a multiple of the GPU count's data-parallel sizes)";
    else if (worst.find("layers") != std::string::npos)
      hint = "choose --pp (and --vp) dividing the layers, or unpin them";
    throw ConfigError("gpus",
                      "no parallel configuration of " + std::to_string(base.gpus) + " GPUs passes the rules (" +
                          std::to_string(res.considered) + " considered; most removed by \"" + worst + "\")",
                      hint);
  }
  if (all.feasible == 0) {
    char need[160];
    std::snprintf(need, sizeof need, "the smallest (%s) needs %.1f GiB per GPU, %.1f GiB usable",
                  describe(all.smallest.c).c_str(), all.smallest.e.peak_memory_bytes / 1073741824.0,
                  usable_memory_bytes(hw, opt.headroom) / 1073741824.0);
    throw PlanError("plan",
                    "none of the " + std::to_string(all.valid) + " valid configurations of " +
                        std::to_string(base.gpus) + " GPUs fits in memory: " + need,
                    "use more GPUs, a larger --headroom, a shorter --seq-len or a smaller --global-batch; or unpin "
                    "--recompute / --zero / --tp / --pp");
  }

  // Re-simulate the best with the discrete-event simulation: first on the analytic network (the
  // schedule, overlaps and memory timeline exactly; collectives as alpha-beta formulas), then the
  // best of those on the job's own network (flow-level: contention and routing).
  const double t1 = now_s();
  const double capacity = usable_memory_bytes(hw, opt.headroom);
  const size_t n_sim = std::min(all.best.size(), static_cast<size_t>(std::max<int64_t>(opt.rerank, 0)));
  std::vector<Candidate> first_round;
  for (size_t k = 0; k < n_sim; ++k) first_round.push_back(all.best[k].c);
  const std::vector<Simulated> analytic =
      simulate_all(hw, base, first_round, models::workload::Network::kAnalytic, threads, capacity);
  res.simulated = static_cast<int64_t>(n_sim);

  const double tokens_per_iter = static_cast<double>(base.global_batch) * static_cast<double>(seq);
  auto to_plan = [&](const Entry& e, const Simulated* sim, const std::string& fidelity) {
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
      p.tokens_per_s = tokens_per_iter / p.iteration_s;
    }
    p.score = opt.score ? opt.score(p.candidate, p.iteration_s) : p.iteration_s;
    return p;
  };
  auto by_time = [](const Plan& a, const Plan& b) {
    if (a.score != b.score) return a.score < b.score;
    return a.candidate < b.candidate;
  };
  std::vector<Plan> sim_plans, est_plans;
  for (size_t k = 0; k < all.best.size(); ++k) {
    if (k < n_sim) {
      if (!analytic[k].fits) continue;  // the exact check disagrees: dropped (tests keep this empty)
      sim_plans.push_back(to_plan(all.best[k], &analytic[k], "analytic"));
    } else {
      est_plans.push_back(to_plan(all.best[k], nullptr, "estimate"));
    }
  }
  std::sort(sim_plans.begin(), sim_plans.end(), by_time);
  if (base.network == models::workload::Network::kFlow && opt.rerank_flow > 0) {
    // Simulate the best plans again on the flow network until the best rerank_flow plans by their
    // most faithful time all have a flow time (a plan the flow network slows down makes way for
    // the next), within 3 x rerank_flow flow simulations. Plans with an all-to-all over more than
    // kMaxFlowAllToAll ranks stay at analytic fidelity: the flow network solves the n^2 concurrent
    // flows of such an all-to-all, minutes per iteration at 256 ranks.
    const size_t want = static_cast<size_t>(opt.rerank_flow), budget = 3 * want;
    auto flow_ok = [&](const Plan& p) {
      const Candidate& c = p.candidate;
      const int64_t a2a = std::max<int64_t>(hw.model.moe ? c.ep : 1, c.cp);  // EP and (at most) the Ulysses group
      return a2a <= kMaxFlowAllToAll;
    };
    size_t done = 0;
    while (done < budget) {
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
      const std::vector<Simulated> flow =
          simulate_all(hw, base, round, models::workload::Network::kFlow, threads, capacity);
      done += todo.size();
      std::vector<Plan> next;
      for (size_t k = 0; k < sim_plans.size(); ++k) {
        const auto it = std::find(todo.begin(), todo.end(), k);
        if (it == todo.end()) {
          next.push_back(std::move(sim_plans[k]));
          continue;
        }
        const Simulated& f = flow[static_cast<size_t>(it - todo.begin())];
        if (f.fits) next.push_back(to_plan(Entry{sim_plans[k].candidate, sim_plans[k].estimate, 0.0}, &f, "flow"));
      }
      sim_plans = std::move(next);
      std::sort(sim_plans.begin(), sim_plans.end(), by_time);
    }
    res.simulated_flow = static_cast<int64_t>(done);
  }
  res.simulate_s = now_s() - t1;
  res.plans = std::move(sim_plans);
  res.plans.insert(res.plans.end(), est_plans.begin(), est_plans.end());
  if (res.plans.empty())
    throw PlanError("plan",
                    "the discrete-event simulation found none of the " + std::to_string(n_sim) +
                        " best estimated plans fitting in memory (the estimate and the simulator disagree)",
                    "run with a larger --rerank, or report it: it is a bug in the planner's memory estimate");
  if (res.plans.size() > static_cast<size_t>(opt.keep)) res.plans.resize(static_cast<size_t>(opt.keep));
  for (const Entry& e : all.front) {
    Plan p;
    p.candidate = e.c;
    p.estimate = e.e;
    p.iteration_s = e.e.iteration_s;
    p.score = e.score;
    p.tokens_per_s = tokens_per_iter / p.iteration_s;
    p.peak_memory_bytes = e.e.peak_memory_bytes;
    res.memory_front.push_back(std::move(p));
  }
  return res;
}

}  // namespace trainsim::planner::search
