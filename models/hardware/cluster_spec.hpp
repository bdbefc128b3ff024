#pragma once
// A cluster: nodes of `gpus_per_node` GPUs joined by NVLink/NVSwitch inside a node and
// NICs across nodes. This is the hierarchical alpha-beta view used by the analytic
// communication model; the topology/ folder refines it into explicit graphs.

#include <map>
#include <string>

#include "models/hardware/nccl_calibration.hpp"
#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::models::hardware {

struct ClusterSpec {
  std::string name;
  std::string description;
  std::string gpu;                  // GPU preset name (or "inline" when given as an object)
  sim::config::Json gpu_inline;     // the GPU object when given inline
  int64_t gpus_per_node = 8;        // GPUs per host (a DGX server; a compute tray of an NVL72 rack)
  int64_t nvlink_domain = 0;        // GPUs per NVLink domain (0: gpus_per_node; 72 for an NVL72 rack)
  int64_t max_gpus = 0;             // largest supported size
  sim::Bandwidth nvlink_bandwidth;  // per GPU, per direction, into the NVSwitch fabric
  double nvlink_efficiency = 0.8;   // achievable bus-bandwidth fraction for NCCL collectives
  sim::Time nvlink_latency;         // per ring step inside a node
  int64_t nics_per_node = 8;
  sim::Bandwidth nic_bandwidth;          // per NIC, per direction
  double nic_efficiency = 0.9;           // achievable fraction of NIC line rate
  sim::Time nic_latency;                 // per ring step across nodes (NIC + switches)
  sim::Time collective_launch;           // fixed cost of one NCCL collective (launch + sync)
  NcclCalibration nccl;                  // NCCL's generation and protocol scales (nccl_calibration.hpp)
  sim::Bandwidth host_link_bandwidth;    // achievable GPU <-> host copy rate, per GPU per direction (PCIe)
  sim::Bandwidth host_memory_bandwidth;  // achievable host DRAM bandwidth, per GPU's share (CPU optimizer)
  sim::Bytes host_memory;                // host (CPU) memory per GPU for offload (0: not limited)
  // Whether `bytes` per GPU fit the host's memory (always when host_memory is 0).
  bool holds_on_host(sim::Bytes bytes) const { return host_memory.count() <= 0 || bytes <= host_memory; }
  double host_dispatch_scale = 1.0;  // host CPU's time to issue a kernel vs a DGX's x86 host (Grace: 2.75)
  sim::config::Json network;         // {"builder": ..., ...} for topology/; null = derived (see network_spec)
  std::map<std::string, std::string> sources;

  // GPUs that share one NVLink domain: what NCCL sees as a node (with multi-node NVLink, the whole
  // rack), and what every communication model and the topology call a "node" or "server".
  int64_t domain_gpus() const { return nvlink_domain > 0 ? nvlink_domain : gpus_per_node; }
  // NICs per GPU: nics_per_node / gpus_per_node, at most 1.
  double nic_share() const;
};

const sim::config::Schema<ClusterSpec>& cluster_schema();
ClusterSpec parse_cluster(const sim::config::Json& j, const std::string& path);
// The cluster's network description: its "network" object, or a rail-optimized fabric of
// NVSwitch servers derived from the cluster's NVLink and NIC figures (SuperPOD-style scalable
// units of 32 servers, non-blocking, each GPU owning its share of the node's NICs). With an NVLink
// domain larger than a host, each "server" of the fabric is a whole domain (an NVL72 rack: 72 GPUs
// on one NVSwitch fabric, its trays of `gpus_per_node` GPUs drawn apart), and a scalable unit
// holds 8 racks (DGX SuperPOD GB200 reference architecture).
sim::config::Json network_spec(const ClusterSpec& c);
// GPUs the topology is built with for a job of `gpus` GPUs: whole NVLink domains of the derived
// fabric (a job on 2 of 8 GPUs runs inside one server, 256 GPUs of NVL72 racks on four racks, the
// last one partly used); exactly `gpus` for a network the cluster spells out, which must hold them.
int64_t network_gpus(const ClusterSpec& c, int64_t gpus);
// Whether the servers' NVSwitches reduce in the network (NVLink SHARP, NCCL's NVLS): the derived
// fabric has it from the Hopper generation on (nccl.architecture); a spelled-out network says so
// with "sharp" (at the top or in "intra").
bool nvls_capable(const ClusterSpec& c);

}  // namespace trainsim::models::hardware
