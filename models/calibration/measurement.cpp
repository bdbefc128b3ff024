#include "models/calibration/measurement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/collectives/comm_model.hpp"
#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::models::calibration {

using sim::config::Json;

namespace {
constexpr int64_t kMaxInt = sim::config::kUnboundedInt;

struct KindName {
  OpKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {OpKind::kGemm, "gemm"},
    {OpKind::kMemory, "memory"},
    {OpKind::kAttentionFwd, "attention_fwd"},
    {OpKind::kAttentionBwd, "attention_bwd"},
    {OpKind::kCopyD2D, "copy_d2d"},
    {OpKind::kCopyH2D, "copy_h2d"},
    {OpKind::kCopyD2H, "copy_d2h"},
    {OpKind::kLaunch, "launch"},
    {OpKind::kCollective, "collective"},
    {OpKind::kLayer, "layer"},
    {OpKind::kIteration, "iteration"},
};

// A setter for an `int` member (Schema::integer takes int64_t members).
template <typename T>
auto int_setter(int T::*m, int64_t min, int64_t max) {
  return [m, min, max](T& t, const Json& j, const std::string& p) {
    t.*m = static_cast<int>(sim::config::read_int(j, p, min, max));
  };
}

std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (const auto& k : kKinds) out.emplace_back(k.name);
  return out;
}

// Seconds: finite and positive (the fit weighs every record by 1 / its time).
double read_seconds(const Json& j, const std::string& path, bool allow_zero) {
  const double v = sim::config::read_number(j, path, 0.0, 1e6);
  if (!allow_zero && v <= 0.0)
    throw ConfigError(path, "must be a positive time in seconds, got " + sim::config::show(j));
  return v;
}

const sim::config::Schema<Measurement>& measurement_schema() {
  static const sim::config::Schema<Measurement> schema = [] {
    sim::config::Schema<Measurement> s("measurement", "One measured operation.");
    s.string("name", &Measurement::name, std::nullopt, "What was measured, e.g. `attn.qkv.fwd`.")
        .custom("kind", "operation kind", std::nullopt, "gemm, memory, attention_fwd, ... (see OpKind).",
                [](Measurement& m, const Json& j, const std::string& p) {
                  m.kind = parse_op_kind(sim::config::read_string(j, p), p);
                })
        .integer("m", &Measurement::m, 0, kMaxInt, 0, "GEMM rows of C.")
        .integer("n", &Measurement::n, 0, kMaxInt, 0, "GEMM columns of C.")
        .integer("k", &Measurement::k, 0, kMaxInt, 0, "GEMM reduction dimension.")
        .integer("batch", &Measurement::batch, 1, kMaxInt, 1, "Independent GEMM instances.")
        .enumeration("precision", &Measurement::precision, {"bf16", "fp16", "fp8"}, std::string("bf16"),
                     "GEMM input precision.")
        .number("flops", &Measurement::flops, 0.0, 1e30, 0.0, "Floating-point operations.")
        .integer("bytes", &Measurement::bytes, 0, std::numeric_limits<int64_t>::max(), 0,
                 "Bytes through HBM (memory kinds, copies) or the per-rank buffer (collectives).")
        .custom("kernels", "integer", std::string("1"), "Kernel launches.",
                int_setter(&Measurement::kernels, 0, 1000000))
        .string("op", &Measurement::op, "", "Collective operation.")
        .custom("ranks", "integer", std::string("1"), "Communicator size.", int_setter(&Measurement::ranks, 1, 1000000))
        .string("link_class", &Measurement::link_class, "", "nvlink | ib | local.")
        .string("protocol", &Measurement::protocol, "",
                "NCCL protocol pinned by NCCL_PROTO (ll | ll128 | simple); empty: NCCL's choice.")
        .custom("measured_s", "seconds", std::nullopt, "Median time.",
                [](Measurement& m, const Json& j, const std::string& p) { m.measured_s = read_seconds(j, p, false); })
        .custom("best_s", "seconds", std::string("0"), "Best median over the GEMM algorithms tried (0: none).",
                [](Measurement& m, const Json& j, const std::string& p) { m.best_s = read_seconds(j, p, true); })
        .custom("reps", "integer", std::string("0"), "Timed repetitions.",
                int_setter(&Measurement::reps, 0, 1000000000));
    return s;
  }();
  return schema;
}

