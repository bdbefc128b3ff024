#include "models/collectives/sweep.hpp"

#include <algorithm>

#include "models/collectives/alpha_beta.hpp"
#include "models/collectives/flow_collective.hpp"
#include "models/collectives/flow_executor.hpp"
#include "sim/config/schema.hpp"
#include "sim/error.hpp"
#include "topology/builder.hpp"
#include "topology/routing.hpp"

namespace trainsim::models::collectives {

Sweep flow_sweep(const hardware::ClusterSpec& cluster, int64_t gpus, CollectiveOp op,
                 const std::vector<sim::Bytes>& sizes, const std::string& algo, const NcclOverrides& nccl, bool full) {
  const sim::config::Json spec = hardware::network_spec(cluster);
  const topology::Topology t = topology::build_topology(spec, hardware::network_gpus(cluster, gpus), "cluster.network");
  const topology::Router router(t, topology::routing_params(spec, t, "cluster.network"));
  std::vector<int32_t> all(static_cast<size_t>(gpus));
  for (int64_t g = 0; g < gpus; ++g) all[static_cast<size_t>(g)] = static_cast<int32_t>(g);
  const Group group = group_on(t, all);
  const std::string fixed = algo == "tree" ? "double_binary_tree" : algo;
  if (fixed != "auto") {
    const AlgorithmInfo& a = AlgorithmRegistry::instance().get(fixed, "--algo");
    if (!a.supports(op))
      throw ConfigError(
          "--algo", a.name + " does not implement " + to_string(op), "use one of: " + [&] {
            std::string names;
            for (const auto& n : algorithms_supporting(op)) names += (names.empty() ? "" : ", ") + n;
            return names + ", or auto";
          }());
    if (const std::string why = a.why_not(CollectiveSpec{op, sizes.front(), 0}, group, {}); !why.empty())
      throw ConfigError("--algo", a.name + " cannot run on these " + std::to_string(gpus) + " GPUs: " + why,
                        "use --algo auto");
  }
  const NcclContext context{&cluster, nccl};
  if (nccl.protocol && gpus > 1) {
    const ChannelPlan probe = plan_channels(CollectiveSpec{op, sizes.front(), 0}, group, all, fixed, context);
    if (!probe.nccl)
      throw ConfigError("--protocol",
                        std::string("NCCL does not run ") + to_string(op) + " with " + probe.algorithm + " on the " +
                            to_string(*nccl.protocol) + " protocol",
                        "use --protocol auto, or another --algo");
  }
  Sweep out{t.builder(), group.node_count(), {}};
  for (const sim::Bytes size : sizes) {
    const auto r = run_flow_collective(router, static_cast<int32_t>(gpus), op, size, fixed, cluster.collective_launch,
                                       context, full);
    out.points.push_back(SweepPoint{size, r.time, r.algorithm});
  }
  return out;
}

Sweep analytic_sweep(const hardware::ClusterSpec& cluster, int64_t gpus, CollectiveOp op,
                     const std::vector<sim::Bytes>& sizes, const std::string& algo, const NcclOverrides& nccl) {
  const AlphaBetaModel model(cluster, nccl);
  const GroupPlacement group{gpus, std::min(gpus, cluster.domain_gpus())};
  if (algo == "tree" && (op != CollectiveOp::kAllReduce || group.nodes() <= 1))
    throw ConfigError("--algo", "tree is an all-reduce algorithm across nodes", "use --algo ring or auto");
  if (algo == "hierarchical" && (op != CollectiveOp::kAllReduce || group.nodes() <= 1 || gpus % group.per_node != 0))
    throw ConfigError("--algo", "hierarchical is an all-reduce across nodes that each hold as many ranks",
                      "use --algo ring or auto");
  Sweep out{"", group.nodes(), {}};
  for (const sim::Bytes size : sizes) {
    SweepPoint p{size, model.collective(op, size, group), model.algorithm(op, size, group)};
    if (algo == "hierarchical") {
      p.time = model.hierarchical_time(size, group);
      p.algorithm = "hierarchical";
    } else if (algo == "ring" || algo == "tree") {
      const auto choice =
          model.nccl_choice(op, size, group, algo == "ring" ? NcclAlgorithm::kRing : NcclAlgorithm::kTree);
      if (choice) {
        p.time = cluster.collective_launch + sim::Time::from_seconds_ceil(choice->time_us * 1e-6);
        p.algorithm = std::string(to_string(choice->algorithm)) + "/" + to_string(choice->protocol) + " x" +
                      std::to_string(choice->channels);
      } else {
        p.algorithm = algo;
        p.time = algo == "ring" ? model.ring_time(op, size, group) : model.tree_time(op, size, group);
      }
    } else if (nccl.protocol && op != CollectiveOp::kAllToAll && op != CollectiveOp::kSendRecv && gpus > 1 &&
               !model.nccl_choice(op, size, group)) {
      throw ConfigError(
          "--protocol",
          std::string("NCCL runs no ") + to_string(op) + " on the " + to_string(*nccl.protocol) + " protocol here",
          "use --protocol auto");
    }
    out.points.push_back(p);
  }
  return out;
}

}  // namespace trainsim::models::collectives
