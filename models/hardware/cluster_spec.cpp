#include "models/hardware/cluster_spec.hpp"

#include <algorithm>
#include <cstdio>

namespace trainsim::models::hardware {

using sim::config::Json;

const sim::config::Schema<ClusterSpec>& cluster_schema() {
  static const sim::config::Schema<ClusterSpec> schema = [] {
    sim::config::Schema<ClusterSpec> s("cluster", "Nodes of GPUs with NVLink/NVSwitch inside and NICs across.");
    s.string("name", &ClusterSpec::name, std::nullopt, "Preset name, e.g. `dgx-h100`.")
        .string("description", &ClusterSpec::description, "", "One line shown by `trainsim list clusters`.")
        .custom("gpu", "GPU preset name or GPU object", std::nullopt, "The accelerator in every node.",
                [](ClusterSpec& c, const Json& j, const std::string& p) {
                  if (j.is_string()) {
                    c.gpu = j.get<std::string>();
                  } else if (j.is_object()) {
                    c.gpu = "inline";
                    c.gpu_inline = j;
                  } else {
                    throw ConfigError(
                        p, "expected a GPU preset name or a GPU object, got " + sim::config::json_type_name(j));
                  }
                })
        .integer("gpus_per_node", &ClusterSpec::gpus_per_node, 1, 1024, 8,
                 "GPUs per node (host): a DGX server, or a compute tray of an NVL72 rack (4).")
        .integer("nvlink_domain", &ClusterSpec::nvlink_domain, 0, 1152, 0,
                 "GPUs in one NVLink domain, a multiple of gpus_per_node: 72 for a GB200/GB300 NVL72 rack, whose "
                 "18 trays share one NVSwitch fabric (multi-node NVLink). 0: one node is one domain.")
        .integer("max_gpus", &ClusterSpec::max_gpus, 1, 10000000, 131072, "Largest cluster size accepted.")
        .unit("nvlink_bandwidth", &ClusterSpec::nvlink_bandwidth, &sim::config::read_bandwidth, "bandwidth",
              std::nullopt, "Per-GPU, per-direction NVLink bandwidth into the node fabric.")
        .number("nvlink_efficiency", &ClusterSpec::nvlink_efficiency, 0.05, 1.0, std::nullopt,
                "Achievable NCCL bus bandwidth inside a node as a fraction of `nvlink_bandwidth`.")
        .unit("nvlink_latency", &ClusterSpec::nvlink_latency, &sim::config::read_time, "duration", std::nullopt,
              "Latency of one ring step inside a node.")
        .integer("nics_per_node", &ClusterSpec::nics_per_node, 1, 64, 8, "Compute NICs per node.")
        .unit("nic_bandwidth", &ClusterSpec::nic_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
              "Per-NIC, per-direction line rate.")
        .number("nic_efficiency", &ClusterSpec::nic_efficiency, 0.05, 1.0, std::nullopt,
                "Achievable fraction of NIC line rate for NCCL traffic.")
        .unit("nic_latency", &ClusterSpec::nic_latency, &sim::config::read_time, "duration", std::nullopt,
              "Latency of one ring step across nodes.")
        .unit("collective_launch", &ClusterSpec::collective_launch, &sim::config::read_time, "duration", std::nullopt,
              "Fixed cost of one NCCL collective call (launch and synchronisation).")
        .custom("nccl", "object", std::string("{}"),
                "NCCL's tuning model here: {\"architecture\": volta|ampere|hopper|blackwell, \"cpu\": intel|amd|arm "
                "(the host CPU NCCL's tuning reads; Grace is arm), \"ll\"|\"ll128\"|\"simple\"|\"nvls\": "
                "{\"latency\": scale, \"bandwidth\": scale}} (docs/network.md, Protocols).",
                [](ClusterSpec& c, const Json& j, const std::string& p) { c.nccl = parse_nccl_calibration(j, p); })
        .unit("host_link_bandwidth", &ClusterSpec::host_link_bandwidth, &sim::config::read_bandwidth, "bandwidth",
              std::string("24GBps"),
              "Achievable GPU <-> host copy rate per GPU and direction (pinned memory over PCIe), for CPU offload. "
              "Default: PCIe Gen4 x16 (31 GB/s per direction, shared/data/hardware.json [pcie_rates]) at the "
              "~77% cudaMemcpy reaches (engineering estimate).")
        .unit("host_memory_bandwidth", &ClusterSpec::host_memory_bandwidth, &sim::config::read_bandwidth, "bandwidth",
              std::string("38GBps"),
              "Achievable host DRAM bandwidth per GPU's share of the node, which bounds the CPU optimizer step of "
              "ZeRO-Offload (a streaming kernel: ~30 bytes per parameter). Default: DGX A100, 2 sockets x 8 "
              "channels DDR4-3200 = 410 GB/s / 8 GPUs x 0.75 (STREAM-class efficiency, engineering estimate).")
        .unit("host_memory", &ClusterSpec::host_memory, &sim::config::read_bytes, "size", std::string("0GiB"),
              "Host (CPU) memory per GPU that optimizer and activation offload may use (a Grace CPU's LPDDR5X "
              "shared by its GPUs; a DGX's DRAM over its 8 GPUs). 0: not checked.")
        .number("host_dispatch_scale", &ClusterSpec::host_dispatch_scale, 0.1, 10.0, 1.0,
                "The host CPU's time to issue one kernel from an eager framework (Python, PyTorch's dispatcher, "
                "the framework's modules) relative to the x86 host of a DGX server, which the job's "
                "`kernel_dispatch` is written for: 1 for DGX (Xeon) hosts, about 2.75 for Grace.")
        .custom("network", "object or null", std::string("null"),
                "Topology: {\"builder\": NAME, ...parameters} (`trainsim topology`); null = a rail-optimized fabric "
                "derived from the fields above.",
                [](ClusterSpec& c, const Json& j, const std::string& p) {
                  if (!j.is_null() && !j.is_object())
                    throw ConfigError(p, "expected an object {\"builder\": NAME, ...} or null");
                  c.network = j;
                })
        .sources(&ClusterSpec::sources);
    return s;
  }();
  return schema;
}

double ClusterSpec::nic_share() const {
  return std::min(1.0, static_cast<double>(nics_per_node) / static_cast<double>(std::max<int64_t>(1, gpus_per_node)));
}

Json network_spec(const ClusterSpec& c) {
  if (!c.network.is_null()) return c.network;
  // Links carry the achievable fraction of line rate the cluster records (nccl-tests bus
  // bandwidth), each GPU owns its share of the node's NICs, and the per-step latencies are split
  // over the two hops of a step (GPU-switch-GPU, GPU-leaf-GPU).
  const double share = c.nic_share();
  char nic[64], nvl[64], nvl_lat[64], nic_lat[64];
  std::snprintf(nic, sizeof nic, "%.6gGBps", c.nic_bandwidth.gbyte_per_second() * c.nic_efficiency * share);
  std::snprintf(nvl, sizeof nvl, "%.6gGBps", c.nvlink_bandwidth.gbyte_per_second() * c.nvlink_efficiency);
  std::snprintf(nvl_lat, sizeof nvl_lat, "%lldns", static_cast<long long>(c.nvlink_latency.count_ns() / 2));
  std::snprintf(nic_lat, sizeof nic_lat, "%lldns", static_cast<long long>(c.nic_latency.count_ns() / 2));
  const int64_t domain = c.domain_gpus();
  Json j{{"builder", "rail_optimized"},
         {"gpus_per_node", domain},
         {"nvlink_bandwidth", nvl},
         {"nvlink_latency", nvl_lat},
         {"nic_bandwidth", nic},
         {"link_latency", nic_lat},
         {"servers_per_unit", domain > c.gpus_per_node ? 8 : 32},
         {"spines", 8},
         {"oversubscription", 1.0},
         {"sharp", nvls_capable(c)}};
  if (domain > c.gpus_per_node) {
    // NVL72: GPU i of every compute tray has its NIC on rail i (DGX SuperPOD GB200 reference
    // architecture: a rack's trays are the "servers" of the rails).
    j["gpus_per_tray"] = c.gpus_per_node;
    j["rails"] = c.gpus_per_node;
  }
  return j;
}

bool nvls_capable(const ClusterSpec& c) {
  if (c.network.is_null()) return c.nccl.architecture == "hopper" || c.nccl.architecture == "blackwell";
  const auto flag = [](const Json& j) {
    const auto it = j.find("sharp");
    return it != j.end() && it->is_boolean() && it->get<bool>();
  };
  const auto intra = c.network.find("intra");
  return flag(c.network) || (intra != c.network.end() && intra->is_object() && flag(*intra));
}

int64_t network_gpus(const ClusterSpec& c, int64_t gpus) {
  const int64_t gpn = std::max<int64_t>(1, c.domain_gpus());
  return c.network.is_null() ? (gpus + gpn - 1) / gpn * gpn : gpus;
}

ClusterSpec parse_cluster(const Json& j, const std::string& path) {
  ClusterSpec c;
  cluster_schema().parse(j, path, c);
  if (c.nvlink_domain > 0 && (c.nvlink_domain < c.gpus_per_node || c.nvlink_domain % c.gpus_per_node != 0))
    throw ConfigError(path + ".nvlink_domain",
                      std::to_string(c.nvlink_domain) + " GPUs is not a whole number of " +
                          std::to_string(c.gpus_per_node) + "-GPU nodes (gpus_per_node)",
                      "use a multiple of " + std::to_string(c.gpus_per_node) +
                          " (72 for an NVL72 rack of 4-GPU "
                          "trays), or 0 for one domain per node");
  return c;
}

}  // namespace trainsim::models::hardware
