#pragma once
// Simulated time: a signed 64-bit count of nanoseconds. Models may compute in double, but a
// duration enters the simulator exactly once, through from_ms(), and is an integer from then on.
//
// Overflow: int64 nanoseconds reach 9.22e9 s. Simulated times stay at or below limit(),
// 9.2e9 s, which leaves 2.3e7 s of headroom above it, so a time up to limit() plus a duration
// that its config bounds to less than that headroom (a router delay, a queueing delay, a timer)
// cannot overflow. A duration that nothing bounds up front (a step's time from a model) enters
// through checked_ms() and is added with plus_within(), which refuse instead of wrapping.
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <optional>

namespace servesim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ns(int64_t v) { return Time(v); }
  /// The latest simulated time: 9.2e9 s.
  static constexpr Time limit() { return Time(k_limit_ns); }
  static constexpr double limit_seconds() { return static_cast<double>(k_limit_ns) * 1e-9; }
  /// Rounds to the nearest nanosecond (ties away from zero). REQUIRES: |ms| <= limit (callers
  /// bound their inputs up front); anything else -- NaN, 1e300 -- gives max(), a time past the
  /// limit, never a small one.
  static Time from_ms(double ms) { return from_ns_double(ms * 1e6); }
  static Time from_seconds(double s) { return from_ns_double(s * 1e9); }
  /// `ms` as a duration when it is a number from 0 to limit(), else nullopt.
  static std::optional<Time> checked_ms(double ms) {
    if (!(ms >= 0.0 && ms * 1e6 <= static_cast<double>(k_limit_ns))) return std::nullopt;
    return Time(static_cast<int64_t>(std::llround(ms * 1e6)));
  }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  [[nodiscard]] constexpr int64_t count_ns() const { return m_ns; }
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(m_ns) * 1e-9; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(m_ns + o.m_ns); }
  constexpr Time operator-(Time o) const { return Time(m_ns - o.m_ns); }
  constexpr Time& operator+=(Time o) {
    m_ns += o.m_ns;
    return *this;
  }
  /// this + d when the sum is at most limit(), else nullopt. REQUIRES: both are in
  /// [0, limit()].
  [[nodiscard]] constexpr std::optional<Time> plus_within(Time d) const {
    if (d.m_ns > k_limit_ns - m_ns) return std::nullopt;
    return Time(m_ns + d.m_ns);
  }

 private:
  static constexpr int64_t k_limit_ns = 9'200'000'000'000'000'000;
  constexpr explicit Time(int64_t v) : m_ns(v) {}
  static Time from_ns_double(double ns) {
    // Compare before converting: llround of a value beyond int64 is unspecified.
    if (!(std::fabs(ns) <= 9.2e18))
      return ns < 0 ? Time(std::numeric_limits<int64_t>::min()) : max();
    return Time(static_cast<int64_t>(std::llround(ns)));
  }
  int64_t m_ns = 0;
};

}  // namespace servesim
