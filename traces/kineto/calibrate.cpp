#include "traces/kineto/calibrate.hpp"

#include <map>
#include <sstream>

#include "models/presets/catalog.hpp"
#include "sim/error.hpp"
#include "traces/kineto/devices.hpp"

namespace trainsim::traces {

using sim::config::Json;

models::hardware::GpuSpec trace_gpu(const KinetoTrace& trace, const std::string& gpu_ref) {
  std::string ref = gpu_ref;
  if (ref.empty()) ref = gpu_preset_for_device(trace.device_name, trace.device_memory);
  if (ref.empty())
    throw ConfigError("--gpu",
                      trace.device_name.empty() ? "the trace names no GPU (it has no deviceProperties)"
                                                : "the trace's GPU \"" + trace.device_name + "\" matches no GPU preset",
                      "pass --gpu with a preset from `trainsim list gpus`, or a GPU file");
  return models::hardware::parse_gpu(models::presets::resolve("gpus", ref, "--gpu"), "--gpu");
}

double ClassSummary::error_before() const {
  return priced_measured.count_ns() > 0 ? before.seconds() / priced_measured.seconds() - 1.0 : 0.0;
}
double ClassSummary::error_after() const {
  return priced_measured.count_ns() > 0 ? after.seconds() / priced_measured.seconds() - 1.0 : 0.0;
}

namespace {

// The operators of one shape: their measured times (seconds) and what the fit needs.
struct Shape {
  OpInfo info;
  int kernels = 1;
  std::vector<double> times;
};

models::calibration::Measurement measurement(const std::string& name, const Shape& s) {
  models::calibration::Measurement m;
  m.name = name;
  m.kernels = s.kernels;
  m.flops = s.info.flops;
  switch (s.info.cls) {
    case OpClass::kGemm:
      m.kind = models::calibration::OpKind::kGemm;
      m.m = s.info.gemm.m;
      m.n = s.info.gemm.n;
      m.k = s.info.gemm.k;
      m.batch = s.info.gemm.batch;
      m.precision = s.info.precision;
      break;
    case OpClass::kAttentionFwd: m.kind = models::calibration::OpKind::kAttentionFwd; break;
    case OpClass::kAttentionBwd: m.kind = models::calibration::OpKind::kAttentionBwd; break;
    default:
      m.kind = models::calibration::OpKind::kMemory;
      m.bytes = s.info.bytes;
      break;
  }
  m.measured_s = models::calibration::median(s.times);
  m.reps = static_cast<int>(s.times.size());
  return m;
}

sim::Time kernel_time(const KinetoOp& op, const KinetoTrace& t) {
  sim::Time sum;
  for (int32_t k : op.kernels) sum += t.kernels[static_cast<size_t>(k)].duration;
  return sum;
}

}  // namespace

KinetoCalibration calibrate_kineto(const KinetoTrace& trace, const std::string& file,
                                   const models::hardware::GpuSpec& prior, const std::string& command) {
  KinetoCalibration out;
  out.trace = file;
  out.device_name = trace.device_name;
  for (int c = 0; c < kOpClasses; ++c) {
    ClassSummary cs;
    cs.cls = static_cast<OpClass>(c);
    out.classes.push_back(cs);
  }
  std::map<std::string, Shape> shapes;         // op_key -> occurrences (ordered: deterministic records)
  std::map<std::string, int> unpriced;         // why -> operators
  std::vector<std::pair<OpInfo, int>> priced;  // every priced operator, for the prediction after the fit
  for (const KinetoOp& op : trace.ops) {
    if (op.kernels.empty()) continue;
    const OpInfo info = classify_op(op, trace);
    const int n = static_cast<int>(op.kernels.size());
    const sim::Time t = kernel_time(op, trace);
    ClassSummary& c = out.classes[static_cast<size_t>(info.cls)];
    ++c.ops;
    c.kernels += n;
    c.measured += t;
    if (info.cls == OpClass::kCollective) continue;
    if (info.cls == OpClass::kOther) {
      ++unpriced[info.note];
      continue;
    }
    const std::optional<sim::Time> before = predict_op(info, n, prior);
    if (!before) {
      ++unpriced[info.precision + " " + to_string(info.cls) + " (" + prior.name + " has no such peak)"];
      continue;
    }
    ++c.priced_ops;
    c.priced_measured += t;
    c.before += *before;
    priced.emplace_back(info, n);
    Shape& s = shapes[std::string(to_string(info.cls)) + " " + op_key(op)];
    s.info = info;
    s.kernels = n;
    s.times.push_back(t.seconds());
  }
  for (const auto& [why, count] : unpriced)
    out.notes.push_back(std::to_string(count) + " operators not priced: " + why);
  if (out.classes[static_cast<size_t>(OpClass::kCollective)].ops > 0)
    out.notes.push_back(std::to_string(out.classes[static_cast<size_t>(OpClass::kCollective)].ops) +
                        " NCCL operators timed but not fitted: a trace calibrates the compute constants only");
  if (trace.unlinked_kernels > 0)
    out.notes.push_back(std::to_string(trace.unlinked_kernels) + " GPU activities with no launching operator found");
  if (priced.empty())
    throw ConfigError(file, "no GEMM, attention or memory-bound operator with shapes to calibrate from",
                      "profile with record_shapes=True");

  models::calibration::Provenance& p = out.measurements.provenance;
  p.gpu_name = trace.device_name;
  p.gpu_preset = prior.name;
  p.command = command;
  p.replay = "Kineto trace " + file;
  for (const auto& [name, s] : shapes) out.measurements.items.push_back(measurement(name, s));
  out.fit = models::calibration::fit(out.measurements, prior, nullptr);

  for (const auto& [info, n] : priced)
    out.classes[static_cast<size_t>(info.cls)].after += predict_op(info, n, out.fit.gpu).value_or(sim::Time::zero());
  return out;
}

Json KinetoCalibration::calibration_json(const std::string& name) const {
  Json j = models::calibration::calibration_json(fit, measurements.provenance, name);
  const std::string where = device_name.empty() ? fit.gpu.name : device_name;
  j["description"] = "Fitted by trainsim kineto calibrate from the Kineto trace " + trace + " (" + where + ")";
  for (auto it = j["sources"].begin(); it != j["sources"].end(); ++it) {
    std::string s = it.value().get<std::string>();
    const std::string from = "fitted by trainsim validate from", to = "fitted by trainsim kineto calibrate from";
    if (s.rfind(from, 0) == 0) s = to + s.substr(from.size());
    std::ostringstream os;
    os << s << "; operators of " << trace;
    it.value() = os.str();
  }
  return j;
}

Json KinetoCalibration::to_json() const {
  Json classes_json = Json::array();
  for (const ClassSummary& c : classes) {
    Json e = {
        {"class", to_string(c.cls)}, {"ops", c.ops}, {"kernels", c.kernels}, {"measured_s", c.measured.seconds()}};
    if (c.cls != OpClass::kCollective && c.cls != OpClass::kOther) {
      e["priced_ops"] = c.priced_ops;
      e["priced_measured_s"] = c.priced_measured.seconds();
      e["predicted_before_s"] = c.before.seconds();
      e["predicted_after_s"] = c.after.seconds();
      e["error_before"] = c.error_before();
      e["error_after"] = c.error_after();
    }
    classes_json.push_back(e);
  }
  return Json{{"schema_version", 1},  {"trace", trace},          {"device", device_name},
              {"gpu", fit.gpu.name},  {"classes", classes_json}, {"records", measurements.items.size()},
              {"fit", fit.to_json()}, {"notes", notes}};
}

}  // namespace trainsim::traces
