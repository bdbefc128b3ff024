// trainsim-kernels-check: every kernel of kernels/kernels.hpp against a CPU reference in double
// precision, on fresh random inputs (a fixed seed per case), with the outputs poisoned (all bytes
// 0xFF, a NaN in bf16 and fp32) before each run so that an element a kernel fails to write fails
// the check. Sizes include odd ones (not multiples of 8 or of a tile) and misaligned pointers,
// which take the scalar paths. One line per (case, output): relative error ||out - ref|| / ||ref||
// and its bound; NaN never passes. Exit 0 if all pass, 1 if any fails, 77 if there is no usable
// CUDA GPU (ctest SKIP_RETURN_CODE). Optional argument: a substring; only cases whose name
// contains it run.

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/embedding.hpp"
#include "kernels/kernels.hpp"
#include "kernels/philox.cuh"

namespace {

using trainsim::kernels::bf16;

#define CHECK_CUDA(call)                                                                                       \
  do {                                                                                                         \
    const cudaError_t check_cuda_err_ = (call);                                                                \
    if (check_cuda_err_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(check_cuda_err_)); \
      std::exit(1);                                                                                            \
    }                                                                                                          \
  } while (0)

// ---- inputs --------------------------------------------------------------------------------

// splitmix64: a small deterministic generator, one per case.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

double to_double(bf16 v) { return static_cast<double>(__bfloat162float(v)); }

// Random bf16 values in [lo, hi): `vals` holds what the GPU sees, `ref` the same values in double.
struct Bf16Data {
  std::vector<bf16> vals;
  std::vector<double> ref;
};

Bf16Data random_bf16(Rng& rng, size_t n, double lo, double hi) {
  Bf16Data d;
  d.vals.resize(n);
  d.ref.resize(n);
  for (size_t i = 0; i < n; ++i) {
    d.vals[i] = __float2bfloat16(static_cast<float>(rng.uniform(lo, hi)));
    d.ref[i] = to_double(d.vals[i]);
  }
  return d;
}

std::vector<float> random_f32(Rng& rng, size_t n, double lo, double hi) {
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.uniform(lo, hi));
  return v;
}

std::vector<bf16> to_bf16(const std::vector<double>& v) {
  std::vector<bf16> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = __float2bfloat16(static_cast<float>(v[i]));
  return r;
}

