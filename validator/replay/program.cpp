#include "validator/replay/program.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <tuple>

#include "sim/error.hpp"

namespace trainsim::validator::replay {

using models::workload::Workload;
using sim::task::TaskIndex;
using sim::task::TaskKind;

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::kCompute: return "compute";
    case OpKind::kSend: return "send";
    case OpKind::kRecv: return "recv";
    case OpKind::kCollective: return "collective";
  }
  return "?";
}

namespace {

// Each task's position in a topological order (smallest index first among the ready ones), which
// breaks ties between tasks the simulation started at the same instant.
std::vector<uint32_t> topological_positions(const sim::task::TaskGraph& g) {
  const size_t n = g.size();
  std::vector<uint32_t> indeg(n, 0), pos(n, 0);
  for (TaskIndex i = 0; i < n; ++i)
    for (const TaskIndex* s = g.successors_begin(i); s != g.successors_end(i); ++s) ++indeg[*s];
  std::priority_queue<TaskIndex, std::vector<TaskIndex>, std::greater<>> ready;
  for (TaskIndex i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push(i);
  uint32_t next = 0;
  while (!ready.empty()) {
    const TaskIndex t = ready.top();
    ready.pop();
    pos[t] = next++;
    for (const TaskIndex* s = g.successors_begin(t); s != g.successors_end(t); ++s)
      if (--indeg[*s] == 0) ready.push(*s);
  }
  TRAINSIM_ASSERT(next == n, "the simulated graph is a DAG");
  return pos;
}

// One op a task becomes on one rank, before the rank's ops are ordered.
struct Part {
  int32_t rank;
  Op op;
  uint32_t topo;
};

}  // namespace

Program build_program(const Workload& w, const sim::task::TaskExecutor& exec) {
  const auto& g = w.graph;
  const int32_t nranks = static_cast<int32_t>(w.ranks.size());
  Program prog;
  prog.groups = w.groups;
  prog.ranks.resize(static_cast<size_t>(nranks));
  for (int32_t r = 0; r < nranks; ++r) prog.ranks[static_cast<size_t>(r)].rank = r;
  std::vector<uint32_t> stream_index(g.stream_count());
  for (sim::task::StreamId s = 0; s < g.stream_count(); ++s) {
    auto& rp = prog.ranks.at(static_cast<size_t>(g.stream(s).rank));
    stream_index[s] = static_cast<uint32_t>(rp.streams.size());
    rp.streams.push_back(g.label(g.stream(s).label));
  }
  const std::vector<uint32_t> topo = topological_positions(g);

  std::vector<Part> parts;
  for (TaskIndex t = 0; t < g.size(); ++t) {
    const sim::task::Task& task = g.task(t);
    const uint32_t c = t < w.task_comm.size() ? w.task_comm[t] : Workload::kNoComm;
    Op base;
    base.task = static_cast<uint32_t>(t);
    base.category = task.spec.category;
    base.name = g.display_name(t);
    base.sim_start = exec.start_time(t);
    base.sim_duration = exec.end_time(t) - exec.start_time(t);
    base.flops = task.spec.flops.count();
    base.bytes = c == Workload::kNoComm ? task.spec.bytes.count() : w.comms[c].bytes.count();
    const sim::task::StreamId* streams = g.streams_of(t);
    auto stream_on = [&](int32_t r) -> uint32_t {
      for (uint16_t k = 0; k < task.n_streams; ++k)
        if (g.stream(streams[k]).rank == r) return stream_index[streams[k]];
      return 0;
    };
    if (task.spec.kind == TaskKind::kP2P && c != Workload::kNoComm) {
      const auto& pair = w.groups[w.comms[c].group];
      Op send = base, recv = base;
      send.kind = OpKind::kSend;
      send.peer = pair[1];
      send.stream = stream_on(pair[0]);
      recv.kind = OpKind::kRecv;
      recv.peer = pair[0];
      recv.stream = stream_on(pair[1]);
      recv.extra = w.comms[c].extra;
      parts.push_back({pair[0], std::move(send), topo[t]});
      parts.push_back({pair[1], std::move(recv), topo[t]});
      continue;
    }
    for (uint16_t k = 0; k < task.n_streams; ++k) {
      Op op = base;
      op.stream = stream_index[streams[k]];
      if (task.spec.kind == TaskKind::kCollective && c != Workload::kNoComm) {
        op.kind = OpKind::kCollective;
        op.collective = w.comms[c].op;
        op.group = static_cast<int32_t>(w.comms[c].group);
      }
      parts.push_back({g.stream(streams[k]).rank, std::move(op), topo[t]});
    }
  }
  // Each rank's ops in the order the simulation started them.
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return std::tie(a.rank, a.op.sim_start, a.topo) < std::tie(b.rank, b.op.sim_start, b.topo);
  });
  std::vector<std::vector<std::pair<int32_t, uint32_t>>> where(g.size());  // per task: (rank, op index)
  std::map<std::pair<int32_t, int32_t>, int32_t> sends;                    // per (sender, receiver): so far
  std::vector<int32_t> tag_of(g.size(), 0);
  for (Part& p : parts) {
    auto& ops = prog.ranks[static_cast<size_t>(p.rank)].ops;
    if (p.op.kind == OpKind::kSend) tag_of[p.op.task] = sends[{p.rank, p.op.peer}]++;
    where[p.op.task].emplace_back(p.rank, static_cast<uint32_t>(ops.size()));
    ops.push_back(std::move(p.op));
  }
  // Tags (the sender's order of the pair's transfers) and dependencies on the rank's own ops.
  std::vector<std::vector<TaskIndex>> preds(g.size());
  for (TaskIndex i = 0; i < g.size(); ++i)
    for (const TaskIndex* s = g.successors_begin(i); s != g.successors_end(i); ++s) preds[*s].push_back(i);
  for (TaskIndex t = 0; t < g.size(); ++t) {
    for (const TaskIndex p : preds[t]) {
      bool shared = false;
      for (const auto& [rank, index] : where[t]) {
        for (const auto& [prank, pindex] : where[p])
          if (prank == rank) {
            prog.ranks[static_cast<size_t>(rank)].ops[index].deps.push_back(pindex);
            shared = true;
          }
      }
      if (!shared) ++prog.cross_rank_deps;
    }
    for (const auto& [rank, index] : where[t]) {
      Op& op = prog.ranks[static_cast<size_t>(rank)].ops[index];
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) op.tag = tag_of[t];
      std::sort(op.deps.begin(), op.deps.end());
    }
  }
  prog.iteration = sim::Time::zero();
  for (TaskIndex t = 0; t < g.size(); ++t) prog.iteration = std::max(prog.iteration, exec.end_time(t));
  return prog;
}

}  // namespace trainsim::validator::replay
