#pragma once
// The figures of `servesim trace stats`, accumulated one request at a time. docs/workloads.md
// ("Inspecting and generating traces") defines each one.
//
// Memory does not grow with the trace except in two places: the length percentiles
// (QuantileSketch: exact up to 2^21 requests, then a fixed ~650 KB histogram each) and the
// prefix-reuse set (one 64-bit hash per distinct prefix of block_hashes), and one counter per
// session when the trace has sessions.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "core/quantiles.h"
#include "core/request.h"

namespace servesim {

/// The ideal prefix-cache hit rate of RequestSpec::block_hashes with an infinite cache: block k
/// of a request hits when the chain of its hash ids 0..k was seen in an earlier request. Two
/// prefixes whose 64-bit chained hashes collide would count as one; among n distinct prefixes
/// the chance of any collision is about n^2 / 2^65.
class PrefixReuse {
 public:
  void add(const RequestSpec& r);
  /// null when no request had block hashes.
  [[nodiscard]] nlohmann::ordered_json figures(int64_t all_prompt_tokens) const;

 private:
  std::unordered_set<uint64_t> m_seen;  // chained hashes of every prefix seen so far
  int64_t m_requests = 0, m_blocks = 0, m_hit_blocks = 0, m_tokens = 0, m_hit_tokens = 0;
};

/// Everything `trace stats` reports.
class TraceStats {
 public:
  /// REQUIRES: window_ns >= 1.
  explicit TraceStats(int64_t window_ns) : m_window_ns(window_ns) {}
  /// REQUIRES: arrivals non-decreasing, as every WorkloadSource yields them.
  void add(const RequestSpec& r);
  /// The figures, each undefined one null (a rate over a zero duration, say).
  /// REQUIRES: at least one request was added.
  [[nodiscard]] nlohmann::ordered_json figures();

 private:
  /// A length column: percentiles from the sketch, and the sum.
  struct Lengths {
    QuantileSketch sketch;
    int64_t total = 0;
  };
  void add_gap(double gap_ns);
  void close_window();
  void window_figures(nlohmann::ordered_json& j) const;
  [[nodiscard]] static nlohmann::ordered_json length_figures(Lengths& l);

  int64_t m_window_ns;
  int64_t m_n = 0, m_first_ns = 0, m_last_ns = 0;
  double m_gap_mean_ns = 0, m_gap_m2 = 0;  // Welford's running mean and squared deviations
  // Windows [first + k W, first + (k + 1) W): the current one's index and count; the closed
  // ones' total, maximum and sum of squared counts (empty windows add nothing to them).
  int64_t m_window = 0, m_window_count = 0, m_window_max = 0, m_window_total = 0;
  long double m_window_sumsq = 0;
  Lengths m_prompt, m_output;
  PrefixReuse m_prefix;
  std::unordered_map<uint64_t, int64_t> m_turns;  // requests per session (RequestSpec::session)
};

}  // namespace servesim
