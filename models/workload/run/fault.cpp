#include "models/workload/run/fault.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <boost/range/iterator_range.hpp>

#include "models/hardware/cluster_spec.hpp"
#include "models/workload/job/job.hpp"
#include "sim/checked.hpp"
#include "sim/config/schema.hpp"
#include "sim/error.hpp"
#include "topology/graph.hpp"
#include "topology/spec.hpp"

namespace trainsim::models::workload {

namespace {

constexpr const char* kSyntax =
    "write link:A/B@T[*F][,reroute=D], uplink:R@T[*F], gpu:R@T or slow-gpu:R[@T]*S, "
    "e.g. link:rail_leaf0/spine3@2ms";

ConfigError bad(const std::string& path, const std::string& spec, const std::string& what) {
  std::ostringstream msg;
  msg << what << " in \"" << spec << "\"";
  return ConfigError(path, msg.str(), kSyntax);
}

sim::Time parse_duration(const std::string& text, const std::string& path, const std::string& spec, const char* what) {
  if (!text.empty() && text[0] == '-') throw bad(path, spec, std::string(what) + " must not be negative, got " + text);
  if (text == "0") return sim::Time::zero();
  try {
    return sim::parse_time(text, path);
  } catch (const ConfigError&) {
    throw bad(path, spec, std::string("expected a duration like 2ms for the ") + what + ", got \"" + text + "\"");
  }
}

int32_t parse_rank(const std::string& text, const std::string& path, const std::string& spec) {
  bool digits = !text.empty() && text.size() <= 9;
  for (const char c : text) digits = digits && c >= '0' && c <= '9';
  if (!digits) throw bad(path, spec, "expected a GPU rank (0, 1, ...), got \"" + text + "\"");
  return static_cast<int32_t>(std::strtol(text.c_str(), nullptr, 10));
}

bool kind_is_gpu(const std::string& spec) { return spec.rfind("slow-gpu:", 0) == 0; }

double parse_fraction(const std::string& text, const std::string& path, const std::string& spec, const char* what) {
  char* end = nullptr;
  const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw bad(path, spec, std::string("expected a number for the ") + what + ", got \"" + text + "\"");
  if (v <= 0.0 || v >= 1.0)
    throw bad(path, spec, std::string("the ") + what + " must lie strictly between 0 and 1, got " + text);
  // Slower than a millionth is a failure, not a slowdown, and would stretch durations past the
  // clock (sim/checked.hpp).
  if (v < sim::kMinSlowdownFactor)
    throw ConfigError(path, std::string("the ") + what + " must be at least 1e-6, got " + text + " in \"" + spec + "\"",
                      kind_is_gpu(spec) ? "a GPU slower than that has failed: write gpu:R@T"
                                        : "a link slower than that has failed: drop *F");
  return v;
}

// Shortest text that reads back as the same double.
std::string number(double v) {
  for (int p = 1; p <= 17; ++p) {
    std::ostringstream s;
    s.precision(p);
    s << v;
    if (std::strtod(s.str().c_str(), nullptr) == v) return s.str();
  }
  return std::to_string(v);
}

// A duration in the largest unit that divides it.
std::string duration(sim::Time t) {
  const int64_t ns = t.count_ns();
  if (ns == 0) return "0";
  for (const auto& [unit, scale] :
       {std::pair{"s", int64_t{1'000'000'000}}, std::pair{"ms", int64_t{1'000'000}}, std::pair{"us", int64_t{1'000}}})
    if (ns % scale == 0) return std::to_string(ns / scale) + unit;
  return std::to_string(ns) + "ns";
}

}  // namespace

Fault Fault::slow_gpu(int32_t rank, double speed, sim::Time at) {
  Fault f;
  f.kind = Kind::kGpuSlow;
  f.gpu = rank;
  f.factor = speed;
  f.at = at;
  return f;
}

Fault Fault::degraded_uplink(int32_t rank, double factor, sim::Time at) {
  Fault f;
  f.kind = Kind::kLinkDegrade;
  f.gpu = rank;
  f.factor = factor;
  f.at = at;
  return f;
}

Fault Fault::dead_uplink(int32_t rank, sim::Time at, sim::Time reroute_delay) {
  Fault f;
  f.kind = Kind::kLinkDown;
  f.gpu = rank;
  f.at = at;
  f.reroute_delay = reroute_delay;
  return f;
}

Fault Fault::dead_gpu(int32_t rank, sim::Time at) {
  Fault f;
  f.kind = Kind::kGpuDown;
  f.gpu = rank;
  f.at = at;
  return f;
}

const char* to_string(Fault::Kind k) {
  switch (k) {
    case Fault::Kind::kLinkDown: return "link_down";
    case Fault::Kind::kLinkDegrade: return "link_degrade";
    case Fault::Kind::kGpuDown: return "gpu_down";
    case Fault::Kind::kGpuSlow: return "gpu_slow";
  }
  return "?";
}

std::string to_string(const Fault& f) {
  std::ostringstream s;
  if (f.is_link()) {
    if (f.a.empty())
      s << "uplink:" << f.gpu;
    else
      s << "link:" << f.a << "/" << f.b;
  } else {
    s << (f.kind == Fault::Kind::kGpuDown ? "gpu:" : "slow-gpu:") << f.gpu;
  }
  s << "@" << duration(f.at);
  if (f.kind == Fault::Kind::kLinkDegrade || f.kind == Fault::Kind::kGpuSlow) s << "*" << number(f.factor);
  if (f.kind == Fault::Kind::kLinkDown && f.reroute_delay != kDefaultRerouteDelay)
    s << ",reroute=" << duration(f.reroute_delay);
  return s.str();
}

Fault parse_fault(std::string_view text, const std::string& path) {
  const std::string spec(text);
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) throw bad(path, spec, "expected KIND:TARGET");
  const std::string kind = spec.substr(0, colon);
  const std::vector<std::string> kinds = {"link", "uplink", "gpu", "slow-gpu"};
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    const std::string near = sim::config::did_you_mean(kind, kinds);
    throw ConfigError(path, "unknown fault kind \"" + kind + "\" in \"" + spec + "\"",
                      (near.empty() ? std::string() : "did you mean " + near + "? ") + kSyntax);
  }
  std::string rest = spec.substr(colon + 1);
  Fault f;
  // Options after the first comma: only reroute=D.
  if (const size_t comma = rest.find(','); comma != std::string::npos) {
    const std::string opt = rest.substr(comma + 1);
    rest = rest.substr(0, comma);
    if (opt.rfind("reroute=", 0) != 0 || (kind != "link" && kind != "uplink"))
      throw bad(path, spec, "unexpected option \"" + opt + "\" (only link faults take reroute=D)");
    f.reroute_delay = parse_duration(opt.substr(8), path, spec, "reroute delay");
  }
  bool has_factor = false;
  if (const size_t star = rest.find('*'); star != std::string::npos) {
    const char* what = kind == "slow-gpu" ? "speed" : "capacity factor";
    if (kind == "gpu") throw bad(path, spec, "a dead GPU takes no factor");
    f.factor = parse_fraction(rest.substr(star + 1), path, spec, what);
    rest = rest.substr(0, star);
    has_factor = true;
  }
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    f.at = parse_duration(rest.substr(at + 1), path, spec, "time");
    rest = rest.substr(0, at);
  }
  if (kind == "link") {
    const size_t slash = rest.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == rest.size() ||
        rest.find('/', slash + 1) != std::string::npos)
      throw bad(path, spec, "expected two node names A/B, got \"" + rest + "\"");
    f.a = rest.substr(0, slash);
    f.b = rest.substr(slash + 1);
  } else {
    f.gpu = parse_rank(rest, path, spec);
  }
  if (kind == "link" || kind == "uplink")
    f.kind = has_factor ? Fault::Kind::kLinkDegrade : Fault::Kind::kLinkDown;
  else if (kind == "gpu")
    f.kind = Fault::Kind::kGpuDown;
  else if (!has_factor)
    throw bad(path, spec, "a slow GPU needs its speed, *S");
  else
    f.kind = Fault::Kind::kGpuSlow;
  return f;
}

