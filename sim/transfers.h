#pragma once
// Prefill/decode KV transfers (docs/cluster.md#disaggregation): the books of a disaggregated
// run. Which replicas requests enter (prefill) and which decode; each request's KV on its way
// over the cluster's links; each decode replica's inbox of delivered KV waiting for room. The
// engine (sim/disagg_engine.cpp) decides when a transfer starts and when a decode replica admits
// what it was sent; this class keeps the records, the link sharing and the statistics, and
// posts the transfer events (deliveries and link ticks).
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/kv/kv_manager.h"
#include "core/quantiles.h"
#include "core/request.h"
#include "core/time.h"
#include "sim/disagg_links.h"
#include "sim/event_queue.h"
#include "sim/pool.h"

namespace servesim {

class Topology;  // sim/topology.h

/// KV transfers of a disaggregated run (RunStats::kv_transfer).
struct KvTransferStats {
  int64_t transfers = 0;
  double bytes = 0;
  /// Per transfer, seconds from the end of the prefill to the KV's delivery, and from the
  /// delivery to the decode replica's admission (back-pressure).
  QuantileSketch transfer_s, admit_wait_s;
};

class KvTransfers {
 public:
  /// A request's KV on its way from a prefill replica (its slot still holds the KV) to a decode
  /// replica.
  struct Transfer {
    uint32_t from = 0, slot = 0, to = 0;
    Time started, delivered;
  };

  /// `pools` in replica order, with at least one prefill and one decode pool; `kv[i]` is
  /// replica i's KV memory. REQUIRES: the KV managers and `topology` outlive this.
  KvTransfers(const std::vector<PoolSpec>& pools, std::shared_ptr<const Topology> topology,
              std::vector<const KvManager*> kv);

  /// The prefill replicas, where requests arrive, and the decode ones, in replica order.
  [[nodiscard]] const std::vector<uint32_t>& entry() const { return m_entry; }
  [[nodiscard]] const std::vector<uint32_t>& decode() const { return m_decode; }
  /// Why no decode replica can ever hold a request of these sizes (empty when one can).
  [[nodiscard]] std::string decode_never_fits(int32_t prompt_tokens, int32_t output_tokens);
  /// `picked` (the decode router's choice), or the first decode replica after it, in the
  /// decode list's circular order, that can ever hold `spec` (`picked` when none can).
  [[nodiscard]] uint32_t first_fitting(uint32_t picked, const RequestSpec& spec);

  /// Starts moving the KV of `slot` of prefill replica `from` (`spec`: its request) to decode
  /// replica `to` at `now`, and posts the events it brings about.
  void start(Time now, uint32_t from, uint32_t slot, uint32_t to, const RequestSpec& spec,
             EventQueue& events);
  /// A link tick: transfers that have finished sending by `now` go on to their delivery.
  void on_link_tick(Time now, EventQueue& events);
  /// Transfer `id` is delivered at `now`: it joins its decode replica's inbox. Returns that
  /// replica.
  uint32_t deliver(uint32_t id, Time now);

  /// Transfers delivered to decode replica `rep`, waiting for its KV to hold them (FIFO).
  [[nodiscard]] const std::deque<uint32_t>& inbox(uint32_t rep) const { return m_inbox[rep]; }
  /// Transfers on their way to replica `rep` or in its inbox (its load as a router sees it).
  [[nodiscard]] int64_t incoming(uint32_t rep) const { return m_incoming[rep]; }
  [[nodiscard]] const Transfer& transfer(uint32_t id) const { return m_transfers[id]; }
  /// The front of `rep`'s inbox was admitted at `now`: its record is free again.
  void admitted(uint32_t rep, Time now);

  /// A request of these sizes, to ask a KV manager without copying a request's vectors.
  [[nodiscard]] const Request& probe(int32_t prompt_tokens, int32_t output_tokens);
  [[nodiscard]] const KvTransferStats& stats() const { return m_stats; }

 private:
  void post_events(EventQueue& events);

  std::vector<PoolSpec> m_pools;
  std::shared_ptr<const Topology> m_topology;
  std::vector<const KvManager*> m_kv;  // by replica
  std::vector<uint32_t> m_pool_of;     // by replica
  std::vector<uint32_t> m_entry, m_decode;
  LinkSharing m_links;
  std::vector<LinkSharing::Delivery> m_deliveries;  // scratch
  Time m_link_tick_at = Time::max();                // the earliest link tick posted
  std::vector<Transfer> m_transfers;                // records, reused (m_free)
  std::vector<uint32_t> m_free;
  std::vector<std::deque<uint32_t>> m_inbox;  // by replica
  std::vector<int64_t> m_incoming;            // by replica
  Request m_probe;
  KvTransferStats m_stats;
};

}  // namespace servesim