const sim::config::Schema<Provenance>& provenance_schema() {
  static const sim::config::Schema<Provenance> schema = [] {
    sim::config::Schema<Provenance> s("provenance", "Where and how the measurements were taken.");
    s.string("gpu_name", &Provenance::gpu_name, "", "")
        .string("gpu_preset", &Provenance::gpu_preset, "", "")
        .string("driver_version", &Provenance::driver_version, "", "")
        .string("cuda_version", &Provenance::cuda_version, "", "")
        .string("cublas_version", &Provenance::cublas_version, "", "")
        .string("nccl_version", &Provenance::nccl_version, "", "")
        .string("date", &Provenance::date, "", "")
        .string("command", &Provenance::command, "", "")
        .string("host", &Provenance::host, "", "")
        .string("replay", &Provenance::replay, "", "")
        .string("kernels", &Provenance::kernels, "", "")
        .custom("job", "object or null", std::string("null"), "",
                [](Provenance& p, const Json& j, const std::string& path) {
                  if (!j.is_null() && !j.is_object())
                    throw ConfigError(path, "expected the measured job's configuration (an object)");
                  p.job = j;
                })
        .custom("gpus", "integer", std::string("1"), "", int_setter(&Provenance::gpus, 1, 10000000));
    return s;
  }();
  return schema;
}

// Checks what one kind needs beyond the field ranges.
void check_kind(const Measurement& m, const std::string& path) {
  switch (m.kind) {
    case OpKind::kGemm:
      for (const auto& [key, v] : {std::pair{"m", m.m}, std::pair{"n", m.n}, std::pair{"k", m.k}})
        if (v < 1) throw ConfigError(path + "." + key, "a gemm record needs m, n and k of at least 1");
      break;
    case OpKind::kMemory:
    case OpKind::kCopyD2D:
    case OpKind::kCopyH2D:
    case OpKind::kCopyD2H:
      if (m.bytes < 1)
        throw ConfigError(path + ".bytes", std::string("a ") + to_string(m.kind) + " record needs bytes");
      break;
    case OpKind::kAttentionFwd:
    case OpKind::kAttentionBwd:
    case OpKind::kLayer:
    case OpKind::kIteration:
      if (m.flops <= 0.0)
        throw ConfigError(path + ".flops", std::string("an ") + to_string(m.kind) + " record needs flops");
      break;
    case OpKind::kCollective:
      models::collectives::parse_collective_op(m.op, path + ".op");
      sim::config::read_enum(Json(m.link_class), path + ".link_class", {"nvlink", "ib", "local"});
      if (!m.protocol.empty()) sim::config::read_enum(Json(m.protocol), path + ".protocol", {"ll", "ll128", "simple"});
      if (m.bytes < 1) throw ConfigError(path + ".bytes", "a collective record needs bytes");
      break;
    case OpKind::kLaunch: break;
  }
}

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
}  // namespace

const char* to_string(OpKind k) {
  for (const auto& e : kKinds)
    if (e.kind == k) return e.name;
  return "?";
}

