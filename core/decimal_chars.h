#pragma once
// Decimal text for the per-request output files, written straight into a caller's buffer with
// the bytes std::to_chars gives, at a fraction of its instructions: requests.csv writes eight
// times and a TPOT per request, and std::to_chars(double, fixed, 9) alone took ~500 instructions
// a call. tests/core/decimal_chars_test.cpp checks each against std::to_chars.
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace servesim::decimal_chars {

#if defined(__SIZEOF_INT128__)
__extension__ using Uint128 = unsigned __int128;  // __extension__: a GCC and Clang type
#endif

/// "00".."99", two characters per value.
inline constexpr char k_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/// `v` < 10^8 as exactly eight digit characters, leading zeros kept, the first in the lowest
/// byte, all at once: the two halves of four digits in the two 32-bit lanes of one word, split
/// into pairs (16-bit lanes) and digits (bytes) by multiplies that divide every lane at once
/// (x * 10486 >> 20 is x / 100 for x < 10^4, x * 103 >> 10 is x / 10 for x < 100; no lane's
/// product reaches the bits kept of the lane above).
inline uint64_t eight_digits(uint32_t v) {
  const uint64_t high = v / 10'000;
  uint64_t w = high | (uint64_t{v - static_cast<uint32_t>(high) * 10'000} << 32);
  uint64_t q = ((w * 10'486) >> 20) & 0x0000007F0000007F;  // each lane's first pair
  w = q | ((w - q * 100) << 16);
  q = ((w * 103) >> 10) & 0x000F000F000F000F;  // each pair's first digit
  return (q | ((w - q * 10) << 8)) | 0x3030303030303030;
}

/// Stores the eight characters of `w` (the lowest byte first) at `p`.
inline void store8(char* p, uint64_t w) {
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  std::memcpy(p, &w, sizeof w);
}

/// Writes `v` in decimal (std::to_chars's bytes); returns the end. REQUIRES: 20 bytes at `p`.
inline char* put_u64(char* p, uint64_t v) {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  if (v < 100) {
    std::memcpy(p, k_pairs + 2 * v, 2);
    return p + 2;
  }
  if (v < 1000) {
    *p = static_cast<char>('0' + v / 100);
    std::memcpy(p + 1, k_pairs + 2 * (v % 100), 2);
    return p + 3;
  }
  if (v < 10000) {
    std::memcpy(p, k_pairs + 2 * (v / 100), 2);
    std::memcpy(p + 2, k_pairs + 2 * (v % 100), 2);
    return p + 4;
  }
  if (v < 100'000'000) {  // eight digits at once, then the leading zeros dropped
    const unsigned n = v < 100'000 ? 5 : v < 1'000'000 ? 6 : v < 10'000'000 ? 7 : 8;
    store8(p, eight_digits(static_cast<uint32_t>(v)) >> (8 * (8 - n)));  // p[n..8): scratch
    return p + n;
  }
  return std::to_chars(p, p + 20, v).ptr;
}

/// Writes `f` < 10^9 as exactly nine digits, leading zeros kept; returns the end. The first
/// digit is f x ceil(2^57 / 10^8) >> 57 (f / 10^8 for every f < 10^9), the rest eight at once.
inline char* put_nine_digits(char* p, uint32_t f) {
  const auto first = static_cast<uint32_t>((uint64_t{f} * 1'441'151'881u) >> 57);
  *p = static_cast<char>('0' + first);
  store8(p + 1, eight_digits(f - first * 100'000'000));
  return p + 9;
}

/// put_ns_as_seconds for any time (below, the common case is inlined).
[[gnu::noinline]] inline char* put_any_ns_as_seconds(char* p, int64_t ns) {
  const uint64_t a = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) *p++ = '-';
  p = put_u64(p, a / 1'000'000'000);
  *p++ = '.';
  return put_nine_digits(p, static_cast<uint32_t>(a % 1'000'000'000));
}

/// Integer nanoseconds as exact decimal seconds with nine decimals ("-12.000340001"); returns
/// the end. REQUIRES: 31 bytes at `p`.
inline char* put_ns_as_seconds(char* p, int64_t ns) {
  if (ns < 0 || ns >= 10'000'000'000'000) return put_any_ns_as_seconds(p, ns);
  // Below 10^4 s (every time of an hour's trace): the whole seconds from the digit pairs too.
  const auto a = static_cast<uint64_t>(ns);
  const auto whole = static_cast<uint32_t>(a / 1'000'000'000);
  const auto fraction = static_cast<uint32_t>(a - uint64_t{whole} * 1'000'000'000);
  if (whole < 10) {
    *p++ = static_cast<char>('0' + whole);
  } else if (whole < 100) {
    std::memcpy(p, k_pairs + 2 * whole, 2);
    p += 2;
  } else if (whole < 1000) {
    *p = static_cast<char>('0' + whole / 100);
    std::memcpy(p + 1, k_pairs + 2 * (whole % 100), 2);
    p += 3;
  } else {
    std::memcpy(p, k_pairs + 2 * (whole / 100), 2);
    std::memcpy(p + 2, k_pairs + 2 * (whole % 100), 2);
    p += 4;
  }
  *p++ = '.';
  return put_nine_digits(p, fraction);
}

/// `v` with nine decimals, correctly rounded, ties to even: the bytes of
/// std::to_chars(p, end, v, std::chars_format::fixed, 9), which it calls for the values the fast
/// path below leaves out. Returns the end. REQUIRES: `end` - `p` >= 30 (the fast path's most).
///
/// For 0 <= v < 2^32 the double is m * 2^e exactly (m < 2^53, e <= -21), so v * 10^9 =
/// m * 10^9 / 2^-e is a ratio of integers below 2^83: its quotient and remainder in 128-bit
/// arithmetic give the rounded value exactly. Anything else (negative, larger, NaN) goes to
/// std::to_chars.
inline char* put_fixed9(char* p, char* end, double v) {
#if !defined(__SIZEOF_INT128__)
  return std::to_chars(p, end, v, std::chars_format::fixed, 9).ptr;
#else
  uint64_t bits = 0;
  static_assert(sizeof bits == sizeof v);
  std::memcpy(&bits, &v, sizeof v);
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  // Sign bit clear and v < 2^32 (biased exponent below 1023 + 32).
  if ((bits >> 63) != 0 || biased >= 1023 + 32)
    return std::to_chars(p, end, v, std::chars_format::fixed, 9).ptr;
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  const uint64_t m = biased == 0 ? fraction : fraction | (uint64_t{1} << 52);
  const int shift = biased == 0 ? 1074 : 1075 - biased;  // v = m / 2^shift, shift >= 21
  uint64_t q = 0;                                        // round(v * 10^9), < 2^32 * 10^9
  if (shift < 128) {
    const Uint128 product = static_cast<Uint128>(m) * 1'000'000'000u;
    const Uint128 below = (static_cast<Uint128>(1) << shift) - 1;
    const Uint128 half = static_cast<Uint128>(1) << (shift - 1);
    q = static_cast<uint64_t>(product >> shift);
    const Uint128 remainder = product & below;
    if (remainder > half || (remainder == half && (q & 1) != 0)) ++q;
  }                          // else v * 10^9 < 2^83 / 2^128: rounds to 0
  if (q < 10'000'000'000) {  // below 10 (every TPOT): one whole digit
    const auto whole = static_cast<uint32_t>(q / 1'000'000'000);
    p[0] = static_cast<char>('0' + whole);
    p[1] = '.';
    return put_nine_digits(p + 2, static_cast<uint32_t>(q - uint64_t{whole} * 1'000'000'000));
  }
  p = put_u64(p, q / 1'000'000'000);
  *p++ = '.';
  return put_nine_digits(p, static_cast<uint32_t>(q % 1'000'000'000));
#endif
}

}  // namespace servesim::decimal_chars
