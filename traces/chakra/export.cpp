#include "traces/chakra/export.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <queue>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "traces/chakra/trace.hpp"

namespace trainsim::traces::chakra {

namespace col = models::collectives;
using OJson = nlohmann::ordered_json;
using sim::task::TaskIndex;
using sim::task::TaskKind;

namespace {

CommType comm_type(col::CollectiveOp op) {
  switch (op) {
    case col::CollectiveOp::kAllReduce: return CommType::kAllReduce;
    case col::CollectiveOp::kReduce: return CommType::kReduce;
    case col::CollectiveOp::kAllGather: return CommType::kAllGather;
    case col::CollectiveOp::kBroadcast: return CommType::kBroadcast;
    case col::CollectiveOp::kAllToAll: return CommType::kAllToAll;
    case col::CollectiveOp::kReduceScatter: return CommType::kReduceScatter;
    case col::CollectiveOp::kSendRecv: break;
  }
  TRAINSIM_ASSERT(false, "a send/recv is not a collective");
  return CommType::kAllReduce;
}

// ProtoJSON: 64-bit integers as strings.
std::string int64_text(int64_t v) { return std::to_string(v); }

OJson attr_int64(const char* name, int64_t v) { return OJson{{"name", name}, {"int64Val", int64_text(v)}}; }
OJson attr_uint64(const char* name, int64_t v) { return OJson{{"name", name}, {"uint64Val", int64_text(v)}}; }
OJson attr_int32(const char* name, int32_t v) { return OJson{{"name", name}, {"int32Val", v}}; }
OJson attr_string(const char* name, const std::string& v) { return OJson{{"name", name}, {"stringVal", v}}; }
OJson attr_bool(const char* name, bool v) { return OJson{{"name", name}, {"boolVal", v}}; }

// Whole microseconds, at least 1 for any time at all (a 0 reads as "no recorded time").
int64_t micros(sim::Time t) {
  const int64_t ns = t.count_ns();
  if (ns <= 0) return 0;
  return std::max<int64_t>(1, (ns + 500) / 1000);
}

// (rank, node type, stream attribute or -1) of one node a task becomes.
struct Part {
  int32_t rank;
  NodeType type;
  int64_t stream;
};

// The export's state, shared by its phases: the workload and its timing, each stream's index among
// its rank's streams, each task's predecessors, and the nodes written so far per rank.
struct Exporter {
  const models::workload::Workload& w;
  const sim::task::TaskGraph& g;
  const sim::task::TaskExecutor& exec;
  std::vector<int64_t> stream_index;                           // the `stream` attribute of each stream
  std::map<int32_t, int64_t> per_rank;                         // streams per rank
  std::vector<std::vector<TaskIndex>> preds;                   // per task
  std::vector<std::vector<OJson>> nodes;                       // per rank
  std::vector<std::vector<std::pair<int32_t, uint64_t>>> ids;  // per task: (rank, node id)
  std::map<std::pair<int32_t, int32_t>, int32_t> tags;         // per (src, dst): transfers so far
  ExportedTrace out;

  // The node id task t has on rank r, or null when it has none there.
  const uint64_t* id_on(TaskIndex t, int32_t r) const {
    for (const auto& [rank, id] : ids[t])
      if (rank == r) return &id;
    return nullptr;
  }

