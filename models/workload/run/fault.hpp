#pragma once
// A fault injected into the simulation of an iteration (docs/faults.md): a link that dies or
// slows, a GPU that dies or slows, at a time into the run. `simulate` turns them into events
// (fault_injector.hpp); a fault at time 0 is there from the start (routes already avoid a dead
// link, a slow GPU is slow throughout), which is how callers re-simulate a degraded component.
//
// Command-line text (`trainsim simulate --fault SPEC`, repeatable):
//   link:A/B@T[*F][,reroute=D]   the cable between nodes A and B (both directions) dies at T, or
//                                with *F runs at F x its capacity from T; a dead link's traffic
//                                reroutes after D (default kDefaultRerouteDelay)
//   uplink:R@T[*F][,reroute=D]   the same for GPU R's first link into the network fabric (its NIC)
//   gpu:R@T                      GPU R dies at T: the job stops there
//   slow-gpu:R[@T]*S             GPU R computes at S x its speed from T (default 0)
// T and D are durations with a unit ("2ms", "0", "1.5s"); F and S lie strictly between 0 and 1.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.hpp"
#include "topology/fwd.hpp"

namespace trainsim::models::workload {

struct Job;

// How long a dead link's traffic waits before it reroutes: an engineering estimate from
// Mellanox's SHIELD figures (a subnet-manager reroute takes 10-20 s on very large fabrics and
// SHIELD recovers about 5,000 times faster, so 2-4 ms; enterpriseai.news, 2017-06-15); we take
// the low end. A subnet-manager-only fabric is `,reroute=10s`.
inline constexpr sim::Time kDefaultRerouteDelay = sim::Time::ms(2);

struct Fault {
  enum class Kind : uint8_t { kLinkDown, kLinkDegrade, kGpuDown, kGpuSlow };
  Kind kind = Kind::kLinkDown;
  // Link faults: the cable between nodes `a` and `b`, or when `a` is empty the first link from
  // GPU `gpu` into the network fabric (its NIC's cable).
  std::string a, b;
  int32_t gpu = -1;                                // global rank: the GPU of gpu faults and of an uplink
  double factor = 0.0;                             // kLinkDegrade: capacity multiplier; kGpuSlow: speed; in (0, 1)
  sim::Time at;                                    // into the run
  sim::Time reroute_delay = kDefaultRerouteDelay;  // kLinkDown

  bool is_link() const { return kind == Kind::kLinkDown || kind == Kind::kLinkDegrade; }
  // Factories for callers that re-simulate a degraded component (the reliability model).
  static Fault slow_gpu(int32_t rank, double speed, sim::Time at = sim::Time::zero());
  static Fault degraded_uplink(int32_t rank, double factor, sim::Time at = sim::Time::zero());
  static Fault dead_uplink(int32_t rank, sim::Time at, sim::Time reroute_delay = kDefaultRerouteDelay);
  static Fault dead_gpu(int32_t rank, sim::Time at);
};

const char* to_string(Fault::Kind k);  // "link_down", "link_degrade", "gpu_down", "gpu_slow"
// The command-line form of `f` (parse_fault(to_string(f)) == f).
std::string to_string(const Fault& f);

// Parses one --fault SPEC (syntax above); throws a one-line ConfigError at `path` showing the
// syntax when it is malformed, a factor lies outside (0, 1) or a time is negative.
Fault parse_fault(std::string_view text, const std::string& path = "--fault");

// Checks `faults` against the job: GPU ranks inside it, node names and links in its topology,
// link faults only on the flow network. Throws ConfigError at `path`.
void check_faults(const Job& job, const std::vector<Fault>& faults, const std::string& path = "--fault");

// The directed links of a link fault in `t` (the cable's two directions); ConfigError at `path`
// for unknown node names (with a did-you-mean), nodes without a cable between them, or a GPU
// without a link into the fabric.
std::vector<topology::LinkId> fault_links(const Fault& f, const topology::Topology& t,
                                          const std::string& path = "--fault");

}  // namespace trainsim::models::workload
