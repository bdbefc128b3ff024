// NCCL's tuning model. Constants: NVIDIA/nccl v2.30.7 (src/graph/tuning.cc ncclTunerConstantsDefaults,
// nvlsEfficiency, treeCorrectionFactor; src/graph/search.cc speed arrays and ncclTopoDupChannels;
// src/graph/topo.h SMxx_NVLINK_BW; src/include/device.h and comm.h thread counts and thresholds;
// src/transport/nvls.cc NVLS channel counts). Where trainsim simplifies NCCL's search, the comment
// says how.
#include "models/collectives/nccl_tuning.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::models::collectives {

namespace {

constexpr int kTree = 0, kRing = 1, kCollNetDirect = 2, kCollNetChain = 3, kNvls = 4, kNvlsTree = 5, kPat = 6;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kHwNvlink = 0, kHwNet = 2;

// tuning.cc ncclTunerConstantsDefaults (microseconds; [algorithm][protocol] = LL, LL128, Simple).
constexpr double kBaseLat[kNcclAlgorithms][kProtocols] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
                                                          {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
constexpr double kHwLat[3][kNcclAlgorithms][kProtocols] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},  // NVLink
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},     // PCI
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};   // network
// [generation or CPU][N1, N2, N4+ nodes], GB/s.
constexpr double kLlMaxBw[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChRingLL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
constexpr double kPerChTreeLL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChTree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kPerChNvlsTree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 80.0}};
constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// Powers of two from 64 B (log2(bytes / 64) = 0) to 256 MB, per protocol.
constexpr double kTreeCorrection[kProtocols][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
// topo.h: NCCL's bandwidth of one NVLink, per generation (GB/s), and the physical per-link rate
// used to count a GPU's links from the cluster's NVLink bandwidth: shared/data/hardware.json
// [nvlink_generations], 300 GB/s / 12 links (NVLink 3), 450 / 18 (NVLink 4), 900 / 18 (NVLink 5);
// Volta's NVLink 2 is 25 GB/s per link too (NVIDIA V100 datasheet: 300 GB/s over 6 links).
constexpr double kNvlinkBw[4] = {20.0, 20.0, 20.6, 40.1};
constexpr double kLinkRate[4] = {25.0, 25.0, 25.0, 50.0};
// search.cc speed arrays (GB/s per channel), tried fastest first.
const std::vector<double> kIntraSpeeds[4] = {{40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3},
                                             {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3},
                                             {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3},
                                             {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18}};
const std::vector<double> kInterSpeeds[4] = {
    {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12},
    {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12},
    {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12},
    {96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12}};
constexpr int32_t kMaxRingChannels = 32;  // MAXCHANNELS / 2, the search's limit
constexpr int64_t kMaxNvlsArity = 32;     // device.h NCCL_MAX_NVLS_ARITY: NVLS graph channels (heads)
// device.h / comm.h: threads per channel and bytes per thread before another channel is used.
constexpr int32_t kMaxThreads[kProtocols] = {512, 640, 512};  // LL, LL128, Simple (NCCL_*_MAX_NTHREADS)
constexpr int32_t kThreadThreshold[kProtocols] = {8, 8, 64};  // NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD
// nvls.cc ncclNvlsTuning: NVLS channels (CTAs) a call runs on. Hopper 16; Blackwell 24 on one
// NVLink domain (NVLS_NCHANNELS_SM100_NVL) and across domains 32, or per ncclNvlsTreeSm100Tuning
// from the NIC speed and the GPUs per domain (nvls_run_channels).
constexpr int32_t kNvlsRunChannels[4] = {0, 0, 16, 24};

int32_t nvls_run_channels(int arch, int32_t nodes, int64_t per_node, double nic_GBps) {
  if (arch < 3 || nodes <= 1) return kNvlsRunChannels[arch];
  if (nodes == 2 && nic_GBps >= 48.0) return 32;
  if (nic_GBps >= 96.0) return per_node <= 8 ? 24 : 32;
  if (nic_GBps >= 48.0) return 24;
  return 32;
}

int arch_index(const std::string& a) {
  if (a == "volta") return 0;
  if (a == "ampere") return 1;
  if (a == "blackwell") return 3;
  return 2;
}

int cpu_index(const std::string& c) { return c == "amd" ? 1 : c == "arm" ? 2 : 0; }

// tuning.cc getNetOverhead: a network step's post overhead in us (Intel and Arm 1, AMD 2), x3 for
// Simple (ring latency across servers).
double net_overhead(const NcclSystem& s, int p) { return (s.cpu == 1 ? 2.0 : 1.0) * (p == kSimple ? 3.0 : 1.0); }

const hardware::ProtocolScale& scale_of(const NcclSystem& s, int a, int p) {
  const auto& c = s.calibration;
  if (a == kNvls || a == kNvlsTree) return c.nvls;
  return p == kLL ? c.ll : p == kLL128 ? c.ll128 : c.simple;
}

// First speed of `speeds` at most `limit`, or the slowest.
double first_speed_at_most(const std::vector<double>& speeds, double limit) {
  for (double v : speeds)
    if (v <= limit) return v;
  return speeds.back();
}

}  // namespace

