#include "models/collectives/collective.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "sim/error.hpp"

namespace trainsim::models::collectives {

namespace {
// Local copies of comm_model.hpp's to_string and bus_bandwidth_factor: those are defined in
// alpha_beta.cpp (trainsim_models), which links before this registry library, so calling them
// from here leaves undefined references in binaries that do not use them otherwise.
const char* op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all_reduce";
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kAllToAll: return "all_to_all";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kSendRecv: return "send_recv";
  }
  return "?";
}

// nccl-tests' bus-bandwidth factor (busbw = algbw x factor).
double bus_factor(CollectiveOp op, int64_t n) {
  const auto nn = static_cast<double>(n);
  if (op == CollectiveOp::kAllReduce) return 2.0 * (nn - 1) / nn;
  if (op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllToAll)
    return (nn - 1) / nn;
  return 1.0;
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Group

Group Group::single_node(int32_t size, bool nvls) {
  Group g;
  g.size = size;
  g.nvls_capable = nvls;
  return g;
}

Group Group::blocked(int32_t nodes, int32_t per_node, bool nvls) {
  Group g;
  g.size = nodes * per_node;
  g.nvls_capable = nvls;
  for (int32_t r = 0; r < g.size; ++r) g.node_of_rank.push_back(r / per_node);
  return g;
}

int32_t Group::node(int32_t rank) const { return node_of_rank.empty() ? 0 : node_of_rank[static_cast<size_t>(rank)]; }

std::vector<std::vector<int32_t>> Group::ranks_by_node() const {
  std::map<int32_t, std::vector<int32_t>> by;
  for (int32_t r = 0; r < size; ++r) by[node(r)].push_back(r);
  std::vector<std::vector<int32_t>> out;
  for (auto& [node, ranks] : by) out.push_back(std::move(ranks));
  return out;
}

int32_t Group::node_count() const { return static_cast<int32_t>(ranks_by_node().size()); }

int32_t Group::ranks_per_node() const {
  const auto by = ranks_by_node();
  for (const auto& r : by)
    if (r.size() != by.front().size()) return 0;
  return by.empty() ? 0 : static_cast<int32_t>(by.front().size());
}

// ---------------------------------------------------------------------------------------------
// Parameters

const sim::config::Schema<AlgorithmParams>& algorithm_params_schema() {
  static const auto schema = [] {
    sim::config::Schema<AlgorithmParams> s("collective algorithm parameters",
                                           "Variants of a collective algorithm (STYLE conv. 9).");
    s.custom("channels", "integer in [1, 64]", "1",
             "Independent copies of the algorithm, each on 1/channels of the buffer",
             [](AlgorithmParams& p, const sim::config::Json& j, const std::string& path) {
               p.channels = static_cast<int32_t>(sim::config::read_int(j, path, 1, 64));
             });
    s.boolean("bidirectional", &AlgorithmParams::bidirectional, false,
              "Ring and torus: double the channels and run every other one the opposite way");
    s.string("inter_node", &AlgorithmParams::inter_node, "ring",
             "hierarchical and nvls: the registered all-reduce run across servers");
    return s;
  }();
  return schema;
}

// ---------------------------------------------------------------------------------------------
// Registry

bool AlgorithmInfo::supports(CollectiveOp op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

std::vector<std::string> algorithms_supporting(CollectiveOp op) {
  return AlgorithmRegistry::instance().names_if([op](const AlgorithmInfo& a) { return a.supports(op); });
}

namespace {

std::string ops_text(const std::vector<CollectiveOp>& ops) {
  std::vector<std::string> names;
  for (CollectiveOp op : ops) names.emplace_back(op_name(op));
  return sim::config::join(names);
}

// Users of a parameter, for the "does not use" hint.
std::string users_of(const std::string& key) {
  std::vector<std::string> users;
  for (const auto& a : AlgorithmRegistry::instance().all())
    if (std::find(a.params.begin(), a.params.end(), key) != a.params.end()) users.push_back(a.name);
  return sim::config::join(users);
}

// What is wrong with the inputs of a plan() call, as the ConfigError it throws; none when fine.
struct Problem {
  std::string path;
  std::string message;
  std::string hint = {};
};
std::optional<Problem> input_problem(const AlgorithmInfo& a, const CollectiveSpec& spec, const Group& g,
                                     const AlgorithmParams& p) {
  std::ostringstream os;
  if (g.size < 1) {
    os << "must be at least 1, got " << g.size;
    return Problem{"group.size", os.str()};
  }
  if (!g.node_of_rank.empty() && g.node_of_rank.size() != static_cast<size_t>(g.size)) {
    os << "has " << g.node_of_rank.size() << " entries for " << g.size << " ranks";
    return Problem{"group.node_of_rank", os.str(), "give one server index per rank, or none"};
  }
  for (int32_t node : g.node_of_rank)
    if (node < 0) return Problem{"group.node_of_rank", "server indices must be non-negative"};
  for (int32_t d : g.dims)
    if (d < 0) return Problem{"group.dims", "torus dimensions must be non-negative"};
  if (spec.bytes.count() < 0) return Problem{"bytes", "must be non-negative"};
  if (spec.root < 0 || spec.root >= g.size) {
    os << "root " << spec.root << " is not a rank of a group of " << g.size;
    return Problem{"root", os.str()};
  }
  if (p.channels < 1 || p.channels > 64) {
    os << "must be between 1 and 64, got " << p.channels;
    return Problem{"channels", os.str()};
  }
  if (!a.supports(spec.op))
    return Problem{
        "algorithm",
        "\"" + a.name + "\" does not implement " + op_name(spec.op) + " (it implements " + ops_text(a.ops) + ")",
        "algorithms for " + std::string(op_name(spec.op)) + ": " + sim::config::join(algorithms_supporting(spec.op))};
  const auto uses = [&](const std::string& key) {
    return std::find(a.params.begin(), a.params.end(), key) != a.params.end();
  };
  const AlgorithmParams defaults;
  if (p.bidirectional != defaults.bidirectional && !uses("bidirectional"))
    return Problem{"bidirectional", "algorithm \"" + a.name + "\" does not use it",
                   "it applies to: " + users_of("bidirectional")};
  if (p.inter_node != defaults.inter_node && !uses("inter_node"))
    return Problem{"inter_node", "algorithm \"" + a.name + "\" does not use it",
                   "it applies to: " + users_of("inter_node")};
  return std::nullopt;
}

void drop_empty_steps(CollectivePlan& p) {
  std::erase_if(p.steps, [](const Step& s) { return s.transfers.empty(); });
}

}  // namespace

std::string AlgorithmInfo::why_not(const CollectiveSpec& spec, const Group& group,
                                   const AlgorithmParams& params) const {
  if (const auto problem = input_problem(*this, spec, group, params)) return problem->path + ": " + problem->message;
  return check ? check(spec, group, params) : std::string();
}

CollectivePlan AlgorithmInfo::plan(const CollectiveSpec& spec, const Group& group,
                                   const AlgorithmParams& params) const {
  if (const auto problem = input_problem(*this, spec, group, params))
    throw ConfigError(problem->path, problem->message, problem->hint);
  if (check) {
    const std::string why = check(spec, group, params);
    if (!why.empty()) throw ConfigError("algorithm", "\"" + name + "\" cannot run this " + op_name(spec.op), why);
  }
  const int32_t n = group.size;
  CollectivePlan out;
  out.ranks = n;
  if (n == 1) {  // nothing moves; one chunk is the whole buffer (or the rank's block to itself)
    out.chunk_bytes = {spec.bytes};
    return out;
  }
  const int32_t count = params.channels * (params.bidirectional ? 2 : 1);
  const std::vector<sim::Bytes> share = detail::split_bytes(spec.bytes, count);
  out.chunks = 0;
  for (int32_t c = 0; c < count; ++c) {
    CollectiveSpec s = spec;
    s.bytes = share[static_cast<size_t>(c)];
    CollectivePlan p = generate(s, group, params, ChannelInfo{c, count, params.bidirectional && c % 2 == 1});
    TRAINSIM_ASSERT(p.chunks >= 1 && p.chunk_bytes.size() == static_cast<size_t>(p.chunks), name,
                    ": chunk_bytes does not match chunks");
    if (spec.op == CollectiveOp::kAllGather || spec.op == CollectiveOp::kReduceScatter)
      TRAINSIM_ASSERT(p.chunks % n == 0, name, ": all-gather/reduce-scatter chunks must be a multiple of n");
    if (spec.op == CollectiveOp::kAllToAll)
      TRAINSIM_ASSERT(p.chunks % (n * n) == 0, name, ": all-to-all chunks must be a multiple of n*n");
    const int32_t offset = out.chunks;
    out.chunks += p.chunks;
    out.chunk_bytes.insert(out.chunk_bytes.end(), p.chunk_bytes.begin(), p.chunk_bytes.end());
    out.in_network_reduction = out.in_network_reduction || p.in_network_reduction;
    if (out.steps.size() < p.steps.size()) out.steps.resize(p.steps.size());
    for (size_t i = 0; i < p.steps.size(); ++i)
      for (Transfer t : p.steps[i].transfers) {
        t.chunk += offset;
        t.after.clear();
        out.steps[i].transfers.push_back(std::move(t));
      }
  }
  drop_empty_steps(out);
  derive_dependencies(out);
  return out;
}

CollectivePlan AlgorithmInfo::plan(const CollectiveSpec& spec, int32_t ranks) const {
  return plan(spec, Group::single_node(ranks), AlgorithmParams{});
}

// ---------------------------------------------------------------------------------------------
// The "auto" choice

namespace {
// Reference figures (the chooser sees no cluster).
// Per-step latencies: NCCL's tuning model for the Simple protocol (NVIDIA/nccl
// src/graph/tuning.cc, hwLat, ring row): 3.4 us per NVLink step, 9.6 us per network step. Check:
// 14 NVLink steps = 47.6 us for an 8-GPU all-reduce; nccl-tests measures 43.8 us at 32 KiB on
// 8 x A100 (shared/data/collectives_dev.json, mle_a100_8gpu_allreduce_32768).
// Bus bandwidths, same file: 234.9 GB/s all-reduce busbw plateau on 8 x A100 with NVSwitch
// (mle_a100_8gpu_allreduce_17179869184), and 24 GB/s inter-node busbw per 200 Gb/s HDR NIC, one
// NIC per GPU on a DGX A100 (nccl_412_a800_intra_inter).
constexpr double kNvlinkStepSeconds = 3.4e-6;
constexpr double kNetworkStepSeconds = 9.6e-6;
constexpr double kNvlinkBusBytesPerSecond = 235e9;
constexpr double kNetworkBusBytesPerSecond = 24e9;
}  // namespace

sim::Bytes ring_latency_bound_bytes(CollectiveOp op, const Group& group) {
  const int64_t n = group.size, m = group.node_count();
  if (n <= 1) return sim::Bytes(0);
  // NCCL's step counts: all-reduce 2(n-1) steps of which 2(m-1) cross servers, others n-1 and m-1.
  const int64_t steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  const int64_t cross = op == CollectiveOp::kAllReduce ? 2 * (m - 1) : m - 1;
  const double latency =
      static_cast<double>(steps - cross) * kNvlinkStepSeconds + static_cast<double>(cross) * kNetworkStepSeconds;
  const double bus = m > 1 ? kNetworkBusBytesPerSecond : kNvlinkBusBytesPerSecond;
  return sim::Bytes(std::llround(latency * bus / bus_factor(op, n)));
}

std::string choose_algorithm(CollectiveOp op, sim::Bytes bytes, const Group& group) {
  const int32_t n = group.size, m = group.node_count(), per_node = group.ranks_per_node();
  const bool small = bytes < ring_latency_bound_bytes(op, group);
  switch (op) {
    case CollectiveOp::kSendRecv: return "send_recv";
    case CollectiveOp::kAllToAll: {
      // Aggregating along rails pays when the block per peer is below the network's
      // bandwidth-delay product (one step latency x bandwidth): the message is latency-bound.
      const double block = static_cast<double>(bytes.count()) / std::max(n, 1);
      const bool latency_bound = block < kNetworkStepSeconds * kNetworkBusBytesPerSecond;
      return m > 1 && per_node >= 2 && latency_bound ? "all_to_all_hierarchical" : "all_to_all_direct";
    }
    case CollectiveOp::kAllReduce:
      // A whole torus (TPU-style fabric): the dimension-wise torus all-reduce.
      if (group.dims[0] > 0) return "torus";
      if (m == 1 && group.nvls_capable && n >= 2) return "nvls";
      // NCCL has no recursive halving-doubling: inside one server it runs rings at every size
      // (its LL / LL128 protocols cover small messages); across servers a tree below the ring's
      // latency-bound size.
      // Across servers a tree below the ring's latency-bound size, else NCCL's rings (one channel
      // per GPU of a server, PXN routing: every NIC busy). "hierarchical" stays available by name.
      if (small && m > 1) return "double_binary_tree";
      return "ring";
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
      // Rings, except small messages over one rank per server, where NCCL 2.23+ runs PAT
      // (logarithmic steps, like halving-doubling).
      return small && m > 1 && per_node == 1 && std::has_single_bit(static_cast<uint32_t>(n)) ? "halving_doubling"
                                                                                              : "ring";
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce: return small ? "binomial_tree" : "ring";
  }
  return "ring";
}

// ---------------------------------------------------------------------------------------------
// Helpers for algorithms

namespace detail {

std::vector<sim::Bytes> split_bytes(sim::Bytes total, int32_t parts) {
  TRAINSIM_ASSERT(parts >= 1, "split into ", parts, " parts");
  std::vector<sim::Bytes> out(static_cast<size_t>(parts), total / parts);
  const int64_t rest = total.count() % parts;
  for (int64_t i = 0; i < rest; ++i) out[static_cast<size_t>(i)] += sim::Bytes(1);
  return out;
}

void set_chunks(CollectivePlan& plan, sim::Bytes total, int32_t parts) {
  plan.chunks = parts;
  plan.chunk_bytes = split_bytes(total, parts);
}

void add(CollectivePlan& plan, size_t step, int32_t src, int32_t dst, int32_t chunk, bool reduce) {
  if (plan.steps.size() <= step) plan.steps.resize(step + 1);
  plan.steps[step].transfers.push_back(
      Transfer{src, dst, chunk, plan.chunk_bytes.at(static_cast<size_t>(chunk)), reduce});
}

void ring_pass(CollectivePlan& plan, size_t first_step, const std::vector<int32_t>& members,
               const std::vector<std::vector<int32_t>>& blocks, bool reduce, bool reversed) {
  const auto d = static_cast<int32_t>(members.size());
  TRAINSIM_ASSERT(blocks.size() == members.size(), "ring_pass: one block per member");
  const auto at = [d](int32_t i) { return static_cast<size_t>(((i % d) + d) % d); };
  // Forward: position a sends to a + 1. Reduce-scatter: block (a - k - 1) in step k, so block b
  // leaves b + 1 first and ends, summed, at b after d - 1 steps. All-gather: block (a - k).
  // Reversed mirrors both.
  for (int32_t k = 0; k + 1 < d; ++k)
    for (int32_t a = 0; a < d; ++a) {
      const int32_t to = reversed ? a - 1 : a + 1;
      const int32_t block = reduce ? (reversed ? a + k + 1 : a - k - 1) : (reversed ? a + k : a - k);
      for (int32_t chunk : blocks[at(block)])
        add(plan, first_step + static_cast<size_t>(k), members[at(a)], members[at(to)], chunk, reduce);
    }
}

std::string cross_node_check(const Group& group, const std::string& inter) {
  if (group.ranks_per_node() == 0) return "its servers hold different numbers of ranks";
  if (inter == "hierarchical") return "inter_node cannot be \"hierarchical\" itself";
  const auto& reg = AlgorithmRegistry::instance();
  const auto names = reg.names();
  if (std::find(names.begin(), names.end(), inter) == names.end())
    return "inter_node \"" + inter + "\" is not an algorithm (valid: " + sim::config::join(names) + ")";
  const AlgorithmInfo& a = reg.get(inter, "inter_node");
  if (!a.supports(CollectiveOp::kAllReduce)) return "inter_node \"" + inter + "\" has no all_reduce";
  const std::string why = a.why_not(CollectiveSpec{}, Group::blocked(group.node_count(), 1), AlgorithmParams{});
  return why.empty() ? why : "inter_node \"" + inter + "\": " + why;
}

std::vector<Step> shard_and_plan_cross_node(CollectivePlan& plan, const CollectiveSpec& spec, const Group& group,
                                            const std::string& inter) {
  const auto by_node = group.ranks_by_node();
  const auto m = static_cast<int32_t>(by_node.size());
  const auto g = static_cast<int32_t>(by_node.front().size());
  const AlgorithmInfo& algo = AlgorithmRegistry::instance().get(inter, "inter_node");
  const std::vector<sim::Bytes> shard = split_bytes(spec.bytes, g);
  std::vector<Step> steps;
  plan.chunk_bytes.clear();
  int32_t per_shard = -1;
  for (int32_t l = 0; l < g; ++l) {
    const CollectivePlan sub = algo.plan(CollectiveSpec{CollectiveOp::kAllReduce, shard[static_cast<size_t>(l)], 0},
                                         Group::blocked(m, 1), AlgorithmParams{});
    TRAINSIM_ASSERT(per_shard < 0 || per_shard == sub.chunks, inter, ": chunk count depends on the buffer size");
    per_shard = sub.chunks;
    plan.chunk_bytes.insert(plan.chunk_bytes.end(), sub.chunk_bytes.begin(), sub.chunk_bytes.end());
    if (steps.size() < sub.steps.size()) steps.resize(sub.steps.size());
    for (size_t s = 0; s < sub.steps.size(); ++s)
      for (const Transfer& t : sub.steps[s].transfers)
        steps[s].transfers.push_back(Transfer{by_node[static_cast<size_t>(t.src)][static_cast<size_t>(l)],
                                              by_node[static_cast<size_t>(t.dst)][static_cast<size_t>(l)],
                                              l * per_shard + t.chunk, t.bytes, t.reduce});
  }
  plan.chunks = g * per_shard;
  return steps;
}

void append_steps(CollectivePlan& plan, size_t first_step, const std::vector<Step>& steps) {
  if (plan.steps.size() < first_step + steps.size()) plan.steps.resize(first_step + steps.size());
  for (size_t s = 0; s < steps.size(); ++s)
    for (const Transfer& t : steps[s].transfers) plan.steps[first_step + s].transfers.push_back(t);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Dependencies

namespace {
int64_t copy_key(int32_t holder, int32_t chunk) {
  return (static_cast<int64_t>(holder) << 32) | static_cast<int64_t>(static_cast<uint32_t>(chunk));
}
}  // namespace

void derive_dependencies(CollectivePlan& plan) {
  // Per copy of a chunk (holder, chunk) since its last overwrite: that overwrite, the reductions
  // into it, and the transfers that read it.
  struct Copy {
    std::vector<TransferRef> overwrite;  // zero or one
    std::vector<TransferRef> reductions;
    std::vector<TransferRef> reads;
  };
  std::unordered_map<int64_t, Copy> copies;  // looked up only, never iterated
  const auto append = [](std::vector<TransferRef>& to, const std::vector<TransferRef>& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    auto& transfers = plan.steps[s].transfers;
    for (Transfer& t : transfers) {
      std::vector<TransferRef> after;
      if (auto it = copies.find(copy_key(t.src, t.chunk)); it != copies.end()) {  // read after write
        append(after, it->second.overwrite);
        append(after, it->second.reductions);
      }
      if (auto it = copies.find(copy_key(t.dst, t.chunk)); it != copies.end()) {
        append(after, it->second.overwrite);                  // write after write
        append(after, it->second.reads);                      // write after read
        if (!t.reduce) append(after, it->second.reductions);  // an overwrite follows every reduction
      }
      std::sort(after.begin(), after.end());
      after.erase(std::unique(after.begin(), after.end()), after.end());
      t.after = std::move(after);
    }
    const auto step = static_cast<int32_t>(s);
    for (size_t i = 0; i < transfers.size(); ++i)
      copies[copy_key(transfers[i].src, transfers[i].chunk)].reads.push_back({step, static_cast<int32_t>(i)});
    for (size_t i = 0; i < transfers.size(); ++i) {
      Copy& c = copies[copy_key(transfers[i].dst, transfers[i].chunk)];
      const TransferRef ref{step, static_cast<int32_t>(i)};
      if (transfers[i].reduce) {
        c.reductions.push_back(ref);
      } else {
        c = Copy{{ref}, {}, {}};
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Symbolic checker

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

}  // namespace

void check_plan(const CollectiveSpec& spec, const Group& group, const CollectivePlan& plan) {
  const int32_t n = group.size;
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
    TRAINSIM_ASSERT(c % n == 0, "chunks must be a multiple of n for ", op_name(op));
  if (op == CollectiveOp::kAllToAll) TRAINSIM_ASSERT(c % (n * n) == 0, "chunks must be a multiple of n*n");
  if (op == CollectiveOp::kSendRecv) TRAINSIM_ASSERT(n == 2, "send/recv needs a group of 2");

  // Holders: ranks 0..n-1, then the switches the plan uses.
  std::map<int32_t, int32_t> holder_of_switch;
  bool uses_switch = false;
  size_t transfers = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (const Transfer& t : plan.steps[s].transfers) {
      ++transfers;
      for (int32_t end : {t.src, t.dst}) {
        if (!is_switch(end)) {
          TRAINSIM_ASSERT(end < n, "step ", s, ": rank ", end, " is outside the group of ", n);
          continue;
        }
        uses_switch = true;
        bool served = false;
        for (int32_t r = 0; r < n; ++r) served = served || group.node(r) == switch_node(end);
        TRAINSIM_ASSERT(served, "step ", s, ": switch ", end, " serves no rank of the group");
        holder_of_switch.emplace(end, 0);
      }
      TRAINSIM_ASSERT(t.src != t.dst, "step ", s, ": rank ", t.src, " sends to itself");
      TRAINSIM_ASSERT(!(is_switch(t.src) && is_switch(t.dst)), "step ", s, ": switch-to-switch transfer");
      if (is_switch(t.src))
        TRAINSIM_ASSERT(group.node(t.dst) == switch_node(t.src), "step ", s, ": switch ", t.src, " reaches rank ",
                        t.dst, " on another server");
      if (is_switch(t.dst))
        TRAINSIM_ASSERT(group.node(t.src) == switch_node(t.dst), "step ", s, ": rank ", t.src, " reaches switch ",
                        t.dst, " on another server");
      TRAINSIM_ASSERT(t.chunk >= 0 && t.chunk < c, "step ", s, ": chunk ", t.chunk, " out of range");
      TRAINSIM_ASSERT(t.bytes == plan.chunk_bytes[static_cast<size_t>(t.chunk)], "step ", s, ": transfer of chunk ",
                      t.chunk, " moves ", t.bytes.count(), " bytes, the chunk has ",
                      plan.chunk_bytes[static_cast<size_t>(t.chunk)].count());
    }
  TRAINSIM_ASSERT(uses_switch == plan.in_network_reduction, "in_network_reduction is ", plan.in_network_reduction,
                  " but the plan ", uses_switch ? "uses" : "does not use", " a switch");
  int32_t next_holder = n;
  for (auto& [sw, h] : holder_of_switch) h = next_holder++;
  const auto holder = [&](int32_t end) { return is_switch(end) ? holder_of_switch.at(end) : end; };

  const size_t words = (static_cast<size_t>(n) + 63) / 64;
  const size_t cells = static_cast<size_t>(next_holder) * static_cast<size_t>(c);
  TRAINSIM_ASSERT(cells * words <= (size_t{1} << 27), "plan too large for check_plan (", cells, " chunk copies)");
  Bits state(cells * words, 0);
  const auto cell = [&](int32_t h, int32_t k) {
    return state.data() + (static_cast<size_t>(h) * static_cast<size_t>(c) + static_cast<size_t>(k)) * words;
  };
  const auto set_one = [&](int32_t h, int32_t k, int32_t r) { cell(h, k)[r / 64] |= uint64_t{1} << (r % 64); };
  for (int32_t r = 0; r < n; ++r)
    for (int32_t k = 0; k < c; ++k) {
      bool owns = true;
      if (op == CollectiveOp::kAllGather) owns = k % n == r;
      if (op == CollectiveOp::kAllToAll) owns = (k / n) % n == r;
      if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kSendRecv) owns = r == spec.root;
      if (owns) set_one(r, k, r);
    }

  // Replay. A step reads the state at its start; a copy may not be both read and written in one
  // step, nor overwritten together with another write.
  Bits data;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const auto& ts = plan.steps[s].transfers;
    std::unordered_map<int64_t, uint8_t> touched;  // bit 0 read, bit 1 reduce, bit 2 overwrite
    data.assign(ts.size() * words, 0);
    for (size_t i = 0; i < ts.size(); ++i) {
      const Transfer& t = ts[i];
      const uint64_t* from = cell(holder(t.src), t.chunk);
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
      uint64_t* to = cell(holder(t.dst), t.chunk);
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

  // Postconditions.
  Bits all(words, 0), one(words, 0);
  for (int32_t r = 0; r < n; ++r) all[static_cast<size_t>(r) / 64] |= uint64_t{1} << (r % 64);
  const auto expect = [&](int32_t r, int32_t k, const Bits& want_bits, const char* what) {
    const uint64_t* h = cell(r, k);
    TRAINSIM_ASSERT(std::equal(want_bits.begin(), want_bits.end(), h), op_name(op), ": rank ", r, " chunk ", k,
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

  // Dependencies: well formed, and every conflicting pair of accesses to one copy ordered.
  std::vector<size_t> first(plan.steps.size() + 1, 0);
  for (size_t s = 0; s < plan.steps.size(); ++s) first[s + 1] = first[s] + plan.steps[s].transfers.size();
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (const Transfer& t : plan.steps[s].transfers)
      for (const TransferRef& a : t.after)
        TRAINSIM_ASSERT(a.step >= 0 && static_cast<size_t>(a.step) < s &&
                            static_cast<size_t>(a.index) < plan.steps[static_cast<size_t>(a.step)].transfers.size(),
                        "step ", s, ": dependency on (", a.step, ", ", a.index, ") is not an earlier transfer");
  if (transfers > 8192) return;  // the reachability sets below grow with transfers^2
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
        if (step_of(ia) == step_of(ib)) continue;            // same step: checked above
        TRAINSIM_ASSERT((reach[ib * tw + ia / 64] >> (ia % 64)) & 1, "transfer ", ib, " (step ", step_of(ib),
                        ") does not wait for the conflicting transfer ", ia, " (step ", step_of(ia), ") on chunk ",
                        static_cast<int32_t>(key & 0xffffffff));
      }
}

std::vector<sim::Bytes> bytes_sent_per_rank(const CollectivePlan& plan) {
  std::vector<sim::Bytes> out(static_cast<size_t>(plan.ranks));
  for (const Step& s : plan.steps)
    for (const Transfer& t : s.transfers)
      if (!is_switch(t.src)) out[static_cast<size_t>(t.src)] += t.bytes;
  return out;
}

std::vector<sim::Bytes> bytes_received_per_rank(const CollectivePlan& plan) {
  std::vector<sim::Bytes> out(static_cast<size_t>(plan.ranks));
  for (const Step& s : plan.steps)
    for (const Transfer& t : s.transfers)
      if (!is_switch(t.dst)) out[static_cast<size_t>(t.dst)] += t.bytes;
  return out;
}

}  // namespace trainsim::models::collectives
