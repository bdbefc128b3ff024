#include "traces/chakra/replay.hpp"

#include <algorithm>
#include <array>
#include <memory>

#include "models/workload/run/network_runner.hpp"
#include "sim/engine.hpp"

namespace trainsim::traces::chakra {

using sim::config::Json;

Json RankTime::to_json() const {
  return Json{{"compute_s", compute.seconds()},           {"collective_exposed_s", collective.seconds()},
              {"transfer_exposed_s", transfer.seconds()}, {"memory_exposed_s", memory.seconds()},
              {"cpu_exposed_s", cpu.seconds()},           {"idle_s", idle.seconds()}};
}

Json ReplayResult::to_json() const {
  Json per_rank = Json::array();
  for (size_t r = 0; r < ranks.size(); ++r) {
    Json j = ranks[r].to_json();
    j["rank"] = r;
    per_rank.push_back(j);
  }
  Json sim{{"tasks", tasks}, {"events", events}, {"simulated_ranks", ranks.size()}};
  if (network) sim["network"] = network->to_json();
  return Json{{"iteration_time_s", iteration.seconds()}, {"time_breakdown", per_rank}, {"simulation", sim}};
}

std::vector<RankTime> rank_times(const models::workload::Workload& w, const sim::task::TaskExecutor& exec,
                                 sim::Time end) {
  // Per rank, the boundaries of its tasks: (time, +1 start / -1 end, class).
  struct Edge {
    int64_t t;
    int8_t delta;
    uint8_t cls;
  };
  const size_t nranks = w.ranks.size();
  std::vector<std::vector<Edge>> edges(nranks);
  std::vector<int32_t> ranks;
  const auto& g = w.graph;
  for (sim::task::TaskIndex i = 0; i < g.size(); ++i) {
    if (exec.end_time(i) == sim::Time::infinite()) continue;
    ranks.clear();
    const uint32_t c = w.task_comm[i];
    if (c != models::workload::Workload::kNoComm) {
      ranks = w.groups[w.comms[c].group];
    } else {
      const auto* s = g.streams_of(i);
      for (uint16_t k = 0; k < g.task(i).n_streams; ++k) ranks.push_back(g.stream(s[k]).rank);
    }
    const uint8_t cls = g.task(i).spec.category;
    for (const int32_t r : ranks) {
      edges[static_cast<size_t>(r)].push_back({exec.start_time(i).count_ns(), 1, cls});
      edges[static_cast<size_t>(r)].push_back({exec.end_time(i).count_ns(), -1, cls});
    }
  }
  // Priority of each class (TaskClass order): compute, collective, transfer, memory, cpu.
  constexpr std::array<int, 5> kPriority = {0, 4, 1, 2, 3};
  std::vector<RankTime> out(nranks);
  for (size_t r = 0; r < nranks; ++r) {
    auto& e = edges[r];
    std::sort(e.begin(), e.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
    std::array<int64_t, 5> busy{}, sum{};
    int64_t idle = 0, cursor = 0;
    auto account = [&](int64_t until) {
      if (until <= cursor) return;
      int best = -1;
      for (int k = 0; k < 5; ++k)
        if (busy[static_cast<size_t>(k)] > 0 &&
            (best < 0 || kPriority[static_cast<size_t>(k)] < kPriority[static_cast<size_t>(best)]))
          best = k;
      (best < 0 ? idle : sum[static_cast<size_t>(best)]) += until - cursor;
      cursor = until;
    };
    for (const Edge& x : e) {
      account(x.t);
      busy[x.cls] += x.delta;
    }
    account(end.count_ns());
    RankTime& t = out[r];
    t.compute = sim::Time::ns(sum[static_cast<size_t>(TaskClass::kCompute)]);
    t.collective = sim::Time::ns(sum[static_cast<size_t>(TaskClass::kCollective)]);
    t.transfer = sim::Time::ns(sum[static_cast<size_t>(TaskClass::kTransfer)]);
    t.memory = sim::Time::ns(sum[static_cast<size_t>(TaskClass::kMemory)]);
    t.cpu = sim::Time::ns(sum[static_cast<size_t>(TaskClass::kCpu)]);
    t.idle = sim::Time::ns(idle);
  }
  return out;
}

ReplayResult replay(const ImportedWorkload& iw, const models::workload::Job& job, const ReplayOptions& options) {
  // Every rank is explicit (full fidelity): no symmetric copies to stand for.
  models::workload::RunOptions run = options;
  run.fidelity = models::workload::Fidelity::kFullRanks;
  run.faults.clear();
  ReplayResult res;
  models::workload::run_workload(iw.w, job, run, nullptr, [&](const models::workload::RunView& v) {
    res.iteration = v.end;
    res.tasks = v.workload.graph.size();
    res.events = v.engine.events_executed();
    res.ranks = rank_times(v.workload, v.exec, res.iteration);
    res.network = v.network;
  });
  return res;
}

}  // namespace trainsim::traces::chakra
