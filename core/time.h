#pragma once
// Simulated time: a signed 64-bit count of nanoseconds. Models may compute in double, but a
// duration enters the simulator exactly once, through from_ms(), and is an integer from then on.
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace servesim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ns(int64_t v) { return Time(v); }
  /// Rounds to the nearest nanosecond (ties away from zero).
  static Time from_ms(double ms) { return Time(static_cast<int64_t>(std::llround(ms * 1e6))); }
  static Time from_seconds(double s) { return Time(static_cast<int64_t>(std::llround(s * 1e9))); }
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

 private:
  constexpr explicit Time(int64_t v) : m_ns(v) {}
  int64_t m_ns = 0;
};

}  // namespace servesim
