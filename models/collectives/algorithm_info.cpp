// AlgorithmInfo: input validation (why_not) and plan(), which runs an algorithm's generator per
// channel, merges the channels and derives the dependencies.
#include "models/collectives/collective.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include "models/collectives/registry_internal.hpp"
#include "sim/error.hpp"

namespace trainsim::models::collectives {

bool AlgorithmInfo::supports(CollectiveOp op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

std::vector<std::string> algorithms_supporting(CollectiveOp op) {
  return AlgorithmRegistry::instance().names_if([op](const AlgorithmInfo& a) { return a.supports(op); });
}

namespace {

std::string ops_text(const std::vector<CollectiveOp>& ops) {
  std::vector<std::string> names;
  for (CollectiveOp op : ops) names.emplace_back(to_string(op));
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
        "\"" + a.name + "\" does not implement " + to_string(spec.op) + " (it implements " + ops_text(a.ops) + ")",
        "algorithms for " + std::string(to_string(spec.op)) + ": " + sim::config::join(algorithms_supporting(spec.op))};
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
    if (!why.empty()) throw ConfigError("algorithm", "\"" + name + "\" cannot run this " + to_string(spec.op), why);
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

}  // namespace trainsim::models::collectives
