#include "validator/replay/check.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "validator/replay/rank_state.hpp"

namespace trainsim::validator::replay {

namespace {

constexpr size_t kMaxPerKind = 5;  // problems reported per kind (the rest are counted)

std::string op_text(const Program& p, int32_t rank, uint32_t i) {
  const Op& op = p.ranks[static_cast<size_t>(rank)].ops[i];
  std::string s = "rank " + std::to_string(rank) + " " + to_string(op.kind) + " \"" + op.name + "\"";
  if (op.kind == OpKind::kSend) s += " to " + std::to_string(op.peer);
  if (op.kind == OpKind::kRecv) s += " from " + std::to_string(op.peer);
  if (op.kind == OpKind::kCollective) s += std::string(" ") + models::collectives::to_string(op.collective);
  return s;
}

struct Problems {
  std::vector<std::string>& out;
  std::map<std::string, size_t> per_kind;
  void add(const std::string& kind, const std::string& text) {
    if (per_kind[kind]++ < kMaxPerKind) out.push_back(kind + ": " + text);
  }
  void close() {
    for (const auto& [kind, n] : per_kind)
      if (n > kMaxPerKind) out.push_back(kind + ": " + std::to_string(n - kMaxPerKind) + " more");
  }
};

// Sends against receives: same task, bytes, and each pair's order.
void check_transfers(const Program& p, Problems& pr, CheckReport& rep) {
  // (sender, receiver) -> tasks in the sender's order, and in the receiver's.
  std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<uint32_t, int64_t>>> sent, received;
  for (const auto& rp : p.ranks)
    for (const Op& op : rp.ops) {
      if (op.kind == OpKind::kSend) sent[{rp.rank, op.peer}].emplace_back(op.task, op.bytes);
      if (op.kind == OpKind::kRecv) received[{op.peer, rp.rank}].emplace_back(op.task, op.bytes);
    }
  std::set<std::pair<int32_t, int32_t>> pairs;
  for (const auto& kv : sent) pairs.insert(kv.first);
  for (const auto& kv : received) pairs.insert(kv.first);
  for (const auto& pair : pairs) {
    const auto& s = sent[pair];
    const auto& r = received[pair];
    rep.transfers += static_cast<int64_t>(s.size());
    const std::string who = std::to_string(pair.first) + " -> " + std::to_string(pair.second);
    if (s.size() != r.size()) {
      pr.add("unmatched transfer",
             who + ": " + std::to_string(s.size()) + " sends but " + std::to_string(r.size()) + " receives");
      continue;
    }
    for (size_t k = 0; k < s.size(); ++k) {
      if (s[k].first != r[k].first) {
        pr.add("transfer order", who + ": transfer " + std::to_string(k) + " is task " + std::to_string(s[k].first) +
                                     " on the sender but task " + std::to_string(r[k].first) + " on the receiver");
        break;
      }
      if (s[k].second != r[k].second || s[k].second <= 0)
        pr.add("transfer bytes", who + ": task " + std::to_string(s[k].first) + " sends " +
                                     std::to_string(s[k].second) + " B, receives " + std::to_string(r[k].second) +
                                     " B");
    }
  }
}

// Each communicator's collectives: every member, same order, same op and bytes.
void check_collectives(const Program& p, Problems& pr, CheckReport& rep) {
  using Call = std::tuple<uint32_t, int, int64_t>;                // task, op, bytes
  std::map<int32_t, std::map<int32_t, std::vector<Call>>> calls;  // group -> rank -> calls
  for (const auto& rp : p.ranks)
    for (const Op& op : rp.ops) {
      if (op.kind != OpKind::kCollective) continue;
      const auto& members = p.groups.at(static_cast<size_t>(op.group));
      if (std::find(members.begin(), members.end(), rp.rank) == members.end())
        pr.add("collective membership", op_text(p, rp.rank, static_cast<uint32_t>(&op - rp.ops.data())) +
                                            " is not in its communicator " + std::to_string(op.group));
      calls[op.group][rp.rank].emplace_back(op.task, static_cast<int>(op.collective), op.bytes);
    }
  rep.communicators = static_cast<int64_t>(calls.size());
  for (const auto& [group, by_rank] : calls) {
    const auto& members = p.groups.at(static_cast<size_t>(group));
    const int32_t first = members.front();
    const auto it = by_rank.find(first);
    const std::vector<Call> none;
    const std::vector<Call>& ref = it == by_rank.end() ? none : it->second;
    rep.collectives += static_cast<int64_t>(ref.size());
    for (const int32_t m : members) {
      const auto mit = by_rank.find(m);
      const std::vector<Call>& mine = mit == by_rank.end() ? none : mit->second;
      const std::string who = "communicator " + std::to_string(group) + ", rank " + std::to_string(m);
      if (mine.size() != ref.size()) {
        pr.add("collective count", who + " issues " + std::to_string(mine.size()) + " collectives, rank " +
                                       std::to_string(first) + " " + std::to_string(ref.size()));
        continue;
      }
      for (size_t k = 0; k < mine.size(); ++k)
        if (mine[k] != ref[k]) {
          pr.add("collective order", who + ": call " + std::to_string(k) + " is task " +
                                         std::to_string(std::get<0>(mine[k])) + ", on rank " + std::to_string(first) +
                                         " task " + std::to_string(std::get<0>(ref[k])));
          break;
        }
    }
  }
}

// The dry run: logical time, every op as soon as the issue rules allow.
void dry_run(const Program& p, Problems& pr) {
  std::vector<RankState> states;
  states.reserve(p.ranks.size());
  for (const auto& rp : p.ranks) states.emplace_back(rp);
  // A collective's members so far, by (group, its index on the group); a transfer's ends, by task.
  std::map<std::pair<int32_t, int64_t>, std::vector<std::pair<int32_t, uint32_t>>> coll;
  std::map<uint32_t, std::vector<std::pair<int32_t, uint32_t>>> xfer;
  std::vector<std::map<int32_t, int64_t>> group_calls(p.ranks.size());
  std::vector<uint32_t> ready;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t r = 0; r < states.size(); ++r) {
      auto& st = states[r];
      st.ready(ready);
      for (const uint32_t i : ready) {
        const Op& op = p.ranks[r].ops[i];
        st.issued(i);
        progress = true;
        const auto rank = static_cast<int32_t>(r);
        if (op.kind == OpKind::kCompute) {
          st.completed(i);
        } else if (op.kind == OpKind::kCollective) {
          auto& members = coll[{op.group, group_calls[r][op.group]++}];
          members.emplace_back(rank, i);
          if (members.size() == p.groups[static_cast<size_t>(op.group)].size())
            for (const auto& [mr, mi] : members) states[static_cast<size_t>(mr)].completed(mi);
        } else {
          auto& ends = xfer[op.task];
          ends.emplace_back(rank, i);
          if (ends.size() == 2)
            for (const auto& [er, ei] : ends) states[static_cast<size_t>(er)].completed(ei);
        }
      }
    }
  }
  for (size_t r = 0; r < states.size(); ++r) {
    if (states[r].finished()) continue;
    std::string text = "rank " + std::to_string(r) + " stops after " + std::to_string(states[r].completed_count()) +
                       " of " + std::to_string(p.ranks[r].ops.size()) + " ops, waiting on";
    const auto waiting = states[r].waiting();
    for (size_t k = 0; k < waiting.size() && k < 3; ++k)
      text += (k ? "; " : " ") + op_text(p, static_cast<int32_t>(r), waiting[k]);
    pr.add("deadlock", text);
  }
}

}  // namespace

CheckReport check_program(const Program& p) {
  CheckReport rep;
  Problems pr{rep.problems, {}};
  for (const auto& rp : p.ranks) rep.ops += static_cast<int64_t>(rp.ops.size());
  if (p.cross_rank_deps > 0)
    pr.add("cross-rank dependency", std::to_string(p.cross_rank_deps) +
                                        " dependencies link tasks that share no rank and no transfer carries them");
  check_transfers(p, pr, rep);
  check_collectives(p, pr, rep);
  dry_run(p, pr);
  pr.close();
  return rep;
}

}  // namespace trainsim::validator::replay
