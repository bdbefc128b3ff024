#include "traces/kineto/ops.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace trainsim::traces {

using models::compute::ComputeModel;
using models::compute::GemmShape;
using models::compute::Precision;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Bytes per element of a PyTorch "Input type" (c10 scalar type names as the profiler records
// them); 0 for non-tensors and unknown types.
int64_t element_bytes(const std::string& type) {
  if (type == "c10::BFloat16" || type == "c10::Half" || type == "short int") return 2;
  if (type == "float" || type == "int" || type == "unsigned int") return 4;
  if (type == "double" || type == "long int" || type == "long long int" || type == "c10::complex<float>") return 8;
  if (type == "bool" || type == "unsigned char" || type == "signed char" || type.rfind("c10::Float8", 0) == 0) return 1;
  return 0;
}

std::string precision_of(const std::string& type) {
  if (type == "c10::BFloat16") return "bf16";
  if (type == "c10::Half") return "fp16";
  if (type.rfind("c10::Float8", 0) == 0) return "fp8";
  if (type == "float") return "fp32";
  return type.empty() ? "unknown" : type;
}

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

const std::vector<int64_t>& dims_at(const KinetoOp& op, size_t i) {
  static const std::vector<int64_t> kNone;
  return i < op.input_dims.size() ? op.input_dims[i] : kNone;
}
std::string type_at(const KinetoOp& op, size_t i) { return i < op.input_types.size() ? op.input_types[i] : ""; }

// GEMM shapes of the ATen matrix products. Returns false when the dims do not describe one.
bool gemm_shape(const KinetoOp& op, GemmShape& s, size_t& first) {
  const std::string& n = op.name;
  auto two_d = [&](size_t a, size_t b) {
    const auto &x = dims_at(op, a), &y = dims_at(op, b);
    if (x.size() != 2 || y.size() != 2 || x[1] != y[0]) return false;
    s = GemmShape{x[0], y[1], x[1], 1};
    first = a;
    return true;
  };
  auto batched = [&](size_t a, size_t b) {
    const auto &x = dims_at(op, a), &y = dims_at(op, b);
    if (x.size() != 3 || y.size() != 3 || x[0] != y[0] || x[2] != y[1]) return false;
    s = GemmShape{x[1], y[2], x[2], x[0]};
    first = a;
    return true;
  };
  if (n == "aten::mm" || n == "aten::_scaled_mm") return two_d(0, 1);
  if (n == "aten::addmm") return two_d(1, 2);
  if (n == "aten::bmm") return batched(0, 1);
  if (n == "aten::baddbmm") return batched(1, 2);
  if (n == "aten::linear") {  // input [..., in], weight [out, in]
    const auto &x = dims_at(op, 0), &w = dims_at(op, 1);
    if (x.empty() || w.size() != 2 || x.back() != w[1]) return false;
    s = GemmShape{product(x, 0, x.size() - 1), w[0], w[1], 1};
    first = 0;
    return true;
  }
  if (n == "aten::matmul") {
    const auto &x = dims_at(op, 0), &y = dims_at(op, 1);
    if (x.size() < 2 || y.size() < 2 || x.back() != y[y.size() - 2]) return false;
    if (y.size() == 2)
      s = GemmShape{product(x, 0, x.size() - 1), y[1], x.back(), 1};
    else if (x.size() == y.size())
      s = GemmShape{x[x.size() - 2], y.back(), x.back(), product(x, 0, x.size() - 2)};
    else
      return false;
    first = 0;
    return true;
  }
  return false;
}

// Fused attention: where the query and key are among the inputs and their layout.
struct AttentionOp {
  const char* name;
  bool backward;
  size_t q, k;  // input indices
  bool bshd;    // [batch, seq, heads, dim] (flash_attn); else [batch, heads, seq, dim] (SDPA)
};
constexpr AttentionOp kAttention[] = {
    {"aten::_scaled_dot_product_flash_attention", false, 0, 1, false},
    {"aten::_scaled_dot_product_efficient_attention", false, 0, 1, false},
    {"aten::_scaled_dot_product_cudnn_attention", false, 0, 1, false},
    {"aten::_scaled_dot_product_flash_attention_backward", true, 1, 2, false},
    {"aten::_scaled_dot_product_efficient_attention_backward", true, 1, 2, false},
    {"aten::_scaled_dot_product_cudnn_attention_backward", true, 1, 2, false},
    {"aten::_flash_attention_forward", false, 0, 1, true},
    {"aten::_flash_attention_backward", true, 1, 2, true},
    {"flash_attn::_flash_attn_forward", false, 0, 1, true},
    {"flash_attn::_flash_attn_backward", true, 1, 2, true},
};

}  // namespace

const char* to_string(OpClass c) {
  switch (c) {
    case OpClass::kGemm: return "gemm";
    case OpClass::kAttentionFwd: return "attention_fwd";
    case OpClass::kAttentionBwd: return "attention_bwd";
    case OpClass::kMemory: return "memory";
    case OpClass::kCollective: return "collective";
    case OpClass::kOther: return "other";
  }
  return "?";
}

bool is_communication(const KinetoKernel& k) {
  return !k.collective.empty() || lower(k.name).find("nccl") != std::string::npos;
}

