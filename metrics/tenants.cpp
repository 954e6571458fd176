// Per-tenant figures and Jain's fairness index (docs/metrics.md#tenants-and-fairness).
//
// A tenant's tokens served are its finished requests' prompt and output tokens. For the
// fairness window each finished request's tokens are spread over the seconds of the run they
// were served in: its prompt tokens at its first token, its other output tokens evenly over
// [first token, last token]; a request's demand (prompt + output tokens) is counted at its
// arrival. The window [latest first arrival of a tenant, earliest last arrival of a tenant] then
// sums each tenant's seconds inside it (the two edge seconds in proportion to their overlap).
// Each tenant's service is normalised by its max-min fair share of the window's service, given
// the demands (water-filling); Jain's index is over those ratios.
#include "metrics/tenants.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "metrics/metrics.h"

namespace servesim {
namespace {

// Adds `tokens` spread evenly over [from_s, to_s] to per-second bins (all at from_s when the
// span is empty).
void spread(std::vector<double>& bins, double from_s, double to_s, double tokens) {
  if (tokens <= 0) return;
  const auto bin = [&](double t) {
    const auto k = static_cast<size_t>(std::max(0.0, std::floor(t)));
    if (bins.size() <= k) bins.resize(k + 1, 0.0);
    return k;
  };
  if (!(to_s > from_s)) {
    bins[bin(from_s)] += tokens;
    return;
  }
  const double rate = tokens / (to_s - from_s);
  for (size_t k = bin(from_s), last = bin(to_s); k <= last; ++k) {
    const double lo = std::max(from_s, static_cast<double>(k));
    const double hi = std::min(to_s, static_cast<double>(k) + 1.0);
    if (hi > lo) bins[k] += rate * (hi - lo);
  }
}

// The tokens of `bins` inside [from_s, to_s), each second counted in proportion to its overlap.
double window_sum(const std::vector<double>& bins, double from_s, double to_s) {
  double sum = 0;
  for (size_t k = 0; k < bins.size(); ++k) {
    const double lo = std::max(from_s, static_cast<double>(k));
    const double hi = std::min(to_s, static_cast<double>(k) + 1.0);
    if (hi > lo) sum += bins[k] * (hi - lo);
  }
  return sum;
}

}  // namespace

std::vector<double> max_min_shares(const std::vector<double>& demand, double capacity) {
  const size_t n = demand.size();
  std::vector<double> share(n, 0.0);
  double total = 0;
  for (const double d : demand) total += d;
  if (n == 0 || capacity <= 0) return share;
  if (total <= capacity) {  // everyone is served in full: the rest in proportion to demand
    for (size_t i = 0; i < n; ++i)
      share[i] = total > 0 ? demand[i] * capacity / total : capacity / static_cast<double>(n);
    return share;
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return demand[a] < demand[b]; });
  double left = capacity;
  for (size_t k = 0; k < n; ++k) {  // smallest demands first; the level rises as they are met
    const double level = left / static_cast<double>(n - k);
    share[order[k]] = std::min(demand[order[k]], level);
    left -= share[order[k]];
  }
  return share;
}

double jain_index(const std::vector<double>& x) {
  double sum = 0, squares = 0;
  for (const double v : x) {
    sum += v;
    squares += v * v;
  }
  if (x.empty() || squares == 0) return 1.0;
  return sum * sum / (static_cast<double>(x.size()) * squares);
}

void MetricsRecorder::record_tenant(const Request& r, const SloVerdict& ok) {
  while (m_tenants.size() <= r.spec.tenant_id) m_tenants.emplace_back(m_exact_limit);
  TenantTally& t = m_tenants[r.spec.tenant_id];
  tally_class(t.c, r, ok);
  t.first_arrival = std::min(t.first_arrival, r.spec.arrival);
  t.last_arrival = std::max(t.last_arrival, r.spec.arrival);
  const double at = r.spec.arrival.seconds();  // every request is recorded once: its demand
  spread(t.demand_per_s, at, at, static_cast<double>(r.spec.prompt_tokens) + r.spec.output_tokens);
  if (r.state != RequestState::Released) return;
  t.prompt_tokens += r.spec.prompt_tokens;
  t.output_tokens += r.spec.output_tokens;
  const double first_s = r.first_token.seconds();
  spread(t.served_per_s, first_s, first_s, r.spec.prompt_tokens + 1.0);
  spread(t.served_per_s, first_s, r.last_token.seconds(), r.spec.output_tokens - 1.0);
}

