#pragma once
// The ranges a real deployment's sizes, rates and durations fall in, each naming its unit and
// the slip a value outside it most likely is: a value in the wrong unit (bytes for GiB, GB/s
// for bytes/s) is refused with the key, the value and the unit expected, never accepted as an
// absurd deployment. docs/config.md states each bound ("Plausible ranges").
#include <optional>
#include <string>

#include "core/config.h"

namespace servesim {
namespace units {

/// A range with its unit ("size in GiB") and the slip a value above it most likely is ("did you
/// give bytes?", or nullptr); `slip_below`, where a value below a positive minimum is a slip too
/// ("did you give GB/s?" under 1e9 bytes/s). A value below a minimum of 0 gets Cfg's own message.
struct Plausible {
  RealRange range;
  const char* unit;
  const char* slip;
  const char* slip_below = nullptr;
};

/// Accelerator memory in GiB or GB: no accelerator has more than 1 TiB.
inline constexpr Plausible k_accelerator_gib{
    {0.0, 1024.0, true}, "size in GiB", "did you give bytes?"};
inline constexpr Plausible k_reserved_gib{
    {0.0, 1024.0, false}, "size in GiB", "did you give bytes?"};
inline constexpr Plausible k_accelerator_gb{
    {0.0, 1100.0, true}, "size in GB", "did you give bytes?"};
/// Host (CPU) memory set aside per accelerator, in GB.
inline constexpr Plausible k_host_gb{{0.0, 16384.0, false}, "size in GB", "did you give bytes?"};
/// A bandwidth in GB/s: up to 100 TB/s (HBM is 8 TB/s today).
inline constexpr Plausible k_gb_per_s{
    {0.0, 100000.0, true}, "bandwidth in GB/s", "did you give bytes/s?"};
/// A bandwidth in bytes/s, as AIConfigurator's system files give it: 1 GB/s to 10 PB/s (the
/// upper bound leaves room for made-up test chips; the slip it catches is GB/s, far below).
inline constexpr Plausible k_bytes_per_s{
    {1e9, 1e16, false}, "bandwidth in bytes/s", "did you give GB/s?"};
/// A peak rate in FLOP/s, as AIConfigurator's system files give it: 1 TFLOP/s to 100 PFLOP/s.
inline constexpr Plausible k_flop_per_s{
    {1e12, 1e17, false}, "rate in FLOP/s", "did you give TFLOP/s?"};
/// A peak rate in TFLOP/s (or TOPS): up to 100,000.
inline constexpr Plausible k_tflop_per_s{
    {0.0, 100000.0, true}, "rate in TFLOP/s", "did you give FLOP/s?"};
/// The KV cache one token takes, in bytes: up to 100 MB.
inline constexpr Plausible k_bytes_per_token{{0.0, 1e8, true}, "size in bytes per token", nullptr};
/// The bytes of one activation element (2 for bfloat16).
inline constexpr Plausible k_bytes_per_element{
    {0.0, 16.0, true}, "size in bytes per element", nullptr};
/// A model's parameter count: up to 100 trillion.
inline constexpr Plausible k_parameters{{0.0, 1e14, true}, "count of parameters", nullptr};
/// An accelerator's power draw in watts (a chip's TDP is at most a few kW).
inline constexpr Plausible k_watts{{0.0, 5000.0, true}, "power in W", "did you give mW?"};
inline constexpr Plausible k_idle_watts{{0.0, 5000.0, false}, "power in W", "did you give mW?"};
/// A price per accelerator-hour.
inline constexpr Plausible k_usd_per_hour{{0.0, 10000.0, true}, "price in USD per hour", nullptr};
/// A time cost in milliseconds, per step, sequence, token or layer: up to one minute.
inline constexpr Plausible k_cost_ms{
    {0.0, 60000.0, false}, "duration in ms", "did you give microseconds or nanoseconds?"};
inline constexpr Plausible k_positive_cost_ms{
    {0.0, 60000.0, true}, "duration in ms", "did you give microseconds or nanoseconds?"};
/// A latency in microseconds: up to one second.
inline constexpr Plausible k_latency_us{
    {0.0, 1e6, false}, "duration in microseconds", "did you give nanoseconds?"};
/// A latency in seconds: up to one second.
inline constexpr Plausible k_latency_s{
    {0.0, 1.0, false}, "duration in seconds", "did you give microseconds?"};
/// A time of day or offset into a run, in seconds: up to a year.
inline constexpr Plausible k_offset_s{
    {0.0, 3.2e7, false}, "time in seconds", "did you give milliseconds?"};
/// A fitted curve's half-point (rows, tokens, bytes or work): up to 1e15.
inline constexpr Plausible k_half_point{
    {0.0, 1e15, false}, "half-point of a fitted curve", nullptr};
/// A dimensionless multiplier of a scheduler's estimate.
inline constexpr Plausible k_factor{{0.0, 100.0, true}, "factor", nullptr};

}  // namespace units

/// Cfg::get_real and optional_real with a plausible range: the same reading and KeyLog record,
/// but a number above the range (or below a positive minimum) is refused as "not a plausible size
/// in GiB (a number > 0 and
/// <= 1024); did you give bytes?".
[[nodiscard]] double plausible_real(const Cfg& c, const std::string& key,
                                    const units::Plausible& p);
[[nodiscard]] double plausible_real(const Cfg& c, const std::string& key, double def,
                                    const units::Plausible& p);
[[nodiscard]] std::optional<double> optional_plausible_real(const Cfg& c, const std::string& key,
                                                            const units::Plausible& p);

}  // namespace servesim