std::vector<topology::LinkId> fault_links(const Fault& f, const topology::Topology& t, const std::string& path) {
  TRAINSIM_ASSERT(f.is_link(), "not a link fault");
  std::vector<topology::LinkId> out;
  const auto& g = t.graph();
  if (f.a.empty()) {
    if (f.gpu < 0 || static_cast<size_t>(f.gpu) >= t.gpu_count()) {
      std::ostringstream msg;
      msg << "GPU " << f.gpu << " is not in the topology (" << t.gpu_count() << " GPUs)";
      throw ConfigError(path, msg.str(), "pick a rank of the job");
    }
    // The GPU's cable to a fabric switch, or through its own NIC (an in-server device) to one.
    const topology::Vertex gpu = t.gpu_node(static_cast<size_t>(f.gpu));
    int64_t best = -1;
    const auto consider = [&](topology::Vertex from) {
      for (const auto e : boost::make_iterator_range(boost::out_edges(from, g)))
        if (t.node(boost::target(e, g)).server < 0 && (best < 0 || g[e].id < best)) best = g[e].id;
    };
    consider(gpu);
    if (best < 0)
      for (const auto e : boost::make_iterator_range(boost::out_edges(gpu, g)))
        if (t.node(boost::target(e, g)).kind == topology::NodeKind::kNic) consider(boost::target(e, g));
    if (best < 0) {
      std::ostringstream msg;
      msg << "GPU " << f.gpu << " has no link into the network fabric";
      throw ConfigError(path, msg.str(), "name the link's two nodes: link:A/B@T");
    }
    const auto id = static_cast<topology::LinkId>(best);
    out = {std::min(id, topology::Topology::reverse(id)), std::max(id, topology::Topology::reverse(id))};
    return out;
  }
  const topology::Vertex a = topology::node_named(t, f.a, path), b = topology::node_named(t, f.b, path);
  for (const auto e : boost::make_iterator_range(boost::out_edges(a, g)))
    if (boost::target(e, g) == b) {
      out.push_back(g[e].id);
      out.push_back(topology::Topology::reverse(g[e].id));
    }
  if (out.empty()) {
    std::ostringstream msg;
    msg << "no link between \"" << f.a << "\" and \"" << f.b << "\"";
    throw ConfigError(path, msg.str(), "name two nodes joined by a cable (see `trainsim topology --dot`)");
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_faults(const Job& job, const std::vector<Fault>& faults, const std::string& path) {
  bool links = false;
  for (const Fault& f : faults) {
    if (f.gpu >= 0 && f.gpu >= job.gpus) {
      std::ostringstream msg;
      msg << "GPU " << f.gpu << " is not in the job (ranks 0 to " << job.gpus - 1 << ") in \"" << to_string(f) << "\"";
      std::ostringstream hint;
      hint << "pick a rank below " << job.gpus;
      throw ConfigError(path, msg.str(), hint.str());
    }
    if (f.is_link() && job.network != Network::kFlow)
      throw ConfigError(path, "link faults need the flow network, in \"" + to_string(f) + "\"",
                        "drop --network analytic");
    links = links || f.is_link();
  }
  if (!links) return;
  const sim::config::Json spec = hardware::network_spec(job.cluster);
  const topology::Topology t =
      topology::build_topology(spec, hardware::network_gpus(job.cluster, job.gpus), "cluster.network");
  for (const Fault& f : faults)
    if (f.is_link()) fault_links(f, t, path);
}

}  // namespace trainsim::models::workload
