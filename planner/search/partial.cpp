#include "planner/search/partial.hpp"

#include <algorithm>

#include "planner/search/distributed.hpp"
#include "planner/search/pareto.hpp"

namespace trainsim::planner::search::shard {

bool faster(const Entry& a, const Entry& b) {
  if (a.score != b.score) return a.score < b.score;
  return a.c < b.c;
}

void keep_best(std::vector<Entry>& v, size_t n) {
  std::sort(v.begin(), v.end(), faster);
  if (v.size() > n) v.resize(n);
}

std::vector<Entry> front_of(const std::vector<Entry>& v) {
  std::vector<TimeMemory> pts;
  pts.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) pts.push_back({v[i].e.iteration_s, v[i].e.peak_memory_bytes, i});
  std::vector<Entry> out;
  for (const size_t i : pareto_time_memory(pts, [&](size_t a, size_t b) { return v[a].c < v[b].c; }))
    out.push_back(v[i]);
  return out;
}

std::string serialize(const Partial& p) {
  std::string out;
  put(out, p.valid);
  put(out, p.feasible);
  put(out, p.has_smallest);
  put(out, p.smallest);
  put<uint64_t>(out, p.rejected.size());
  for (const auto& [k, n] : p.rejected) {
    put_string(out, k);
    put(out, n);
  }
  for (const auto* list : {&p.best, &p.front}) {
    put<uint64_t>(out, list->size());
    for (const Entry& e : *list) put(out, e);
  }
  return out;
}

Partial deserialize(const std::string& in) {
  Partial p;
  size_t pos = 0;
  p.valid = take<int64_t>(in, pos);
  p.feasible = take<int64_t>(in, pos);
  p.has_smallest = take<bool>(in, pos);
  p.smallest = take<Entry>(in, pos);
  const auto nr = take<uint64_t>(in, pos);
  for (uint64_t i = 0; i < nr; ++i) {
    std::string k = take_string(in, pos);
    p.rejected[k] += take<int64_t>(in, pos);
  }
  for (auto* list : {&p.best, &p.front}) {
    const auto n = take<uint64_t>(in, pos);
    for (uint64_t i = 0; i < n; ++i) list->push_back(take<Entry>(in, pos));
  }
  return p;
}

bool smaller(const Entry& a, const Entry& b) {
  if (a.e.peak_memory_bytes != b.e.peak_memory_bytes) return a.e.peak_memory_bytes < b.e.peak_memory_bytes;
  return a.c < b.c;
}

void merge(Partial& into, Partial&& from, size_t keep) {
  if (from.has_smallest && (!into.has_smallest || smaller(from.smallest, into.smallest))) {
    into.smallest = from.smallest;
    into.has_smallest = true;
  }
  into.valid += from.valid;
  into.feasible += from.feasible;
  for (const auto& [k, n] : from.rejected) into.rejected[k] += n;
  into.best.insert(into.best.end(), from.best.begin(), from.best.end());
  keep_best(into.best, keep);
  into.front.insert(into.front.end(), from.front.begin(), from.front.end());
  into.front = front_of(into.front);
}

}  // namespace trainsim::planner::search::shard
