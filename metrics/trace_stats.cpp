#include "metrics/trace_stats.h"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t k_ns_per_s = 1'000'000'000;

double seconds(int64_t ns) { return static_cast<double>(ns) / static_cast<double>(k_ns_per_s); }

/// splitmix64's finalizer: a bijection of 64-bit words that spreads every input bit.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Json ratio(int64_t a, int64_t b) {
  return b > 0 ? Json(static_cast<double>(a) / static_cast<double>(b)) : Json();
}

}  // namespace

void PrefixReuse::add(const RequestSpec& r) {
  if (r.block_hashes.empty()) return;
  ++m_requests;
  uint64_t chain = 0;
  bool hit = true;  // a prefix seen before means every shorter one was too: the hits lead
  for (size_t k = 0; k < r.block_hashes.size(); ++k) {
    chain = mix(chain ^ mix(r.block_hashes[k]));
    // The request's own prefixes all differ in length, so inserting as we go is safe.
    hit = !m_seen.insert(chain).second && hit;
    // Block k holds tokens [k B, (k + 1) B), cut at the prompt's end.
    const int64_t start = static_cast<int64_t>(k) * r.hash_block_tokens;
    const int64_t tokens = std::clamp<int64_t>(r.prompt_tokens - start, 0, r.hash_block_tokens);
    ++m_blocks;
    m_tokens += tokens;
    if (hit) ++m_hit_blocks, m_hit_tokens += tokens;
  }
}

Json PrefixReuse::figures(int64_t all_prompt_tokens) const {
  if (m_requests == 0) return nullptr;
  return {{"requests_with_hashes", m_requests},
          {"blocks", m_blocks},
          {"hit_blocks", m_hit_blocks},
          {"block_hit_rate", ratio(m_hit_blocks, m_blocks)},
          {"hashed_tokens", m_tokens},
          {"hit_tokens", m_hit_tokens},
          {"token_hit_rate", ratio(m_hit_tokens, m_tokens)},
          {"hit_fraction_of_prompt_tokens", ratio(m_hit_tokens, all_prompt_tokens)},
          {"distinct_prefixes", static_cast<int64_t>(m_seen.size())}};
}

void TraceStats::add(const RequestSpec& r) {
  const int64_t t = r.arrival.count_ns();
  if (m_n == 0) m_first_ns = t;
  if (m_n > 0) add_gap(static_cast<double>(t - m_last_ns));
  ++m_n;
  m_last_ns = t;
  const int64_t w = (t - m_first_ns) / m_window_ns;
  if (w != m_window) close_window(), m_window = w;
  ++m_window_count;
  for (auto [lengths, tokens] :
       {std::pair{&m_prompt, r.prompt_tokens}, {&m_output, r.output_tokens}}) {
    lengths->sketch.add(tokens);
    lengths->total += tokens;
  }
  m_prefix.add(r);
  if (r.session != 0) ++m_turns[r.session];
}

Json TraceStats::figures() {
  const int64_t duration_ns = m_last_ns - m_first_ns;
  const auto gaps = static_cast<double>(m_n - 1);
  Json j;
  j["requests"] = m_n;
  j["first_arrival_s"] = seconds(m_first_ns);
  j["last_arrival_s"] = seconds(m_last_ns);
  j["duration_s"] = seconds(duration_ns);
  j["mean_rate_per_s"] = duration_ns > 0 ? Json(gaps / seconds(duration_ns)) : Json();
  j["gap_mean_s"] = m_n > 1 ? Json(m_gap_mean_ns / static_cast<double>(k_ns_per_s)) : Json();
  j["gap_cv"] =
      m_n > 1 && m_gap_mean_ns > 0 ? Json(std::sqrt(m_gap_m2 / gaps) / m_gap_mean_ns) : Json();
  window_figures(j);
  j["prompt_tokens"] = length_figures(m_prompt);
  j["output_tokens"] = length_figures(m_output);
  j["total_tokens"] = m_prompt.total + m_output.total;
  j["percentiles_exact"] = m_prompt.sketch.exact();
  j["prefix_reuse"] = m_prefix.figures(m_prompt.total);
  j["sessions"] = nullptr;
  if (!m_turns.empty()) {
    int64_t in_sessions = 0, most = 0;
    for (const auto& [session, turns] : m_turns) in_sessions += turns, most = std::max(most, turns);
    const auto sessions = static_cast<int64_t>(m_turns.size());
    j["sessions"] = {
        {"sessions", sessions},
        {"requests_in_sessions", in_sessions},
        {"turns_mean", static_cast<double>(in_sessions) / static_cast<double>(sessions)},
        {"turns_max", most}};
  }
  return j;
}

void TraceStats::add_gap(double gap_ns) {
  const double d = gap_ns - m_gap_mean_ns;
  m_gap_mean_ns += d / static_cast<double>(m_n);  // m_n gaps so far, this one included
  m_gap_m2 += d * (gap_ns - m_gap_mean_ns);
}

void TraceStats::close_window() {
  m_window_sumsq += static_cast<long double>(m_window_count) * m_window_count;
  m_window_max = std::max(m_window_max, m_window_count);
  m_window_total += m_window_count;
  m_window_count = 0;
}

// Whole windows only: the last one, which holds the last arrival, is cut short by the end of
// the trace, so its requests are left out (and counted). The windows before it all count,
// empty ones as 0.
void TraceStats::window_figures(Json& j) const {
  j["window_s"] = seconds(m_window_ns);
  j["windows"] = m_window;
  j["window_requests_left_out"] = m_window_count;
  for (const char* k : {"window_requests_mean", "window_requests_max", "window_index_of_dispersion",
                        "window_peak_to_mean"})
    j[k] = nullptr;
  if (m_window == 0) return;  // the trace spans less than one window
  const auto windows = static_cast<long double>(m_window);
  const long double mean = static_cast<long double>(m_window_total) / windows;
  const long double variance = std::max<long double>(m_window_sumsq / windows - mean * mean, 0);
  j["window_requests_mean"] = static_cast<double>(mean);
  j["window_requests_max"] = m_window_max;
  if (mean == 0) return;
  j["window_index_of_dispersion"] = static_cast<double>(variance / mean);
  j["window_peak_to_mean"] = static_cast<double>(m_window_max / mean);
}

Json TraceStats::length_figures(Lengths& l) {
  return {{"mean", l.sketch.mean()},
          {"p50", l.sketch.percentile(50)},
          {"p90", l.sketch.percentile(90)},
          {"p99", l.sketch.percentile(99)},
          {"max", static_cast<int64_t>(l.sketch.max())},
          {"total", l.total}};
}

}  // namespace servesim
