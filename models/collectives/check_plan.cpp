// check_plan: the symbolic replay of a plan, as a sequence of named checks.
#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_map>

#include "models/collectives/collective.hpp"
#include "models/collectives/registry_internal.hpp"
#include "sim/error.hpp"

namespace trainsim::models::collectives {

using internal::copy_key;

namespace {

// Sets of contributing ranks as bit words.
using Bits = std::vector<uint64_t>;

std::string describe(const uint64_t* bits, int32_t n) {
  std::ostringstream os;
  os << "{";
  int32_t shown = 0;
  for (int32_t r = 0; r < n; ++r)
    if ((bits[static_cast<size_t>(r) / 64] >> (r % 64)) & 1) {
      if (shown++ > 0) os << ",";
      if (shown > 16) {
        os << "...";
        break;
      }
      os << r;
    }
  os << "}";
  return os.str();
}

// Access kinds on one copy of a chunk, for the hazard check.
enum class Access : uint8_t { kRead, kReduce, kOverwrite };

// The chunk layout: chunk_bytes matches chunks, adds up to the op's buffer, and the chunk count
// fits the op's ownership rule.
void check_layout(const CollectiveSpec& spec, int32_t n, const CollectivePlan& plan) {
  const CollectiveOp op = spec.op;
  TRAINSIM_ASSERT(plan.ranks == n, "plan made for ", plan.ranks, " ranks, group has ", n);
  TRAINSIM_ASSERT(plan.chunks >= 1 && plan.chunk_bytes.size() == static_cast<size_t>(plan.chunks), "chunk_bytes has ",
                  plan.chunk_bytes.size(), " entries for ", plan.chunks, " chunks");
  sim::Bytes total;
  for (sim::Bytes b : plan.chunk_bytes) total += b;
  const sim::Bytes want = op == CollectiveOp::kAllToAll ? spec.bytes * n : spec.bytes;
  TRAINSIM_ASSERT(total == want, "chunks add up to ", total.count(), " bytes, the buffer layout needs ", want.count());
  const int32_t c = plan.chunks;
  if (op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter)
    TRAINSIM_ASSERT(c % n == 0, "chunks must be a multiple of n for ", to_string(op));
  if (op == CollectiveOp::kAllToAll) TRAINSIM_ASSERT(c % (n * n) == 0, "chunks must be a multiple of n*n");
  if (op == CollectiveOp::kSendRecv) TRAINSIM_ASSERT(n == 2, "send/recv needs a group of 2");
}

// Who can hold a copy of a chunk: ranks 0..n-1, then the switches the plan uses.
struct Holders {
  std::map<int32_t, int32_t> of_switch;  // switch pseudo-rank -> holder index
  int32_t count = 0;
  size_t transfers = 0;  // in the whole plan
  int32_t operator()(int32_t end) const { return is_switch(end) ? of_switch.at(end) : end; }
};

// One transfer's endpoints (in the group, switches on the server of the rank they reach), chunk
// and size. Records the switches it uses in `holders`.
void check_transfer(const Group& group, const CollectivePlan& plan, size_t s, const Transfer& t, Holders& holders) {
  const int32_t n = group.size;
  for (int32_t end : {t.src, t.dst}) {
    if (!is_switch(end)) {
      TRAINSIM_ASSERT(end < n, "step ", s, ": rank ", end, " is outside the group of ", n);
      continue;
    }
    bool served = false;
    for (int32_t r = 0; r < n; ++r) served = served || group.node(r) == switch_node(end);
    TRAINSIM_ASSERT(served, "step ", s, ": switch ", end, " serves no rank of the group");
    holders.of_switch.emplace(end, 0);
  }
  TRAINSIM_ASSERT(t.src != t.dst, "step ", s, ": rank ", t.src, " sends to itself");
  TRAINSIM_ASSERT(!(is_switch(t.src) && is_switch(t.dst)), "step ", s, ": switch-to-switch transfer");
  if (is_switch(t.src))
    TRAINSIM_ASSERT(group.node(t.dst) == switch_node(t.src), "step ", s, ": switch ", t.src, " reaches rank ", t.dst,
                    " on another server");
  if (is_switch(t.dst))
    TRAINSIM_ASSERT(group.node(t.src) == switch_node(t.dst), "step ", s, ": rank ", t.src, " reaches switch ", t.dst,
                    " on another server");
  TRAINSIM_ASSERT(t.chunk >= 0 && t.chunk < plan.chunks, "step ", s, ": chunk ", t.chunk, " out of range");
  TRAINSIM_ASSERT(t.bytes == plan.chunk_bytes[static_cast<size_t>(t.chunk)], "step ", s, ": transfer of chunk ",
                  t.chunk, " moves ", t.bytes.count(), " bytes, the chunk has ",
                  plan.chunk_bytes[static_cast<size_t>(t.chunk)].count());
}

// Checks every transfer, and that in_network_reduction says whether a switch is used; numbers
// the holders.
Holders check_transfers(const Group& group, const CollectivePlan& plan) {
  Holders holders;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (const Transfer& t : plan.steps[s].transfers) {
      ++holders.transfers;
      check_transfer(group, plan, s, t, holders);
    }
  const bool uses_switch = !holders.of_switch.empty();
  TRAINSIM_ASSERT(uses_switch == plan.in_network_reduction, "in_network_reduction is ", plan.in_network_reduction,
                  " but the plan ", uses_switch ? "uses" : "does not use", " a switch");
  holders.count = group.size;
  for (auto& [sw, h] : holders.of_switch) h = holders.count++;
  return holders;
}

// The contributing ranks held in every copy of every chunk, as bit sets.
class Contents {
 public:
  Contents(int32_t ranks, int32_t holders, int32_t chunks)
      : n_(ranks), chunks_(chunks), words_((static_cast<size_t>(ranks) + 63) / 64) {
    const size_t cells = static_cast<size_t>(holders) * static_cast<size_t>(chunks);
    TRAINSIM_ASSERT(cells * words_ <= (size_t{1} << 27), "plan too large for check_plan (", cells, " chunk copies)");
    state_.assign(cells * words_, 0);
  }
  size_t words() const { return words_; }
  uint64_t* cell(int32_t h, int32_t k) {
    return state_.data() + (static_cast<size_t>(h) * static_cast<size_t>(chunks_) + static_cast<size_t>(k)) * words_;
  }
  void set_one(int32_t h, int32_t k, int32_t r) { cell(h, k)[r / 64] |= uint64_t{1} << (r % 64); }
  // Every rank starts with its own contribution to the chunks it owns.
  void set_initial(const CollectiveSpec& spec) {
    const CollectiveOp op = spec.op;
    for (int32_t r = 0; r < n_; ++r)
      for (int32_t k = 0; k < chunks_; ++k) {
        bool owns = true;
        if (op == CollectiveOp::kAllGather) owns = k % n_ == r;
        if (op == CollectiveOp::kAllToAll) owns = (k / n_) % n_ == r;
        if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kSendRecv) owns = r == spec.root;
        if (owns) set_one(r, k, r);
      }
  }

