#include "sim/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/checked.hpp"
#include "sim/error.hpp"

namespace trainsim::sim {

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
// The largest size trainsim counts, 1 EiB (2^60): sums and products of a few sizes stay far from
// int64's 2^63.
constexpr double kMaxBytes = 1152921504606846976.0;

// Splits "400Gbps" into 400 and "Gbps". Returns false when no number leads the text.
bool split_number(std::string_view text, double& value, std::string& unit) {
  std::string s(text);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  size_t pos = 0;
  try {
    value = std::stod(s, &pos);
  } catch (...) {
    return false;
  }
  while (pos < s.size() && s[pos] == ' ') ++pos;
  unit = s.substr(pos);
  return std::isfinite(value);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
}  // namespace

Time Time::from_seconds_ceil(double seconds) {
  TRAINSIM_ASSERT(!std::isnan(seconds), "NaN duration");
  TRAINSIM_ASSERT(seconds >= 0.0, "negative duration ", seconds);
  const double x = seconds * 1e9;
  if (x >= 9.2e18) return Time::infinite();
  // Representation noise (a few ulps: 1.1 h is 3960000000000.0005 ns) must not add a nanosecond,
  // so a value that close to a whole number snaps to it; anything else rounds up. The noise bound
  // is relative because the ulp grows with the value (an absolute 1e-6 stops working above ~8 s).
  // rint, not nearbyint: the same value in the default rounding mode, but GCC inlines it where
  // nearbyint is a libm call that saves and restores the FP environment (4% of a flow-heavy plan).
  const double nearest = std::rint(x);
  const double noise = std::max(1e-6, x * 4 * std::numeric_limits<double>::epsilon());
  const double ns = std::abs(x - nearest) <= noise ? nearest : std::ceil(x);
  return Time(static_cast<int64_t>(ns < 0 ? 0 : ns));
}

void throw_time_overflow() {
  throw ConfigError("simulated time",
                    "passes 292 years, the range of trainsim's nanosecond clock: a duration, rate or size given is "
                    "far outside any real job",
                    "check the latencies, bandwidths and FLOP rates of the cluster and GPU, and the model's size");
}

double Time::seconds() const {
  if (is_infinite()) throw_time_overflow();
  return static_cast<double>(ns_) * 1e-9;
}

Time operator+(Time a, Time b) {
  if (a.is_infinite() || b.is_infinite()) return Time::infinite();
  int64_t r;
  if (__builtin_add_overflow(a.ns_, b.ns_, &r)) return a.ns_ > 0 ? Time::infinite() : Time(kMin);
  return Time(r);
}

Time operator-(Time a, Time b) {
  TRAINSIM_ASSERT(!b.is_infinite(), "subtracting infinite time");
  if (a.is_infinite()) return a;
  int64_t r;
  TRAINSIM_ASSERT(!__builtin_sub_overflow(a.ns_, b.ns_, &r), "time overflow");
  return Time(r);
}

Bytes Bytes::checked(double bytes, const std::string& what, const std::string& fix) {
  if (!(bytes < kMaxBytes))
    throw ConfigError(what, fixed(bytes / kMaxBytes, 1) + " EiB is past the 1 EiB trainsim counts sizes in", fix);
  return Bytes(static_cast<int64_t>(std::max(bytes, 0.0)));
}

Bytes Bytes::scaled(double factor) const {
  return Bytes(checked_int64(std::ceil(static_cast<double>(v_) * factor), "size",
                             "a size scaled from the inputs passes int64: check the model's and the job's sizes"));
}

Time operator/(Bytes b, Bandwidth bw) {
  if (b.count() == 0) return Time::zero();
  TRAINSIM_ASSERT(bw.bytes_per_second() > 0.0, "zero bandwidth");
  return Time::from_seconds_ceil(static_cast<double>(b.count()) / bw.bytes_per_second());
}

Time operator/(Flops f, FlopRate r) {
  if (f.count() == 0.0) return Time::zero();
  TRAINSIM_ASSERT(r.per_second() > 0.0, "zero FLOP rate");
  return Time::from_seconds_ceil(f.count() / r.per_second());
}

Bytes operator*(Bandwidth bw, Time t) {
  return Bytes(
      checked_int64(std::floor(bw.bytes_per_second() * t.seconds()), "size",
                    "bytes moved at a bandwidth over a duration pass int64: check the bandwidths and durations"));
}

FlopRate operator/(Flops f, Time t) {
  TRAINSIM_ASSERT(t.count_ns() > 0, "rate over zero time");
  return FlopRate::per_s(f.count() / t.seconds());
}

Bandwidth operator/(Bytes b, Time t) {
  TRAINSIM_ASSERT(t.count_ns() > 0, "rate over zero time");
  return Bandwidth::bytes_per_s(static_cast<double>(b.count()) / t.seconds());
}

Bandwidth parse_bandwidth(std::string_view text, const std::string& path) {
  double v;
  std::string unit;
  const std::string got(text);
  if (!split_number(text, v, unit) || v <= 0)
    throw ConfigError(path, "expected a positive bandwidth like \"400Gbps\" or \"50GBps\", got \"" + got + "\"");
  // Bits per second (lower-case b) vs bytes per second (upper-case B): never mixed up.
  struct U {
    const char* name;
    double bytes_per_s;
  };
  static constexpr U kUnits[] = {{"bps", 1.0 / 8},   {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},
                                 {"Tbps", 1e12 / 8}, {"Bps", 1.0},      {"KBps", 1e3},     {"MBps", 1e6},
                                 {"GBps", 1e9},      {"TBps", 1e12},    {"GB/s", 1e9},     {"Gb/s", 1e9 / 8},
                                 {"TB/s", 1e12},     {"MB/s", 1e6}};
  for (const auto& u : kUnits)
    if (unit == u.name) {
      const double bps = v * u.bytes_per_s;
      if (bps < 125.0 || bps > 1e18)
        throw ConfigError(path, "\"" + got + "\" is outside 1Kbps..1EBps", "give a bandwidth a real link or disk has");
      return Bandwidth::bytes_per_s(bps);
    }
  throw ConfigError(path, "expected a bandwidth like \"400Gbps\" or \"50GBps\", got \"" + got + "\"",
                    "add a unit: bps/Kbps/Mbps/Gbps/Tbps for bits, Bps/KBps/MBps/GBps/TBps for bytes");
}

Bytes parse_bytes(std::string_view text, const std::string& path) {
  double v;
  std::string unit;
  const std::string got(text);
  if (!split_number(text, v, unit) || v < 0)
    throw ConfigError(path, "expected a size like \"80GiB\" or \"512MB\", got \"" + got + "\"");
  struct U {
    const char* name;
    double bytes;
  };
  static constexpr U kUnits[] = {{"B", 1.0},  {"K", 1024.0},          {"KiB", 1024.0},
                                 {"KB", 1e3}, {"M", 1048576.0},       {"MiB", 1048576.0},
                                 {"MB", 1e6}, {"G", 1073741824.0},    {"GiB", 1073741824.0},
                                 {"GB", 1e9}, {"T", 1099511627776.0}, {"TiB", 1099511627776.0},
                                 {"TB", 1e12}};
  for (const auto& u : kUnits)
    if (unit == u.name) {
      if (v * u.bytes > kMaxBytes)
        throw ConfigError(path, "\"" + got + "\" is larger than 1EiB", "give a size below 1EiB");
      return Bytes(static_cast<int64_t>(std::llround(v * u.bytes)));
    }
  throw ConfigError(path, "expected a size like \"80GiB\" or \"512MB\", got \"" + got + "\"",
                    "add a unit: B, KiB, MiB, GiB, TiB (binary) or KB, MB, GB, TB (decimal)");
}

Time parse_time(std::string_view text, const std::string& path) {
  double v;
  std::string unit;
  const std::string got(text);
  if (!split_number(text, v, unit) || v < 0)
    throw ConfigError(path, "expected a duration like \"2us\" or \"1.5ms\", got \"" + got + "\"");
  struct U {
    const char* name;
    double seconds;
  };
  static constexpr U kUnits[] = {{"ns", 1e-9},  {"us", 1e-6},  {"ms", 1e-3},  {"s", 1.0},
                                 {"min", 60.0}, {"h", 3600.0}, {"d", 86400.0}};
  for (const auto& u : kUnits)
    if (unit == u.name) {
      // At most 200 years: time is int64 nanoseconds (292 years), and sums of durations must fit.
      if (v * u.seconds > 200 * 365.25 * 86400.0)
        throw ConfigError(path, "\"" + got + "\" is longer than 200 years", "give a duration below 200 years");
      return Time::from_seconds_ceil(v * u.seconds);
    }
  throw ConfigError(path, "expected a duration like \"2us\" or \"1.5ms\", got \"" + got + "\"",
                    "add a unit: ns, us, ms, s, min, h or d");
}

FlopRate parse_flop_rate(std::string_view text, const std::string& path) {
  double v;
  std::string unit;
  const std::string got(text);
  if (!split_number(text, v, unit) || v <= 0)
    throw ConfigError(path, "expected a FLOP rate like \"989TFLOPS\", got \"" + got + "\"");
  struct U {
    const char* name;
    double per_s;
  };
  static constexpr U kUnits[] = {{"FLOPS", 1.0}, {"GFLOPS", 1e9}, {"TFLOPS", 1e12}, {"PFLOPS", 1e15}};
  for (const auto& u : kUnits)
    if (unit == u.name) {
      if (v * u.per_s > 1e21) throw ConfigError(path, "\"" + got + "\" is above 1000000PFLOPS", "give a GPU's rate");
      return FlopRate::per_s(v * u.per_s);
    }
  throw ConfigError(path, "expected a FLOP rate like \"989TFLOPS\", got \"" + got + "\"",
                    "add a unit: GFLOPS, TFLOPS or PFLOPS");
}

std::string to_string(Time t) {
  if (t.is_infinite()) return "inf";
  const double s = static_cast<double>(t.count_ns()) * 1e-9;
  if (s >= 1.0) return fixed(s, 3) + " s";
  if (s >= 1e-3) return fixed(s * 1e3, 3) + " ms";
  if (s >= 1e-6) return fixed(s * 1e6, 3) + " us";
  return std::to_string(t.count_ns()) + " ns";
}

std::string to_string(Bytes b) {
  const double v = static_cast<double>(b.count());
  if (v >= 1073741824.0) return fixed(v / 1073741824.0, 2) + " GiB";
  if (v >= 1048576.0) return fixed(v / 1048576.0, 2) + " MiB";
  if (v >= 1024.0) return fixed(v / 1024.0, 2) + " KiB";
  return std::to_string(b.count()) + " B";
}

std::string to_string(Bandwidth bw) { return fixed(bw.gbyte_per_second(), 2) + " GB/s"; }

}  // namespace trainsim::sim
