#include "validator/replay/mpi_backend.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "sim/error.hpp"

#if TRAINSIM_HAVE_MPI
// The C API only: the deprecated C++ bindings do not build cleanly with -Wextra.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace trainsim::validator::replay {

namespace col = models::collectives;

bool have_mpi() { return TRAINSIM_HAVE_MPI != 0; }

namespace {
// What a message says it is: the task, the op (collectives) and the simulated bytes.
struct Record {
  int64_t task = 0, op = 0, bytes = 0;
  bool operator==(const Record& o) const { return task == o.task && op == o.op && bytes == o.bytes; }
};
constexpr int kRecordInts = 3;
constexpr int kTagBound = 32767;  // MPI guarantees tags up to at least 32767

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

struct MpiBackend::Impl {
  int64_t cap;
  double timeout_s;
  double t0 = 0;
  bool mpi = false;  // MPI is initialised (launched by mpirun)
  const Program* program = nullptr;
  struct InFlight {
    const Op* op = nullptr;
    double ready_at = 0;  // compute: when its wait ends; communication: when the re-gather ends
    double extra_s = 0;
    bool comm_done = false;
    std::vector<char> send, recv;
    Record mine;
    std::vector<Record> records;
#if TRAINSIM_HAVE_MPI
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
#endif
  };
  std::map<uint32_t, InFlight> inflight;
#if TRAINSIM_HAVE_MPI
  std::map<int32_t, MPI_Comm> comms;
  // Waits for `n` requests, polling, at most timeout_s: MPI's blocking calls have no timeout.
  void wait(MPI_Request* reqs, int n, const std::string& what) const {
    const double until = steady_seconds() + timeout_s;
    int flag = 0;
    while (true) {
      MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE);
      if (flag) return;
      if (steady_seconds() > until)
        throw ReplayError(what + ": not every rank arrived within " + std::to_string(static_cast<int>(timeout_s)) +
                          " s");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
#endif
  double wall() const {
#if TRAINSIM_HAVE_MPI
    if (mpi) return MPI_Wtime();
#endif
    return steady_seconds();
  }
};

MpiBackend::MpiBackend(int64_t payload_cap, double timeout_s) : impl_(std::make_unique<Impl>()) {
  impl_->cap = payload_cap;
  impl_->timeout_s = timeout_s;
#if TRAINSIM_HAVE_MPI
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  impl_->mpi = init && !fin;
  if (impl_->mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
#endif
}

MpiBackend::~MpiBackend() {
#if TRAINSIM_HAVE_MPI
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin)
    for (auto& [g, c] : impl_->comms) MPI_Comm_free(&c);
#endif
}

std::string MpiBackend::name() const { return impl_->mpi ? "cpu (OpenMPI)" : "cpu (one process, no MPI)"; }

void MpiBackend::setup(const Program& program) {
  impl_->program = &program;
  std::vector<int32_t> used;  // groups some collective runs on, ascending: every rank creates them in this order
  for (const auto& rp : program.ranks)
    for (const Op& op : rp.ops)
      if (op.kind == OpKind::kCollective) used.push_back(op.group);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
#if TRAINSIM_HAVE_MPI
  if (!impl_->mpi) return;
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  for (const int32_t g : used) {
    const auto& members = program.groups[static_cast<size_t>(g)];
    if (std::find(members.begin(), members.end(), rank_) == members.end()) continue;
    MPI_Group group;
    MPI_Group_incl(world, static_cast<int>(members.size()), members.data(), &group);
    MPI_Comm comm;
    MPI_Comm_create_group(MPI_COMM_WORLD, group, g % kTagBound, &comm);
    MPI_Group_free(&group);
    impl_->comms[g] = comm;
  }
  MPI_Group_free(&world);
#else
  (void)used;
#endif
}

void MpiBackend::start(uint32_t i, const Op& op, double scale) {
  auto& f = impl_->inflight[i];
  f.op = &op;
  const double now_s = now();
  if (op.kind == OpKind::kCompute) {
    f.ready_at = now_s + op.sim_duration.seconds() * scale;
    return;
  }
  f.extra_s = op.extra.seconds() * scale;
  f.mine = Record{op.task, op.kind == OpKind::kCollective ? static_cast<int64_t>(op.collective) : -1, op.bytes};
  const int64_t payload = std::min(op.bytes, impl_->cap);
#if TRAINSIM_HAVE_MPI
  if (impl_->mpi) {
    const int tag = op.tag % kTagBound;
    if (op.kind == OpKind::kSend) {
      f.send.resize(sizeof(Record) + static_cast<size_t>(payload));
      std::copy_n(reinterpret_cast<const char*>(&f.mine), sizeof(Record), f.send.data());
      MPI_Isend(f.send.data(), static_cast<int>(f.send.size()), MPI_BYTE, op.peer, tag, MPI_COMM_WORLD, &f.reqs[0]);
      return;
    }
    if (op.kind == OpKind::kRecv) {
      f.recv.resize(sizeof(Record) + static_cast<size_t>(impl_->cap));
      MPI_Irecv(f.recv.data(), static_cast<int>(f.recv.size()), MPI_BYTE, op.peer, tag, MPI_COMM_WORLD, &f.reqs[0]);
      return;
    }
    MPI_Comm comm = impl_->comms.at(op.group);
    int n = 1;
    MPI_Comm_size(comm, &n);
    f.records.resize(static_cast<size_t>(n));
    MPI_Iallgather(&f.mine, kRecordInts, MPI_INT64_T, f.records.data(), kRecordInts, MPI_INT64_T, comm, &f.reqs[0]);
    // The data, in floats, a multiple of the group size (at least one per member).
    const int per = std::max<int>(1, static_cast<int>(payload / 4 / n));
    const int count = per * n;
    f.send.assign(static_cast<size_t>(count) * 4, 0);
    f.recv.assign(static_cast<size_t>(count) * 4, 0);
    void* s = f.send.data();
    void* r = f.recv.data();
    switch (op.collective) {
      case col::CollectiveOp::kAllReduce: MPI_Iallreduce(s, r, count, MPI_FLOAT, MPI_SUM, comm, &f.reqs[1]); break;
      case col::CollectiveOp::kAllGather: MPI_Iallgather(s, per, MPI_FLOAT, r, per, MPI_FLOAT, comm, &f.reqs[1]); break;
      case col::CollectiveOp::kReduceScatter:
        MPI_Ireduce_scatter_block(s, r, per, MPI_FLOAT, MPI_SUM, comm, &f.reqs[1]);
        break;
      case col::CollectiveOp::kAllToAll: MPI_Ialltoall(s, per, MPI_FLOAT, r, per, MPI_FLOAT, comm, &f.reqs[1]); break;
      case col::CollectiveOp::kBroadcast: MPI_Ibcast(s, count, MPI_FLOAT, 0, comm, &f.reqs[1]); break;
      case col::CollectiveOp::kReduce: MPI_Ireduce(s, r, count, MPI_FLOAT, MPI_SUM, 0, comm, &f.reqs[1]); break;
      case col::CollectiveOp::kSendRecv: break;  // a pair's exchange: the records are its data
    }
    return;
  }
#endif
  (void)payload;
  // A world of one: a collective of one member completes at once; there is no peer to send to.
  if (op.kind != OpKind::kCollective)
    throw ReplayError("rank 0 " + std::string(to_string(op.kind)) + " \"" + op.name +
                      "\" needs another process, and this replay runs without MPI");
  f.records = {f.mine};
  f.comm_done = true;
  f.ready_at = now_s + f.extra_s;
}

bool MpiBackend::done(uint32_t i) {
  auto it = impl_->inflight.find(i);
  TRAINSIM_ASSERT(it != impl_->inflight.end(), "done() on an op not started");
  auto& f = it->second;
  const Op& op = *f.op;
  if (op.kind != OpKind::kCompute && !f.comm_done) {
#if TRAINSIM_HAVE_MPI
    if (impl_->mpi) {
      int flag = 0;
      MPI_Testall(2, f.reqs, &flag, MPI_STATUSES_IGNORE);
      if (!flag) return false;
    }
#endif
    f.comm_done = true;
    f.ready_at = now() + f.extra_s;
    const std::string who = "rank " + std::to_string(rank_) + " " + to_string(op.kind) + " \"" + op.name + "\"";
    if (op.kind == OpKind::kRecv) {
      Record got;
      std::copy_n(f.recv.data(), sizeof(Record), reinterpret_cast<char*>(&got));
      if (!(got == f.mine))
        throw ReplayError(who + " from " + std::to_string(op.peer) + " (task " + std::to_string(op.task) + ", " +
                          std::to_string(op.bytes) + " B) received task " + std::to_string(got.task) + " of " +
                          std::to_string(got.bytes) + " B");
    }
    if (op.kind == OpKind::kCollective) {
      const auto& members = impl_->program->groups[static_cast<size_t>(op.group)];
      for (size_t k = 0; k < f.records.size(); ++k)
        if (!(f.records[k] == f.mine))
          throw ReplayError(who + " (task " + std::to_string(op.task) + ", " + std::to_string(op.bytes) +
                            " B) on communicator " + std::to_string(op.group) + ": member rank " +
                            std::to_string(members[k]) + " issued task " + std::to_string(f.records[k].task) + " (" +
                            col::to_string(static_cast<col::CollectiveOp>(f.records[k].op)) + ", " +
                            std::to_string(f.records[k].bytes) + " B)");
    }
  }
  if (now() < f.ready_at) return false;
  impl_->inflight.erase(it);
  return true;
}

double MpiBackend::now() const { return impl_->wall() - impl_->t0; }

void MpiBackend::synchronize() {
#if TRAINSIM_HAVE_MPI
  if (impl_->mpi) {
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    impl_->wait(&req, 1, "rank " + std::to_string(rank_) + " at the replay's start");
  }
#endif
  impl_->t0 = impl_->wall();
}

std::vector<std::string> MpiBackend::gather(const std::string& mine) {
  if (size_ == 1) return {mine};
#if TRAINSIM_HAVE_MPI
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_), 0);
  MPI_Request req;
  MPI_Igather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
  impl_->wait(&req, 1, "gathering the timelines");
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[static_cast<size_t>(r)] = total;
      total += lens[static_cast<size_t>(r)];
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Igatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD, &req);
  impl_->wait(&req, 1, "gathering the timelines");
  std::vector<std::string> out;
  if (rank_ == 0)
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                               static_cast<size_t>(lens[static_cast<size_t>(r)])));
  return out;
#else
  return {mine};
#endif
}

}  // namespace trainsim::validator::replay
