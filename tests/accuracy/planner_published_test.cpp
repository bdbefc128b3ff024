// The planner checked against what experts ran (planner issue): for every run of
// ../shared/data/published_dev.json that gives its parallel configuration, plan the same model,
// cluster, GPU count and global batch with the same software stack, and report
//  - whether the published configuration is among the feasible ones (it passes the rules and
//    fits in memory at the default 90% headroom),
//  - where it ranks among all feasible configurations by the fast estimate (the best of its
//    family when the paper leaves micro-batch or chunks open: Narayanan Table 1),
//  - how much faster trainsim's choice is predicted to be: both simulated by the discrete-event
//    simulation on the analytic network.
// The stacks are the accuracy suites' (narayanan21_test.cpp, vtrain_test.cpp): fp16, unfused
// attention, no sequence parallelism, no overlapped gradient reduction; these are pinned, every
// parallel dimension (tp, pp, cp, vp, micro-batch, ZeRO, recompute, schedule) is searched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "accuracy_common.hpp"
#include "planner/search/estimator.hpp"
#include "planner/search/search.hpp"
#include "planner/search/space.hpp"
#include "summary.hpp"

namespace trainsim::accuracy {
namespace {

using planner::search::Candidate;
using planner::search::Estimate;
using planner::search::Recompute;

// What the published run fixes; `matches` says whether a candidate is (one of) it.
struct Published {
  std::string id;
  Json base;       // model, cluster, gpus, batch and the pinned stack
  Json framework;  // what the framework of the run could not change (pinned in the "same framework" search)
  std::function<bool(const Candidate&)> matches;
  std::string text;  // the published configuration, as the paper gives it
};

struct Outcome {
  std::string id, published, winner;
  bool feasible = false;
  int64_t rank = 0, feasible_count = 0;
  double t_published = 0, t_winner = 0;  // discrete-event, analytic network
};

const std::string& sched(const Candidate& c) { return planner::search::schedule_name(c); }

double simulate_analytic(const models::workload::Job& hw, const models::workload::JobSpec& spec, const Candidate& c) {
  models::workload::Job job = planner::search::plan_job(hw, spec, c);
  job.network = models::workload::Network::kAnalytic;
  const auto r = models::workload::simulate(job);
  return r.simulated ? r.iteration.seconds() : -1.0;
}

Outcome check(const Published& p, bool same_framework) {
  Outcome o;
  o.id = p.id;
  o.published = p.text;
  Json base = p.base;
  if (same_framework)
    for (auto it = p.framework.begin(); it != p.framework.end(); ++it) base[it.key()] = it.value();
  const auto spec = models::workload::parse_job(base);
  const auto hw = models::workload::resolve_hardware(spec);
  const auto space = planner::search::make_space(spec, base, hw, planner::search::SpaceOptions{});
  const auto en =
      planner::search::enumerate(space, hw, spec.gpus, spec.global_batch, spec.seq_len.value_or(hw.model.seq_len));
  planner::search::Estimator est(hw, spec, 0.9);
  std::vector<double> feasible;
  std::optional<std::pair<double, Candidate>> best_pub;
  for (const Candidate& c : en.candidates) {
    Estimate e;
    if (est.estimate(c, e) != planner::search::Verdict::kOk) continue;
    feasible.push_back(e.iteration_s);
    if (p.matches(c) && (!best_pub || e.iteration_s < best_pub->first)) best_pub = std::make_pair(e.iteration_s, c);
  }
  o.feasible_count = static_cast<int64_t>(feasible.size());
  planner::search::SearchOptions so;
  so.keep = 1;
  so.rerank = 20;
  so.rerank_flow = 0;
  so.threads = 2;
  Json analytic = base;
  analytic["network"] = "analytic";
  const auto aspec = models::workload::parse_job(analytic);
  const auto r = planner::search::run_search(hw, aspec, base, so);
  o.winner = planner::search::describe(r.plans.front().candidate);
  o.t_winner = r.plans.front().iteration_s;
  if (best_pub) {
    o.feasible = true;
    o.rank = 1 + std::count_if(feasible.begin(), feasible.end(), [&](double t) { return t < best_pub->first; });
    o.published += " -> " + planner::search::describe(best_pub->second);
    o.t_published = simulate_analytic(hw, aspec, best_pub->second);
  }
  return o;
}

Json stack_2021(const Json& rec) {
  return Json{{"model", preset_for(rec.at("model"))},
              {"cluster", "dgx-a100"},
              {"gpus", rec.at("cluster").at("gpus")},
              {"global_batch", rec.at("parallel").at("global_batch")},
              {"precision", "fp16"},
              {"attention", "unfused"},
              {"sp", false},
              {"overlap_grad_reduce", false},
              {"scatter_gather", true},
              {"overlap_p2p", false}};
}

// Megatron-LM in 2021: no distributed optimizer, full recomputation only (1F1B or interleaved).
const Json kMegatron2021{{"zero", 0}, {"recompute", "full"}};

std::vector<Published> published_runs(const Json& data) {
  std::vector<Published> out;
  for (const auto& rec : data) {
    const std::string id = rec.at("id").get<std::string>();
    const Json& p = rec.at("parallel");
    if (id.rfind("narayanan21_t1_", 0) == 0) {
      const int tp = p.at("tp").get<int>(), pp = p.at("pp").get<int>();
      out.push_back({id, stack_2021(rec), kMegatron2021,
                     [tp, pp](const Candidate& c) {
                       return c.tp == tp && c.pp == pp && c.cp == 1 && c.zero == 0 && c.recompute == Recompute::kFull &&
                              (sched(c) == "interleaved" || sched(c) == "1f1b");
                     },
                     cat("t", tp, " p", pp, " full, interleaved (mb, chunks open)")});
    } else if (id.rfind("narayanan21_t2_ptdp_", 0) == 0) {
      const int mp = p.at("model_parallel_size").get<int>(), mb = p.at("micro_batch").get<int>();
      out.push_back({id, stack_2021(rec), kMegatron2021,
                     [mp, mb](const Candidate& c) {
                       return c.tp == 8 && c.pp == mp / 8 && c.cp == 1 && c.micro_batch == mb && c.zero == 0 &&
                              c.recompute == Recompute::kFull && (sched(c) == "interleaved" || sched(c) == "1f1b");
                     },
                     cat("t8 p", mp / 8, " mb", mb, " full (chunks open)")});
    } else if (id.rfind("narayanan21_t2_zero3_", 0) == 0) {
      const int mb = p.at("micro_batch").get<int>();
      Json base = stack_2021(rec);
      base["overlap_grad_reduce"] = true;
      out.push_back({id, base, Json{{"zero", 3}, {"recompute", "full"}},
                     [mb](const Candidate& c) {
                       return c.tp == 1 && c.pp == 1 && c.cp == 1 && c.zero == 3 && c.micro_batch == mb &&
                              c.recompute == Recompute::kFull;
                     },
                     cat("ZeRO-3 t1 p1 mb", mb, " full")});
    } else if (id.rfind("vtrain_multi_", 0) == 0) {
      const int tp = p.at("tp").get<int>(), pp = p.at("pp").get<int>(), mb = p.at("micro_batch").get<int>();
      const Json base{{"model", gpt_model(rec.at("model"))},
                      {"cluster", "vtrain-a100"},
                      {"gpus", rec.at("cluster").at("gpus")},
                      {"global_batch", p.at("global_batch")},
                      {"precision", "fp16"},
                      {"attention", "unfused"},
                      {"sp", false},
                      {"overlap_grad_reduce", false},
                      {"kernel_dispatch", "70us"}};
      out.push_back({id, base, Json{{"zero", 0}, {"recompute", "full"}, {"schedule", "1f1b"}},
                     [tp, pp, mb](const Candidate& c) {
                       return c.tp == tp && c.pp == pp && c.cp == 1 && c.micro_batch == mb && c.zero == 0 &&
                              c.recompute == Recompute::kFull && sched(c) == "1f1b";
                     },
                     cat("t", tp, " p", pp, " mb", mb, " full 1f1b")});
    }
  }
  return out;
}

TEST(PlannerPublished, PublishedConfigurationsAreFeasibleAndRankedHigh) {
  const auto data = load_shared("published_dev.json");
  if (!data) GTEST_SKIP() << "../shared/data/published_dev.json not present";
  std::vector<Published> runs = published_runs(*data);
  // vTrain: one row per (model, GPUs) group is enough for the table (the measured-fastest one);
  // every row is still checked for feasibility below.
  std::map<std::string, std::pair<double, std::string>> fastest;  // group -> (measured s, id)
  for (const auto& rec : *data) {
    const std::string id = rec.at("id").get<std::string>();
    if (id.rfind("vtrain_multi_", 0) != 0) continue;
    const std::string group = id.substr(0, id.find("gpu_") + 3);
    const double t = rec.at("measured").at("iteration_s").get<double>();
    if (!fastest.count(group) || t < fastest[group].first) fastest[group] = {t, id};
  }
  std::printf(
      "\nSame framework: the run's framework features pinned (Megatron 2021: ZeRO 0, full recompute;\n"
      "vTrain: also 1F1B; DeepSpeed rows: ZeRO-3, full recompute); everything else searched.\n"
      "All features: every dimension searched (ZeRO-1/2/3, selective recompute, zero-bubble schedules).\n");
  std::printf("%-38s %-44s | %-13s %-8s | %-13s %-8s %s\n", "run", "published (best of its family)", "rank (same)",
              "speedup", "rank (all)", "speedup", "trainsim's choice (all features)");
  size_t infeasible = 0, n = 0;
  std::vector<double> same_speedups, all_speedups;
  int64_t worst_same_rank = 0, best_same_rank = 0;
  for (const Published& p : runs) {
    const bool vtrain = p.id.rfind("vtrain_multi_", 0) == 0;
    if (vtrain) {
      const std::string group = p.id.substr(0, p.id.find("gpu_") + 3);
      if (fastest[group].second != p.id) continue;
    }
    const Outcome same = check(p, true), all = check(p, false);
    ++n;
    if (!all.feasible) ++infeasible;
    auto speedup = [](const Outcome& o) { return o.feasible && o.t_winner > 0 ? o.t_published / o.t_winner : 0.0; };
    if (same.feasible) {
      same_speedups.push_back(speedup(same));
      worst_same_rank = std::max(worst_same_rank, same.rank);
      best_same_rank = best_same_rank == 0 ? same.rank : std::min(best_same_rank, same.rank);
    }
    if (all.feasible) all_speedups.push_back(speedup(all));
    auto rank = [](const Outcome& o) {
      return o.feasible ? cat(o.rank, "/", o.feasible_count) : cat("NO/", o.feasible_count);
    };
    std::printf("%-38s %-44s | %-13s %7.2fx | %-13s %7.2fx %s\n", p.id.c_str(),
                all.published.substr(all.published.find("->") == std::string::npos ? 0 : all.published.find("->") + 3)
                    .substr(0, 44)
                    .c_str(),
                rank(same).c_str(), speedup(same), rank(all).c_str(), speedup(all), all.winner.c_str());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  auto most = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  std::printf(
      "%zu runs, %zu published configurations not feasible (90%% headroom). Predicted speedup of trainsim's\n"
      "choice: same framework median %.2fx, max %.2fx (worst rank %lld); all features median %.2fx, max %.2fx\n",
      n, infeasible, median(same_speedups), most(same_speedups), static_cast<long long>(worst_same_rank),
      median(all_speedups), most(all_speedups));
  EXPECT_EQ(n, 26u);  // 10 + 6 + 6 Narayanan rows, 4 vTrain groups
  // README.md's accuracy table (summary.hpp).
  expect_summary_figure("plan.runs", count_text(static_cast<int64_t>(n)));
  expect_summary_figure("plan.feasible", count_text(static_cast<int64_t>(n - infeasible)));
  expect_summary_figure("plan.best_rank", count_text(best_same_rank));
  expect_summary_figure("plan.worst_rank", count_text(worst_same_rank));
  expect_summary_figure("plan.max_speedup", ratio_text(most(same_speedups)));
  // Observed 2026-11-23 (docs/planner.md): 24 of 26 published configurations feasible (529B ZeRO-3 on
  // 640 GPUs does not fit trainsim's memory model at all; vTrain's 3.6B t1 p1 mb8 needs more than
  // the 90% headroom). Within the run's framework the published configuration ranks 1st to 120th
  // (median speedup of trainsim's choice 1.02x, max 1.10x); with every feature, ZeRO-3 and
  // selective recomputation promise 1.2x to 1.8x, where trainsim's ZeRO-3 is known to be optimistic
  // against DeepSpeed 2021 (narayanan21_test.cpp). Bounds pin today's results.
  EXPECT_LE(infeasible, 2u);
  EXPECT_LE(worst_same_rank, 150);
  EXPECT_LE(median(same_speedups), 1.05);
  for (const double s : same_speedups) EXPECT_GE(s, 0.999);  // the planner never picks something slower
  for (const double s : all_speedups) EXPECT_GE(s, 0.999);
}

}  // namespace
}  // namespace trainsim::accuracy
