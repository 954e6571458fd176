#pragma once
// KV transfers sharing links (prefill/decode disaggregation, docs/cluster.md#transfer-model).
//
// A transfer sends its bytes over a path of links, then is delivered one path latency later.
// While sending, every link splits its bandwidth equally among the transfers crossing it
// (processor sharing); a transfer moves at the smallest share along its path. Rates are worked
// out again whenever a transfer starts or finishes sending. Bytes are counted in double; each
// transfer's delivery time is rounded once to whole nanoseconds, so on an idle path it is
// exactly start + round(bytes / bandwidth + latency).
#include <cstdint>
#include <span>
#include <vector>

#include "core/time.h"

namespace servesim {

class LinkSharing {
 public:
  /// One entry per link: its bandwidth in bytes per nanosecond (= GB/s).
  explicit LinkSharing(std::vector<double> link_bytes_per_ns);

  /// A transfer that finished sending: who it was and when it is delivered (>= now).
  struct Delivery {
    uint32_t payload;
    Time at;
  };

  /// Starts sending `bytes` (> 0) at `now` over `links` (possibly none: an unlimited path),
  /// delivered `latency_ns` after the last byte. REQUIRES: now >= every earlier call's now;
  /// `links` outlives the transfer (the topology's paths do).
  void start(Time now, std::span<const uint32_t> links, double bytes, double latency_ns,
             uint32_t payload, std::vector<Delivery>& done);
  /// Moves to `now`: the transfers that have sent everything by now (their end rounded to ns)
  /// leave their links and are appended to `done`, in start order. Idempotent at one instant.
  void advance(Time now, std::vector<Delivery>& done);
  /// When the next transfer finishes sending; Time::max() when none is sending.
  [[nodiscard]] Time next_send_end() const;
  [[nodiscard]] size_t sending() const { return m_active.size(); }

 private:
  struct Active {
    uint32_t payload;
    std::span<const uint32_t> links;
    double remaining_bytes;
    double latency_ns;
    double rate;    // bytes per ns
    double end_ns;  // exact end of sending at the current rate
  };
  void update_rates();

  std::vector<double> m_bandwidth;
  std::vector<int32_t> m_users;  // transfers sending over each link
  std::vector<Active> m_active;  // in start order
  double m_updated_ns = 0;
};

}  // namespace servesim