  std::vector<Part> parts_of(TaskIndex t, uint32_t c) const;
  OJson attrs_of(const Part& part, const sim::task::Task& task, uint32_t c, const std::vector<Part>& parts,
                 int32_t tag) const;
  void export_task(TaskIndex t);
};

// The nodes task t becomes: a send and a receive for a transfer, else one node per stream.
std::vector<Part> Exporter::parts_of(TaskIndex t, uint32_t c) const {
  const sim::task::Task& task = g.task(t);
  std::vector<Part> parts;
  const sim::task::StreamId* streams = g.streams_of(t);
  auto stream_on = [&](int32_t r) -> int64_t {
    for (uint16_t k = 0; k < task.n_streams; ++k)
      if (g.stream(streams[k]).rank == r) return stream_index[streams[k]];
    return -1;
  };
  if (task.spec.kind == TaskKind::kP2P && c != models::workload::Workload::kNoComm) {
    const auto& pair = w.groups[w.comms[c].group];
    parts.push_back({pair[0], NodeType::kCommSend, stream_on(pair[0])});
    parts.push_back({pair[1], NodeType::kCommRecv, stream_on(pair[1])});
  } else {
    for (uint16_t k = 0; k < task.n_streams; ++k) {
      const auto& info = g.stream(streams[k]);
      NodeType type = NodeType::kComp;
      if (task.spec.kind == TaskKind::kCollective) type = NodeType::kCommColl;
      const std::string& label = g.label(info.label);
      if (task.spec.kind == TaskKind::kCompute && label == "d2h") type = NodeType::kMemStore;
      if (task.spec.kind == TaskKind::kCompute && label == "h2d") type = NodeType::kMemLoad;
      parts.push_back({info.rank, type, stream_index[streams[k]]});
    }
  }
  return parts;
}

// The attributes of one node: its work (FLOPs, bytes, the collective or the transfer) and stream.
OJson Exporter::attrs_of(const Part& part, const sim::task::Task& task, uint32_t c, const std::vector<Part>& parts,
                         int32_t tag) const {
  OJson attrs = OJson::array();
  switch (part.type) {
    case NodeType::kComp:
      attrs.push_back(attr_bool("is_cpu_op", false));
      if (task.spec.flops.count() > 0)
        attrs.push_back(attr_int64("num_ops", static_cast<int64_t>(task.spec.flops.count())));
      break;
    case NodeType::kMemLoad:
    case NodeType::kMemStore:
      attrs.push_back(attr_bool("is_cpu_op", false));
      if (task.spec.bytes.count() > 0) attrs.push_back(attr_uint64("tensor_size", task.spec.bytes.count()));
      break;
    case NodeType::kCommColl:
      attrs.push_back(attr_bool("is_cpu_op", false));
      attrs.push_back(attr_int64("comm_type", static_cast<int64_t>(comm_type(w.comms[c].op))));
      attrs.push_back(attr_int64("comm_size", w.comms[c].bytes.count()));
      attrs.push_back(attr_string("pg_name", std::to_string(w.comms[c].group)));
      break;
    default:  // send / receive
      attrs.push_back(attr_bool("is_cpu_op", false));
      attrs.push_back(attr_int32("comm_src", parts[0].rank));
      attrs.push_back(attr_int32("comm_dst", parts[1].rank));
      attrs.push_back(attr_int32("comm_tag", tag));
      attrs.push_back(attr_int64("comm_size", w.comms[c].bytes.count()));
      break;
  }
  if (part.stream >= 0) attrs.push_back(attr_int64("stream", part.stream));
  return attrs;
}

// Writes task t's nodes (after its predecessors'), with a re-gather node after a pipeline
// transfer's receive; counts the dependencies no rank of the task shares with its predecessor.
void Exporter::export_task(TaskIndex t) {
  const sim::task::Task& task = g.task(t);
  const uint32_t c = t < w.task_comm.size() ? w.task_comm[t] : models::workload::Workload::kNoComm;
  const std::vector<Part> parts = parts_of(t, c);
  const std::string name = g.display_name(t);
  const sim::Time start = exec.start_time(t), dur = exec.end_time(t) - exec.start_time(t);
  int32_t tag = 0;
  if (parts.size() == 2 && parts[0].type == NodeType::kCommSend) tag = tags[{parts[0].rank, parts[1].rank}]++;
  for (const Part& part : parts) {
    auto& list = nodes[static_cast<size_t>(part.rank)];
    const uint64_t id = list.size();
    OJson node = OJson::object();
    if (id != 0) node["id"] = int64_text(static_cast<int64_t>(id));
    node["name"] = name;
    node["type"] = to_string(part.type);
    OJson deps = OJson::array();
    for (const TaskIndex p : preds[t]) {
      const uint64_t* pid = id_on(p, part.rank);
      if (pid) deps.push_back(int64_text(static_cast<int64_t>(*pid)));
    }
    if (!deps.empty()) node["dataDeps"] = deps;
    if (micros(start) > 0) node["startTimeMicros"] = int64_text(micros(start));
    if (micros(dur) > 0) node["durationMicros"] = int64_text(micros(dur));
    node["attr"] = attrs_of(part, task, c, parts, tag);
    list.push_back(std::move(node));
    ids[t].emplace_back(part.rank, id);
    // The receiver's re-gather of a pipeline transfer (the scatter/gather optimization, a fixed
    // time on top of the transfer; Chakra has no field for it): a node after the receive that
    // the receiver's dependents wait on.
    const sim::Time extra = c == models::workload::Workload::kNoComm ? sim::Time::zero() : w.comms[c].extra;
    if (part.type == NodeType::kCommRecv && extra > sim::Time::zero()) {
      OJson regather = OJson::object();
      regather["id"] = int64_text(static_cast<int64_t>(id + 1));
      regather["name"] = name + " regather";
      regather["type"] = to_string(NodeType::kComp);
      regather["dataDeps"] = OJson::array({int64_text(static_cast<int64_t>(id))});
      if (micros(start + dur) > 0) regather["startTimeMicros"] = int64_text(micros(start + dur));
      regather["durationMicros"] = int64_text(micros(extra));
      // A stream of its own, one past the rank's streams: it holds nothing else.
      regather["attr"] = OJson::array({attr_bool("is_cpu_op", false), attr_int64("stream", per_rank[part.rank])});
      list.push_back(std::move(regather));
      ids[t].back().second = id + 1;  // the receiver's dependents wait for the re-gather
    }
  }
  // A dependency no rank of the task shares with its predecessor cannot be written.
  for (const TaskIndex p : preds[t]) {
    bool shared = false;
    for (const Part& part : parts) shared = shared || id_on(p, part.rank) != nullptr;
    if (!shared) ++out.dropped_deps;
  }
}

}  // namespace

ExportedTrace export_trace(const models::workload::Workload& w, const sim::task::TaskExecutor& exec,
                           const models::workload::Job& job) {
  const auto& g = w.graph;
  const int32_t nranks = static_cast<int32_t>(job.gpus);
  TRAINSIM_ASSERT(static_cast<int64_t>(w.ranks.size()) == job.gpus, "export needs every rank (full fidelity)");
  Exporter ex{w, g, exec, {}, {}, {}, {}, {}, {}, {}};
  // Each stream's index among its rank's streams: the `stream` attribute.
  ex.stream_index.resize(g.stream_count());
  for (sim::task::StreamId s = 0; s < g.stream_count(); ++s) ex.stream_index[s] = ex.per_rank[g.stream(s).rank]++;

  // A topological order (smallest task first): node ids then follow dependencies.
  const size_t n = g.size();
  std::vector<uint32_t> indeg(n, 0);
  ex.preds.resize(n);
  for (TaskIndex i = 0; i < n; ++i)
    for (const TaskIndex* s = g.successors_begin(i); s != g.successors_end(i); ++s) {
      ++indeg[*s];
      ex.preds[*s].push_back(i);
    }
  std::priority_queue<TaskIndex, std::vector<TaskIndex>, std::greater<>> ready;
  for (TaskIndex i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push(i);
  ex.nodes.resize(static_cast<size_t>(nranks));
  ex.ids.resize(n);
  while (!ready.empty()) {
    const TaskIndex t = ready.top();
    ready.pop();
    for (const TaskIndex* s = g.successors_begin(t); s != g.successors_end(t); ++s)
      if (--indeg[*s] == 0) ready.push(*s);
    ex.export_task(t);
  }
  TRAINSIM_ASSERT(std::all_of(indeg.begin(), indeg.end(), [](uint32_t d) { return d == 0; }), "the graph is a DAG");

  ExportedTrace& out = ex.out;
  for (int32_t r = 0; r < nranks; ++r) {
    OJson meta = OJson::object();
    meta["attr"] = OJson::array({attr_string("schema", "trainsim-chakra-1"), attr_string("gpu", job.gpu.name),
                                 attr_string("cluster", job.cluster.name),
                                 attr_string("precision", models::compute::to_string(job.precision)),
                                 attr_int64("rank", r), attr_int64("world_size", nranks)});
    // chakra_jsonizer writes MessageToJson of each message back to back, with no separator.
    std::string text = meta.dump(2);
    for (const OJson& node : ex.nodes[static_cast<size_t>(r)]) text += node.dump(2);
    out.nodes += static_cast<int64_t>(ex.nodes[static_cast<size_t>(r)].size());
    out.files.push_back(std::move(text));
  }
  return std::move(out);
}

ExportedTrace write_trace(const std::string& prefix, const models::workload::Workload& w,
                          const sim::task::TaskExecutor& exec, const models::workload::Job& job,
                          const std::string& flag) {
  ExportedTrace t = export_trace(w, exec, job);
  for (size_t r = 0; r < t.files.size(); ++r) {
    std::ostringstream name;
    name << prefix << "." << r << ".json";
    std::ofstream f(name.str(), std::ios::binary);
    if (!f || !(f << t.files[r]) || !f.flush())
      throw ConfigError(flag, "cannot write " + name.str(), "check that the folder exists and is writable");
  }
  return t;
}

}  // namespace trainsim::traces::chakra