std::string collective_kind(const KinetoKernel& k) {
  std::string s;
  for (char c : lower(k.collective.empty() ? k.name : k.collective))
    if (std::isalpha(static_cast<unsigned char>(c))) s += c;
  if (s.find("allreduce") != std::string::npos) return "all_reduce";
  if (s.find("allgather") != std::string::npos) return "all_gather";
  if (s.find("reducescatter") != std::string::npos) return "reduce_scatter";
  if (s.find("alltoall") != std::string::npos) return "all_to_all";
  if (s.find("sendrecv") != std::string::npos || s.find("send") != std::string::npos ||
      s.find("recv") != std::string::npos)
    return "send_recv";
  if (s.find("broadcast") != std::string::npos) return "broadcast";
  return "other";
}

OpInfo classify_op(const KinetoOp& op, const KinetoTrace& trace) {
  OpInfo info;
  for (int32_t k : op.kernels) {
    const KinetoKernel& kk = trace.kernels[static_cast<size_t>(k)];
    if (is_communication(kk)) {
      info.cls = OpClass::kCollective;
      return info;
    }
    if (kk.category == "gpu_memcpy" &&
        (kk.name.find("HtoD") != std::string::npos || kk.name.find("DtoH") != std::string::npos)) {
      info.note = "host copy";
      return info;
    }
  }
  GemmShape shape;
  size_t first = 0;
  if (gemm_shape(op, shape, first)) {
    info.precision = op.name == "aten::_scaled_mm" ? "fp8" : precision_of(type_at(op, first));
    info.gemm = shape;
    info.flops = shape.flops().count();
    if (info.precision == "bf16" || info.precision == "fp16" || info.precision == "fp8")
      info.cls = OpClass::kGemm;
    else
      info.note = info.precision + " GEMM";
    return info;
  }
  for (const AttentionOp& a : kAttention) {
    if (op.name != a.name) continue;
    const auto &q = dims_at(op, a.q), &k = dims_at(op, a.k);
    if (q.size() != 4 || k.size() != 4) {
      info.note = "attention without 4-d query and key dims";
      return info;
    }
    const int64_t b = q[0], heads = a.bshd ? q[2] : q[1], sq = a.bshd ? q[1] : q[2], d = q[3];
    const int64_t skv = a.bshd ? k[1] : k[2];
    // Causal: QK^T and PV at 2*b*h*sq*skv*d each, the masked half skipped; backward 2.5x.
    const double fwd = 2.0 * static_cast<double>(b) * static_cast<double>(heads) * static_cast<double>(sq) *
                       static_cast<double>(skv) * static_cast<double>(d);
    info.precision = precision_of(type_at(op, a.q));
    if (info.precision != "bf16" && info.precision != "fp16") {
      info.note = info.precision + " attention";
      return info;
    }
    info.cls = a.backward ? OpClass::kAttentionBwd : OpClass::kAttentionFwd;
    info.flops = a.backward ? 2.5 * fwd : fwd;
    return info;
  }
  // Memory-bound: every tensor input read once, one output the size of the largest written.
  int64_t bytes = 0, largest = 0, out_elem = 0;
  for (size_t i = 0; i < op.input_dims.size(); ++i) {
    const int64_t e = element_bytes(type_at(op, i));
    if (op.input_dims[i].empty() || e == 0) continue;
    const int64_t n = product(op.input_dims[i], 0, op.input_dims[i].size());
    bytes += n * e;
    if (out_elem == 0) out_elem = e;
    largest = std::max(largest, n);
  }
  if (bytes == 0) {
    info.note = op.input_dims.empty() ? "no Input Dims (record_shapes off)" : "no tensor inputs";
    return info;
  }
  info.cls = OpClass::kMemory;
  info.bytes = bytes + largest * out_elem;
  return info;
}

std::optional<sim::Time> predict_op(const OpInfo& info, int kernels, const models::hardware::GpuSpec& gpu) {
  const sim::Time extra = gpu.kernel_launch * std::max(0, kernels - 1);
  switch (info.cls) {
    case OpClass::kGemm: {
      const Precision p = info.precision == "fp8"    ? Precision::kFp8
                          : info.precision == "fp16" ? Precision::kFp16
                                                     : Precision::kBf16;
      if (p == Precision::kFp8 && gpu.peak_fp8.per_second() <= 0.0) return std::nullopt;
      return ComputeModel(gpu, p).gemm_matmul(info.gemm) + extra;
    }
    case OpClass::kAttentionFwd:
    case OpClass::kAttentionBwd:
      return ComputeModel(gpu, Precision::kBf16)
                 .flash_attention(sim::Flops(info.flops), info.cls == OpClass::kAttentionBwd) +
             extra;
    case OpClass::kMemory:
      return ComputeModel(gpu, Precision::kBf16).memory_bound(sim::Bytes(info.bytes), std::max(1, kernels));
    case OpClass::kCollective:
    case OpClass::kOther: return std::nullopt;
  }
  return std::nullopt;
}

std::string op_key(const KinetoOp& op) {
  std::ostringstream os;
  os << op.name << " [";
  for (size_t i = 0; i < op.input_dims.size(); ++i) {
    os << (i ? "," : "") << "[";
    for (size_t j = 0; j < op.input_dims[i].size(); ++j) os << (j ? "," : "") << op.input_dims[i][j];
    os << "]";
  }
  os << "]";
  for (const std::string& t : op.input_types)
    if (!t.empty() && t != "Scalar" && t != "ScalarList") {
      os << " " << t;
      break;
    }
  return os.str();
}

}  // namespace trainsim::traces
