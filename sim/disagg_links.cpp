#include "sim/disagg_links.h"

#include <cmath>
#include <limits>

namespace servesim {

LinkSharing::LinkSharing(std::vector<double> link_bytes_per_ns)
    : m_bandwidth(std::move(link_bytes_per_ns)), m_users(m_bandwidth.size(), 0) {
  m_active.reserve(64);
}

void LinkSharing::start(Time now, std::span<const uint32_t> links, double bytes, double latency_ns,
                        uint32_t payload, std::vector<Delivery>& done) {
  advance(now, done);
  for (uint32_t l : links) ++m_users[l];
  m_active.push_back({payload, links, bytes, latency_ns, 0.0, 0.0});
  update_rates();
  advance(now, done);  // a path without links sends at once
}

void LinkSharing::advance(Time now, std::vector<Delivery>& done) {
  const auto now_ns = static_cast<double>(now.count_ns());
  const double dt = now_ns - m_updated_ns;
  bool finished = false;
  for (Active& a : m_active) {
    if (a.end_ns <= now_ns || std::llround(a.end_ns) <= now.count_ns()) {
      finished = true;
      continue;
    }
    a.remaining_bytes -= a.rate * dt;
  }
  m_updated_ns = now_ns;
  if (!finished) return;
  size_t keep = 0;
  for (Active& a : m_active) {
    if (a.end_ns <= now_ns || std::llround(a.end_ns) <= now.count_ns()) {
      for (uint32_t l : a.links) --m_users[l];
      // Rounded once: the exact end of sending plus the path's latency.
      done.push_back({a.payload, Time::ns(std::max(std::llround(a.end_ns + a.latency_ns),
                                                   static_cast<long long>(now.count_ns())))});
    } else {
      m_active[keep++] = a;
    }
  }
  m_active.resize(keep);
  update_rates();
}

void LinkSharing::update_rates() {
  for (Active& a : m_active) {
    double rate = std::numeric_limits<double>::infinity();
    for (uint32_t l : a.links) rate = std::min(rate, m_bandwidth[l] / m_users[l]);
    a.rate = rate;
    a.end_ns = std::isinf(rate) ? m_updated_ns : m_updated_ns + a.remaining_bytes / rate;
  }
}

Time LinkSharing::next_send_end() const {
  int64_t next = std::numeric_limits<int64_t>::max();
  for (const Active& a : m_active) next = std::min<int64_t>(next, std::llround(a.end_ns));
  return next == std::numeric_limits<int64_t>::max() ? Time::max() : Time::ns(next);
}

}  // namespace servesim