std::vector<float> to_f32(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

// ---- device buffers ------------------------------------------------------------------------

// `n` elements of T on the device, with `offset` spare elements in front: data() = base + offset,
// so an offset of 1 bf16 gives a pointer that is not 16-byte aligned.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n, size_t offset = 0) : n_(n), offset_(offset) {
    CHECK_CUDA(cudaMalloc(&base_, (n + offset) * sizeof(T) + 16));
  }
  explicit DeviceBuffer(const std::vector<T>& host, size_t offset = 0) : DeviceBuffer(host.size(), offset) {
    upload(host);
  }
  ~DeviceBuffer() { cudaFree(base_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return static_cast<T*>(base_) + offset_; }
  void upload(const std::vector<T>& host) {
    CHECK_CUDA(cudaMemcpy(data(), host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() {
    std::vector<T> host(n_);
    CHECK_CUDA(cudaMemcpy(host.data(), data(), n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  void poison() { CHECK_CUDA(cudaMemset(data(), 0xFF, n_ * sizeof(T))); }

 private:
  void* base_ = nullptr;
  size_t n_;
  size_t offset_;
};

// ---- comparison and report -----------------------------------------------------------------

constexpr double kBoundBf16 = 1e-2;  // bf16 outputs: ~2^-9 rounding plus fp32 math
constexpr double kBoundF32 = 1e-5;   // fp32 outputs of fp32-accumulated math

std::vector<double> as_double(const std::vector<bf16>& v) {
  std::vector<double> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = to_double(v[i]);
  return r;
}

std::vector<double> as_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// ||out - ref|| / ||ref||; NaN when any output is not finite (a poisoned, unwritten element).
double rel_error(const std::vector<double>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return std::nan("");
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return std::nan("");
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  if (den == 0.0) return num == 0.0 ? 0.0 : std::nan("");
  return std::sqrt(num / den);
}

class Report {
 public:
  void line(const std::string& name, const std::string& sizes, const std::string& output, double err, double bound) {
    const bool pass = err <= bound;  // false for NaN
    if (!pass) ++failures_;
    ++lines_;
    std::printf("%-22s %-44s %-8s rel_err %9.3e  bound %7.1e  %s\n", name.c_str(), sizes.c_str(), output.c_str(), err,
                bound, pass ? "PASS" : "FAIL");
    std::fflush(stdout);
  }
  template <class T>
  void compare(const std::string& name, const std::string& sizes, const std::string& output, const std::vector<T>& out,
               const std::vector<double>& ref, double bound) {
    line(name, sizes, output, rel_error(as_double(out), ref), bound);
  }
  int failures() const { return failures_; }
  int lines() const { return lines_; }

 private:
  int failures_ = 0;
  int lines_ = 0;
};

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof(buf), f, ap);
  va_end(ap);
  return buf;
}

void sync() { CHECK_CUDA(cudaDeviceSynchronize()); }

// ---- RMSNorm / LayerNorm -------------------------------------------------------------------

void check_rmsnorm(Report& rep, int64_t rows, int hidden, size_t offset, uint64_t seed) {
  Rng rng(seed);
  const size_t n = static_cast<size_t>(rows) * hidden;
  const auto x = random_bf16(rng, n, -1.0, 1.0);
  const auto w = random_bf16(rng, hidden, 0.5, 1.5);
  const auto dy = random_bf16(rng, n, -1.0, 1.0);
  const double eps = 1e-5;

  std::vector<double> y(n), rstd(rows), dx(n), dw(hidden, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = &x.ref[r * hidden];
    double ss = 0.0;
    for (int c = 0; c < hidden; ++c) ss += xr[c] * xr[c];
    const double rs = 1.0 / std::sqrt(ss / hidden + eps);
    rstd[r] = rs;
    double sum_gx = 0.0;
    for (int c = 0; c < hidden; ++c) {
      y[r * hidden + c] = xr[c] * rs * w.ref[c];
      sum_gx += dy.ref[r * hidden + c] * w.ref[c] * xr[c] * rs;
    }
    const double mean_gx = sum_gx / hidden;
    for (int c = 0; c < hidden; ++c) {
      const double xh = xr[c] * rs;
      dx[r * hidden + c] = rs * (dy.ref[r * hidden + c] * w.ref[c] - xh * mean_gx);
      dw[c] += dy.ref[r * hidden + c] * xh;
    }
  }

  DeviceBuffer<bf16> dx_in(x.vals, offset), dw_in(w.vals, offset), ddy(dy.vals, offset);
  DeviceBuffer<bf16> dyout(n, offset), ddx(n, offset);
  DeviceBuffer<float> drstd(rows), drstd_in(to_f32(rstd)), ddw(hidden);
  const std::string sizes =
      fmt("rows=%lld hidden=%d%s", static_cast<long long>(rows), hidden, offset ? " misaligned" : "");

  dyout.poison();
  drstd.poison();
  CHECK_CUDA(trainsim::kernels::rmsnorm_fwd(dx_in.data(), dw_in.data(), dyout.data(), drstd.data(), rows, hidden,
                                            static_cast<float>(eps), nullptr));
  sync();
  rep.compare("rmsnorm_fwd", sizes, "y", dyout.download(), y, kBoundBf16);
  rep.compare("rmsnorm_fwd", sizes, "rstd", drstd.download(), rstd, kBoundF32);

  ddx.poison();
  ddw.poison();
  CHECK_CUDA(trainsim::kernels::rmsnorm_bwd(ddy.data(), dx_in.data(), dw_in.data(), drstd_in.data(), ddx.data(),
                                            ddw.data(), rows, hidden, nullptr));
  sync();
  rep.compare("rmsnorm_bwd", sizes, "dx", ddx.download(), dx, kBoundBf16);
  rep.compare("rmsnorm_bwd", sizes, "dweight", ddw.download(), dw, kBoundF32);
}

void check_layernorm(Report& rep, int64_t rows, int hidden, size_t offset, uint64_t seed) {
  Rng rng(seed);
  const size_t n = static_cast<size_t>(rows) * hidden;
  const auto x = random_bf16(rng, n, -0.7, 1.3);  // mean ~0.3: no cancellation in the mean
  const auto w = random_bf16(rng, hidden, 0.5, 1.5);
  const auto b = random_bf16(rng, hidden, -0.5, 0.5);
  const auto dy = random_bf16(rng, n, -1.0, 1.0);
  const double eps = 1e-5;

  std::vector<double> y(n), mean(rows), rstd(rows), dx(n), dw(hidden, 0.0), db(hidden, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = &x.ref[r * hidden];
    const double* dyr = &dy.ref[r * hidden];
    double s = 0.0;
    for (int c = 0; c < hidden; ++c) s += xr[c];
    const double mu = s / hidden;
    double var = 0.0;
    for (int c = 0; c < hidden; ++c) var += (xr[c] - mu) * (xr[c] - mu);
    const double rs = 1.0 / std::sqrt(var / hidden + eps);
    mean[r] = mu;
    rstd[r] = rs;
    double sg = 0.0, sgx = 0.0;
    for (int c = 0; c < hidden; ++c) {
      const double xh = (xr[c] - mu) * rs;
      y[r * hidden + c] = xh * w.ref[c] + b.ref[c];
      sg += dyr[c] * w.ref[c];
      sgx += dyr[c] * w.ref[c] * xh;
    }
    for (int c = 0; c < hidden; ++c) {
      const double xh = (xr[c] - mu) * rs;
      dx[r * hidden + c] = rs * (dyr[c] * w.ref[c] - sg / hidden - xh * sgx / hidden);
      dw[c] += dyr[c] * xh;
      db[c] += dyr[c];
    }
  }

  DeviceBuffer<bf16> dx_in(x.vals, offset), dw_in(w.vals, offset), db_in(b.vals, offset), ddy(dy.vals, offset);
  DeviceBuffer<bf16> dyout(n, offset), ddx(n, offset);
  DeviceBuffer<float> dmean(rows), drstd(rows), dmean_in(to_f32(mean)), drstd_in(to_f32(rstd)), ddw(hidden),
      ddb(hidden);
  const std::string sizes =
      fmt("rows=%lld hidden=%d%s", static_cast<long long>(rows), hidden, offset ? " misaligned" : "");

  dyout.poison();
  dmean.poison();
  drstd.poison();
  CHECK_CUDA(trainsim::kernels::layernorm_fwd(dx_in.data(), dw_in.data(), db_in.data(), dyout.data(), dmean.data(),
                                              drstd.data(), rows, hidden, static_cast<float>(eps), nullptr));
  sync();
  rep.compare("layernorm_fwd", sizes, "y", dyout.download(), y, kBoundBf16);
  rep.compare("layernorm_fwd", sizes, "mean", dmean.download(), mean, kBoundF32);
  rep.compare("layernorm_fwd", sizes, "rstd", drstd.download(), rstd, kBoundF32);

  ddx.poison();
  ddw.poison();
  ddb.poison();
  CHECK_CUDA(trainsim::kernels::layernorm_bwd(ddy.data(), dx_in.data(), dw_in.data(), dmean_in.data(), drstd_in.data(),
                                              ddx.data(), ddw.data(), ddb.data(), rows, hidden, nullptr));
  sync();
  rep.compare("layernorm_bwd", sizes, "dx", ddx.download(), dx, kBoundBf16);
  rep.compare("layernorm_bwd", sizes, "dweight", ddw.download(), dw, kBoundF32);
  rep.compare("layernorm_bwd", sizes, "dbias", ddb.download(), db, kBoundF32);
}

// ---- SwiGLU / GeLU -------------------------------------------------------------------------

void check_swiglu(Report& rep, int64_t rows, int ffn, size_t offset, uint64_t seed) {
  Rng rng(seed);
  const size_t nin = static_cast<size_t>(rows) * 2 * ffn, nout = static_cast<size_t>(rows) * ffn;
  const auto in = random_bf16(rng, nin, -4.0, 4.0);
  const auto dout = random_bf16(rng, nout, -1.0, 1.0);
  std::vector<double> out(nout), din(nin);
  for (int64_t r = 0; r < rows; ++r) {
    for (int c = 0; c < ffn; ++c) {
      const double g = in.ref[r * 2 * ffn + c], u = in.ref[r * 2 * ffn + ffn + c];
      const double s = 1.0 / (1.0 + std::exp(-g));
      const double d = dout.ref[r * ffn + c];
      out[r * ffn + c] = g * s * u;
      din[r * 2 * ffn + c] = d * u * s * (1.0 + g * (1.0 - s));
      din[r * 2 * ffn + ffn + c] = d * g * s;
    }
  }
  DeviceBuffer<bf16> din_in(in.vals, offset), ddout(dout.vals, offset), dout_out(nout, offset), ddin(nin, offset);
  const std::string sizes = fmt("rows=%lld ffn=%d%s", static_cast<long long>(rows), ffn, offset ? " misaligned" : "");
  dout_out.poison();
  CHECK_CUDA(trainsim::kernels::swiglu_fwd(din_in.data(), dout_out.data(), rows, ffn, nullptr));
  sync();
  rep.compare("swiglu_fwd", sizes, "out", dout_out.download(), out, kBoundBf16);
  ddin.poison();
  CHECK_CUDA(trainsim::kernels::swiglu_bwd(ddout.data(), din_in.data(), ddin.data(), rows, ffn, nullptr));
  sync();
  rep.compare("swiglu_bwd", sizes, "din", ddin.download(), din, kBoundBf16);
}

void check_gelu(Report& rep, int64_t n, size_t offset, uint64_t seed) {
  Rng rng(seed);
  const auto x = random_bf16(rng, n, -5.0, 5.0);
  const auto dy = random_bf16(rng, n, -1.0, 1.0);
  const double k0 = std::sqrt(2.0 / 3.14159265358979323846), k1 = 0.044715;
  std::vector<double> y(n), dx(n);
  for (int64_t i = 0; i < n; ++i) {
    const double v = x.ref[i];
    const double t = std::tanh(k0 * (v + k1 * v * v * v));
    y[i] = 0.5 * v * (1.0 + t);
    dx[i] = dy.ref[i] * (0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k0 * (1.0 + 3.0 * k1 * v * v));
  }
  DeviceBuffer<bf16> dxin(x.vals, offset), ddy(dy.vals, offset), dyout(n, offset), ddx(n, offset);
  const std::string sizes = fmt("n=%lld%s", static_cast<long long>(n), offset ? " misaligned" : "");
  dyout.poison();
  CHECK_CUDA(trainsim::kernels::gelu_fwd(dxin.data(), dyout.data(), n, nullptr));
  sync();
  rep.compare("gelu_fwd", sizes, "y", dyout.download(), y, kBoundBf16);
  ddx.poison();
  CHECK_CUDA(trainsim::kernels::gelu_bwd(ddy.data(), dxin.data(), ddx.data(), n, nullptr));
  sync();
  rep.compare("gelu_bwd", sizes, "dx", ddx.download(), dx, kBoundBf16);
}

// ---- embedding ------------------------------------------------------------------------------

// Lookup and scatter-add backward; repeated token ids exercise the atomics.
void check_embedding(Report& rep, int64_t tokens, int vocab, int hidden, uint64_t seed) {
  Rng rng(seed);
  const auto table = random_bf16(rng, static_cast<size_t>(vocab) * hidden, -1.0, 1.0);
  const auto dout = random_bf16(rng, static_cast<size_t>(tokens) * hidden, -1.0, 1.0);
  const auto dtable0 = random_f32(rng, static_cast<size_t>(vocab) * hidden, -0.5, 0.5);
  std::vector<int32_t> ids(static_cast<size_t>(tokens));
  for (auto& id : ids) id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(vocab));
  std::vector<double> out(static_cast<size_t>(tokens) * hidden), dt(dtable0.begin(), dtable0.end());
  for (int64_t t = 0; t < tokens; ++t)
    for (int c = 0; c < hidden; ++c) {
      const size_t row = static_cast<size_t>(ids[static_cast<size_t>(t)]) * hidden + c;
      out[static_cast<size_t>(t) * hidden + c] = table.ref[row];
      dt[row] += dout.ref[static_cast<size_t>(t) * hidden + c];
    }
  DeviceBuffer<int32_t> did(ids, 0);
  DeviceBuffer<bf16> dtab(table.vals, 0), dy(dout.vals, 0), dout_buf(static_cast<size_t>(tokens) * hidden, 0);
  DeviceBuffer<float> dgrad(dtable0, 0);
  dout_buf.poison();
  CHECK_CUDA(trainsim::kernels::embedding_fwd(did.data(), dtab.data(), dout_buf.data(), tokens, hidden, nullptr));
  CHECK_CUDA(trainsim::kernels::embedding_bwd(did.data(), dy.data(), dgrad.data(), tokens, hidden, nullptr));
  sync();
  const std::string sizes = fmt("tokens=%lld vocab=%d h=%d", static_cast<long long>(tokens), vocab, hidden);
  rep.compare("embedding_fwd", sizes, "out", dout_buf.download(), out, 0.0);  // a copy: exact
  rep.compare("embedding_bwd", sizes, "dtable", dgrad.download(), dt, kBoundF32);
}

// ---- residual and dropout ------------------------------------------------------------------

void check_residual_add(Report& rep, int64_t n, size_t offset, uint64_t seed) {
  Rng rng(seed);
  const auto a = random_bf16(rng, n, -1.0, 1.0);
  const auto b = random_bf16(rng, n, -1.0, 1.0);
  std::vector<double> y(n);
  for (int64_t i = 0; i < n; ++i) y[i] = a.ref[i] + b.ref[i];
  DeviceBuffer<bf16> da(a.vals, offset), db(b.vals, offset), dy(n, offset);
  dy.poison();
  CHECK_CUDA(trainsim::kernels::residual_add(da.data(), db.data(), dy.data(), n, nullptr));
  sync();
  rep.compare("residual_add", fmt("n=%lld%s", static_cast<long long>(n), offset ? " misaligned" : ""), "y",
              dy.download(), y, kBoundBf16);
}

void check_bias_dropout_residual(Report& rep, int64_t rows, int hidden, float p, bool with_bias, size_t offset,
                                 uint64_t seed) {
  using trainsim::kernels::dropout_keep;
  using trainsim::kernels::dropout_threshold;
  Rng rng(seed);
  const size_t n = static_cast<size_t>(rows) * hidden;
  const auto x = random_bf16(rng, n, -1.0, 1.0);
  const auto bias = random_bf16(rng, hidden, -0.5, 0.5);
  const auto res = random_bf16(rng, n, -1.0, 1.0);
  const auto dy = random_bf16(rng, n, -1.0, 1.0);
  const uint64_t dseed = rng.next();
  const uint32_t thr = dropout_threshold(p);
  const double scale = 1.0 / (1.0 - static_cast<double>(p));
  std::vector<double> y(n), dx(n);
  for (size_t e = 0; e < n; ++e) {
    const bool keep = dropout_keep(dseed, e, thr);
    const double v = x.ref[e] + (with_bias ? bias.ref[e % hidden] : 0.0);
    y[e] = res.ref[e] + (keep ? v * scale : 0.0);
    dx[e] = keep ? dy.ref[e] * scale : 0.0;
  }
  DeviceBuffer<bf16> dxin(x.vals, offset), dbias(bias.vals, offset), dres(res.vals, offset), ddy(dy.vals, offset);
  DeviceBuffer<bf16> dyout(n, offset), ddx(n, offset);
  const std::string sizes = fmt("rows=%lld hidden=%d p=%.2f%s%s", static_cast<long long>(rows), hidden, p,
                                with_bias ? " bias" : "", offset ? " misaligned" : "");
  dyout.poison();
  CHECK_CUDA(trainsim::kernels::bias_dropout_residual_fwd(dxin.data(), with_bias ? dbias.data() : nullptr, dres.data(),
                                                          dyout.data(), rows, hidden, p, dseed, nullptr));
  sync();
  rep.compare("bias_dropout_residual", sizes, "y", dyout.download(), y, kBoundBf16);
  ddx.poison();
  CHECK_CUDA(trainsim::kernels::dropout_bwd(ddy.data(), ddx.data(), static_cast<int64_t>(n), p, dseed, nullptr));
  sync();
  rep.compare("dropout_bwd", sizes, "dx", ddx.download(), dx, kBoundBf16);
}

// The mask the GPU applies keeps a fraction 1 - p of the elements (dy is never 0, so a dropped
// element is exactly the zeros of dx). Tolerance 0.005: > 15 standard deviations at n = 2^20.
void check_dropout_rate(Report& rep, int64_t n, float p, uint64_t seed) {
  Rng rng(seed);
  const auto dy = random_bf16(rng, n, 0.5, 1.5);
  DeviceBuffer<bf16> ddy(dy.vals), ddx(n);
  ddx.poison();
  CHECK_CUDA(trainsim::kernels::dropout_bwd(ddy.data(), ddx.data(), n, p, rng.next(), nullptr));
  sync();
  const auto out = ddx.download();
  int64_t kept = 0;
  bool finite = true;
  for (const auto v : out) {
    const double d = to_double(v);
    finite = finite && std::isfinite(d);
    kept += d != 0.0;
  }
  const double frac = static_cast<double>(kept) / static_cast<double>(n);
  const double err = finite ? std::fabs(frac - (1.0 - p)) : std::nan("");
  rep.line("dropout_keep_rate", fmt("n=%lld p=%.2f kept=%.4f", static_cast<long long>(n), p, frac), "|kept-(1-p)|", err,
           5e-3);
}

// ---- RoPE ----------------------------------------------------------------------------------

void rope_ref(const std::vector<double>& in, std::vector<double>& out, int64_t tokens, int seq, int heads, int d,
              double theta, bool backward) {
  const int half = d / 2;
  for (int64_t t = 0; t < tokens; ++t) {
    const double pos = static_cast<double>(t % seq);
    for (int i = 0; i < half; ++i) {
      const double a = pos * std::pow(theta, -2.0 * i / d);
      const double c = std::cos(a), s = backward ? -std::sin(a) : std::sin(a);
      for (int h = 0; h < heads; ++h) {
        const int64_t base = (t * heads + h) * d;
        const double x1 = in[base + i], x2 = in[base + i + half];
        out[base + i] = x1 * c - x2 * s;
        out[base + i + half] = x2 * c + x1 * s;
      }
    }
  }
}

void check_rope(Report& rep, int batch, int seq, int heads, int d, float theta, bool in_place, size_t offset,
                uint64_t seed) {
  Rng rng(seed);
  const int64_t tokens = static_cast<int64_t>(batch) * seq;
  const size_t n = static_cast<size_t>(tokens) * heads * d;
  const auto x = random_bf16(rng, n, -1.0, 1.0);
  const auto dy = random_bf16(rng, n, -1.0, 1.0);
  std::vector<double> y(n), dx(n);
  rope_ref(x.ref, y, tokens, seq, heads, d, theta, false);
  rope_ref(dy.ref, dx, tokens, seq, heads, d, theta, true);
  const std::string sizes = fmt("b=%d s=%d h=%d d=%d theta=%g%s%s", batch, seq, heads, d, static_cast<double>(theta),
                                in_place ? " in-place" : "", offset ? " misaligned" : "");
  DeviceBuffer<bf16> dxin(x.vals, offset), ddy(dy.vals, offset), dyout(n, offset), ddx(n, offset);
  bf16* yptr = in_place ? dxin.data() : dyout.data();
  bf16* dxptr = in_place ? ddy.data() : ddx.data();
  if (!in_place) {
    dyout.poison();
    ddx.poison();
  }
  CHECK_CUDA(trainsim::kernels::rope_fwd(dxin.data(), yptr, tokens, seq, heads, d, theta, nullptr));
  CHECK_CUDA(trainsim::kernels::rope_bwd(ddy.data(), dxptr, tokens, seq, heads, d, theta, nullptr));
  sync();
  rep.compare("rope_fwd", sizes, "y", in_place ? dxin.download() : dyout.download(), y, kBoundBf16);
  rep.compare("rope_bwd", sizes, "dx", in_place ? ddy.download() : ddx.download(), dx, kBoundBf16);
}

// q and k rotated in one launch: each against the same reference as rope_fwd / rope_bwd.
void check_rope_qk(Report& rep, int batch, int seq, int hq, int hk, int d, float theta, bool in_place, uint64_t seed) {
  Rng rng(seed);
  const int64_t tokens = static_cast<int64_t>(batch) * seq;
  const size_t nq = static_cast<size_t>(tokens) * hq * d, nk = static_cast<size_t>(tokens) * hk * d;
  const auto q = random_bf16(rng, nq, -1.0, 1.0), k = random_bf16(rng, nk, -1.0, 1.0);
  const auto dyq = random_bf16(rng, nq, -1.0, 1.0), dyk = random_bf16(rng, nk, -1.0, 1.0);
  std::vector<double> yq(nq), yk(nk), dq(nq), dk(nk);
  rope_ref(q.ref, yq, tokens, seq, hq, d, theta, false);
  rope_ref(k.ref, yk, tokens, seq, hk, d, theta, false);
  rope_ref(dyq.ref, dq, tokens, seq, hq, d, theta, true);
  rope_ref(dyk.ref, dk, tokens, seq, hk, d, theta, true);
  const std::string sizes = fmt("b=%d s=%d hq=%d hk=%d d=%d%s", batch, seq, hq, hk, d, in_place ? " in-place" : "");
  DeviceBuffer<bf16> dq_in(q.vals), dk_in(k.vals), ddyq(dyq.vals), ddyk(dyk.vals);
  DeviceBuffer<bf16> oq(nq), ok(nk), odq(nq), odk(nk);
  oq.poison();
  ok.poison();
  odq.poison();
  odk.poison();
  bf16* yq_ptr = in_place ? dq_in.data() : oq.data();
  bf16* yk_ptr = in_place ? dk_in.data() : ok.data();
  bf16* dq_ptr = in_place ? ddyq.data() : odq.data();
  bf16* dk_ptr = in_place ? ddyk.data() : odk.data();
  CHECK_CUDA(trainsim::kernels::rope_qk_fwd(dq_in.data(), yq_ptr, dk_in.data(), yk_ptr, tokens, seq, hq, hk, d, theta,
                                            nullptr));
  CHECK_CUDA(
      trainsim::kernels::rope_qk_bwd(ddyq.data(), dq_ptr, ddyk.data(), dk_ptr, tokens, seq, hq, hk, d, theta, nullptr));
  sync();
  rep.compare("rope_qk_fwd", sizes, "yq", in_place ? dq_in.download() : oq.download(), yq, kBoundBf16);
  rep.compare("rope_qk_fwd", sizes, "yk", in_place ? dk_in.download() : ok.download(), yk, kBoundBf16);
  rep.compare("rope_qk_bwd", sizes, "dq", in_place ? ddyq.download() : odq.download(), dq, kBoundBf16);
  rep.compare("rope_qk_bwd", sizes, "dk", in_place ? ddyk.download() : odk.download(), dk, kBoundBf16);
}

// ---- cross-entropy -------------------------------------------------------------------------

void check_cross_entropy(Report& rep, int64_t rows, int vocab, size_t offset, uint64_t seed) {
  Rng rng(seed);
  const size_t n = static_cast<size_t>(rows) * vocab;
  const auto logits = random_bf16(rng, n, -4.0, 4.0);
  std::vector<int32_t> targets(rows);
  int64_t valid = 0;
  for (int64_t r = 0; r < rows; ++r) {
    targets[r] = (r % 7 == 1) ? -100 : static_cast<int32_t>(rng.next() % static_cast<uint64_t>(vocab));
    valid += targets[r] >= 0;
  }
  const float grad_scale = 1.0f / static_cast<float>(valid > 0 ? valid : 1);
  std::vector<double> loss(rows), dl(n);
  for (int64_t r = 0; r < rows; ++r) {
    const double* lr = &logits.ref[r * vocab];
    double m = lr[0];
    for (int j = 1; j < vocab; ++j) m = std::max(m, lr[j]);
    double s = 0.0;
    for (int j = 0; j < vocab; ++j) s += std::exp(lr[j] - m);
    const double lse = m + std::log(s);
    const int t = targets[r];
    loss[r] = t >= 0 ? lse - lr[t] : 0.0;
    for (int j = 0; j < vocab; ++j) {
      dl[r * vocab + j] = t >= 0 ? grad_scale * (std::exp(lr[j] - lse) - (j == t ? 1.0 : 0.0)) : 0.0;
    }
  }
  DeviceBuffer<bf16> dlogits_in(logits.vals, offset), ddl(n, offset);
  DeviceBuffer<int32_t> dtargets(targets);
  DeviceBuffer<float> dloss(rows);
  const std::string sizes =
      fmt("rows=%lld vocab=%d%s", static_cast<long long>(rows), vocab, offset ? " misaligned" : "");
  ddl.poison();
  dloss.poison();
  CHECK_CUDA(trainsim::kernels::cross_entropy_fwd_bwd(dlogits_in.data(), dtargets.data(), dloss.data(), ddl.data(),
                                                      rows, vocab, grad_scale, nullptr));
  sync();
  rep.compare("cross_entropy", sizes, "loss", dloss.download(), loss, kBoundF32);
  rep.compare("cross_entropy", sizes, "dlogits", ddl.download(), dl, kBoundBf16);
}

// ---- AdamW ---------------------------------------------------------------------------------

void check_adamw(Report& rep, int64_t n, int step, size_t offset, uint64_t seed) {
  Rng rng(seed);
  const auto master = random_f32(rng, n, -1.0, 1.0);
  const auto m = random_f32(rng, n, -0.01, 0.01);
  const auto v = random_f32(rng, n, 1e-6, 1e-4);
  const auto g = random_bf16(rng, n, -0.1, 0.1);
  trainsim::kernels::AdamParams prm;
  prm.lr = 3e-4f;
  prm.beta1 = 0.9f;
  prm.beta2 = 0.95f;
  prm.eps = 1e-8f;
  prm.weight_decay = 0.1f;
  prm.step = step;
  const double b1 = prm.beta1, b2 = prm.beta2, lr = prm.lr, eps = prm.eps, wd = prm.weight_decay;
  const double bc1 = 1.0 - std::pow(b1, step), bc2 = 1.0 - std::pow(b2, step);
  std::vector<double> rp(n), rm(n), rv(n);
  for (int64_t i = 0; i < n; ++i) {
    rm[i] = b1 * m[i] + (1.0 - b1) * g.ref[i];
    rv[i] = b2 * v[i] + (1.0 - b2) * g.ref[i] * g.ref[i];
    rp[i] = master[i] * (1.0 - lr * wd) - (lr / bc1) * rm[i] / (std::sqrt(rv[i]) / std::sqrt(bc2) + eps);
  }
  DeviceBuffer<float> dp(master, offset), dm(m, offset), dv(v, offset);
  DeviceBuffer<bf16> dg(g.vals, offset), dw(n, offset);
  dw.poison();
  CHECK_CUDA(trainsim::kernels::adamw_step(dp.data(), dm.data(), dv.data(), dg.data(), dw.data(), n, prm, nullptr));
  sync();
  const std::string sizes = fmt("n=%lld step=%d%s", static_cast<long long>(n), step, offset ? " misaligned" : "");
  const auto out_p = dp.download();
  std::vector<double> upd(n), ref_upd(n);
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) {
    finite = finite && std::isfinite(out_p[i]);
    upd[i] = static_cast<double>(out_p[i]) - master[i];
    ref_upd[i] = rp[i] - master[i];
  }
  rep.compare("adamw", sizes, "master", out_p, rp, kBoundF32);
  // The update is ~1e-4 of the weights: check it on its own too (fp32 rounding of the new master
  // weight is ~1e-4 of the update).
  rep.line("adamw", sizes, "update", finite ? rel_error(upd, ref_upd) : std::nan(""), 2e-3);
  rep.compare("adamw", sizes, "m", dm.download(), rm, kBoundF32);
  rep.compare("adamw", sizes, "v", dv.download(), rv, kBoundF32);
  rep.compare("adamw", sizes, "weight", dw.download(), rp, kBoundBf16);
}

// ---- attention -----------------------------------------------------------------------------

struct AttnRef {
  std::vector<double> o, lse, dq, dk, dv;
};

// Causal attention and its gradients in double. Layouts as in kernels.hpp.
AttnRef attention_ref(const trainsim::kernels::AttentionShape& sh, double scale, const std::vector<double>& q,
                      const std::vector<double>& k, const std::vector<double>& v, const std::vector<double>& dout) {
  const int B = sh.batch, S = sh.seq, Hq = sh.q_heads, Hkv = sh.kv_heads, D = sh.head_dim;
  const int group = Hq / Hkv;
  AttnRef r;
  r.o.assign(static_cast<size_t>(B) * S * Hq * D, 0.0);
  r.dq.assign(r.o.size(), 0.0);
  r.lse.assign(static_cast<size_t>(B) * Hq * S, 0.0);
  r.dk.assign(static_cast<size_t>(B) * S * Hkv * D, 0.0);
  r.dv.assign(r.dk.size(), 0.0);
  auto qi = [&](int b, int s, int h) { return ((static_cast<size_t>(b) * S + s) * Hq + h) * D; };
  auto ki = [&](int b, int s, int h) { return ((static_cast<size_t>(b) * S + s) * Hkv + h) * D; };
  std::vector<double> p(S), dp(S);
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < Hq; ++h) {
      const int hk = h / group;
      for (int i = 0; i < S; ++i) {
        double m = -INFINITY;
        for (int j = 0; j <= i; ++j) {
          double s = 0.0;
          for (int d = 0; d < D; ++d) s += q[qi(b, i, h) + d] * k[ki(b, j, hk) + d];
          p[j] = s * scale;
          m = std::max(m, p[j]);
        }
        double sum = 0.0;
        for (int j = 0; j <= i; ++j) sum += std::exp(p[j] - m);
        const double lse = m + std::log(sum);
        r.lse[(static_cast<size_t>(b) * Hq + h) * S + i] = lse;
        for (int j = 0; j <= i; ++j) p[j] = std::exp(p[j] - lse);
        double delta = 0.0;
        for (int j = 0; j <= i; ++j) {
          double s = 0.0;
          for (int d = 0; d < D; ++d) {
            r.o[qi(b, i, h) + d] += p[j] * v[ki(b, j, hk) + d];
            s += dout[qi(b, i, h) + d] * v[ki(b, j, hk) + d];
          }
          dp[j] = s;
          delta += p[j] * s;
        }
        for (int j = 0; j <= i; ++j) {
          const double ds = p[j] * (dp[j] - delta) * scale;
          for (int d = 0; d < D; ++d) {
            r.dq[qi(b, i, h) + d] += ds * k[ki(b, j, hk) + d];
            r.dk[ki(b, j, hk) + d] += ds * q[qi(b, i, h) + d];
            r.dv[ki(b, j, hk) + d] += p[j] * dout[qi(b, i, h) + d];
          }
        }
      }
    }
  }
  return r;
}