const char* to_string(Protocol p) {
  switch (p) {
    case Protocol::kLL: return "LL";
    case Protocol::kLL128: return "LL128";
    case Protocol::kSimple: return "Simple";
  }
  return "?";
}

Protocol parse_protocol(const std::string& text, const std::string& path) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const std::string v = sim::config::read_enum(sim::config::Json(lower), path, {"ll", "ll128", "simple"});
  return v == "ll" ? Protocol::kLL : v == "ll128" ? Protocol::kLL128 : Protocol::kSimple;
}

double payload_efficiency(Protocol p) { return p == Protocol::kLL ? 0.5 : p == Protocol::kLL128 ? 120.0 / 128.0 : 1.0; }

const char* to_string(NcclAlgorithm a) {
  static constexpr const char* kNames[kNcclAlgorithms] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                                          "NVLSTree", "PAT"};
  return kNames[static_cast<int>(a)];
}

std::string plan_algorithm(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::kTree: return "double_binary_tree";
    case NcclAlgorithm::kNvls:
    case NcclAlgorithm::kNvlsTree: return "nvls";
    case NcclAlgorithm::kPat: return "halving_doubling";
    default: return "ring";
  }
}

NcclSystem nccl_system(const hardware::ClusterSpec& c, int64_t ranks, int64_t per_node, bool nvls, int32_t channels) {
  NcclSystem s;
  s.calibration = c.nccl;
  s.arch = arch_index(c.nccl.architecture);
  s.cpu = cpu_index(c.nccl.cpu);
  s.ranks = static_cast<int32_t>(std::max<int64_t>(ranks, 1));
  per_node = std::clamp<int64_t>(per_node, 1, s.ranks);
  s.nodes = static_cast<int32_t>((s.ranks + per_node - 1) / per_node);
  // A GPU's NVLink bandwidth as NCCL counts it: its links x NCCL's per-link figure (topo.h).
  const double links = std::max(1.0, std::round(c.nvlink_bandwidth.gbyte_per_second() / kLinkRate[s.arch]));
  const double nvlink = links * kNvlinkBw[s.arch];
  if (s.nodes == 1) {
    // One server behind NVSwitches: the fastest speed of the array whose channels fill the GPU's
    // NVLinks (the search stops when nChannels x speed reaches the total), then the channels are
    // duplicated at half the speed (ncclTopoDupChannels).
    double speed = first_speed_at_most(kIntraSpeeds[s.arch], nvlink);
    int32_t n = std::clamp(static_cast<int32_t>(std::floor(nvlink / speed)), 1, kMaxRingChannels);
    if (speed >= 25.0 && !(s.arch >= 2 && speed < 50.0 && n > 4)) {
      n = std::min(2 * n, kMaxRingChannels);
      speed /= 2.0;
    }
    s.channels = n;
    s.bw_intra = s.bw_inter = speed;
  } else {
    // Across servers every channel leaves through one NIC (PXN lets any GPU reach any NIC): the
    // fastest speed of the network array that one NIC carries, and as many channels as the NICs
    // of the group's GPUs carry at that speed.
    const double nic = c.nic_bandwidth.gbyte_per_second();
    const double speed = first_speed_at_most(kInterSpeeds[s.arch], std::min(nic, nvlink));
    const double per_nic = std::max(1.0, std::floor(nic / speed));
    const double gpu_share = c.nic_share();
    auto n = static_cast<int32_t>(std::max(1.0, per_nic * gpu_share * static_cast<double>(per_node)));
    // Each channel also crosses every GPU of the server on NVLink, and a GPU forwards on NVLink in
    // every channel but the one that leaves through its own NIC: channels x speed fit the GPU's
    // NVLinks plus one (binds on a 72-GPU NVLink domain: 16 channels at 48 GB/s, not 72).
    n = std::min(n, static_cast<int32_t>(std::floor(nvlink / speed)) + 1);
    s.channels = std::clamp(n, 1, kMaxRingChannels);
    s.bw_intra = s.bw_inter = speed;
  }
  if (channels > 0) s.channels = std::min(channels, 64);
  // NVLink SHARP: Hopper and later NVSwitch servers with at least 2 ranks each. The NVLS graph
  // has one channel per local GPU at the fastest speed they fill (non-ring patterns may count
  // n/(n-1) of the GPU's NVLink, search.cc).
  if (nvls && s.arch >= 2 && per_node >= 2) {
    const double n = static_cast<double>(std::min<int64_t>(per_node, kMaxNvlsArity));
    s.nvls_channels = static_cast<int32_t>(n);
    s.nvls_run = nvls_run_channels(s.arch, s.nodes, per_node, c.nic_bandwidth.gbyte_per_second());
    s.nvls_bw = kIntraSpeeds[s.arch].back();
    for (double v : kIntraSpeeds[s.arch])
      if (v * n <= nvlink * n / (n - 1.0)) {
        s.nvls_bw = v;
        break;
      }
  }
  return s;
}

