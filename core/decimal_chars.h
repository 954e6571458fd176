#pragma once
// Decimal text for the per-request output files, written straight into a caller's buffer with
// the bytes std::to_chars gives, at a fraction of its instructions: requests.csv writes eight
// times and a TPOT per request, and std::to_chars(double, fixed, 9) alone took ~500 instructions
// a call. tests/core/decimal_chars_test.cpp checks each against std::to_chars.
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/// `a` nanoseconds as seconds with nine decimals, one digit at least before the point, with
/// integer operations only: the whole seconds from the digit pairs, the decimals as
/// put_nine_digits. Returns the end. REQUIRES: `a` < 10^13 (below 10^4 s), 32 bytes at `p`.
inline char* put_small_ns_as_seconds_portable(char* p, uint64_t a) {
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

#if defined(__SSE2__)
/// put_small_ns_as_seconds_portable's bytes in fewer instructions (docs/performance.md, branch
/// io48a): all 16 digits of `a` at once in one SSE2 register (every x86-64 has it; x86 is
/// little-endian). `a` / 10^8 and `a` % 10^8 split into four groups of four digits (32-bit
/// lanes: x / 10^4 is x * 0xD1B71759 >> 45), each group into two pairs (16-bit lanes: x / 100 is
/// the high half of x * 10486, shifted right by 4, for x < 10^4) and each pair into its two
/// digits (x / 10 is the high half of x * 6554 for x < 100), the tens in the lane's low byte:
/// the register's bytes are then the text's order, "000WWWWF FFFFFFFF" (checked against the
/// portable writer for every value of each half when written). The whole seconds' leading zeros
/// are shifted out of the first eight, the point written after them and the nine decimals
/// stored after it. REQUIRES: `a` < 10^13, 32 bytes at `p` (those past the end are scratch).
inline char* put_small_ns_as_seconds_sse2(char* p, uint64_t a) {
  const uint64_t high = a / 100'000'000;  // < 10^5: the whole seconds and the first decimal
  const uint64_t low = a - high * 100'000'000;
  const __m128i halves = _mm_set_epi64x(static_cast<int64_t>(low), static_cast<int64_t>(high));
  const __m128i div_10000 = _mm_set1_epi32(static_cast<int>(0xD1B71759u));
  const __m128i over = _mm_srli_epi64(_mm_mul_epu32(halves, div_10000), 45);
  const __m128i under = _mm_sub_epi32(halves, _mm_mul_epu32(over, _mm_set1_epi32(10'000)));
  const __m128i groups = _mm_or_si128(over, _mm_slli_epi64(under, 32));
  const __m128i hundreds = _mm_srli_epi16(_mm_mulhi_epu16(groups, _mm_set1_epi32(10'486)), 4);
  const __m128i rest = _mm_sub_epi16(groups, _mm_mullo_epi16(hundreds, _mm_set1_epi32(100)));
  const __m128i pairs = _mm_or_si128(hundreds, _mm_slli_epi32(rest, 16));
  __m128i ten = _mm_set1_epi16(10);
  asm("" : "+x"(ten));  // one multiply, not the compiler's shifts and adds (more instructions)
  const __m128i tens = _mm_mulhi_epu16(pairs, _mm_set1_epi16(6'554));
  const __m128i units = _mm_sub_epi16(pairs, _mm_mullo_epi16(tens, ten));
  const __m128i digits = _mm_or_si128(tens, _mm_slli_epi16(units, 8));
  const __m128i text = _mm_or_si128(digits, _mm_set1_epi8('0'));
  // The first digit shown: the first but '0' of the whole seconds' first three, else the fourth.
  const auto zeros =
      static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(digits, _mm_setzero_si128())));
  const auto first = static_cast<unsigned>(__builtin_ctz(~zeros | 0x40));
  const uint64_t head = static_cast<uint64_t>(_mm_cvtsi128_si64(text)) >> (8 * first);
  std::memcpy(p, &head, sizeof head);  // the whole seconds, then scratch
  p += 7 - first;
  *p = '.';
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 1), _mm_srli_si128(text, 7));
  return p + 10;
}
#endif

/// put_ns_as_seconds below 10^4 s: the SSE2 digits where there is SSE2.
inline char* put_small_ns_as_seconds(char* p, uint64_t a) {
#if defined(__SSE2__)
  return put_small_ns_as_seconds_sse2(p, a);
#else
  return put_small_ns_as_seconds_portable(p, a);
#endif
}

/// Integer nanoseconds as exact decimal seconds with nine decimals ("-12.000340001"); returns
/// the end. REQUIRES: 32 bytes at `p`.
inline char* put_ns_as_seconds(char* p, int64_t ns) {
  // Below 10^4 s (every time of an hour's trace) inline; negatives and the rest out of line.
  if (static_cast<uint64_t>(ns) >= 10'000'000'000'000) return put_any_ns_as_seconds(p, ns);
  return put_small_ns_as_seconds(p, static_cast<uint64_t>(ns));
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
  }  // else v * 10^9 < 2^83 / 2^128: rounds to 0
  // Below 10^4 (every TPOT): q's digits as those of a time in nanoseconds.
  if (q < 10'000'000'000'000) return put_small_ns_as_seconds(p, q);
  p = put_u64(p, q / 1'000'000'000);
  *p++ = '.';
  return put_nine_digits(p, static_cast<uint32_t>(q % 1'000'000'000));
#endif
}

}  // namespace servesim::decimal_chars