void check_attention(Report& rep, int batch, int seq, int hq, int hkv, int d, uint64_t seed) {
  Rng rng(seed);
  trainsim::kernels::AttentionShape sh;
  sh.batch = batch;
  sh.seq = seq;
  sh.q_heads = hq;
  sh.kv_heads = hkv;
  sh.head_dim = d;
  const size_t nq = static_cast<size_t>(batch) * seq * hq * d, nkv = static_cast<size_t>(batch) * seq * hkv * d;
  const auto q = random_bf16(rng, nq, -2.0, 2.0);
  const auto k = random_bf16(rng, nkv, -2.0, 2.0);
  const auto v = random_bf16(rng, nkv, -1.0, 1.0);
  const auto dout = random_bf16(rng, nq, -1.0, 1.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const AttnRef ref = attention_ref(sh, scale, q.ref, k.ref, v.ref, dout.ref);
  const std::string sizes = fmt("b=%d s=%d hq=%d hkv=%d d=%d", batch, seq, hq, hkv, d);

  DeviceBuffer<bf16> dq_in(q.vals), dk_in(k.vals), dv_in(v.vals), ddout(dout.vals);
  DeviceBuffer<bf16> dout_o(nq), dq(nq), dk(nkv), dv(nkv);
  DeviceBuffer<bf16> o_ref(to_bf16(ref.o));  // the backward's inputs come from the reference
  DeviceBuffer<float> dlse(static_cast<size_t>(batch) * hq * seq), lse_ref(to_f32(ref.lse));
  dout_o.poison();
  dlse.poison();
  CHECK_CUDA(trainsim::kernels::attention_fwd(dq_in.data(), dk_in.data(), dv_in.data(), dout_o.data(), dlse.data(), sh,
                                              static_cast<float>(scale), nullptr,
                                              trainsim::kernels::AttentionKernel::kMmaSync));
  sync();
  rep.compare("attention_fwd", sizes, "o", dout_o.download(), ref.o, kBoundBf16);
  rep.compare("attention_fwd", sizes, "lse", dlse.download(), ref.lse, kBoundF32);
  // The Hopper warpgroup-MMA forward, on the same inputs, where the GPU runs it.
  if (trainsim::kernels::attention_wgmma_supported()) {
    dout_o.poison();
    dlse.poison();
    CHECK_CUDA(trainsim::kernels::attention_fwd(dq_in.data(), dk_in.data(), dv_in.data(), dout_o.data(), dlse.data(),
                                                sh, static_cast<float>(scale), nullptr,
                                                trainsim::kernels::AttentionKernel::kWgmma));
    sync();
    rep.compare("attention_fwd_wgmma", sizes, "o", dout_o.download(), ref.o, kBoundBf16);
    rep.compare("attention_fwd_wgmma", sizes, "lse", dlse.download(), ref.lse, kBoundF32);
  } else {
    std::printf("attention_fwd_wgmma, attention_bwd_wgmma %s: skipped: not a compute capability 9.0 GPU\n",
                sizes.c_str());
  }

  const size_t ws_bytes = trainsim::kernels::attention_bwd_workspace_bytes(sh);
  DeviceBuffer<unsigned char> ws(ws_bytes);
  ws.poison();
  dq.poison();
  dk.poison();
  dv.poison();
  CHECK_CUDA(trainsim::kernels::attention_bwd(dq_in.data(), dk_in.data(), dv_in.data(), o_ref.data(), ddout.data(),
                                              lse_ref.data(), dq.data(), dk.data(), dv.data(), ws.data(), ws_bytes, sh,
                                              static_cast<float>(scale), nullptr,
                                              trainsim::kernels::AttentionKernel::kMmaSync));
  sync();
  rep.compare("attention_bwd", sizes, "dq", dq.download(), ref.dq, kBoundBf16);
  rep.compare("attention_bwd", sizes, "dk", dk.download(), ref.dk, kBoundBf16);
  rep.compare("attention_bwd", sizes, "dv", dv.download(), ref.dv, kBoundBf16);
  if (trainsim::kernels::attention_wgmma_supported()) {
    ws.poison();
    dq.poison();
    dk.poison();
    dv.poison();
    CHECK_CUDA(trainsim::kernels::attention_bwd(dq_in.data(), dk_in.data(), dv_in.data(), o_ref.data(), ddout.data(),
                                                lse_ref.data(), dq.data(), dk.data(), dv.data(), ws.data(), ws_bytes,
                                                sh, static_cast<float>(scale), nullptr,
                                                trainsim::kernels::AttentionKernel::kWgmma));
    sync();
    rep.compare("attention_bwd_wgmma", sizes, "dq", dq.download(), ref.dq, kBoundBf16);
    rep.compare("attention_bwd_wgmma", sizes, "dk", dk.download(), ref.dk, kBoundBf16);
    rep.compare("attention_bwd_wgmma", sizes, "dv", dv.download(), ref.dv, kBoundBf16);
  }
}

bool selected(const char* filter, const char* name) {
  return filter == nullptr || std::strstr(name, filter) != nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : nullptr;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::printf("kernels-check: skipped: no CUDA GPU (%s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0 devices");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 9) {
    std::printf("kernels-check: skipped: no CUDA GPU (device 0 is %s, sm_%d%d; the kernels are built for sm_90)\n",
                prop.name, prop.major, prop.minor);
    return 77;
  }
  CHECK_CUDA(cudaSetDevice(0));
  std::printf("kernels-check on %s (sm_%d%d, %d SMs); bounds: bf16 outputs %.0e, fp32 outputs %.0e\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, kBoundBf16, kBoundF32);

  Report rep;
  uint64_t seed = 1000;
  if (selected(filter, "rmsnorm")) {
    check_rmsnorm(rep, 67, 1000, 0, ++seed);
    check_rmsnorm(rep, 33, 4096, 0, ++seed);
    check_rmsnorm(rep, 19, 1001, 0, ++seed);
    check_rmsnorm(rep, 5, 4096, 1, ++seed);
    check_rmsnorm(rep, 3, 40000, 0, ++seed);  // longer than the register cache
    check_rmsnorm(rep, 2, 8197, 0, ++seed);
  }
  if (selected(filter, "layernorm")) {
    check_layernorm(rep, 67, 1000, 0, ++seed);
    check_layernorm(rep, 17, 4096, 0, ++seed);
    check_layernorm(rep, 9, 999, 0, ++seed);
    check_layernorm(rep, 3, 20000, 0, ++seed);
    check_layernorm(rep, 5, 16384, 0, ++seed);  // 2,048 vectors: the largest row of the small-block shape
  }
  if (selected(filter, "swiglu")) {
    check_swiglu(rep, 37, 1000, 0, ++seed);
    check_swiglu(rep, 13, 3584, 0, ++seed);
    check_swiglu(rep, 7, 1003, 0, ++seed);
    check_swiglu(rep, 5, 512, 1, ++seed);
  }
  if (selected(filter, "gelu")) {
    check_gelu(rep, 100000, 0, ++seed);
    check_gelu(rep, 12345, 0, ++seed);
    check_gelu(rep, 12345, 1, ++seed);
    check_gelu(rep, 7, 0, ++seed);
  }
  if (selected(filter, "embedding")) {
    check_embedding(rep, 1000, 97, 1000, ++seed);  // few ids: many repeats
    check_embedding(rep, 257, 5000, 2048, ++seed);
    check_embedding(rep, 64, 300, 7, ++seed);  // odd width: the scalar path
  }
  if (selected(filter, "residual") || selected(filter, "dropout")) {
    check_residual_add(rep, 100003, 0, ++seed);
    check_residual_add(rep, 4099, 1, ++seed);
    check_bias_dropout_residual(rep, 33, 1000, 0.1f, true, 0, ++seed);
    check_bias_dropout_residual(rep, 5, 1001, 0.1f, true, 0, ++seed);
    check_bias_dropout_residual(rep, 9, 4096, 0.0f, false, 0, ++seed);
    check_bias_dropout_residual(rep, 4, 512, 0.25f, true, 1, ++seed);
    check_dropout_rate(rep, 1 << 20, 0.1f, ++seed);
  }
  if (selected(filter, "rope")) {
    check_rope(rep, 2, 129, 8, 128, 500000.0f, false, 0, ++seed);
    check_rope(rep, 1, 257, 3, 64, 10000.0f, false, 0, ++seed);
    check_rope(rep, 1, 33, 2, 72, 10000.0f, false, 0, ++seed);  // head_dim/2 = 36: scalar path
    check_rope(rep, 1, 129, 4, 128, 10000.0f, true, 0, ++seed);
    check_rope(rep, 1, 65, 2, 64, 10000.0f, false, 1, ++seed);
    check_rope(rep, 1, 8192, 1, 128, 500000.0f, false, 0, ++seed);  // large positions
    check_rope_qk(rep, 2, 129, 8, 1, 128, 500000.0f, false, ++seed);
    check_rope_qk(rep, 1, 257, 12, 4, 128, 10000.0f, true, ++seed);  // 16 heads: two load steps
    check_rope_qk(rep, 1, 65, 3, 2, 72, 10000.0f, false, ++seed);    // head_dim/2 = 36: scalar path
  }
  if (selected(filter, "cross_entropy")) {
    check_cross_entropy(rep, 37, 16032, 0, ++seed);
    check_cross_entropy(rep, 5, 1001, 0, ++seed);
    check_cross_entropy(rep, 3, 40000, 0, ++seed);  // longer than the register cache
    check_cross_entropy(rep, 4, 16032, 1, ++seed);
  }
  if (selected(filter, "adamw")) {
    check_adamw(rep, 100003, 1, 0, ++seed);
    check_adamw(rep, 1 << 20, 10, 0, ++seed);
    check_adamw(rep, 4099, 3, 1, ++seed);
  }
  if (selected(filter, "attention")) {
    check_attention(rep, 1, 129, 4, 1, 64, ++seed);
    check_attention(rep, 2, 256, 4, 1, 128, ++seed);
    check_attention(rep, 1, 129, 2, 2, 128, ++seed);
    check_attention(rep, 1, 200, 8, 2, 64, ++seed);
    check_attention(rep, 1, 33, 1, 1, 128, ++seed);
    // Several 128-row tiles of the wgmma kernel, the last one ragged.
    check_attention(rep, 1, 600, 4, 1, 128, ++seed);
    check_attention(rep, 1, 333, 2, 1, 64, ++seed);
  }
  if (rep.lines() == 0) {
    std::printf("kernels-check: no case matches '%s'\n", filter);
    return 1;
  }
  std::printf("kernels-check: %d of %d checks passed\n", rep.lines() - rep.failures(), rep.lines());
  return rep.failures() == 0 ? 0 : 1;
}
