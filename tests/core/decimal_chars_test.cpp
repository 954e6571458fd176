// core/decimal_chars.h: each writer gives std::to_chars's bytes (or, for seconds from
// nanoseconds, the digits worked out by hand), over the edges of every branch and a seeded sample.
#include "core/decimal_chars.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace t_core_decimal_chars_test {

using namespace servesim;

namespace {

std::string fixed9(double v) {
  char buf[400];
  return {buf, decimal_chars::put_fixed9(buf, buf + sizeof buf, v)};
}

std::string fixed9_slow(double v) {
  char buf[400];
  return {buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 9).ptr};
}

std::string seconds(int64_t ns) {
  char buf[40];
  return {buf, decimal_chars::put_ns_as_seconds(buf, ns)};
}

std::string u64(uint64_t v) {
  char buf[24];
  return {buf, decimal_chars::put_u64(buf, v)};
}

}  // namespace

TEST_CASE("decimal_chars: seconds from nanoseconds, digits worked out by hand", "[core]") {
  CHECK(seconds(0) == "0.000000000");
  CHECK(seconds(1) == "0.000000001");
  CHECK(seconds(12'000'340'001) == "12.000340001");
  CHECK(seconds(999'999'999) == "0.999999999");
  CHECK(seconds(1'000'000'000) == "1.000000000");
  CHECK(seconds(3'599'100'000'007) == "3599.100000007");
  CHECK(seconds(999'999'999'999) == "999.999999999");
  CHECK(seconds(9'999'999'999'999) == "9999.999999999");
  CHECK(seconds(10'000'000'000'000) == "10000.000000000");
  CHECK(seconds(-1'500'000'000) == "-1.500000000");
  CHECK(seconds(std::numeric_limits<int64_t>::max()) == "9223372036.854775807");
  CHECK(seconds(std::numeric_limits<int64_t>::min()) == "-9223372036.854775808");
}

TEST_CASE("decimal_chars: seconds from nanoseconds over a seeded sample", "[core]") {
  std::mt19937_64 rng(34);
  int differ = 0;
  for (int i = 0; i < 100'000; ++i) {
    // Within an hour's trace, up to 10^4 s (the inlined digits), and anywhere.
    const uint64_t bits = rng();
    const auto ns = static_cast<int64_t>(i % 3 == 0   ? bits % 3'600'000'000'000
                                         : i % 3 == 1 ? bits % 20'000'000'000'000
                                                      : bits);
    const uint64_t a = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    const std::string want =
        fmt::format("{}{}.{:09}", ns < 0 ? "-" : "", a / 1'000'000'000, a % 1'000'000'000);
    if (seconds(ns) != want) ++differ;
  }
  CHECK(differ == 0);
}

TEST_CASE("decimal_chars: the SSE2 and the portable seconds writers agree digit for digit",
          "[core]") {
  // Below 10^4 s put_ns_as_seconds writes with put_small_ns_as_seconds_sse2 where SSE2 is
  // (x86-64); the portable writer serves elsewhere. Both against the digits worked out by hand,
  // at every digit count's edges and over a seeded sample.
  const auto want = [](uint64_t a) {
    return fmt::format("{}.{:09}", a / 1'000'000'000, a % 1'000'000'000);
  };
  std::vector<uint64_t> values;
  for (uint64_t e = 1; e < 10'000'000'000'000; e *= 10)
    for (const uint64_t v : {e - 1, e, e + 1, 2 * e - 1, 9 * e + (e - 1)}) values.push_back(v);
  values.push_back(9'999'999'999'999);
  values.push_back(1'234'567'890'123);
  std::mt19937_64 rng(48);
  for (int i = 0; i < 200'000; ++i) values.push_back(rng() % 10'000'000'000'000);
  int differ = 0;
  for (const uint64_t a : values) {
    char buf[48];
    if (std::string(buf, decimal_chars::put_small_ns_as_seconds_portable(buf, a)) != want(a))
      ++differ;
#if defined(__SSE2__)
    std::memset(buf, 'x', sizeof buf);
    if (std::string(buf, decimal_chars::put_small_ns_as_seconds_sse2(buf, a)) != want(a)) ++differ;
#endif
  }
  CHECK(differ == 0);
#if defined(__SSE2__)
  // What it writes past the end is scratch, never before `p`.
  char buf[48];
  std::memset(buf, '#', sizeof buf);
  const char* end = decimal_chars::put_small_ns_as_seconds_sse2(buf + 8, 5'000'000'001);
  CHECK(std::string(static_cast<const char*>(buf), end) == "########5.000000001");
#endif
}

TEST_CASE("decimal_chars: put_u64 is to_chars at each digit count", "[core]") {
  uint64_t v = 1;
  for (int digits = 1; digits <= 20; ++digits, v *= 10) {
    for (const uint64_t x : {v - 1, v, v + 1, v * 10 - 1}) {
      char buf[24];
      CHECK(u64(x) == std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr));
    }
    if (digits == 19) break;  // v * 10 would wrap
  }
  CHECK(u64(std::numeric_limits<uint64_t>::max()) == "18446744073709551615");
}

TEST_CASE("decimal_chars: nine digits keep their leading zeros, every digit position", "[core]") {
  for (uint32_t f = 1, i = 0; i < 9; ++i, f *= 10) {
    char buf[9];
    decimal_chars::put_nine_digits(buf, f);
    std::string want(9, '0');
    want[8 - i] = '1';
    CHECK(std::string(buf, 9) == want);
    decimal_chars::put_nine_digits(buf, f * 9 + (f - 1));  // 9 then 9s below: 199..., 999...
    CHECK(std::string(buf, 9) == std::string(8 - i, '0') + std::string(i + 1, '9'));
  }
}

TEST_CASE("decimal_chars: fixed9 rounds as to_chars does, ties to even", "[core]") {
  // 1/1024 = 0.0009765625 and 3/1024 = 0.0029296875 are ties at the ninth decimal: the even
  // neighbour wins (0.000976562, 0.002929688).
  CHECK(fixed9(std::ldexp(1.0, -10)) == "0.000976562");
  CHECK(fixed9(std::ldexp(3.0, -10)) == "0.002929688");
  CHECK(fixed9(0.0) == "0.000000000");
  CHECK(fixed9(0.0067129590) == fixed9_slow(0.0067129590));
  // Around 10 (one whole digit below, put_u64 from there: 9.9999999995 rounds up to it).
  CHECK(fixed9(9.999999999) == "9.999999999");
  CHECK(fixed9(9.9999999996) == "10.000000000");
  CHECK(fixed9(10.0) == "10.000000000");
  CHECK(fixed9(10.0000000004) == "10.000000000");
  // Up to 10^4 the digits are a time's (put_small_ns_as_seconds); 9999.9999999996 rounds to
  // 10^4, past them.
  CHECK(fixed9(12.5) == "12.500000000");
  CHECK(fixed9(1234.000000001) == fixed9_slow(1234.000000001));
  CHECK(fixed9(9999.999999999) == fixed9_slow(9999.999999999));
  CHECK(fixed9(9999.9999999996) == "10000.000000000");
  CHECK(fixed9(123456.5) == "123456.500000000");
  // The fast path's edges (2^32) and the values it leaves to to_chars.
  for (const double v :
       {-0.0, -1.5, 4294967295.9999995, 4294967296.0, 1e300, 5e-324,
        std::numeric_limits<double>::denorm_min() * 3, 0.5e-9, 1.5e-9, 2.5e-9,
        std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()})
    CHECK(fixed9(v) == fixed9_slow(v));
  std::mt19937_64 rng(34);
  int differ = 0;
  for (int i = 0; i < 200'000; ++i) {
    // TPOT-like ratios, dyadic values (ties at every exponent) and arbitrary bit patterns.
    const double ratio = static_cast<double>(rng() % 4'000'000'000'000) * 1e-9 /
                         static_cast<double>(1 + rng() % 5000);
    const double dyadic =
        std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(rng() % 100));
    double any = 0;
    const uint64_t bits = rng();
    std::memcpy(&any, &bits, sizeof any);
    for (const double v : {ratio, dyadic, any})
      if (fixed9(v) != fixed9_slow(v)) ++differ;
  }
  CHECK(differ == 0);
}

}  // namespace t_core_decimal_chars_test
