// The registry-wide invariant test (STYLE conv. 9): every registered collective algorithm, for
// every collective it supports, on groups of 2 to 16 ranks over 1, 2 or 4 servers, must
//   - pass check_plan (every rank ends with the right chunks, each contribution reduced once, and
//     the dependency lists order every conflicting access), and
//   - send, per rank, exactly the bytes of its closed form, in the closed form's number of steps.
// A new algorithm fails here until closed_form() below knows its formula.
#include "models/collectives/collective.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <numeric>
#include <set>
#include <sstream>

#include "sim/error.hpp"

namespace trainsim::models::collectives {
namespace {

// Divisible by channels (up to 4) x ranks (up to 16) x the halves, shards and blocks below.
constexpr int64_t kN = int64_t{720720} * 256;

struct Case {
  std::string algorithm;
  CollectiveOp op;
  Group group;
  AlgorithmParams params;
  std::string label;
};

// gtest prints the case by its label.
void PrintTo(const Case& c, std::ostream* os) { *os << c.label; }

CollectiveSpec spec_of(const Case& c, sim::Bytes bytes) {
  const bool rooted =
      c.op == CollectiveOp::kBroadcast || c.op == CollectiveOp::kReduce || c.op == CollectiveOp::kSendRecv;
  return CollectiveSpec{c.op, bytes, rooted ? c.group.size - 1 : 0};
}

// ---------------------------------------------------------------------------------------------
// Closed forms. `sent` is exact per rank; algorithms whose per-rank volume depends on the tree
// shape give the total and the per-rank maximum instead.
struct Expect {
  size_t steps = 0;
  bool exact = true;
  std::vector<int64_t> sent;
  int64_t total = 0;
  int64_t max_rank = 0;
};

int32_t log2_ceil(int32_t n) { return static_cast<int32_t>(std::bit_width(static_cast<uint32_t>(n - 1))); }

Expect closed_form(const std::string& algorithm, CollectiveOp op, const Group& group, const AlgorithmParams& params,
                   int64_t bytes, int32_t root);

// Adds one channel's per-rank form, scaled to its share of the buffer.
void add_channel(Expect& e, const std::vector<int64_t>& sent) {
  for (size_t r = 0; r < sent.size(); ++r) e.sent[r] += sent[r];
}

Expect closed_form(const std::string& algorithm, CollectiveOp op, const Group& group, const AlgorithmParams& params,
                   int64_t bytes, int32_t root) {
  const int32_t n = group.size;
  Expect e;
  e.sent.assign(static_cast<size_t>(n), 0);
  if (n == 1) return e;
  const int32_t count = params.channels * (params.bidirectional ? 2 : 1);
  const int64_t nc = bytes / count;  // each channel's share (kN divides evenly)
  const auto by_node = group.ranks_by_node();
  const auto m = static_cast<int32_t>(by_node.size());
  const int32_t g = group.ranks_per_node();
  // nvls across servers shards over the fewest ranks any server holds (g when they are equal).
  int32_t owners = by_node.empty() ? 0 : static_cast<int32_t>(by_node.front().size());
  for (const auto& ranks : by_node) owners = std::min(owners, static_cast<int32_t>(ranks.size()));
  std::vector<int32_t> node_index(static_cast<size_t>(n)), local(static_cast<size_t>(n));
  for (int32_t a = 0; a < m; ++a)
    for (size_t l = 0; l < by_node[static_cast<size_t>(a)].size(); ++l) {
      node_index[static_cast<size_t>(by_node[static_cast<size_t>(a)][l])] = a;
      local[static_cast<size_t>(by_node[static_cast<size_t>(a)][l])] = static_cast<int32_t>(l);
    }
  for (int32_t ch = 0; ch < count; ++ch) {
    const bool reversed = params.bidirectional && ch % 2 == 1;
    std::vector<int64_t> s(static_cast<size_t>(n), 0);
    const auto each = [&](int64_t v) { std::fill(s.begin(), s.end(), v); };
    if (algorithm == "ring") {
      if (op == CollectiveOp::kAllReduce) {
        each(2 * (n - 1) * nc / n);                  // 2(p-1)/p x N per rank
        e.steps = static_cast<size_t>(2 * (n - 1));  // 2(p-1) steps
      } else if (op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter) {
        each((n - 1) * nc / n);  // (p-1)/p x N per rank, p-1 steps
        e.steps = static_cast<size_t>(n - 1);
      } else {
        // Chain: N from every rank but the chain's end (broadcast: root - dir; reduce: the root).
        each(nc);
        const int32_t dir = reversed ? -1 : 1;
        s[static_cast<size_t>(op == CollectiveOp::kBroadcast ? ((root - dir) % n + n) % n : root)] = 0;
        e.steps = static_cast<size_t>(n - 1);
      }
    } else if (algorithm == "double_binary_tree") {
      // Trees over servers with chains of g ranks inside them (over ranks when the servers hold
      // different numbers): 2(g-1) + 2 ceil(log2 m) steps; every edge carries N/2 up and N/2 down
      // in each of the two trees: 2(p-1) x N in all, at most 2.5N from one rank (a tree's head
      // sends up, to two children and down its chain, and up its chain in the other tree; 2N
      // with one rank per server).
      e.exact = false;
      e.total += 2 * (n - 1) * nc;
      e.max_rank += g >= 2 ? 5 * nc / 2 : 2 * nc;
      e.steps = g >= 1 ? static_cast<size_t>(2 * (g - 1) + 2 * log2_ceil(m)) : static_cast<size_t>(2 * log2_ceil(n));
    } else if (algorithm == "halving_doubling") {
      const auto p2 = static_cast<int32_t>(std::bit_floor(static_cast<uint32_t>(n)));
      const int32_t extra = n - p2, lg = std::countr_zero(static_cast<uint32_t>(p2));
      if (op == CollectiveOp::kAllReduce) {
        // Core: 2(p'-1)/p' x N in 2 log2 p' steps; folded ranks (even, < 2r) send N in the first
        // step; their partners (odd, < 2r) send N back in the last one.
        for (int32_t r = 0; r < n; ++r)
          s[static_cast<size_t>(r)] =
              r < 2 * extra && r % 2 == 0 ? nc : 2 * (p2 - 1) * nc / p2 + (r < 2 * extra ? nc : 0);
        e.steps = static_cast<size_t>(2 * lg + (extra > 0 ? 2 : 0));
      } else {
        each((n - 1) * nc / n);  // (p-1)/p x N in log2 p steps
        e.steps = static_cast<size_t>(lg);
      }
    } else if (algorithm == "hierarchical" || (algorithm == "nvls" && m > 1)) {
      // hierarchical: (g-1)/g N (reduce-scatter) + inter-node all-reduce of N/g + (g-1)/g N
      //   (all-gather), 2(g-1) + inter steps.
      // nvls across servers: N into the switch + inter-node all-reduce of N/g + N/g back into the
      //   switch, 4 + inter steps; a server's ranks past the g shard owners send only N.
      const bool hier = algorithm == "hierarchical";
      const int32_t shards = hier ? g : owners;
      const Expect inter =
          closed_form(params.inter_node, CollectiveOp::kAllReduce, Group::blocked(m, 1), {}, nc / shards, 0);
      const int64_t intra = hier ? 2 * (g - 1) * nc / g : nc + nc / shards;
      e.steps = (hier ? static_cast<size_t>(2 * (g - 1)) : 4) + inter.steps;
      if (inter.exact) {
        for (int32_t r = 0; r < n; ++r)
          s[static_cast<size_t>(r)] = local[static_cast<size_t>(r)] < shards
                                          ? intra + inter.sent[static_cast<size_t>(node_index[static_cast<size_t>(r)])]
                                          : nc;
      } else {
        e.exact = false;
        e.total += (hier ? n * intra : n * nc + m * nc) + shards * inter.total;
        e.max_rank += intra + inter.max_rank;
      }
    } else if (algorithm == "torus") {
      // A ring per dimension; the per-rank volume telescopes to the ring's: 2(p-1)/p x N in
      // 2 sum(d_i - 1) steps for all-reduce, half for reduce-scatter and all-gather.
      int32_t ring_steps = 0;
      for (int32_t d : group.dims) ring_steps += std::max(d, 1) - 1;
      const bool ar = op == CollectiveOp::kAllReduce;
      each((ar ? 2 : 1) * (n - 1) * nc / n);
      e.steps = static_cast<size_t>((ar ? 2 : 1) * ring_steps);
    } else if (algorithm == "nvls") {
      // One server, 2 steps: all-reduce and reduce-scatter N into the switch; all-gather N/p.
      each(op == CollectiveOp::kAllGather ? nc / n : nc);
      e.steps = 2;
    } else if (algorithm == "all_to_all_direct") {
      each((n - 1) * nc / n);  // (p-1)/p x N in p-1 steps
      e.steps = static_cast<size_t>(n - 1);
    } else if (algorithm == "all_to_all_hierarchical") {
      each((g - 1) * nc / g + (m - 1) * nc / m);  // (g-1)/g N inside + (m-1)/m N across servers
      e.steps = static_cast<size_t>((g - 1) + (m - 1));
    } else if (algorithm == "send_recv") {
      s[static_cast<size_t>(root)] = nc;  // one step, N from the sender
      e.steps = 1;
    } else if (algorithm == "binomial_tree") {
      // ceil(log2 p) steps; reduce: N from every non-root; broadcast: relative rank v sends N for
      // each k with v < 2^k and v + 2^k < p.
      const int32_t levels = log2_ceil(n);
      for (int32_t r = 0; r < n; ++r) {
        const int32_t v = ((r - root) % n + n) % n;
        int64_t sends = 0;
        for (int32_t k = 0; k < levels; ++k) sends += v < (1 << k) && v + (1 << k) < n;
        s[static_cast<size_t>(r)] = op == CollectiveOp::kReduce ? (r == root ? 0 : nc) : sends * nc;
      }
      e.steps = static_cast<size_t>(levels);
    } else {
      ADD_FAILURE() << "no closed form for algorithm \"" << algorithm << "\": add one to closed_form()";
    }
    add_channel(e, s);
  }
  if (e.exact) {
    e.total = std::accumulate(e.sent.begin(), e.sent.end(), int64_t{0});
    e.max_rank = *std::max_element(e.sent.begin(), e.sent.end());
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// The cases: every algorithm x supported op x group x parameter variant it accepts.

Group with_dims(Group g, std::array<int32_t, 3> dims) {
  g.dims = dims;
  return g;
}

std::array<int32_t, 3> default_dims(int32_t n) {
  switch (n) {
    case 4: return {2, 2, 0};
    case 8: return {2, 2, 2};
    case 16: return {4, 4, 0};
    default: return {n, 0, 0};
  }
}

std::vector<std::pair<std::string, Group>> groups() {
  std::vector<std::pair<std::string, Group>> out;
  for (int32_t n : {2, 3, 4, 7, 8, 16}) {
    const std::string p = "n" + std::to_string(n);
    out.emplace_back(p + "_1node", with_dims(Group::single_node(n, true), default_dims(n)));
    for (int32_t m : {2, 4})
      if (n % m == 0)
        out.emplace_back(p + "_" + std::to_string(m) + "nodes",
                         with_dims(Group::blocked(m, n / m, true), default_dims(n)));
  }
  Group uneven = Group::single_node(7, true);  // 4 + 3 ranks: no uniform hierarchy
  uneven.node_of_rank = {0, 0, 0, 0, 1, 1, 1};
  out.emplace_back("n7_uneven", with_dims(uneven, {7, 0, 0}));
  Group strided = Group::single_node(8, true);  // servers interleaved, ids not from 0
  strided.node_of_rank = {5, 9, 5, 9, 5, 9, 5, 9};
  out.emplace_back("n8_strided", with_dims(strided, {4, 2, 0}));
  out.emplace_back("n8_torus4x2", with_dims(Group::single_node(8), {4, 2, 0}));
  out.emplace_back("n16_torus2x4x2", with_dims(Group::blocked(4, 4), {2, 4, 2}));
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const AlgorithmInfo& a : AlgorithmRegistry::instance().all()) {
    const auto uses = [&](const std::string& k) {
      return std::find(a.params.begin(), a.params.end(), k) != a.params.end();
    };
    std::vector<std::pair<std::string, AlgorithmParams>> variants = {{"ch1", {}}};
    variants.emplace_back(uses("bidirectional") ? "ch2_bidir" : "ch3",
                          AlgorithmParams{uses("bidirectional") ? 2 : 3, uses("bidirectional"), "ring"});
    if (uses("inter_node"))
      for (const char* inter : {"double_binary_tree", "halving_doubling"})
        variants.emplace_back(std::string("inter_") + inter, AlgorithmParams{1, false, inter});
    for (CollectiveOp op : a.ops)
      for (const auto& [gname, group] : groups())
        for (const auto& [pname, params] : variants) {
          Case c{a.name, op, group, params, ""};
          if (!a.why_not(spec_of(c, sim::Bytes(kN)), group, params).empty()) continue;
          c.label = a.name + "_" + to_string(op) + "_" + gname + "_" + pname;
          out.push_back(c);
        }
  }
  return out;
}

std::string describe_plan(const CollectivePlan& p) {
  std::ostringstream os;
  os << p.ranks << " " << p.chunks << " " << p.in_network_reduction << "\n";
  for (const Step& s : p.steps) {
    for (const Transfer& t : s.transfers) {
      os << t.src << ">" << t.dst << ":" << t.chunk << ":" << t.bytes.count() << (t.reduce ? "+" : "=") << "[";
      for (const TransferRef& a : t.after) os << a.step << "." << a.index << " ";
      os << "] ";
    }
    os << "\n";
  }
  return os.str();
}

class CollectiveInvariants : public ::testing::TestWithParam<Case> {};

TEST_P(CollectiveInvariants, ConservesDataAndMatchesClosedForm) {
  const Case& c = GetParam();
  const AlgorithmInfo& a = AlgorithmRegistry::instance().get(c.algorithm, "algorithm");
  const CollectiveSpec spec = spec_of(c, sim::Bytes(kN));
  const CollectivePlan plan = a.plan(spec, c.group, c.params);
  try {
    check_plan(spec, c.group, plan);
  } catch (const InternalError& e) {
    ADD_FAILURE() << e.what() << "\n" << describe_plan(plan);
  }
  const Expect want = closed_form(c.algorithm, c.op, c.group, c.params, kN, spec.root);
  EXPECT_EQ(plan.steps.size(), want.steps);
  const std::vector<sim::Bytes> sent = bytes_sent_per_rank(plan);
  ASSERT_EQ(sent.size(), static_cast<size_t>(c.group.size));
  int64_t total = 0, max_rank = 0;
  for (size_t r = 0; r < sent.size(); ++r) {
    if (want.exact) {
      EXPECT_EQ(sent[r].count(), want.sent[r]) << "rank " << r;
    }
    total += sent[r].count();
    max_rank = std::max(max_rank, sent[r].count());
  }
  EXPECT_EQ(total, want.total);
  EXPECT_LE(max_rank, want.max_rank);
  EXPECT_EQ(plan.in_network_reduction, c.algorithm == "nvls");

  // Deterministic, and correct for a buffer that does not divide evenly.
  EXPECT_EQ(describe_plan(a.plan(spec, c.group, c.params)), describe_plan(plan));
  const CollectiveSpec odd = spec_of(c, sim::Bytes(1000003));
  try {
    check_plan(odd, c.group, a.plan(odd, c.group, c.params));
  } catch (const InternalError& e) {
    ADD_FAILURE() << "odd buffer: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, CollectiveInvariants, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.label; });

TEST(CollectiveInvariants, EveryAlgorithmAndOpIsCovered) {
  std::set<std::pair<std::string, CollectiveOp>> covered;
  for (const Case& c : all_cases()) covered.emplace(c.algorithm, c.op);
  for (const AlgorithmInfo& a : AlgorithmRegistry::instance().all())
    for (CollectiveOp op : a.ops) EXPECT_TRUE(covered.contains({a.name, op})) << a.name << " " << to_string(op);
}

// ---------------------------------------------------------------------------------------------
// Registry

TEST(CollectiveRegistry, ListsTheAlgorithmsWithDescriptions) {
  const std::vector<std::string> names = AlgorithmRegistry::instance().names();
  for (const char* want : {"ring", "double_binary_tree", "halving_doubling", "hierarchical", "torus", "nvls",
                           "all_to_all_direct", "all_to_all_hierarchical", "send_recv", "binomial_tree"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const AlgorithmInfo& a : AlgorithmRegistry::instance().all()) {
    EXPECT_FALSE(a.description.empty()) << a.name;
    EXPECT_FALSE(a.ops.empty()) << a.name;
  }
  EXPECT_EQ(algorithms_supporting(CollectiveOp::kAllToAll),
            (std::vector<std::string>{"all_to_all_direct", "all_to_all_hierarchical"}));
}

TEST(CollectiveRegistry, UnknownNameListsTheValidOnes) {
  try {
    AlgorithmRegistry::instance().get("rnig", "collective.algorithm");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "collective.algorithm");
    EXPECT_EQ(e.message(), "unknown collective algorithm \"rnig\"");
    std::string valid;
    for (const std::string& n : AlgorithmRegistry::instance().names()) valid += (valid.empty() ? "" : ", ") + n;
    EXPECT_EQ(e.hint(), "did you mean \"ring\"? valid: " + valid);
  }
}

std::string config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.path() + ": " + e.message() + " | " + e.hint();
  }
  return "no error";
}

TEST(CollectiveRegistry, RejectsWhatAnAlgorithmCannotDo) {
  const auto& reg = AlgorithmRegistry::instance();
  const CollectiveSpec ar{CollectiveOp::kAllReduce, sim::Bytes(1024), 0};
  EXPECT_EQ(config_error([&] {
              reg.get("ring", "a").plan(CollectiveSpec{CollectiveOp::kAllToAll, sim::Bytes(8), 0}, 4);
            }),
            "algorithm: \"ring\" does not implement all_to_all (it implements all_reduce, all_gather, reduce_scatter, "
            "broadcast, reduce) | algorithms for all_to_all: all_to_all_direct, all_to_all_hierarchical");
  EXPECT_EQ(config_error([&] {
              reg.get("double_binary_tree", "a").plan(ar, Group::single_node(4), {1, true, "ring"});
            }),
            "bidirectional: algorithm \"double_binary_tree\" does not use it | it applies to: ring, torus");
  EXPECT_EQ(config_error([&] {
              reg.get("ring", "a").plan(ar, Group::single_node(4), {1, false, "halving_doubling"});
            }),
            "inter_node: algorithm \"ring\" does not use it | it applies to: hierarchical, nvls");
  EXPECT_EQ(config_error([&] { reg.get("torus", "a").plan(ar, Group::single_node(8)); }),
            "algorithm: \"torus\" cannot run this all_reduce | torus needs group.dims whose product is the group "
            "size, got 0x0x0 for 8 ranks");
  EXPECT_EQ(config_error([&] { reg.get("nvls", "a").plan(ar, Group::single_node(8)); }),
            "algorithm: \"nvls\" cannot run this all_reduce | the group's servers have no NVLink SHARP switch "
            "(nvls_capable is false)");
  EXPECT_EQ(config_error([&] {
              reg.get("send_recv", "a").plan(CollectiveSpec{CollectiveOp::kSendRecv, sim::Bytes(8), 0}, 3);
            }),
            "algorithm: \"send_recv\" cannot run this send_recv | send_recv runs on a group of 2 ranks {sender, "
            "receiver}");
  Group uneven = Group::single_node(7);
  uneven.node_of_rank = {0, 0, 0, 0, 1, 1, 1};
  EXPECT_EQ(config_error([&] { reg.get("hierarchical", "a").plan(ar, uneven); }),
            "algorithm: \"hierarchical\" cannot run this all_reduce | its servers hold different numbers of ranks");
  EXPECT_EQ(config_error([&] {
              reg.get("hierarchical", "a").plan(ar, Group::blocked(2, 2), {1, false, "torus"});
            }),
            "algorithm: \"hierarchical\" cannot run this all_reduce | inter_node \"torus\": torus needs group.dims "
            "whose product is the group size, got 0x0x0 for 2 ranks");
  EXPECT_EQ(config_error([&] {
              reg.get("ring", "a").plan(ar, Group::single_node(4), {0, false, "ring"});
            }),
            "channels: must be between 1 and 64, got 0 | ");
  EXPECT_EQ(config_error([&] {
              reg.get("ring", "a").plan(CollectiveSpec{CollectiveOp::kBroadcast, sim::Bytes(8), 4}, 4);
            }),
            "root: root 4 is not a rank of a group of 4 | ");
}

TEST(CollectiveRegistry, ParamsParseThroughTheSchema) {
  AlgorithmParams p;
  algorithm_params_schema().parse(sim::config::Json::parse(R"({"channels": 4, "bidirectional": true})"), "params", p);
  EXPECT_EQ(p.channels, 4);
  EXPECT_TRUE(p.bidirectional);
  EXPECT_EQ(p.inter_node, "ring");
  EXPECT_THROW(algorithm_params_schema().parse(sim::config::Json::parse(R"({"chanels": 4})"), "params", p),
               ConfigError);
}

// ---------------------------------------------------------------------------------------------
// Dependencies and the checker's teeth

TEST(CollectiveDependencies, RingStepWaitsForTheChunkItForwards) {
  const auto& ring = AlgorithmRegistry::instance().get("ring", "a");
  const CollectivePlan p = ring.plan(CollectiveSpec{CollectiveOp::kAllReduce, sim::Bytes(400), 0}, 4);
  // Step 0: r sends chunk (r-1) mod 4 to r+1. Step 1: rank 1 forwards chunk 3, which it got from
  // rank 0 in step 0, so it waits for exactly that transfer (index 0).
  const Transfer& t = p.steps[1].transfers[1];
  ASSERT_EQ(t.src, 1);
  ASSERT_EQ(t.chunk, 3);
  EXPECT_NE(std::find(t.after.begin(), t.after.end(), TransferRef{0, 0}), t.after.end());
  for (const TransferRef& a : t.after)
    EXPECT_EQ(p.steps[static_cast<size_t>(a.step)].transfers[static_cast<size_t>(a.index)].chunk, 3);
}

TEST(CollectiveDependencies, DirectAllToAllHasNone) {
  const auto& a2a = AlgorithmRegistry::instance().get("all_to_all_direct", "a");
  const CollectivePlan p = a2a.plan(CollectiveSpec{CollectiveOp::kAllToAll, sim::Bytes(800), 0}, 8);
  for (const Step& s : p.steps)
    for (const Transfer& t : s.transfers) EXPECT_TRUE(t.after.empty());
}

TEST(CollectiveDependencies, NvlsMulticastWaitsForEveryReduction) {
  const auto& nvls = AlgorithmRegistry::instance().get("nvls", "a");
  const CollectivePlan p =
      nvls.plan(CollectiveSpec{CollectiveOp::kAllReduce, sim::Bytes(800), 0}, Group::single_node(8, true));
  ASSERT_EQ(p.steps.size(), 2u);
  for (const Transfer& t : p.steps[1].transfers) {
    EXPECT_EQ(t.src, switch_rank(0));
    EXPECT_EQ(t.after.size(), 8u);
  }
}

std::string check_error(const CollectiveSpec& spec, const Group& g, const CollectivePlan& p) {
  try {
    check_plan(spec, g, p);
  } catch (const InternalError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CollectiveChecker, CatchesBrokenPlans) {
  const auto& ring = AlgorithmRegistry::instance().get("ring", "a");
  const CollectiveSpec spec{CollectiveOp::kAllReduce, sim::Bytes(400), 0};
  const Group g = Group::single_node(4);
  const CollectivePlan good = ring.plan(spec, g);
  EXPECT_EQ(check_error(spec, g, good), "no error");

  CollectivePlan dropped = good;  // the last all-gather transfer never happens
  dropped.steps.back().transfers.pop_back();
  EXPECT_NE(check_error(spec, g, dropped).find("all_reduce: rank"), std::string::npos);

  CollectivePlan twice = good;  // step 1 adds chunk 3 into rank 2 a second time
  Transfer again = twice.steps[0].transfers[0];
  twice.steps[1].transfers.push_back(again);
  twice.steps[1].transfers.back().dst = 2;
  again.after.clear();
  EXPECT_NE(check_error(spec, g, twice).find("reduced twice"), std::string::npos);

  CollectivePlan unordered = good;  // forget that step 1 waits for step 0
  for (Transfer& t : unordered.steps[1].transfers) t.after.clear();
  EXPECT_NE(check_error(spec, g, unordered).find("does not wait for the conflicting transfer"), std::string::npos);

  CollectivePlan short_bytes = good;
  short_bytes.steps[0].transfers[0].bytes = sim::Bytes(1);
  EXPECT_NE(check_error(spec, g, short_bytes).find("moves 1 bytes, the chunk has 100"), std::string::npos);
}

TEST(CollectiveChecker, BytesPerRankHelpers) {
  const auto& nvls = AlgorithmRegistry::instance().get("nvls", "a");
  const CollectivePlan p =
      nvls.plan(CollectiveSpec{CollectiveOp::kAllReduce, sim::Bytes(800), 0}, Group::single_node(4, true));
  EXPECT_EQ(bytes_sent_per_rank(p), std::vector<sim::Bytes>(4, sim::Bytes(800)));  // switch traffic excluded
  EXPECT_EQ(bytes_received_per_rank(p), std::vector<sim::Bytes>(4, sim::Bytes(800)));
}

// ---------------------------------------------------------------------------------------------
// The "auto" choice

TEST(CollectiveChooser, FollowsNcclsRules) {
  const sim::Bytes kib(1024), mib(1 << 20), gib(int64_t{1} << 30);
  // One DGX server with NVSwitch SHARP: NVLS for all-reduce of any size.
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, kib, Group::single_node(8, true)), "nvls");
  // Without SHARP: latency-bound sizes (below 14 steps x 3.4 us x 235 GB/s / 1.75 = 6.4 MB) use
  // the ring too (NCCL runs rings inside a server at every size).
  EXPECT_EQ(ring_latency_bound_bytes(CollectiveOp::kAllReduce, Group::single_node(8)).count(), 6392000);
  // 2 servers x 8: (28 x 3.4 + 2 x 9.6) us x 24 GB/s / (30/16) = 1.46 MB.
  EXPECT_EQ(ring_latency_bound_bytes(CollectiveOp::kAllReduce, Group::blocked(2, 8)).count(), 1464320);
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, mib, Group::single_node(8)),
            "ring");  // NCCL: no halving-doubling
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, gib, Group::single_node(8)), "ring");
  // Across servers: the tree for small messages, the hierarchy for large ones; the tree's range
  // grows with the server count (ring latency is linear in it).
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, mib, Group::blocked(2, 8)), "double_binary_tree");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, gib, Group::blocked(2, 8)), "ring");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, sim::Bytes(16 << 20), Group::blocked(2, 8)), "ring");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, sim::Bytes(16 << 20), Group::blocked(32, 8)),
            "double_binary_tree");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, gib, Group::blocked(16, 1)), "ring");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllGather, kib, Group::single_node(8)), "ring");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllGather, kib, Group::blocked(8, 1)), "halving_doubling");  // PAT
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllGather, kib, Group::single_node(6)), "ring");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kReduceScatter, gib, Group::single_node(8)), "ring");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kBroadcast, kib, Group::blocked(4, 8)), "binomial_tree");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kReduce, gib, Group::blocked(4, 8)), "ring");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllToAll, mib, Group::blocked(4, 8)), "all_to_all_hierarchical");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllToAll, gib, Group::blocked(4, 8)), "all_to_all_direct");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllToAll, mib, Group::single_node(8)), "all_to_all_direct");
  EXPECT_EQ(choose_algorithm(CollectiveOp::kSendRecv, gib, Group::blocked(2, 1)), "send_recv");
  // Every choice is registered, supports the op and can run on the group.
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                          CollectiveOp::kBroadcast, CollectiveOp::kReduce, CollectiveOp::kAllToAll})
    for (const Group& g :
         {Group::single_node(8, true), Group::single_node(6), Group::blocked(4, 8), Group::blocked(3, 1)})
      for (sim::Bytes b : {kib, mib, gib}) {
        const std::string name = choose_algorithm(op, b, g);
        EXPECT_EQ(AlgorithmRegistry::instance().get(name, "auto").why_not(CollectiveSpec{op, b, 0}, g, {}), "")
            << name << " " << to_string(op);
      }
}

}  // namespace
}  // namespace trainsim::models::collectives
