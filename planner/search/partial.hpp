#pragma once
// What one planner process's share of the search found: its best estimated entries, its
// time-memory front, its counts and rejections; how shares merge; and their byte form for the MPI
// gather (the same binary on every rank). search.cpp runs the search over them.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "planner/search/candidate.hpp"
#include "planner/search/estimator.hpp"

namespace trainsim::planner::search::shard {

struct Entry {
  Candidate c;
  Estimate e;
  double score = 0;  // what the ranking minimises: the estimated iteration time, or SearchOptions::score
};

// Best first: score, then the candidate's key (a total order).
bool faster(const Entry& a, const Entry& b);

// What one process found: counts, its best entries and its memory front.
struct Partial {
  int64_t valid = 0, feasible = 0;
  Entry smallest{{}, {}};  // the valid candidate needing the least memory (when none fits)
  bool has_smallest = false;
  std::map<std::string, int64_t> rejected;
  std::vector<Entry> best, front;
};

// Less memory first, then the candidate's key.
bool smaller(const Entry& a, const Entry& b);
// Sorts `v` best first and keeps the first `n`.
void keep_best(std::vector<Entry>& v, size_t n);
// The time-memory Pareto front of `v`.
std::vector<Entry> front_of(const std::vector<Entry>& v);
// Adds `from` to `into`, keeping the best `keep` entries and the merged front.
void merge(Partial& into, Partial&& from, size_t keep);

std::string serialize(const Partial& p);
Partial deserialize(const std::string& in);

}  // namespace trainsim::planner::search::shard