NcclEntry nccl_entry(CollectiveOp op, NcclAlgorithm algorithm, Protocol protocol, const NcclSystem& s) {
  const int a = static_cast<int>(algorithm), p = static_cast<int>(protocol);
  const int n = s.ranks, m = s.nodes, g = s.arch;
  if (n <= 1) return {};
  const bool ar = op == CollectiveOp::kAllReduce;
  const bool ag_rs = op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
  const bool rooted = op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce;
  if (!ar && !ag_rs && !rooted) return {};
  if (rooted && a != kRing) return {};
  if (ag_rs && a != kPat && a != kRing && a != kNvls && a != kCollNetDirect) return {};
  if (ar && a == kPat) return {};
  if ((a == kNvls || a == kNvlsTree) && p != kSimple) return {};
  const double ppn = static_cast<double>(n) / m;
  // PAT: one GPU per server (tuning.cc ncclPatEnable), Simple only.
  if (a == kPat && (p != kSimple || m != n)) return {};
  // Enabled algorithms (tuning.cc): NVLS-tree needs several servers, NVLS across servers and
  // CollNet need SHARP in the fabric; NVLS needs the NVSwitch's and 2 channels.
  if ((a == kNvls || a == kNvlsTree) && s.nvls_channels < 2) return {};
  if (a == kNvlsTree && m == 1) return {};
  if ((a == kCollNetDirect || a == kCollNetChain) && (!s.collnet || p != kSimple)) return {};
  if (a == kNvls && m > 1 && !s.collnet) return {};
  if (ag_rs && (a == kNvls || a == kCollNetDirect) && m > 1) return {};  // needs CollNet all-gather support
  const int steps = ar ? 2 * (n - 1) : ag_rs ? n - 1 : n;
  // LL's cap: the GPU generation on one server, the CPU across servers (AMD row 1, others row 0).
  const int index2 = m <= 2 ? m - 1 : 2, index1 = m == 1 ? g : s.cpu == 1 ? 1 : 0;
  const bool collnet = a == kCollNetDirect || a == kCollNetChain;
  const bool nvls_algo = a == kNvls || a == kNvlsTree;
  const int32_t channels = nvls_algo ? s.nvls_channels : s.channels;
  double bw = m <= 2 || collnet ? s.bw_intra : s.bw_inter;
  if (nvls_algo) {
    const double per = s.nvls_bw;
    double intra = per * kNvlsEfficiency[g] * (channels - 1) / channels;
    intra *= ar ? 2.0 : (ppn - 1) / ppn;
    const double inter = s.bw_inter * ((m <= 2 && a == kNvlsTree) ? 2 : 1);
    // Simplification: NCCL's NVLS graph across servers runs at the network's speed inside the
    // server too; trainsim keeps the server's own NVLS graph speed `per` as a bound (NVLS-tree's
    // intra-server half is the same switch reduction), so NVLS-tree is never faster per GPU than
    // NVLS on one server. It binds on NVL72 racks (32 channels at 20 GB/s) and on two Hopper servers.
    bw = std::min({intra, per, m > 1 ? inter : per, a == kNvlsTree ? kPerChNvlsTree[g][index2] : 1e30});
  }
  double bus = channels * bw;
  if (a == kRing && p == kLL) bus = std::min(kLlMaxBw[index1][index2], bus * 0.5);
  if (a == kRing && p == kLL128) bus = std::min(bus * 0.92, channels * kPerChRingLL128[g][index2]);
  if (a == kTree && ar) bus = std::min(bus * 0.92, channels * kPerChTree[g][index2]);
  if (a == kTree && p == kLL) bus = std::min(bus / 3.8, kLlMaxBw[index1][index2]);
  if (a == kTree && p == kLL128)
    bus = std::min(bus * (m == 1 ? 7.0 / 9.0 : 120.0 / 128.0), channels * kPerChTreeLL128[g][index2]);
  if (a == kPat) bus *= 0.75;
  if (a == kCollNetDirect && ag_rs) bus = ppn * std::min(s.bw_intra, s.bw_inter * 0.9);
  if (a == kCollNetDirect && !ag_rs) {
    double factor = ppn / channels;
    factor -= (factor - 1) / 2;
    bus /= factor;
    if (g >= 2) bus *= 0.85;
  }
  if (!(a != kRing && ag_rs)) bus *= (a == kRing || nvls_algo) ? static_cast<double>(n) / steps : 0.5;
  // Latency.
  const int intra_hw = kHwNvlink;
  double lat = kBaseLat[a][p];
  double intra_lat = kHwLat[intra_hw][a][p];
  const double inter_lat = ppn == 1 ? kHwLat[kHwNet][kTree][p] : kHwLat[kHwNet][a][p];
  if (a == kRing) {
    if (rooted) {
      // Rooted rings: NCCL's search usually finds the same channels twice (sameChannels): one step.
      lat += kHwLat[m == 1 ? intra_hw : kHwNet][a][p];
    } else {
      const double overhead = m > 1 ? net_overhead(s, p) : 0.0;
      intra_lat = std::max(intra_lat, overhead);
      const int inter_steps = m == 1 ? 0 : ar ? 2 * (m - 1) : m - 1;
      lat += (steps - inter_steps) * intra_lat + inter_steps * inter_lat;
    }
  } else if (a == kTree) {
    if (ar) lat += 2 * ((n / m - 1) * intra_lat + std::floor(std::log2(m)) * inter_lat);
  } else if (a == kCollNetDirect) {
    lat += 2 * (std::min(1, n / m - 1) * intra_lat + (n / m - 1) * 0.4) + inter_lat;
  } else if (a == kCollNetChain) {
    lat += 2 * (n / m - 1) * intra_lat + inter_lat;
  } else if (a == kNvls) {
    lat = intra_lat + (m > 1 ? inter_lat : 0.0);
  } else if (a == kNvlsTree) {
    lat += intra_lat + 2 * std::floor(std::log2(m)) * inter_lat;
  } else if (a == kPat && ag_rs) {
    lat += std::floor(std::log2(m)) * (inter_lat / 3.5) + n * 2.8;
  }
  if (bus <= 0.0) return {};
  const hardware::ProtocolScale& k = scale_of(s, a, p);
  return {lat * k.latency, bus * k.bandwidth};
}