OpKind parse_op_kind(const std::string& text, const std::string& path) {
  const std::string v = sim::config::read_enum(Json(text), path, kind_names());
  for (const auto& e : kKinds)
    if (v == e.name) return e.kind;
  return OpKind::kGemm;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double median_abs(std::vector<double> v) {
  for (auto& x : v) x = std::abs(x);
  return median(std::move(v));
}

nlohmann::json to_json(const Provenance& p) {
  Json prov{{"gpu_name", p.gpu_name},
            {"gpu_preset", p.gpu_preset},
            {"driver_version", p.driver_version},
            {"cuda_version", p.cuda_version},
            {"cublas_version", p.cublas_version},
            {"nccl_version", p.nccl_version},
            {"date", p.date},
            {"command", p.command},
            {"host", p.host},
            {"gpus", p.gpus}};
  if (!p.replay.empty()) prov["replay"] = p.replay;
  if (!p.kernels.empty()) prov["kernels"] = p.kernels;
  if (!p.job.is_null()) prov["job"] = p.job;
  return prov;
}

nlohmann::json to_json(const MeasurementSet& s) {
  const Json prov = to_json(s.provenance);
  Json items = Json::array();
  for (const Measurement& m : s.items) {
    // Only what the kind uses (and what differs from the defaults): files stay readable, and
    // reading them back gives the same records.
    Json r{{"name", m.name}, {"kind", to_string(m.kind)}};
    if (m.kind == OpKind::kGemm || m.m != 0 || m.n != 0 || m.k != 0) {
      r["m"] = m.m;
      r["n"] = m.n;
      r["k"] = m.k;
    }
    if (m.batch != 1) r["batch"] = m.batch;
    if (m.kind == OpKind::kGemm || m.precision != "bf16") r["precision"] = m.precision;
    if (m.flops != 0.0) r["flops"] = m.flops;
    if (m.bytes != 0) r["bytes"] = m.bytes;
    if (m.kernels != 1) r["kernels"] = m.kernels;
    if (m.kind == OpKind::kCollective || !m.op.empty()) r["op"] = m.op;
    if (m.kind == OpKind::kCollective || m.ranks != 1) r["ranks"] = m.ranks;
    if (m.kind == OpKind::kCollective || !m.link_class.empty()) r["link_class"] = m.link_class;
    if (!m.protocol.empty()) r["protocol"] = m.protocol;
    r["measured_s"] = m.measured_s;
    if (m.best_s != 0.0) r["best_s"] = m.best_s;
    r["reps"] = m.reps;
    items.push_back(std::move(r));
  }
  return Json{{"schema_version", s.schema_version}, {"provenance", prov}, {"items", items}};
}

MeasurementSet measurements_from_json(const nlohmann::json& j, const std::string& path) {
  const std::string where = path.empty() ? "measurements" : path;
  if (!j.is_object()) throw ConfigError(where, "expected a JSON object, got " + sim::config::json_type_name(j));
  static const std::vector<std::string> keys = {"schema_version", "provenance", "items"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      const std::string near = sim::config::did_you_mean(it.key(), keys);
      throw ConfigError(child(path, it.key()), "unknown key in measurements",
                        near.empty() ? "valid keys: " + sim::config::join(keys) : "did you mean \"" + near + "\"?");
    }
  MeasurementSet s;
  if (const auto v = j.find("schema_version"); v != j.end()) {
    s.schema_version = static_cast<int>(sim::config::read_int(*v, child(path, "schema_version"), 1, kMaxInt));
    if (s.schema_version != 1)
      throw ConfigError(child(path, "schema_version"),
                        "unsupported measurements schema version " + std::to_string(s.schema_version),
                        "this trainsim reads version 1");
  }
  if (const auto v = j.find("provenance"); v != j.end())
    provenance_schema().parse(*v, child(path, "provenance"), s.provenance);
  const auto items = j.find("items");
  if (items == j.end())
    throw ConfigError(child(path, "items"), "missing required key", "add \"items\": [ ...measurements... ]");
  if (!items->is_array())
    throw ConfigError(child(path, "items"), "expected an array, got " + sim::config::json_type_name(*items));
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string p = child(path, "items") + "[" + std::to_string(i) + "]";
    Measurement m;
    measurement_schema().parse((*items)[i], p, m);
    check_kind(m, p);
    s.items.push_back(std::move(m));
  }
  return s;
}

}  // namespace trainsim::models::calibration