void MetricsRecorder::tenant_summaries(Summary& s, const RunStats& stats) {
  const size_t n = stats.tenant_names.size();
  if (n == 0) return;
  while (m_tenants.size() < n) m_tenants.emplace_back(m_exact_limit);
  Time from;  // the window: every tenant has sent its first request and not yet its last
  Time to = Time::max();
  int64_t all_tokens = 0;
  for (size_t k = 0; k < n; ++k) {
    from = std::max(from, m_tenants[k].first_arrival);
    to = std::min(to, m_tenants[k].last_arrival);
    all_tokens += m_tenants[k].prompt_tokens + m_tenants[k].output_tokens;
  }
  const bool window = from < to && to != Time::max();
  std::vector<double> served, demand;
  for (size_t k = 0; k < n; ++k) {
    TenantTally& t = m_tenants[k];
    TenantSummary c;
    fill_class(c, t.c, s.duration_s);
    c.prompt_tokens = t.prompt_tokens;
    c.output_tokens = t.output_tokens;
    c.output_tokens_per_s =
        s.duration_s > 0 ? static_cast<double>(t.output_tokens) / s.duration_s : 0.0;
    c.service_share = all_tokens > 0 ? static_cast<double>(t.prompt_tokens + t.output_tokens) /
                                           static_cast<double>(all_tokens)
                                     : 0.0;
    if (window) {
      c.window_tokens = window_sum(t.served_per_s, from.seconds(), to.seconds());
      c.window_demand_tokens = window_sum(t.demand_per_s, from.seconds(), to.seconds());
    }
    served.push_back(c.window_tokens);
    demand.push_back(c.window_demand_tokens);
    s.tenants.emplace_back(stats.tenant_names[k], std::move(c));
  }
  if (!window) return;  // a tenant sent nothing, or the tenants never sent at the same time
  double capacity = 0;
  for (const double x : served) capacity += x;
  const std::vector<double> fair = max_min_shares(demand, capacity);
  std::vector<double> ratio(n, 0.0);
  for (size_t k = 0; k < n; ++k) {
    ratio[k] = fair[k] > 0 ? served[k] / fair[k] : 1.0;  // nothing due: not unfair
    s.tenants[s.tenants.size() - n + k].second.fair_share_tokens = fair[k];
  }
  FairnessSummary f;
  f.jain_index = jain_index(ratio);
  f.tenants = static_cast<int64_t>(n);
  f.window_start_s = from.seconds();
  f.window_end_s = to.seconds();
  s.fairness = f;
}

std::string tenant_lines(const Summary& s) {
  constexpr size_t k_max_lines = 32;  // beyond that summary.json has them
  std::string out;
  auto it = std::back_inserter(out);
  for (size_t k = 0; k < s.tenants.size() && k < k_max_lines; ++k) {
    const auto& [name, c] = s.tenants[k];
    fmt::format_to(it,
                   "tenant     {}: {} finished, {} rejected; {:.1f} output tokens/s, {:.1f}% of "
                   "tokens served; TTFT p50 {:.1f} ms, p99 {:.1f} ms\n",
                   name, c.finished, c.rejected, c.output_tokens_per_s, 100.0 * c.service_share,
                   c.ttft_s.p50 * 1e3, c.ttft_s.p99 * 1e3);
  }
  if (s.tenants.size() > k_max_lines)
    fmt::format_to(it, "tenant     ... {} more tenants (summary.json lists every one)\n",
                   s.tenants.size() - k_max_lines);
  if (s.fairness)
    fmt::format_to(it,
                   "fairness   Jain's index {:.3f} over {} tenants' tokens served from {:.1f} s "
                   "to {:.1f} s (while every tenant was sending)\n",
                   s.fairness->jain_index, s.fairness->tenants, s.fairness->window_start_s,
                   s.fairness->window_end_s);
  return out;
}

}  // namespace servesim
