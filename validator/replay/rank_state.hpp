#pragma once
// The rules by which one rank issues its ops, shared by the real replay (executor.hpp) and the
// dry run that checks a program for deadlocks (check.hpp). An op may be issued when
//   - it is the next op of its stream and the stream's previous op has completed (a stream runs
//     one op at a time, in order, like a CUDA stream);
//   - every op it depends on has completed;
//   - it is this rank's next collective on its communicator, or its next send to (receive from)
//     its peer: NCCL matches a communicator's collectives, and a pair's transfers, in the order
//     they are issued, so every rank issues them in program order.

#include <cstdint>
#include <map>
#include <vector>

#include "validator/replay/program.hpp"

namespace trainsim::validator::replay {

class RankState {
 public:
  // `issue_ahead`: an op may be issued once its stream's previous op and its dependencies are
  // issued (a device that orders ops itself, backend.hpp); otherwise they must have completed.
  explicit RankState(const RankProgram& program, bool issue_ahead = false);

  // The ops that may be issued now (each returned until issued() is called for it).
  void ready(std::vector<uint32_t>& out) const;
  void issued(uint32_t op);
  void completed(uint32_t op);
  bool is_issued(uint32_t op) const { return issued_[op] != 0; }
  bool is_completed(uint32_t op) const { return completed_[op] != 0; }
  bool finished() const { return n_completed_ == issued_.size(); }
  size_t completed_count() const { return n_completed_; }
  // The ops each stream waits on (its head, not issued yet) and those issued but not completed:
  // what an error names when the rank stops making progress.
  std::vector<uint32_t> waiting() const;
  const RankProgram& program() const { return program_; }

 private:
  // A channel: ops that must be issued in program order (a communicator, or one direction of a pair).
  struct Channel {
    std::vector<uint32_t> ops;
    size_t next = 0;
  };
  Channel* channel_of(uint32_t op);
  const Channel* channel_of(uint32_t op) const;

  const RankProgram& program_;
  bool ahead_;
  std::vector<std::vector<uint32_t>> stream_ops_;  // per stream, in program order
  std::vector<size_t> stream_head_;                // per stream: first op not issued
  std::vector<uint8_t> issued_, completed_;
  size_t n_completed_ = 0;
  std::map<int64_t, Channel> channels_;  // key: group, or (peer, direction)
  std::vector<int64_t> channel_key_;     // per op, or -1
};

}  // namespace trainsim::validator::replay
