#include "traces/chakra/node.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include "sim/error.hpp"

namespace trainsim::traces::chakra {

namespace col = models::collectives;

namespace {
std::string str(const std::ostringstream& os) { return os.str(); }
}  // namespace

col::CollectiveOp collective_of(const Node& n, CommType& type) {
  const auto it = n.attrs.find("comm_type");
  if (it == n.attrs.end())
    throw ConfigError(n.path + ".attr", "a COMM_COLL_NODE needs a comm_type attribute",
                      "add {\"name\": \"comm_type\", \"int64Val\": \"0\"} (0 = ALL_REDUCE, et_def.proto "
                      "CollectiveCommType)");
  bool ok = false;
  if (it->second.kind == AttrValue::Kind::kString) {
    for (int k = 0; k <= static_cast<int>(CommType::kBarrier) && !ok; ++k)
      if (it->second.s == to_string(static_cast<CommType>(k))) type = static_cast<CommType>(k), ok = true;
  } else {
    const int64_t v = *n.int_attr("comm_type");
    if (v >= 0 && v <= static_cast<int64_t>(CommType::kBarrier)) type = static_cast<CommType>(v), ok = true;
  }
  if (!ok)
    throw ConfigError(n.path + ".attr.comm_type", "unknown collective type",
                      "use a CollectiveCommType of et_def.proto: 0 ALL_REDUCE ... 9 BARRIER");
  switch (type) {
    case CommType::kAllReduce:
    case CommType::kBarrier: return col::CollectiveOp::kAllReduce;
    case CommType::kReduce: return col::CollectiveOp::kReduce;
    case CommType::kAllGather: return col::CollectiveOp::kAllGather;
    case CommType::kBroadcast: return col::CollectiveOp::kBroadcast;
    case CommType::kAllToAll: return col::CollectiveOp::kAllToAll;
    case CommType::kReduceScatter:
    case CommType::kReduceScatterBlock: return col::CollectiveOp::kReduceScatter;
    default: break;
  }
  throw ConfigError(n.path + ".attr.comm_type", std::string("collective ") + to_string(type) + " is not simulated",
                    "trainsim runs ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER and "
                    "BARRIER; replace it with one of them");
}

int64_t comm_bytes(const Node& n) {
  const auto v = n.int_attr("comm_size");
  if (!v)
    throw ConfigError(n.path + ".attr", std::string("a ") + to_string(n.type) + " needs a comm_size attribute (bytes)",
                      "add {\"name\": \"comm_size\", \"int64Val\": \"BYTES\"}");
  if (*v < 0) throw ConfigError(n.path + ".attr.comm_size", "must not be negative", "give the bytes moved");
  const auto type = n.attrs.find("comm_type");
  const bool barrier =
      n.type == NodeType::kCommColl && type != n.attrs.end() &&
      ((type->second.kind == AttrValue::Kind::kInt && type->second.i == static_cast<int64_t>(CommType::kBarrier)) ||
       (type->second.kind == AttrValue::Kind::kString && type->second.s == "BARRIER"));
  return barrier ? std::max<int64_t>(*v, 4) : *v;
}

int32_t comm_peer(const Node& n, const char* key, int32_t ranks) {
  const auto v = n.int_attr(key);
  if (!v) {
    std::ostringstream m;
    m << "a " << to_string(n.type) << " needs a " << key << " attribute (the peer rank)";
    throw ConfigError(n.path + ".attr", str(m), std::string("add {\"name\": \"") + key + "\", \"int32Val\": RANK}");
  }
  if (*v < 0 || *v >= ranks) {
    std::ostringstream m;
    m << "rank " << *v << " is not in the trace (ranks 0 to " << ranks - 1 << ", one per file)";
    throw ConfigError(n.path + ".attr." + key, str(m), "give every rank's file, or fix the peer");
  }
  return static_cast<int32_t>(*v);
}

double count_attr(const Node& n, const char* key) {
  const auto v = n.int_attr(key);
  return v && *v > 0 ? static_cast<double>(*v) : 0.0;
}

sim::Time roofline_time(const models::hardware::GpuSpec& gpu, models::compute::Precision precision, double flops,
                        double bytes) {
  const models::compute::ComputeModel cm(gpu, precision);
  const double eff = models::compute::quantized(precision) ? gpu.fp8_gemm_efficiency : gpu.gemm_efficiency;
  const double math = flops / (cm.peak().per_second() * eff);
  const double memory = bytes / (gpu.hbm_bandwidth.bytes_per_second() * gpu.hbm_efficiency);
  return sim::Time::from_seconds_ceil(std::max(math, memory));
}

GpuTime gpu_time(const Node& n, const models::hardware::GpuSpec& target, models::compute::Precision precision,
                 const models::hardware::GpuSpec* recorded) {
  const sim::Time t = sim::Time::us(static_cast<int64_t>(n.duration_micros));
  const double flops = count_attr(n, "num_ops"), bytes = count_attr(n, "tensor_size");
  const bool ops = flops > 0 || bytes > 0;
  if (t == sim::Time::zero()) {
    if (!ops) return {};  // ASTRA-sim skips these too
    return {roofline_time(target, precision, flops, bytes) + target.kernel_launch, GpuTime::Source::kRoofline};
  }
  if (!recorded || recorded->name == target.name) return {t, GpuTime::Source::kRecorded};
  if (!ops) return {t, GpuTime::Source::kKept};
  // The ratio keeps what the recording measured (efficiency, gaps) and moves only the bound.
  const double from = roofline_time(*recorded, precision, flops, bytes).seconds();
  const double to = roofline_time(target, precision, flops, bytes).seconds();
  return {sim::Time::from_seconds_ceil(t.seconds() * to / from), GpuTime::Source::kRescaled};
}

}  // namespace trainsim::traces::chakra
