#pragma once
// Emits the tasks of one pipeline stage: compute tasks on each member's compute stream,
// collectives shared by the members of each communicator, point-to-point transfers (pipeline
// sends, context-parallel ring steps) and host copies. A Handle names, per member of the stage
// (one rank slot in representative fidelity), the task that stands for an op.

#include <cstdint>
#include <initializer_list>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "models/llm/layer_ops.hpp"
#include "models/workload/dag/communicators.hpp"
#include "sim/error.hpp"

namespace trainsim::models::workload {

// Inline storage: in representative fidelity a stage has one member, so no allocation per task.
using Handle = boost::container::small_vector<sim::task::TaskIndex, 2>;

// What a deferred weight-gradient task needs (split schedules run it in the W op).
struct PendingWgrad {
  Handle dgrad, input;
  llm::Cost cost;  // the weight-gradient GEMMs
};

class StageEmitter {
 public:
  StageEmitter(Workload& w, Communicators& comms, std::vector<uint32_t> members, sim::Time dispatch)
      : w_(w), g_(w.graph), comms_(comms), members_(std::move(members)), dispatch_(dispatch) {}

  size_t size() const { return members_.size(); }
  const std::vector<uint32_t>& members() const { return members_; }

  // Records the first compute handle emitted between begin_capture() and end_capture().
  void begin_capture() {
    capturing_ = true;
    captured_.clear();
  }
  Handle end_capture() {
    capturing_ = false;
    return captured_;
  }

  // CUDA graphs (job/cuda_graphs.hpp): the compute tasks between begin_graph() and end_graph()
  // replay one captured graph, whose launch costs the host one kernel's dispatch (charged to the
  // first; engineering estimate: cudaGraphLaunch is one host API call where eager issues one per
  // kernel, NVIDIA Developer Blog 'Getting Started with CUDA Graphs', A. Gray 2019, the source of
  // the GPU presets' kernel_launch); under whole_iteration_graph(true) every compute task is
  // captured (the iteration's one launch is negligible) until it is turned off for the optimizer.
  void begin_graph() {
    TRAINSIM_ASSERT(!graph_, "CUDA graph regions do not nest");
    graph_ = true;
    launched_ = false;
  }
  void end_graph() { graph_ = false; }
  void whole_iteration_graph(bool on) { whole_graph_ = on; }

  // The next compute task also waits for `h` (a blocking pipeline send, a prefetched copy).
  void gate_next_compute(const Handle& h) {
    if (!h.empty()) gates_.push_back(h);
  }

  Handle compute(sim::task::LabelId label, const llm::Cost& c, Category cat, int mb, int layer,
                 std::initializer_list<const Handle*> deps);
  // One collective per `kind` communicator among the members, on that kind's stream.
  Handle collective(sim::task::LabelId label, GroupKind kind, collectives::CollectiveOp op, sim::Bytes bytes, int mb,
                    int layer, std::initializer_list<const Handle*> deps);
  // One transfer per member to the GPU `peer(member slot)` gives (from it when `incoming`), on
  // stream `stream_of(rank)`. `extra` is a fixed cost added to the transfer (the pipeline
  // receiver's re-gather).
  template <typename Peer, typename StreamOf>
  Handle send(sim::task::LabelId label, Category cat, sim::Bytes bytes, sim::Time extra, int mb, Peer peer,
              StreamOf stream_of_rank, std::initializer_list<const Handle*> deps, bool incoming = false) {
    Handle h(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) {
      const RankInfo& r = w_.ranks[members_[i]];
      const int32_t dst = peer(r);
      sim::task::TaskSpec s;
      s.kind = sim::task::TaskKind::kP2P;
      s.label = label;
      s.category = static_cast<uint8_t>(cat);
      s.microbatch = mb;
      s.duration = comms_.model().p2p(bytes, comms_.crosses_node(r.rank, dst)) + extra;
      s.bytes = bytes;
      h[i] = add(s, stream_of_rank(r), members_[i]);
      const std::vector<int32_t> pair =
          incoming ? std::vector<int32_t>{dst, r.rank} : std::vector<int32_t>{r.rank, dst};
      comms_.describe(h[i], collectives::CollectiveOp::kSendRecv, bytes, comms_.group_id(pair), extra);
    }
    link(deps, h);
    return h;
  }
  // A host <-> device copy or host-side work of fixed duration on each member's d2h stream
  // (`to_host`) or h2d stream.
  Handle host(bool to_host, sim::task::LabelId label, sim::Time duration, sim::Bytes bytes, int mb,
              std::initializer_list<const Handle*> deps);

  void link(std::initializer_list<const Handle*> deps, const Handle& to) {
    for (const Handle* d : deps) link(*d, to);
  }
  void link(const Handle& from, const Handle& to);
  void memory(const Handle& h, bool at_start, int64_t bytes);

 private:
  template <typename Streams>
  sim::task::TaskIndex add(const sim::task::TaskSpec& s, const Streams& streams, uint32_t slot) {
    const sim::task::TaskIndex idx = g_.add(s, streams);
    w_.task_rank_slot.push_back(slot);
    return idx;
  }

  Workload& w_;
  sim::task::TaskGraph& g_;
  Communicators& comms_;
  std::vector<uint32_t> members_;
  sim::Time dispatch_;
  std::vector<std::pair<sim::task::TaskIndex, sim::task::TaskIndex>> pairs_;
  std::vector<sim::task::StreamId> streams_;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> runs_;  // (group id, member indices)
  std::unordered_map<uint32_t, uint32_t> run_of_;
  bool capturing_ = false;
  bool graph_ = false, launched_ = false, whole_graph_ = false;
  Handle captured_;
  std::vector<Handle> gates_;
};

}  // namespace trainsim::models::workload