 private:
  int32_t n_;
  int32_t chunks_;
  size_t words_;
  Bits state_;
};

// Runs step `s`. A step reads the state at its start; a copy may not be both read and written in
// one step, nor overwritten together with another write; a reduction may not add a contribution
// twice. `data` is scratch space.
void replay_step(const std::vector<Transfer>& ts, size_t s, int32_t n, const Holders& holder, Contents& contents,
                 Bits& data) {
  const size_t words = contents.words();
  std::unordered_map<int64_t, uint8_t> touched;  // bit 0 read, bit 1 reduce, bit 2 overwrite
  data.assign(ts.size() * words, 0);
  for (size_t i = 0; i < ts.size(); ++i) {
    const Transfer& t = ts[i];
    const uint64_t* from = contents.cell(holder(t.src), t.chunk);
    bool any = false;
    for (size_t w = 0; w < words; ++w) any = any || from[w] != 0;
    TRAINSIM_ASSERT(any, "step ", s, ": ", t.src, " sends chunk ", t.chunk, " it does not hold");
    std::copy(from, from + words, data.begin() + static_cast<std::ptrdiff_t>(i * words));
    touched[copy_key(t.src, t.chunk)] |= 1;
  }
  for (const Transfer& t : ts) {
    uint8_t& f = touched[copy_key(t.dst, t.chunk)];
    TRAINSIM_ASSERT((f & 1) == 0, "step ", s, ": chunk ", t.chunk, " of ", t.dst, " is read and written in one step");
    TRAINSIM_ASSERT((f & 4) == 0 && (t.reduce || f == 0), "step ", s, ": chunk ", t.chunk, " of ", t.dst,
                    " is overwritten together with another write");
    f |= t.reduce ? 2 : 4;
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    const Transfer& t = ts[i];
    uint64_t* to = contents.cell(holder(t.dst), t.chunk);
    const uint64_t* d = data.data() + i * words;
    for (size_t w = 0; w < words; ++w) {
      if (t.reduce) {
        TRAINSIM_ASSERT((to[w] & d[w]) == 0, "step ", s, ": chunk ", t.chunk, " reduced twice into ", t.dst,
                        " (it holds ", describe(to, n), ", receives ", describe(d, n), ")");
        to[w] |= d[w];
      } else {
        to[w] = d[w];
      }
    }
  }
}

// The op's postcondition: what every rank holds at the end, each contribution counted once.
void check_postconditions(const CollectiveSpec& spec, int32_t n, int32_t c, Contents& contents) {
  const CollectiveOp op = spec.op;
  const size_t words = contents.words();
  Bits all(words, 0), one(words, 0);
  for (int32_t r = 0; r < n; ++r) all[static_cast<size_t>(r) / 64] |= uint64_t{1} << (r % 64);
  const auto expect = [&](int32_t r, int32_t k, const Bits& want_bits, const char* what) {
    const uint64_t* h = contents.cell(r, k);
    TRAINSIM_ASSERT(std::equal(want_bits.begin(), want_bits.end(), h), to_string(op), ": rank ", r, " chunk ", k,
                    " holds ", describe(h, n), ", expected ", what, " ", describe(want_bits.data(), n));
  };
  const auto single = [&](int32_t r) -> const Bits& {
    std::fill(one.begin(), one.end(), 0);
    one[static_cast<size_t>(r) / 64] |= uint64_t{1} << (r % 64);
    return one;
  };
  for (int32_t r = 0; r < n; ++r)
    for (int32_t k = 0; k < c; ++k) switch (op) {
        case CollectiveOp::kAllReduce: expect(r, k, all, "the sum of"); break;
        case CollectiveOp::kAllGather: expect(r, k, single(k % n), "the block of"); break;
        case CollectiveOp::kReduceScatter:
          if (k % n == r) expect(r, k, all, "the sum of");
          break;
        case CollectiveOp::kBroadcast: expect(r, k, single(spec.root), "the root's data"); break;
        case CollectiveOp::kReduce:
          if (r == spec.root) expect(r, k, all, "the sum of");
          break;
        case CollectiveOp::kAllToAll:
          if (k % n == r) expect(r, k, single((k / n) % n), "the block from");
          break;
        case CollectiveOp::kSendRecv:
          if (r != spec.root) expect(r, k, single(spec.root), "the sender's data");
          break;
      }
}

// Every `after` entry names an earlier transfer.
void check_dependencies_well_formed(const CollectivePlan& plan) {
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (const Transfer& t : plan.steps[s].transfers)
      for (const TransferRef& a : t.after)
        TRAINSIM_ASSERT(a.step >= 0 && static_cast<size_t>(a.step) < s &&
                            static_cast<size_t>(a.index) < plan.steps[static_cast<size_t>(a.step)].transfers.size(),
                        "step ", s, ": dependency on (", a.step, ", ", a.index, ") is not an earlier transfer");
}

// Every conflicting pair of accesses to one copy of a chunk in different steps is ordered by the
// `after` lists (transitively). Transfers are numbered in step order; first[s] is step s's first.
void check_hazards_ordered(const CollectivePlan& plan, size_t transfers) {
  std::vector<size_t> first(plan.steps.size() + 1, 0);
  for (size_t s = 0; s < plan.steps.size(); ++s) first[s + 1] = first[s] + plan.steps[s].transfers.size();
  const size_t tw = (transfers + 63) / 64;
  Bits reach(transfers * tw, 0);  // reach[x]: transfers x transitively waits for
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (size_t i = 0; i < plan.steps[s].transfers.size(); ++i) {
      uint64_t* r = reach.data() + (first[s] + i) * tw;
      for (const TransferRef& a : plan.steps[s].transfers[i].after) {
        const size_t id = first[static_cast<size_t>(a.step)] + static_cast<size_t>(a.index);
        const uint64_t* ra = reach.data() + id * tw;
        for (size_t w = 0; w < tw; ++w) r[w] |= ra[w];
        r[id / 64] |= uint64_t{1} << (id % 64);
      }
    }
  std::map<int64_t, std::vector<std::pair<size_t, Access>>> accesses;  // per copy, in step order
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (size_t i = 0; i < plan.steps[s].transfers.size(); ++i) {
      const Transfer& t = plan.steps[s].transfers[i];
      accesses[copy_key(t.src, t.chunk)].emplace_back(first[s] + i, Access::kRead);
      accesses[copy_key(t.dst, t.chunk)].emplace_back(first[s] + i, t.reduce ? Access::kReduce : Access::kOverwrite);
    }
  const auto step_of = [&](size_t id) {
    return static_cast<size_t>(std::upper_bound(first.begin(), first.end(), id) - first.begin()) - 1;
  };
  for (const auto& [key, list] : accesses)
    for (size_t b = 0; b < list.size(); ++b)
      for (size_t a = 0; a < b; ++a) {
        const auto [ia, ka] = list[a];
        const auto [ib, kb] = list[b];
        if (ka == kb && ka != Access::kOverwrite) continue;  // reads commute, reductions commute
        if (step_of(ia) == step_of(ib)) continue;            // same step: checked by replay_step
        TRAINSIM_ASSERT((reach[ib * tw + ia / 64] >> (ia % 64)) & 1, "transfer ", ib, " (step ", step_of(ib),
                        ") does not wait for the conflicting transfer ", ia, " (step ", step_of(ia), ") on chunk ",
                        static_cast<int32_t>(key & 0xffffffff));
      }
}

}  // namespace

void check_plan(const CollectiveSpec& spec, const Group& group, const CollectivePlan& plan) {
  const int32_t n = group.size;
  check_layout(spec, n, plan);
  const Holders holders = check_transfers(group, plan);
  Contents contents(n, holders.count, plan.chunks);
  contents.set_initial(spec);
  Bits data;
  for (size_t s = 0; s < plan.steps.size(); ++s) replay_step(plan.steps[s].transfers, s, n, holders, contents, data);
  check_postconditions(spec, n, plan.chunks, contents);
  check_dependencies_well_formed(plan);
  if (holders.transfers > 8192) return;  // the reachability sets of check_hazards_ordered grow with transfers^2
  check_hazards_ordered(plan, holders.transfers);
}

}  // namespace trainsim::models::collectives
