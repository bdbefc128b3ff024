#pragma once
// Strong unit types: simulated time in integer nanoseconds, bytes as int64, rates as double.
// Only dimensionally valid operators exist (Bytes / Bandwidth -> Time, Flops / FlopRate -> Time).

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace trainsim::sim {

// Simulated time: int64 nanoseconds. Saturating arithmetic; Time::infinite() instead of -1.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ns(int64_t v) { return Time(v); }
  static constexpr Time us(int64_t v) { return Time(v) * 1000; }
  static constexpr Time ms(int64_t v) { return Time(v) * 1000000; }
  static constexpr Time s(int64_t v) { return Time(v) * 1000000000; }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time infinite() { return Time(std::numeric_limits<int64_t>::max()); }
  // Rounds a duration in seconds up to whole nanoseconds (the only double -> Time path).
  static Time from_seconds_ceil(double seconds);

  constexpr int64_t count_ns() const { return ns_; }
  constexpr bool is_infinite() const { return ns_ == std::numeric_limits<int64_t>::max(); }
  // Checked conversion for I/O boundaries only. Infinite time here is a duration that overflowed
  // the clock: throws the ConfigError of throw_time_overflow().
  double seconds() const;

  friend constexpr bool operator==(Time a, Time b) { return a.ns_ == b.ns_; }
  friend constexpr auto operator<=>(Time a, Time b) { return a.ns_ <=> b.ns_; }
  friend Time operator+(Time a, Time b);
  friend Time operator-(Time a, Time b);
  Time& operator+=(Time o) { return *this = *this + o; }
  // Saturates like +: a product that overflows is infinite (or the most negative time).
  friend constexpr Time operator*(Time a, int64_t k) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a.ns_, k, &r))
      return (a.ns_ > 0) == (k > 0) ? infinite() : Time(std::numeric_limits<int64_t>::min());
    return Time(r);
  }

 private:
  constexpr explicit Time(int64_t v) : ns_(v) {}
  int64_t ns_ = 0;
};

// Simulated time that passes the clock's range (292 years of int64 nanoseconds) can only come from
// input values (a latency of years, a FLOP rate of a few FLOP/s, a model of 10^30 FLOPs): a
// ConfigError (exit 2) that says so, thrown where an overflowed time would be used.
[[noreturn]] void throw_time_overflow();

class Bandwidth;
class Flops;
class FlopRate;

// A byte count.
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t v) : v_(v) {}
  constexpr int64_t count() const { return v_; }
  friend constexpr bool operator==(Bytes a, Bytes b) { return a.v_ == b.v_; }
  friend constexpr auto operator<=>(Bytes a, Bytes b) { return a.v_ <=> b.v_; }
  friend constexpr Bytes operator+(Bytes a, Bytes b) { return Bytes(a.v_ + b.v_); }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return Bytes(a.v_ - b.v_); }
  friend constexpr Bytes operator*(Bytes a, int64_t k) { return Bytes(a.v_ * k); }
  friend constexpr Bytes operator*(int64_t k, Bytes a) { return Bytes(a.v_ * k); }
  friend constexpr Bytes operator/(Bytes a, int64_t k) { return Bytes(a.v_ / k); }
  Bytes& operator+=(Bytes o) {
    v_ += o.v_;
    return *this;
  }
  Bytes& operator-=(Bytes o) {
    v_ -= o.v_;
    return *this;
  }
  // Scales by a dimensionless factor, rounding up to a whole byte.
  Bytes scaled(double factor) const;
  // A size computed in double from input values (a memory footprint, a message), rounded down.
  // Sizes past 1 EiB (2^60 B, so that sums of a few stay inside int64) are a ConfigError naming
  // `what` with `fix`: they can only come from input values far past any real job.
  static Bytes checked(double bytes, const std::string& what, const std::string& fix);
  double gib() const { return static_cast<double>(v_) / (1024.0 * 1024.0 * 1024.0); }

 private:
  int64_t v_ = 0;
};

// Bytes per second.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_s(double v) { return Bandwidth(v); }
  static constexpr Bandwidth gbit_per_s(double v) { return Bandwidth(v * 1e9 / 8.0); }
  static constexpr Bandwidth gbyte_per_s(double v) { return Bandwidth(v * 1e9); }
  constexpr double bytes_per_second() const { return v_; }
  constexpr double gbyte_per_second() const { return v_ / 1e9; }
  friend constexpr auto operator<=>(Bandwidth a, Bandwidth b) { return a.v_ <=> b.v_; }
  friend constexpr bool operator==(Bandwidth a, Bandwidth b) { return a.v_ == b.v_; }
  friend constexpr Bandwidth operator*(Bandwidth a, double k) { return Bandwidth(a.v_ * k); }
  friend constexpr Bandwidth operator*(double k, Bandwidth a) { return Bandwidth(a.v_ * k); }
  friend constexpr Bandwidth operator/(Bandwidth a, double k) { return Bandwidth(a.v_ / k); }
  friend constexpr Bandwidth operator+(Bandwidth a, Bandwidth b) { return Bandwidth(a.v_ + b.v_); }
  friend constexpr double operator/(Bandwidth a, Bandwidth b) { return a.v_ / b.v_; }

 private:
  constexpr explicit Bandwidth(double v) : v_(v) {}
  double v_ = 0.0;
};

