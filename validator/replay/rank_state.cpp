#include "validator/replay/rank_state.hpp"

#include <limits>

#include "sim/error.hpp"

namespace trainsim::validator::replay {

namespace {
// Channel keys: communicator g -> g; sends to peer p -> -(2p + 2); receives from p -> -(2p + 3).
int64_t key_of(const Op& op) {
  switch (op.kind) {
    case OpKind::kCollective: return op.group;
    case OpKind::kSend: return -(2 * static_cast<int64_t>(op.peer) + 2);
    case OpKind::kRecv: return -(2 * static_cast<int64_t>(op.peer) + 3);
    case OpKind::kCompute: break;
  }
  return std::numeric_limits<int64_t>::max();
}
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
}  // namespace

RankState::RankState(const RankProgram& program, bool issue_ahead)
    : program_(program),
      ahead_(issue_ahead),
      stream_ops_(program.streams.size()),
      stream_head_(program.streams.size(), 0),
      issued_(program.ops.size(), 0),
      completed_(program.ops.size(), 0),
      channel_key_(program.ops.size(), kNone) {
  for (uint32_t i = 0; i < program.ops.size(); ++i) {
    const Op& op = program.ops[i];
    TRAINSIM_ASSERT(op.stream < stream_ops_.size(), "op ", op.name, " on an unknown stream");
    stream_ops_[op.stream].push_back(i);
    channel_key_[i] = key_of(op);
    if (channel_key_[i] != kNone) channels_[channel_key_[i]].ops.push_back(i);
  }
}

RankState::Channel* RankState::channel_of(uint32_t op) {
  return channel_key_[op] == kNone ? nullptr : &channels_.at(channel_key_[op]);
}
const RankState::Channel* RankState::channel_of(uint32_t op) const {
  return channel_key_[op] == kNone ? nullptr : &channels_.at(channel_key_[op]);
}

void RankState::ready(std::vector<uint32_t>& out) const {
  out.clear();
  for (size_t s = 0; s < stream_ops_.size(); ++s) {
    const size_t h = stream_head_[s];
    if (h >= stream_ops_[s].size()) continue;
    if (!ahead_ && h > 0 && !completed_[stream_ops_[s][h - 1]]) continue;  // the stream is busy
    const uint32_t i = stream_ops_[s][h];
    bool deps_done = true;
    for (const uint32_t d : program_.ops[i].deps) deps_done = deps_done && (completed_[d] || (ahead_ && issued_[d]));
    if (!deps_done) continue;
    const Channel* c = channel_of(i);
    if (c && c->ops[c->next] != i) continue;  // an earlier op of its channel is not issued yet
    out.push_back(i);
  }
}

void RankState::issued(uint32_t op) {
  TRAINSIM_ASSERT(!issued_[op], "op issued twice");
  issued_[op] = 1;
  ++stream_head_[program_.ops[op].stream];
  if (Channel* c = channel_of(op)) ++c->next;
}

void RankState::completed(uint32_t op) {
  TRAINSIM_ASSERT(issued_[op] && !completed_[op], "op completed before it was issued, or twice");
  completed_[op] = 1;
  ++n_completed_;
}

std::vector<uint32_t> RankState::waiting() const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < issued_.size(); ++i)
    if (issued_[i] && !completed_[i]) out.push_back(i);
  for (size_t s = 0; s < stream_ops_.size(); ++s)
    if (stream_head_[s] < stream_ops_[s].size() && !issued_[stream_ops_[s][stream_head_[s]]])
      out.push_back(stream_ops_[s][stream_head_[s]]);
  return out;
}

}  // namespace trainsim::validator::replay
