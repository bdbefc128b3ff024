#include "validator/replay/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "validator/replay/rank_state.hpp"

namespace trainsim::validator::replay {

namespace {
template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
T take(const std::string& in, size_t& pos) {
  T v{};
  if (pos + sizeof(T) > in.size()) throw ReplayError("a rank's timeline arrived truncated");
  std::memcpy(&v, in.data() + pos, sizeof(T));
  pos += sizeof(T);
  return v;
}
}  // namespace

std::string RankTimeline::serialize() const {
  std::string out;
  put<int32_t>(out, rank);
  put<uint64_t>(out, start.size());
  for (size_t i = 0; i < start.size(); ++i) {
    put<double>(out, start[i]);
    put<double>(out, end[i]);
  }
  put<double>(out, iteration);
  return out;
}

RankTimeline RankTimeline::deserialize(const std::string& bytes) {
  RankTimeline t;
  size_t pos = 0;
  t.rank = take<int32_t>(bytes, pos);
  const auto n = take<uint64_t>(bytes, pos);
  if (n > bytes.size()) throw ReplayError("a rank's timeline arrived truncated");
  t.start.resize(n);
  t.end.resize(n);
  for (size_t i = 0; i < n; ++i) {
    t.start[i] = take<double>(bytes, pos);
    t.end[i] = take<double>(bytes, pos);
  }
  t.iteration = take<double>(bytes, pos);
  return t;
}

RankTimeline execute(const RankProgram& program, Backend& backend, const ReplayOptions& options) {
  RankState state(program, backend.orders_on_device());
  RankTimeline t;
  t.rank = program.rank;
  t.start.assign(program.ops.size(), 0.0);
  t.end.assign(program.ops.size(), 0.0);
  std::vector<uint32_t> ready, running;
  backend.synchronize();
  double last_progress = backend.now();
  while (!state.finished()) {
    bool progress = false;
    state.ready(ready);
    for (const uint32_t i : ready) {
      state.issued(i);
      t.start[i] = backend.now();
      backend.start(i, program.ops[i], options.scale);
      running.push_back(i);
      progress = true;
    }
    for (size_t k = 0; k < running.size();) {
      const uint32_t i = running[k];
      if (backend.done(i)) {
        state.completed(i);
        t.end[i] = backend.now();
        backend.device_times(i, t.start[i], t.end[i]);
        running[k] = running.back();
        running.pop_back();
        progress = true;
      } else {
        ++k;
      }
    }
    const double now = backend.now();
    if (progress) {
      last_progress = now;
      continue;
    }
    if (now - last_progress > options.timeout_s) {
      std::string what = "rank " + std::to_string(program.rank) + " made no progress for " +
                         std::to_string(static_cast<int>(options.timeout_s)) + " s after " +
                         std::to_string(state.completed_count()) + " of " + std::to_string(program.ops.size()) +
                         " ops, waiting on";
      const auto waiting = state.waiting();
      for (size_t k = 0; k < waiting.size() && k < 3; ++k) {
        const Op& op = program.ops[waiting[k]];
        what += std::string(k ? ";" : "") + " " + to_string(op.kind) + " \"" + op.name + "\"";
        if (op.kind == OpKind::kSend) what += " to " + std::to_string(op.peer);
        if (op.kind == OpKind::kRecv) what += " from " + std::to_string(op.peer);
      }
      throw ReplayError(what + " (a deadlock, or a partner that never issued its side)");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  const double s = options.scale > 0 ? options.scale : 1.0;
  for (size_t i = 0; i < t.start.size(); ++i) {
    t.start[i] /= s;
    t.end[i] /= s;
    t.iteration = std::max(t.iteration, t.end[i]);
  }
  return t;
}

}  // namespace trainsim::validator::replay