// A count of floating-point operations (double: counts exceed 2^63 for whole runs).
class Flops {
 public:
  constexpr Flops() = default;
  constexpr explicit Flops(double v) : v_(v) {}
  constexpr double count() const { return v_; }
  friend constexpr Flops operator+(Flops a, Flops b) { return Flops(a.v_ + b.v_); }
  friend constexpr Flops operator*(Flops a, double k) { return Flops(a.v_ * k); }
  friend constexpr Flops operator*(double k, Flops a) { return Flops(a.v_ * k); }
  friend constexpr auto operator<=>(Flops a, Flops b) { return a.v_ <=> b.v_; }
  friend constexpr bool operator==(Flops a, Flops b) { return a.v_ == b.v_; }
  Flops& operator+=(Flops o) {
    v_ += o.v_;
    return *this;
  }

 private:
  double v_ = 0.0;
};

// Floating-point operations per second.
class FlopRate {
 public:
  constexpr FlopRate() = default;
  static constexpr FlopRate per_s(double v) { return FlopRate(v); }
  static constexpr FlopRate tflops(double v) { return FlopRate(v * 1e12); }
  constexpr double per_second() const { return v_; }
  constexpr double tflops_value() const { return v_ / 1e12; }
  friend constexpr FlopRate operator*(FlopRate a, double k) { return FlopRate(a.v_ * k); }
  friend constexpr FlopRate operator*(double k, FlopRate a) { return FlopRate(a.v_ * k); }
  friend constexpr auto operator<=>(FlopRate a, FlopRate b) { return a.v_ <=> b.v_; }
  friend constexpr bool operator==(FlopRate a, FlopRate b) { return a.v_ == b.v_; }
  friend constexpr double operator/(FlopRate a, FlopRate b) { return a.v_ / b.v_; }

 private:
  constexpr explicit FlopRate(double v) : v_(v) {}
  double v_ = 0.0;
};

// Dimensionally valid cross-unit operators. Times are rounded up to whole nanoseconds.
Time operator/(Bytes b, Bandwidth bw);
Time operator/(Flops f, FlopRate r);
Bytes operator*(Bandwidth bw, Time t);
// Achieved rates over a duration (for reports).
FlopRate operator/(Flops f, Time t);
Bandwidth operator/(Bytes b, Time t);

// Parsers for config strings; they throw ConfigError naming `path` on bad input.
Bandwidth parse_bandwidth(std::string_view text, const std::string& path);  // "400Gbps", "50GBps"
Bytes parse_bytes(std::string_view text, const std::string& path);          // "80GiB", "512MB", "4K"
Time parse_time(std::string_view text, const std::string& path);            // "2us", "1.5ms"
FlopRate parse_flop_rate(std::string_view text, const std::string& path);   // "989TFLOPS"

// Canonical text forms (fixed precision, '.' decimal point) used in reports.
std::string to_string(Time t);
std::string to_string(Bytes b);
std::string to_string(Bandwidth bw);

namespace literals {
constexpr Bytes operator""_B(unsigned long long v) { return Bytes(static_cast<int64_t>(v)); }
constexpr Bytes operator""_KiB(unsigned long long v) { return Bytes(static_cast<int64_t>(v) << 10); }
constexpr Bytes operator""_MiB(unsigned long long v) { return Bytes(static_cast<int64_t>(v) << 20); }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes(static_cast<int64_t>(v) << 30); }
constexpr Bandwidth operator""_Gbps(unsigned long long v) { return Bandwidth::gbit_per_s(static_cast<double>(v)); }
constexpr Bandwidth operator""_GBps(unsigned long long v) { return Bandwidth::gbyte_per_s(static_cast<double>(v)); }
constexpr Time operator""_ns(unsigned long long v) { return Time::ns(static_cast<int64_t>(v)); }
constexpr Time operator""_us(unsigned long long v) { return Time::us(static_cast<int64_t>(v)); }
constexpr Time operator""_ms(unsigned long long v) { return Time::ms(static_cast<int64_t>(v)); }
constexpr Time operator""_s(unsigned long long v) { return Time::s(static_cast<int64_t>(v)); }
}  // namespace literals

}  // namespace trainsim::sim
