#include "traces/chakra/workload.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "models/collectives/alpha_beta.hpp"
#include "sim/error.hpp"
#include "traces/chakra/node.hpp"

namespace trainsim::traces::chakra {

namespace col = models::collectives;
using models::workload::Workload;
using sim::config::Json;
using sim::task::StreamId;
using sim::task::TaskIndex;

namespace {

constexpr uint32_t kNone = 0xffffffffu;

// A task before insertion: the rank-local nodes it stands for and what it waits on.
struct Proto {
  sim::task::TaskSpec spec;
  std::vector<StreamId> streams;
  std::vector<std::pair<int32_t, uint32_t>> nodes;  // (rank, node index) it stands for
  std::vector<uint32_t> preds;                      // proto indices (dependencies and stream order)
  uint32_t comm = Workload::kNoComm;
  int32_t first_rank = 0;
};

struct RankState {
  std::unordered_map<uint64_t, uint32_t> index;  // node id -> node index
  std::vector<uint32_t> order;                   // local topological order (smallest id first)
  std::vector<uint32_t> proto;                   // per node: its proto, or kNone (passed through)
  std::map<std::string, StreamId> streams;       // stream label -> id
};

std::string str(const std::ostringstream& os) { return os.str(); }

// Kahn's algorithm over the rank's data and control dependencies, smallest id first: the order
// the rank issues its nodes in (ids follow execution order in recorded traces).
void local_order(const RankTrace& t, RankState& st) {
  const size_t n = t.nodes.size();
  st.index.reserve(n);
  for (uint32_t i = 0; i < n; ++i) st.index[t.nodes[i].id] = i;
  std::vector<uint32_t> indeg(n, 0);
  std::vector<std::vector<uint32_t>> succ(n);
  for (uint32_t i = 0; i < n; ++i)
    for (const auto* deps : {&t.nodes[i].data_deps, &t.nodes[i].ctrl_deps})
      for (const uint64_t d : *deps) {
        succ[st.index.at(d)].push_back(i);
        ++indeg[i];
      }
  using Item = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (uint32_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.emplace(t.nodes[i].id, i);
  st.order.reserve(n);
  while (!ready.empty()) {
    const uint32_t i = ready.top().second;
    ready.pop();
    st.order.push_back(i);
    for (const uint32_t s : succ[i])
      if (--indeg[s] == 0) ready.emplace(t.nodes[s].id, s);
  }
  if (st.order.size() == n) return;
  uint32_t stuck = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (indeg[i] > 0 && (indeg[stuck] == 0 || t.nodes[i].id < t.nodes[stuck].id)) stuck = i;
  throw ConfigError(t.nodes[stuck].path, "dependency cycle: the node waits on itself through dataDeps / ctrlDeps",
                    "dependencies must form a DAG; remove the edge that closes the cycle");
}

// The import's state, shared by its phases: the inputs, the workload being built, the tasks before
// insertion (protos) and the tables that match collectives and sends across ranks.
struct Importer {
  const Trace& trace;
  const models::workload::Job& job;
  const ImportOptions& options;
  ImportedWorkload& out;
  int32_t nranks = 0;
  col::AlphaBetaModel comm_model;
  int64_t gpn = 1;  // GPUs per NVLink domain

  std::vector<RankState> st;                                   // per rank
  std::unordered_map<std::string, sim::task::LabelId> labels;  // node name -> label
  std::map<std::vector<int32_t>, uint32_t> group_ids;
  std::map<std::tuple<int, int64_t, uint32_t>, uint32_t> comm_ids;
  std::map<std::string, std::vector<int32_t>> members;  // communicator (pg_name) -> its ranks
  std::vector<Proto> protos;
  std::map<std::pair<std::string, int64_t>, uint32_t> coll_at;  // (pg, k) -> proto
  std::map<std::tuple<int32_t, int32_t, int64_t>, std::vector<std::pair<int32_t, uint32_t>>> sends, recvs;
  std::unordered_map<StreamId, uint32_t> last_on_stream;
  std::map<std::string, int64_t> coll_seen;  // of the rank being read: collectives issued per pg

  Importer(const Trace& t, const models::workload::Job& j, const ImportOptions& o, ImportedWorkload& w)
      : trace(t),
        job(j),
        options(o),
        out(w),
        nranks(static_cast<int32_t>(t.ranks.size())),
        comm_model(j.cluster),
        gpn(std::max<int64_t>(1, j.cluster.domain_gpus())) {}

  Workload& w() { return out.w; }
  ImportStats& stats() { return out.stats; }
  const RankTrace& rank(int32_t r) const { return trace.ranks[static_cast<size_t>(r)]; }
  const Node& node_of(std::pair<int32_t, uint32_t> at) const { return rank(at.first).nodes[at.second]; }

  // The stream of rank r with this label, created on first use.
  StreamId stream(int32_t r, const std::string& label) {
    auto& m = st[static_cast<size_t>(r)].streams;
    auto it = m.find(label);
    if (it == m.end()) it = m.emplace(label, w().graph.add_stream(r, label)).first;
    return it->second;
  }

  // Task labels are node names; LabelId is 16 bits, so past 50,000 distinct names a task is
  // labelled by its node type.
  sim::task::LabelId intern(const Node& n) {
    const std::string& name = n.name.empty() || labels.size() >= 50000 ? std::string(to_string(n.type)) : n.name;
    auto it = labels.find(name);
    if (it == labels.end()) it = labels.emplace(name, w().graph.intern(name)).first;
    return it->second;
  }

  // The workload's group of these ranks, added on first use.
  uint32_t group_id(const std::vector<int32_t>& ranks) {
    auto it = group_ids.find(ranks);
    if (it == group_ids.end()) {
      it = group_ids.emplace(ranks, static_cast<uint32_t>(w().groups.size())).first;
      w().groups.push_back(ranks);
    }
    return it->second;
  }

  // The workload's communication of this op, size and group, added on first use.
  uint32_t comm_id(col::CollectiveOp op, sim::Bytes bytes, uint32_t group) {
    const auto key = std::make_tuple(static_cast<int>(op), bytes.count(), group);
    auto it = comm_ids.find(key);
    if (it == comm_ids.end()) {
      it = comm_ids.emplace(key, static_cast<uint32_t>(w().comms.size())).first;
      w().comms.push_back(models::workload::CommInfo{op, bytes, group, sim::Time::zero()});
    }
    return it->second;
  }

  // Puts proto p on stream s, after the stream's previous proto.
  void on_stream(uint32_t p, StreamId s) {
    auto [it, first] = last_on_stream.try_emplace(s, p);
    if (!first) {
      protos[p].preds.push_back(it->second);
      it->second = p;
    }
    protos[p].streams.push_back(s);
  }

  // A new proto for node n of rank r.
  uint32_t fresh(const Node& n, int32_t r, TaskClass cls, sim::task::TaskKind kind) {
    const auto p = static_cast<uint32_t>(protos.size());
    protos.emplace_back();
    protos[p].spec.kind = kind;
    protos[p].spec.category = static_cast<uint8_t>(cls);
    protos[p].spec.label = intern(n);
    protos[p].first_rank = r;
    return p;
  }

  void add_ranks();
  void find_communicators();
  void read_rank(int32_t r);
  uint32_t node_proto(int32_t r, uint32_t i);
  uint32_t comp_proto(int32_t r, const Node& n, const std::string& stream_label);
  uint32_t memory_proto(int32_t r, const Node& n, const std::string& stream_label);
  uint32_t collective_proto(int32_t r, const Node& n, const std::optional<int64_t>& stream_attr);
  uint32_t p2p_proto(int32_t r, uint32_t i, const Node& n, const std::optional<int64_t>& stream_attr);
  void check_pairs() const;
  void insert_tasks();
};

// "stream N" for a node with a stream attribute, else `fallback`.
std::string stream_label(const std::optional<int64_t>& stream_attr, const std::string& fallback) {
  if (!stream_attr) return fallback;
  std::ostringstream s;
  s << "stream " << *stream_attr;
  return s.str();
}

// Each rank's local order and compute stream, and its RankInfo.
void Importer::add_ranks() {
  st.resize(static_cast<size_t>(nranks));
  for (int32_t r = 0; r < nranks; ++r) {
    local_order(rank(r), st[static_cast<size_t>(r)]);
    st[static_cast<size_t>(r)].proto.assign(rank(r).nodes.size(), kNone);
    stats().nodes += static_cast<int64_t>(rank(r).nodes.size());
    models::workload::RankInfo info;
    info.rank = r;
    info.compute = w().graph.add_stream(r, "compute");
    st[static_cast<size_t>(r)].streams["compute"] = info.compute;
    info.tp = info.dp = info.pp = models::workload::kNoStream;
    w().ranks.push_back(info);
  }
}

// Communicators: the ranks whose files issue collectives naming each pg_name; a collective
// without pg_name spans every rank. Every member must issue as many collectives on it.
void Importer::find_communicators() {
  std::map<std::string, std::vector<int64_t>> issued;  // per pg: collectives issued by each rank
  for (int32_t r = 0; r < nranks; ++r)
    for (const Node& n : rank(r).nodes)
      if (n.type == NodeType::kCommColl) {
        const std::string pg = n.string_attr("pg_name").value_or("");
        auto& v = issued[pg];
        v.resize(static_cast<size_t>(nranks), 0);
        ++v[static_cast<size_t>(r)];
      }
  for (auto& [pg, counts] : issued) {
    std::vector<int32_t>& m = members[pg];
    for (int32_t r = 0; r < nranks; ++r)
      if (pg.empty() || counts[static_cast<size_t>(r)] > 0) m.push_back(r);
    for (const int32_t r : m)
      if (counts[static_cast<size_t>(r)] != counts[static_cast<size_t>(m.front())]) {
        std::ostringstream msg, hint;
        msg << "rank " << r << " issues " << counts[static_cast<size_t>(r)] << " collectives on "
            << (pg.empty() ? std::string("the world (no pg_name)") : "process group \"" + pg + "\"") << " but rank "
            << m.front() << " issues " << counts[static_cast<size_t>(m.front())];
        hint << (pg.empty() ? "collectives without pg_name are taken to span every rank; name their process group "
                              "(pg_name)"
                            : "every member of a process group takes part in each of its collectives; give every "
                              "rank's file");
        throw ConfigError(rank(r).file, str(msg), str(hint));
      }
    stats().groups.push_back(CommGroup{pg, m, counts[static_cast<size_t>(m.front())]});
  }
}

// The protos of rank r's nodes in its local order, with their dependencies through the nodes
// that are passed over.
void Importer::read_rank(int32_t r) {
  const RankTrace& rt = rank(r);
  RankState& rs = st[static_cast<size_t>(r)];
  coll_seen.clear();
  // Kept predecessors of each node, through the nodes that are passed over.
  std::vector<std::vector<uint32_t>> through(rt.nodes.size());
  for (const uint32_t i : rs.order) {
    const Node& n = rt.nodes[i];
    std::vector<uint32_t> preds;
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
      for (const uint64_t d : *deps) {
        const uint32_t j = rs.index.at(d);
        if (rs.proto[j] != kNone)
          preds.push_back(rs.proto[j]);
        else
          preds.insert(preds.end(), through[j].begin(), through[j].end());
      }
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    const uint32_t p = node_proto(r, i);
    if (p == kNone) {
      ++stats().skipped;
      through[i] = std::move(preds);
      continue;
    }
    rs.proto[i] = p;
    protos[p].nodes.emplace_back(r, i);
    protos[p].preds.insert(protos[p].preds.end(), preds.begin(), preds.end());
  }
}

// The proto node i of rank r joins or starts, or kNone when the node is passed over.
uint32_t Importer::node_proto(int32_t r, uint32_t i) {
  const Node& n = rank(r).nodes[i];
  const std::optional<int64_t> stream_attr = n.int_attr("stream");
  switch (n.type) {
    case NodeType::kInvalid:
    case NodeType::kMetadata: return kNone;
    case NodeType::kStorage:
    case NodeType::kBatch:
    case NodeType::kCheckpoint:
      throw ConfigError(n.path + ".type", std::string(to_string(n.type)) + " nodes are not simulated",
                        "trainsim replays COMP, COMM_COLL, COMM_SEND, COMM_RECV, MEM_LOAD, MEM_STORE and "
                        "METADATA nodes; remove the others");
    case NodeType::kComp: return comp_proto(r, n, stream_label(stream_attr, "compute"));
    case NodeType::kMemLoad:
    case NodeType::kMemStore:
      return memory_proto(r, n, stream_label(stream_attr, n.type == NodeType::kMemLoad ? "h2d" : "d2h"));
    case NodeType::kCommColl: return collective_proto(r, n, stream_attr);
    case NodeType::kCommSend:
    case NodeType::kCommRecv: return p2p_proto(r, i, n, stream_attr);
  }
  return kNone;
}

// A COMP node: a CPU task on its thread's stream, or a GPU task timed by gpu_time (kNone when it
// has no time).
uint32_t Importer::comp_proto(int32_t r, const Node& n, const std::string& label) {
  const bool cpu = n.bool_attr("is_cpu_op").value_or(false);
  sim::Time t = sim::Time::us(static_cast<int64_t>(n.duration_micros));
  uint32_t p = kNone;
  if (cpu) {
    if (t == sim::Time::zero()) return kNone;
    p = fresh(n, r, TaskClass::kCpu, sim::task::TaskKind::kCompute);
    ++stats().cpu;
    const auto tid = n.int_attr("tid");
    std::ostringstream s;
    s << "cpu";
    if (tid) s << " tid " << *tid;
    on_stream(p, stream(r, s.str()));
  } else {
    const GpuTime g = gpu_time(n, job.gpu, job.precision, options.recorded_gpu ? &*options.recorded_gpu : nullptr);
    if (g.source == GpuTime::Source::kNone) return kNone;
    t = g.time;
    stats().roofline += g.source == GpuTime::Source::kRoofline;
    stats().rescaled += g.source == GpuTime::Source::kRescaled;
    stats().kept += g.source == GpuTime::Source::kKept;
    p = fresh(n, r, TaskClass::kCompute, sim::task::TaskKind::kCompute);
    ++stats().compute;
    protos[p].spec.flops = sim::Flops(count_attr(n, "num_ops"));
    protos[p].spec.bytes = sim::Bytes(static_cast<int64_t>(count_attr(n, "tensor_size")));
    on_stream(p, stream(r, label));
  }
  protos[p].spec.duration = t;
  return p;
}

// A MEM_LOAD / MEM_STORE node: a host copy, timed by the host link when it has no time.
uint32_t Importer::memory_proto(int32_t r, const Node& n, const std::string& label) {
  const double bytes = count_attr(n, "tensor_size");
  sim::Time t = sim::Time::us(static_cast<int64_t>(n.duration_micros));
  if (t == sim::Time::zero() && bytes > 0)
    t = sim::Bytes(static_cast<int64_t>(bytes)) / job.cluster.host_link_bandwidth;
  if (t == sim::Time::zero()) return kNone;
  const uint32_t p = fresh(n, r, TaskClass::kMemory, sim::task::TaskKind::kMemory);
  ++stats().memory;
  protos[p].spec.duration = t;
  protos[p].spec.bytes = sim::Bytes(static_cast<int64_t>(bytes));
  on_stream(p, stream(r, label));
  return p;
}

// A COMM_COLL node: the k-th collective of its group starts one task (the first rank to issue it)
// that every member's k-th joins; they must match in type and size.
uint32_t Importer::collective_proto(int32_t r, const Node& n, const std::optional<int64_t>& stream_attr) {
  CommType type{};
  const col::CollectiveOp op = collective_of(n, type);
  const int64_t size = comm_bytes(n);
  const std::string pg = n.string_attr("pg_name").value_or("");
  const auto key = std::make_pair(pg, coll_seen[pg]++);
  const auto found = coll_at.find(key);
  uint32_t p = kNone;
  if (found == coll_at.end()) {
    p = fresh(n, r, TaskClass::kCollective, sim::task::TaskKind::kCollective);
    coll_at.emplace(key, p);
    ++stats().collectives;
    const std::vector<int32_t>& m = members.at(pg);
    Proto& pr = protos[p];
    pr.spec.bytes = sim::Bytes(size);
    col::GroupPlacement gp{static_cast<int64_t>(m.size()), 1};
    std::map<int64_t, int64_t> per_node;
    for (const int32_t g : m) gp.per_node = std::max(gp.per_node, ++per_node[g / gpn]);
    if (m.size() > 1 && size > 0) {
      pr.comm = comm_id(op, sim::Bytes(size), group_id(m));
      pr.spec.duration = comm_model.collective(op, sim::Bytes(size), gp);
    } else {
      pr.spec.duration = job.cluster.collective_launch;  // alone or empty: nothing moves
    }
  } else {
    p = found->second;
    const Node& first = node_of(protos[p].nodes.front());
    CommType first_type{};
    collective_of(first, first_type);
    const int64_t first_size = comm_bytes(first);
    if (first_type != type || first_size != size) {
      std::ostringstream m;
      m << "collective #" << key.second << " on "
        << (pg.empty() ? std::string("the world") : "process group \"" + pg + "\"") << " is " << to_string(type)
        << " of " << size << " bytes here but " << to_string(first_type) << " of " << first_size << " bytes on rank "
        << protos[p].nodes.front().first << " (" << first.path << ")";
      throw ConfigError(n.path, str(m),
                        "every rank must issue a group's collectives in the same order with the same size");
    }
  }
  std::ostringstream s;
  s << "comm " << (pg.empty() ? std::string("world") : pg);
  on_stream(p, stream(r, stream_label(stream_attr, s.str())));
  return p;
}

// A COMM_SEND / COMM_RECV node: the pair's first half starts a transfer task that the other half
// joins (matched in order per source, destination and tag); both must move one size.
uint32_t Importer::p2p_proto(int32_t r, uint32_t i, const Node& n, const std::optional<int64_t>& stream_attr) {
  const bool send = n.type == NodeType::kCommSend;
  const int32_t other = comm_peer(n, send ? "comm_dst" : "comm_src", nranks);
  if (other == r) throw ConfigError(n.path + ".attr", "a rank sends to itself", "fix comm_src / comm_dst");
  const int64_t tag = n.int_attr("comm_tag").value_or(0);
  const auto key = send ? std::make_tuple(r, other, tag) : std::make_tuple(other, r, tag);
  auto& mine = send ? sends[key] : recvs[key];
  auto& theirs = send ? recvs[key] : sends[key];
  uint32_t p = kNone;
  if (theirs.size() > mine.size()) {
    // The matching half arrived first (an earlier rank): join its task.
    const auto [orank, onode] = theirs[mine.size()];
    p = st[static_cast<size_t>(orank)].proto[onode];
  } else {
    p = fresh(n, r, TaskClass::kTransfer, sim::task::TaskKind::kP2P);
    ++stats().transfers;
    const int32_t src = send ? r : other, dst = send ? other : r;
    protos[p].spec.bytes = sim::Bytes(comm_bytes(n));
    protos[p].spec.duration = comm_model.p2p(sim::Bytes(comm_bytes(n)), src / gpn != dst / gpn);
    if (comm_bytes(n) > 0)
      protos[p].comm = comm_id(col::CollectiveOp::kSendRecv, sim::Bytes(comm_bytes(n)), group_id({src, dst}));
  }
  mine.emplace_back(r, i);
  if (send) {
    std::ostringstream s;
    const std::string pg = n.string_attr("pg_name").value_or("");
    s << "p2p " << (pg.empty() ? std::string("world") : pg);
    on_stream(p, stream(r, stream_label(stream_attr, s.str())));
  }
  if (protos[p].nodes.size() == 1) {  // the pair is complete: same size on both sides
    const Node& o = node_of(protos[p].nodes.front());
    if (comm_bytes(o) != comm_bytes(n)) {
      std::ostringstream m;
      m << "moves " << comm_bytes(n) << " bytes but its matching " << to_string(o.type) << " (" << o.path << ") moves "
        << comm_bytes(o);
      throw ConfigError(n.path + ".attr.comm_size", str(m), "a send and its receive must have one size");
    }
  }
  return p;
}

// Every send has its receive.
void Importer::check_pairs() const {
  for (const auto* side : {&sends, &recvs})
    for (const auto& [key, list] : *side) {
      const auto& other = side == &sends ? recvs : sends;
      const auto it = other.find(key);
      const size_t n_other = it == other.end() ? 0 : it->second.size();
      if (list.size() <= n_other) continue;
      const Node& n = node_of(list[n_other]);
      std::ostringstream m;
      m << (side == &sends ? "no matching COMM_RECV_NODE on rank " : "no matching COMM_SEND_NODE on rank ")
        << (side == &sends ? std::get<1>(key) : std::get<0>(key)) << " (tag " << std::get<2>(key) << ")";
      throw ConfigError(n.path, str(m), "sends and receives between two ranks pair up in order, per comm_tag");
    }
}

// Insertion in a topological order of the whole job (dependencies, group order, stream order):
// each stream then runs its tasks in the order its rank issued them, and a cycle here is a
// deadlock of the recorded program.
void Importer::insert_tasks() {
  const size_t np = protos.size();
  std::vector<uint32_t> indeg(np, 0);
  std::vector<std::vector<uint32_t>> succ(np);
  for (uint32_t p = 0; p < np; ++p) {
    auto& pr = protos[p].preds;
    std::sort(pr.begin(), pr.end());
    pr.erase(std::unique(pr.begin(), pr.end()), pr.end());
    pr.erase(std::remove(pr.begin(), pr.end(), p), pr.end());
    for (const uint32_t q : pr) succ[q].push_back(p);
    indeg[p] = static_cast<uint32_t>(pr.size());
  }
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t p = 0; p < np; ++p)
    if (indeg[p] == 0) ready.push(p);
  std::vector<TaskIndex> task_of(np, 0);
  size_t done = 0;
  w().task_comm.reserve(np);
  w().task_rank_slot.reserve(np);
  while (!ready.empty()) {
    const uint32_t p = ready.top();
    ready.pop();
    const Proto& pr = protos[p];
    const TaskIndex t =
        pr.streams.size() == 1 ? w().graph.add(pr.spec, pr.streams.front()) : w().graph.add(pr.spec, pr.streams);
    task_of[p] = t;
    w().task_comm.push_back(pr.comm);
    w().task_rank_slot.push_back(static_cast<uint32_t>(pr.first_rank));
    for (const uint32_t q : pr.preds) w().graph.add_dep(task_of[q], t);
    ++done;
    for (const uint32_t s : succ[p])
      if (--indeg[s] == 0) ready.push(s);
  }
  if (done < np) {
    uint32_t stuck = 0;
    while (indeg[stuck] == 0) ++stuck;
    throw ConfigError(node_of(protos[stuck].nodes.front()).path,
                      "deadlock: the node waits on itself through other ranks (collectives, sends and receives, "
                      "and the order of each stream)",
                      "every rank must issue a process group's collectives, and a pair's sends, in the same order");
  }
}

}  // namespace

const char* to_string(TaskClass c) {
  switch (c) {
    case TaskClass::kCompute: return "compute";
    case TaskClass::kCpu: return "cpu";
    case TaskClass::kCollective: return "collective";
    case TaskClass::kTransfer: return "transfer";
    case TaskClass::kMemory: return "memory";
  }
  return "?";
}

std::optional<std::string> recorded_gpu_name(const Trace& trace) {
  for (const RankTrace& r : trace.ranks) {
    const auto it = r.metadata.find("gpu");
    if (it != r.metadata.end() && it->second.kind == AttrValue::Kind::kString && !it->second.s.empty())
      return it->second.s;
  }
  return std::nullopt;
}

Json ImportStats::to_json() const {
  Json g = Json::array();
  for (const CommGroup& c : groups)
    g.push_back(Json{{"pg_name", c.pg_name}, {"ranks", c.ranks}, {"collectives", c.collectives}});
  return Json{{"ranks", ranks},
              {"nodes", nodes},
              {"compute_tasks", compute},
              {"cpu_tasks", cpu},
              {"memory_tasks", memory},
              {"collectives", collectives},
              {"transfers", transfers},
              {"skipped_nodes", skipped},
              {"rescaled_nodes", rescaled},
              {"roofline_nodes", roofline},
              {"kept_recorded_nodes", kept},
              {"groups", g}};
}

ImportedWorkload import_workload(const Trace& trace, const models::workload::Job& job, const ImportOptions& options) {
  const int32_t nranks = static_cast<int32_t>(trace.ranks.size());
  TRAINSIM_ASSERT(nranks > 0, "a trace has at least one rank");
  if (nranks > job.cluster.max_gpus) {
    std::ostringstream m;
    m << "the trace has " << nranks << " ranks (one per file) but cluster \"" << job.cluster.name << "\" holds at most "
      << job.cluster.max_gpus << " GPUs";
    throw ConfigError("--chakra", str(m), "choose a larger --cluster");
  }
  TRAINSIM_ASSERT(job.gpus == nranks, "the replay job has one GPU per rank");
  ImportedWorkload out;
  out.stats.ranks = nranks;
  Importer im(trace, job, options, out);
  im.add_ranks();
  im.find_communicators();
  for (int32_t r = 0; r < nranks; ++r) im.read_rank(r);
  im.check_pairs();
  im.insert_tasks();
  out.w.graph.finalize();
  return out;
}

}  // namespace trainsim::traces::chakra