NcclSteps nccl_steps(CollectiveOp op, NcclAlgorithm algorithm, Protocol protocol, const NcclSystem& s) {
  const NcclEntry e = nccl_entry(op, algorithm, protocol, s);
  const int a = static_cast<int>(algorithm), p = static_cast<int>(protocol);
  const double k = scale_of(s, a, p).latency;
  NcclSteps out;
  if (e.bandwidth_GBps <= 0.0) return out;
  if (a != kRing && a != kTree) {
    out.base_us = e.latency_us;
    return out;
  }
  const double ppn = static_cast<double>(s.ranks) / s.nodes;
  out.base_us = kBaseLat[a][p] * k;
  double intra = kHwLat[kHwNvlink][a][p];
  if (a == kRing && s.nodes > 1) intra = std::max(intra, net_overhead(s, p));
  out.intra_us = intra * k;
  out.inter_us = (ppn == 1 ? kHwLat[kHwNet][kTree][p] : kHwLat[kHwNet][a][p]) * k;
  return out;
}

double nccl_time_us(CollectiveOp op, NcclAlgorithm algorithm, Protocol protocol, sim::Bytes bytes,
                    const NcclSystem& s) {
  const NcclEntry e = nccl_entry(op, algorithm, protocol, s);
  if (e.bandwidth_GBps <= 0.0) return -1.0;
  double bw = e.bandwidth_GBps, lat = e.latency_us;
  const int64_t b = bytes.count();
  const int log_size = b >> 6 > 0 ? static_cast<int>(std::floor(std::log2(static_cast<double>(b >> 6)))) : -1;
  if (algorithm == NcclAlgorithm::kTree && op == CollectiveOp::kAllReduce && log_size >= 0 && log_size < 23)
    bw *= kTreeCorrection[static_cast<int>(protocol)][log_size];
  // Blackwell NVLS-tree on x86 hosts takes the same correction (not on Grace).
  if (algorithm == NcclAlgorithm::kNvlsTree && op == CollectiveOp::kAllReduce && log_size >= 0 && log_size < 24 &&
      s.arch >= 3 && s.cpu != 2)
    bw *= kTreeCorrection[static_cast<int>(protocol)][log_size];
  // "Plateau effect of ring" (tuning.cc), compute capability 8.0 and later.
  if (algorithm == NcclAlgorithm::kRing && protocol == Protocol::kSimple && s.nodes > 1 &&
      op == CollectiveOp::kAllReduce && b / (static_cast<int64_t>(s.channels) * s.ranks) >= 64)
    lat *= s.arch == 0 ? 1.9 : 1.4;
  return lat + static_cast<double>(b) / (1000.0 * bw);
}

