#include "sim/task/task_graph.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace trainsim::sim::task {

const char* to_string(TaskKind k) {
  switch (k) {
    case TaskKind::kCompute: return "compute";
    case TaskKind::kCollective: return "collective";
    case TaskKind::kP2P: return "p2p";
    case TaskKind::kMemory: return "memory";
  }
  return "?";
}

LabelId TaskGraph::intern(const std::string& label) {
  for (size_t i = 0; i < labels_.size(); ++i)
    if (labels_[i] == label) return static_cast<LabelId>(i);
  TRAINSIM_ASSERT(labels_.size() < 65535, "too many labels");
  labels_.push_back(label);
  return static_cast<LabelId>(labels_.size() - 1);
}

StreamId TaskGraph::add_stream(int32_t rank, const std::string& label) {
  TRAINSIM_ASSERT(!finalized_, "graph is finalized");
  streams_.push_back(StreamInfo{rank, intern(label)});
  stream_tasks_.emplace_back();
  return static_cast<StreamId>(streams_.size() - 1);
}

void TaskGraph::reserve(size_t tasks, size_t edges) {
  tasks_.reserve(tasks);
  stream_refs_.reserve(tasks);
  edges_.reserve(edges);
}

TaskIndex TaskGraph::add(const TaskSpec& spec, StreamId stream) {
  TRAINSIM_ASSERT(!finalized_, "graph is finalized");
  TRAINSIM_ASSERT(stream < streams_.size(), "unknown stream ", stream);
  const auto idx = static_cast<TaskIndex>(tasks_.size());
  Task t;
  t.spec = spec;
  t.first_stream = static_cast<uint32_t>(stream_refs_.size());
  t.n_streams = 1;
  stream_refs_.push_back(stream);
  stream_tasks_[stream].push_back(idx);
  tasks_.push_back(t);
  return idx;
}

TaskIndex TaskGraph::add(const TaskSpec& spec, const std::vector<StreamId>& streams) {
  TRAINSIM_ASSERT(!streams.empty(), "task without a stream");
  TRAINSIM_ASSERT(streams.size() < 65535, "too many streams for one task");
  const TaskIndex idx = add(spec, streams.front());
  for (size_t k = 1; k < streams.size(); ++k) {
    TRAINSIM_ASSERT(streams[k] < streams_.size(), "unknown stream ", streams[k]);
    stream_refs_.push_back(streams[k]);
    stream_tasks_[streams[k]].push_back(idx);
  }
  tasks_[idx].n_streams = static_cast<uint16_t>(streams.size());
  return idx;
}

void TaskGraph::add_dep(TaskIndex before, TaskIndex after) {
  TRAINSIM_ASSERT(!finalized_, "graph is finalized");
  TRAINSIM_ASSERT(before < tasks_.size() && after < tasks_.size(), "dependency on unknown task");
  TRAINSIM_ASSERT(before != after, "task depends on itself");
  edges_.emplace_back(before, after);
  ++tasks_[after].n_deps;
}

void TaskGraph::finalize() {
  if (finalized_) return;
  BigVector<uint32_t> count(tasks_.size() + 1, 0);
  for (const auto& e : edges_) ++count[e.first + 1];
  for (size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
  succ_.resize(edges_.size());
  BigVector<uint32_t> fill(count.begin(), count.end() - 1);
  for (const auto& e : edges_) succ_[fill[e.first]++] = e.second;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    tasks_[i].succ_begin = count[i];
    tasks_[i].succ_end = count[i + 1];
  }
  edges_.clear();
  edges_.shrink_to_fit();
  finalized_ = true;
}

std::string TaskGraph::display_name(TaskIndex i) const {
  const TaskSpec& s = tasks_[i].spec;
  std::string out = labels_[s.label];
  if (s.microbatch >= 0) out += " mb" + std::to_string(s.microbatch);
  if (s.layer >= 0) out += " L" + std::to_string(s.layer);
  return out;
}

}  // namespace trainsim::sim::task
