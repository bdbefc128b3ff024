// Unit tests for sim/units: strong unit types, rounding rules and the config-string parsers.

#include "sim/units.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>

#include "sim/error.hpp"

namespace trainsim::sim {
// Readable failure messages: GoogleTest finds these printers by argument-dependent lookup.
inline void PrintTo(Time t, std::ostream* os) { *os << t.count_ns() << " ns"; }
inline void PrintTo(Bytes b, std::ostream* os) { *os << b.count() << " B"; }
inline void PrintTo(Bandwidth bw, std::ostream* os) { *os << bw.bytes_per_second() << " B/s"; }

namespace {

using namespace literals;

constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

// Runs `fn`, expects a ConfigError and returns its one-line what() (empty if nothing was thrown).
template <typename Fn>
std::string config_error_text(Fn fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

// ---- Time -------------------------------------------------------------------------------------

TEST(UnitsTest, TimeFactoriesAndLiteralsAgree) {
  EXPECT_EQ(Time::us(3).count_ns(), 3'000);
  EXPECT_EQ(Time::ms(3).count_ns(), 3'000'000);
  EXPECT_EQ(Time::s(3).count_ns(), 3'000'000'000);
  EXPECT_EQ(2_us, Time::ns(2'000));
  EXPECT_EQ(5_ms, Time::us(5'000));
  EXPECT_EQ(7_s, Time::ms(7'000));
  EXPECT_EQ(Time(), Time::zero());
  // The factories are usable at compile time.
  static_assert(Time::us(2) == Time::ns(2'000));
  static_assert(Time::s(1) > Time::ms(999));
}

TEST(UnitsTest, TimeArithmeticAndOrder) {
  EXPECT_EQ(5_us - 2_us, Time::ns(3'000));
  EXPECT_EQ(5_us + 2_us, Time::ns(7'000));
  Time t = 1_ms;
  t += 500_us;
  EXPECT_EQ(t, Time::us(1'500));
  EXPECT_EQ(Time::us(3) * 4, Time::us(12));
  EXPECT_LT(999_ns, 1_us);
  EXPECT_GT(Time::infinite(), Time::s(1'000'000'000));
}

TEST(UnitsTest, InfiniteTimeSaturates) {
  const Time inf = Time::infinite();
  EXPECT_TRUE(inf.is_infinite());
  EXPECT_FALSE(Time::s(1).is_infinite());
  EXPECT_TRUE((inf + 1_ns).is_infinite());
  EXPECT_TRUE((1_ns + inf).is_infinite());
  EXPECT_TRUE((inf - 1_s).is_infinite());
  EXPECT_TRUE((inf * 2).is_infinite());
  // Finite values that overflow int64 nanoseconds (~292 years) saturate instead of wrapping.
  EXPECT_TRUE((Time::ns(kMaxNs - 10) + Time::ns(100)).is_infinite());
  EXPECT_TRUE((Time::s(1'000'000'000) * 1'000).is_infinite());
  EXPECT_TRUE(Time::s(10'000'000'000).is_infinite());  // 1e19 ns > INT64_MAX
  static_assert((Time::infinite() * 3).is_infinite());
}

TEST(UnitsTest, InfiniteTimeHasNoSecondsAndCannotBeSubtracted) {
  // Infinite time read as seconds is a duration that overflowed the clock: only input values can
  // do that (a 200-year latency summed, a 1 FLOP/s GPU), so it is the input's error (exit 2).
  EXPECT_THROW((void)Time::infinite().seconds(), ConfigError);
  EXPECT_THROW((void)(1_s - Time::infinite()), InternalError);
  EXPECT_DOUBLE_EQ(Time::ms(1'500).seconds(), 1.5);
}

TEST(UnitsTest, FromSecondsRoundsUpToWholeNanoseconds) {
  EXPECT_EQ(Time::from_seconds_ceil(1.5e-9), Time::ns(2));  // 1.5 ns -> 2 ns
  EXPECT_EQ(Time::from_seconds_ceil(1e-12), Time::ns(1));   // anything positive takes >= 1 ns
  EXPECT_EQ(Time::from_seconds_ceil(0.0), Time::zero());
  EXPECT_EQ(Time::from_seconds_ceil(2.0), Time::s(2));
  EXPECT_TRUE(Time::from_seconds_ceil(1e12).is_infinite());  // 1e21 ns does not fit: saturate
  EXPECT_THROW(Time::from_seconds_ceil(-1e-9), InternalError);
  EXPECT_THROW(Time::from_seconds_ceil(std::numeric_limits<double>::quiet_NaN()), InternalError);
}

TEST(UnitsTest, FromSecondsIgnoresRepresentationNoise) {
  // 1.1 h: 1.1 * 3600.0 is 3960.0000000000005 in binary floating point, 5e-4 ns too much.
  // Rounding up must not turn that noise into an extra nanosecond.
  EXPECT_EQ(Time::from_seconds_ceil(1.1 * 3600.0), Time::s(3'960));
  // 0.3 us = 300 ns, whatever the last bit of 0.3e-6 says.
  EXPECT_EQ(Time::from_seconds_ceil(0.3e-6), Time::ns(300));
  // A genuine fraction of a nanosecond still rounds up at that magnitude.
  EXPECT_EQ(Time::from_seconds_ceil(3960.0 + 0.5e-9), Time::ns(3'960'000'000'001));
}

// ---- Cross-unit operators ------------------------------------------------------------------------

TEST(UnitsTest, BytesOverBandwidthRoundsUpToNanoseconds) {
  // 1000 B at 1 GB/s is exactly 1 us.
  EXPECT_EQ(Bytes(1'000) / 1_GBps, 1_us);
  // 7 B at 2 GB/s = 3.5 ns -> 4 ns.
  EXPECT_EQ(Bytes(7) / 2_GBps, Time::ns(4));
  // 1 B at 400 Gbps (50 GB/s) = 0.02 ns -> 1 ns: a transfer never takes zero time.
  EXPECT_EQ(1_B / 400_Gbps, Time::ns(1));
  // 1 MiB at 400 Gbps = 1048576 / 5e10 s = 20971.52 ns -> 20972 ns.
  EXPECT_EQ(1_MiB / 400_Gbps, Time::ns(20'972));
  // Nothing to move takes no time, even over a zero bandwidth.
  EXPECT_EQ(Bytes(0) / Bandwidth(), Time::zero());
  EXPECT_THROW((void)(1_B / Bandwidth()), InternalError);
}

TEST(UnitsTest, LongTransfersStayExact) {
  // 100000007976 B at 3 GB/s is exactly 33333335992 ns (33 s); the double quotient carries
  // 4e-6 ns of noise, more than an absolute 1e-6 tolerance absorbs at this magnitude.
  EXPECT_EQ(Bytes(100'000'007'976) / Bandwidth::bytes_per_s(3e9), Time::ns(33'333'335'992));
}

TEST(UnitsTest, FlopsOverFlopRateRoundsUp) {
  EXPECT_EQ(Flops(1e12) / FlopRate::tflops(1), 1_s);
  // 10 FLOPs at 3 GFLOP/s = 3.33 ns -> 4 ns.
  EXPECT_EQ(Flops(10) / FlopRate::per_s(3e9), Time::ns(4));
  EXPECT_EQ(Flops(0) / FlopRate(), Time::zero());
  EXPECT_THROW((void)(Flops(1) / FlopRate()), InternalError);
}

TEST(UnitsTest, BandwidthTimesTimeRoundsDownToWholeBytes) {
  EXPECT_EQ(50_GBps * 1_us, Bytes(50'000));
  // 1/3 B per ns for 10 ns = 3.33 B: only whole bytes have been delivered.
  EXPECT_EQ(Bandwidth::bytes_per_s(1e9 / 3.0) * Time::ns(10), Bytes(3));
}

TEST(UnitsTest, AchievedRates) {
  EXPECT_DOUBLE_EQ((Bytes(1'000) / 1_us).bytes_per_second(), 1e9);
  EXPECT_DOUBLE_EQ((Flops(2e12) / 2_s).per_second(), 1e12);
  EXPECT_THROW((void)(Bytes(1) / Time::zero()), InternalError);
}

TEST(UnitsTest, BytesArithmetic) {
  EXPECT_EQ(80_GiB, Bytes(int64_t{80} << 30));
  EXPECT_EQ(1_KiB + 1_KiB, 2_KiB);
  EXPECT_EQ(3_MiB - 1_MiB, 2_MiB);
  EXPECT_EQ(4 * 1_KiB, 4_KiB);
  EXPECT_EQ(1_MiB / 4, 256_KiB);
  EXPECT_EQ(Bytes(10).scaled(0.25), Bytes(3));  // 2.5 B rounds up
  EXPECT_DOUBLE_EQ((3_GiB / 2).gib(), 1.5);
}

// ---- Bandwidth units: bits vs bytes ------------------------------------------------------------------

TEST(UnitsTest, GbpsIsBitsAndGBpsIsBytes) {
  EXPECT_EQ(400_Gbps, 50_GBps);
  EXPECT_DOUBLE_EQ((400_Gbps).bytes_per_second(), 50e9);
  EXPECT_EQ(parse_bandwidth("400Gbps", "p"), parse_bandwidth("50GBps", "p"));
  EXPECT_EQ(parse_bandwidth("400Gbps", "p"), 50_GBps);
  // The same number with an upper-case B is eight times faster.
  EXPECT_DOUBLE_EQ(parse_bandwidth("400GBps", "p") / parse_bandwidth("400Gbps", "p"), 8.0);
  EXPECT_EQ(parse_bandwidth("100 Gb/s", "p"), Bandwidth::gbit_per_s(100));
  EXPECT_DOUBLE_EQ(parse_bandwidth("0.9TB/s", "p").bytes_per_second(), 900e9);
}

TEST(UnitsTest, ParseBandwidthMissingUnitMessage) {
  EXPECT_EQ(config_error_text([] { parse_bandwidth("400", "cluster.nodes[3].nic.bandwidth"); }),
            "cluster.nodes[3].nic.bandwidth: expected a bandwidth like \"400Gbps\" or \"50GBps\", got \"400\" "
            "(add a unit: bps/Kbps/Mbps/Gbps/Tbps for bits, Bps/KBps/MBps/GBps/TBps for bytes)");
  try {
    parse_bandwidth("400gbps", "nic");  // unit names are case-sensitive: b vs B matters
    FAIL() << "lower-case gbps must be rejected";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "nic");
    EXPECT_EQ(e.message(), "expected a bandwidth like \"400Gbps\" or \"50GBps\", got \"400gbps\"");
    EXPECT_EQ(e.hint(), "add a unit: bps/Kbps/Mbps/Gbps/Tbps for bits, Bps/KBps/MBps/GBps/TBps for bytes");
  }
}

TEST(UnitsTest, ParseBandwidthRejectsNonPositiveAndNonNumbers) {
  EXPECT_EQ(config_error_text([] { parse_bandwidth("fast", "nic"); }),
            "nic: expected a positive bandwidth like \"400Gbps\" or \"50GBps\", got \"fast\"");
  EXPECT_EQ(config_error_text([] { parse_bandwidth("0Gbps", "nic"); }),
            "nic: expected a positive bandwidth like \"400Gbps\" or \"50GBps\", got \"0Gbps\"");
  EXPECT_THROW(parse_bandwidth("-5GBps", "nic"), ConfigError);
  EXPECT_THROW(parse_bandwidth("infGbps", "nic"), ConfigError);
}

// ---- Other parsers ------------------------------------------------------------------------------------

TEST(UnitsTest, ParseBytes) {
  EXPECT_EQ(parse_bytes("80GiB", "p"), 80_GiB);
  EXPECT_EQ(parse_bytes("512MB", "p"), Bytes(512'000'000));
  EXPECT_EQ(parse_bytes("4K", "p"), 4_KiB);
  EXPECT_EQ(parse_bytes("1.5 GiB", "p"), Bytes(int64_t{3} << 29));
  EXPECT_EQ(config_error_text([] { parse_bytes("4096", "gpu.memory"); }),
            "gpu.memory: expected a size like \"80GiB\" or \"512MB\", got \"4096\" "
            "(add a unit: B, KiB, MiB, GiB, TiB (binary) or KB, MB, GB, TB (decimal))");
  EXPECT_THROW(parse_bytes("-1GiB", "p"), ConfigError);
}

TEST(UnitsTest, ParseTime) {
  EXPECT_EQ(parse_time("2us", "p"), 2_us);
  EXPECT_EQ(parse_time("1.5ms", "p"), Time::us(1'500));
  EXPECT_EQ(parse_time("0.5ns", "p"), Time::ns(1));    // sub-nanosecond rounds up
  EXPECT_EQ(parse_time("1.1h", "p"), Time::s(3'960));  // no spurious extra nanosecond
  EXPECT_EQ(parse_time("2min", "p"), Time::s(120));
  EXPECT_EQ(parse_time("30d", "p"), Time::s(30 * 86'400));
  EXPECT_EQ(config_error_text([] { parse_time("2", "net.latency"); }),
            "net.latency: expected a duration like \"2us\" or \"1.5ms\", got \"2\" "
            "(add a unit: ns, us, ms, s, min, h or d)");
  EXPECT_THROW(parse_time("-1us", "p"), ConfigError);
}

TEST(UnitsTest, ParseFlopRate) {
  EXPECT_EQ(parse_flop_rate("989TFLOPS", "p"), FlopRate::tflops(989));
  EXPECT_EQ(parse_flop_rate("2PFLOPS", "p"), FlopRate::tflops(2'000));
  EXPECT_EQ(config_error_text([] { parse_flop_rate("989", "gpu.peak"); }),
            "gpu.peak: expected a FLOP rate like \"989TFLOPS\", got \"989\" (add a unit: GFLOPS, TFLOPS or PFLOPS)");
}

TEST(UnitsTest, CanonicalTextForms) {
  EXPECT_EQ(to_string(Time::ns(999)), "999 ns");
  EXPECT_EQ(to_string(Time::ns(1'500)), "1.500 us");
  EXPECT_EQ(to_string(Time::us(2'250)), "2.250 ms");
  EXPECT_EQ(to_string(Time::ms(1'500)), "1.500 s");
  EXPECT_EQ(to_string(Time::infinite()), "inf");
  EXPECT_EQ(to_string(Bytes(1'023)), "1023 B");
  EXPECT_EQ(to_string(Bytes(int64_t{3} << 29)), "1.50 GiB");
  EXPECT_EQ(to_string(400_Gbps), "50.00 GB/s");
}

}  // namespace
}  // namespace trainsim::sim