std::optional<NcclChoice> nccl_choose(CollectiveOp op, sim::Bytes bytes, const NcclSystem& s,
                                      std::optional<Protocol> protocol, std::optional<NcclAlgorithm> algorithm,
                                      unsigned excluded) {
  std::optional<NcclChoice> best;
  for (int a = 0; a < kNcclAlgorithms; ++a) {
    if ((algorithm && static_cast<int>(*algorithm) != a) || (excluded >> a & 1u) != 0) continue;
    for (int p = 0; p < kProtocols; ++p) {
      if (protocol && static_cast<int>(*protocol) != p) continue;
      const double t = nccl_time_us(op, static_cast<NcclAlgorithm>(a), static_cast<Protocol>(p), bytes, s);
      if (t < 0.0 || (best && t >= best->time_us)) continue;
      best = NcclChoice{static_cast<NcclAlgorithm>(a), static_cast<Protocol>(p), 1, 0, t};
    }
  }
  if (!best) return best;
  // Channels and threads the message fills (enqueue.cc topoGetAlgoInfo).
  const int p = static_cast<int>(best->protocol);
  const bool nvls_algo = best->algorithm == NcclAlgorithm::kNvls || best->algorithm == NcclAlgorithm::kNvlsTree;
  int64_t nc = nvls_algo ? s.nvls_run : s.channels;
  int64_t nt =
      best->algorithm == NcclAlgorithm::kRing || best->algorithm == NcclAlgorithm::kTree ? kMaxThreads[p] : 640;
  int64_t threshold = kThreadThreshold[p];
  if (best->algorithm == NcclAlgorithm::kRing && best->protocol == Protocol::kLL) threshold *= s.ranks;
  const int64_t b = bytes.count();
  if (!nvls_algo && best->algorithm != NcclAlgorithm::kCollNetDirect) {
    while (b < nc * nt * threshold && nc >= 2) --nc;
    while (b < nc * nt * threshold && nt % 128 == 0) nt /= 2;
  }
  if (best->protocol == Protocol::kSimple && best->algorithm == NcclAlgorithm::kRing) nt += 32;  // sync warp
  if (best->protocol == Protocol::kSimple && best->algorithm == NcclAlgorithm::kTree) nt += 4 * 32;
  nt = std::max<int64_t>(nt, 3 * 32);
  if (best->algorithm == NcclAlgorithm::kTree || best->algorithm == NcclAlgorithm::kPat) nt = 640;
  best->channels = static_cast<int32_t>(nc);
  best->threads = static_cast<int32_t>(nt);
  return best;
}

}  // namespace trainsim::models::collectives
