#include "traces/read_ahead.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/side_thread.h"

namespace servesim {
namespace {

using Counters = std::vector<std::pair<std::string, int64_t>>;

/// What changed in the source's names and counters when it yielded a request (or ended).
struct Change {
  size_t at = 0;  ///< the request's index in its batch (the batch's size: at its end)
  std::vector<std::string> classes, tenants;  ///< names first known then
  std::optional<Counters> counters;           ///< the counters from then on, if they moved
  int64_t counters_total = 0;                 ///< their sum (WorkloadSource::counters_total)
};

struct Batch {
  std::vector<RequestSpec> requests;
  std::vector<Change> changes;  ///< by `at`, in order
  bool end = false;             ///< the source has nothing after these requests
  std::exception_ptr error;     ///< the source threw this after these requests
};

class ReadAhead final : public WorkloadSource {
 public:
  static constexpr size_t k_batch_requests = 256;
  static constexpr size_t k_batches = 8;
  /// The engine wakes a waiting reader only once this many batches are free, and the reader
  /// then fills every free one before it waits again: one wake-up per k_refill batches instead
  /// of one per batch. A wake-up costs the engine's thread about 10 us on a virtual machine
  /// (the futex call and the other vCPU's interrupt), a batch read about 50 us on the reader's.
  static constexpr size_t k_refill = k_batches / 2;

  explicit ReadAhead(std::unique_ptr<WorkloadSource> inner)
      : m_inner(std::move(inner)),
        m_size_hint(m_inner->size_hint()),
        m_classes(m_inner->class_names()),
        m_tenants(m_inner->tenant_names()),
        m_counters(m_inner->counters()),
        m_counters_total(m_inner->counters_total()),
        m_read_classes(m_classes.size()),
        m_read_tenants(m_tenants.size()),
        m_read_counters(m_counters),
        m_read_total(m_counters_total) {
    for (Batch& b : m_batches) b.requests.reserve(k_batch_requests);
  }

  ~ReadAhead() override {
    if (!m_thread) return;
    m_stop.store(true, std::memory_order_relaxed);
    {
      std::lock_guard lock(m_mu);
      m_stopping = true;
    }
    m_to_reader.notify_one();
    m_thread->join();
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  /// Starts the reader; false when no thread could be had (the source is then unusable: the
  /// caller keeps the inner one instead, through release()).
  bool start() {
    m_thread = start_side_thread([this] { read_loop(); });
    return m_thread.has_value();
  }
  std::unique_ptr<WorkloadSource> release() { return std::move(m_inner); }

  bool next(RequestSpec& out) override {
    // Most requests are neither a batch's last nor one at which names or counters moved: one
    // comparison, where the loop below cost about 55 instructions a request.
    if (m_pos < m_plain_end) {
      out = std::move(m_batch->requests[m_pos++]);
      return true;
    }
    return next_at_change(out);
  }
  size_t size_hint() const override { return m_size_hint; }
  std::vector<std::pair<std::string, int64_t>> counters() const override { return m_counters; }
  int64_t counters_total() const override { return m_counters_total; }
  const std::vector<std::string>& class_names() const override { return m_classes; }
  const std::vector<std::string>& tenant_names() const override { return m_tenants; }

 private:
  // ---- The engine's side.
  /// next() at a batch's end or a change: not inlined, so that next()'s common case saves no
  /// registers.
  [[gnu::noinline]] bool next_at_change(RequestSpec& out) {
    for (;;) {
      if (m_batch == nullptr) {
        if (m_ended) return false;
        take_batch();
      }
      Batch& b = *m_batch;
      apply_changes(b, m_pos);
      // Up to the next change (those at m_pos are applied) or the batch's end.
      m_plain_end = m_change < b.changes.size() ? b.changes[m_change].at : b.requests.size();
      if (m_pos < b.requests.size()) {
        out = std::move(b.requests[m_pos++]);
        return true;
      }
      if (b.error) std::rethrow_exception(b.error);
      if (b.end) {
        m_ended = true;
        return false;
      }
      give_batch();
    }
  }
  /// Waits for the next batch the reader filled.
  void take_batch() {
    std::unique_lock lock(m_mu);
    m_to_engine.wait(lock, [&] { return m_filled > m_taken; });
    m_batch = &m_batches[m_taken % k_batches];
    m_pos = 0;
    m_change = 0;
  }
  /// Hands the batch read back to the reader, and wakes it once k_refill batches are free (the
  /// engine waits in take_batch only when all are: it has woken the reader before).
  void give_batch() {
    bool wake = false;
    {
      std::lock_guard lock(m_mu);
      ++m_taken;
      wake = k_batches - (m_filled - m_taken) >= k_refill;
    }
    if (wake) m_to_reader.notify_one();
    m_batch = nullptr;
    m_plain_end = 0;
  }
  /// The names and counters as they stood when the source yielded request `at` of `b`.
  void apply_changes(const Batch& b, size_t at) {
    for (; m_change < b.changes.size() && b.changes[m_change].at == at; ++m_change) {
      const Change& c = b.changes[m_change];
      m_classes.insert(m_classes.end(), c.classes.begin(), c.classes.end());
      m_tenants.insert(m_tenants.end(), c.tenants.begin(), c.tenants.end());
      if (c.counters) {
        m_counters = *c.counters;
        m_counters_total = c.counters_total;
      }
    }
  }

  // ---- The reader's side.
  void read_loop() {
    for (uint64_t k = 0;; ++k) {
      {
        std::unique_lock lock(m_mu);
        m_to_reader.wait(lock, [&] { return k - m_taken < k_batches || m_stopping; });
        if (m_stopping) return;
      }
      Batch& b = m_batches[k % k_batches];
      const bool more = fill(b);
      {
        std::lock_guard lock(m_mu);
        m_filled = k + 1;
      }
      m_to_engine.notify_one();
      if (!more) return;
    }
  }
  /// Fills `b` with the source's next requests; false when the source has ended or threw.
  bool fill(Batch& b) {
    b.requests.clear();
    b.changes.clear();
    b.end = false;
    b.error = nullptr;
    try {
      while (b.requests.size() < k_batch_requests) {
        if (m_stop.load(std::memory_order_relaxed)) return false;
        const bool got = m_inner->next(m_scratch);
        note_changes(b, b.requests.size());
        if (!got) {
          b.end = true;
          return false;
        }
        b.requests.push_back(m_scratch);
      }
    } catch (...) {
      b.error = std::current_exception();
      return false;
    }
    return true;
  }
  /// Records in `b` what moved in the source's names and counters since the last request. The
  /// counters' list is built only when their total moved (it moves exactly when they do).
  void note_changes(Batch& b, size_t at) {
    const std::vector<std::string>& classes = m_inner->class_names();
    const std::vector<std::string>& tenants = m_inner->tenant_names();
    const int64_t total = m_inner->counters_total();
    bool moved = false;
    Counters counters;
    if (total != m_read_total) {
      counters = m_inner->counters();
      moved = counters != m_read_counters;
      m_read_total = total;
    }
    if (classes.size() == m_read_classes && tenants.size() == m_read_tenants && !moved) return;
    Change& c = b.changes.emplace_back();
    c.at = at;
    c.classes.assign(classes.begin() + static_cast<ptrdiff_t>(m_read_classes), classes.end());
    c.tenants.assign(tenants.begin() + static_cast<ptrdiff_t>(m_read_tenants), tenants.end());
    m_read_classes = classes.size();
    m_read_tenants = tenants.size();
    if (moved) {
      m_read_counters = counters;
      c.counters = std::move(counters);
      c.counters_total = total;
    }
  }

  std::unique_ptr<WorkloadSource> m_inner;  ///< used by the reader alone once started
  const size_t m_size_hint;

  // The engine's side: the names and counters as of the last request yielded.
  std::vector<std::string> m_classes, m_tenants;
  Counters m_counters;
  int64_t m_counters_total;
  Batch* m_batch = nullptr;  ///< the batch being read, null between batches
  size_t m_pos = 0;          ///< its next request
  size_t m_change = 0;       ///< its next change
  /// Requests of m_batch before this index, from m_pos on, are yielded without a look at its
  /// changes: none is at them (0 between batches).
  size_t m_plain_end = 0;
  bool m_ended = false;

  // The reader's side: how much of the source's names and counters the batches carry.
  size_t m_read_classes, m_read_tenants;
  Counters m_read_counters;
  int64_t m_read_total;   ///< m_read_counters' total
  RequestSpec m_scratch;  ///< the source writes each request here, as into the engine's own

  // Shared, under m_mu.
  std::mutex m_mu;
  std::condition_variable m_to_reader, m_to_engine;
  uint64_t m_filled = 0;  ///< batches the reader filled (changed by the reader)
  uint64_t m_taken = 0;   ///< batches the engine has read and given back (changed by the engine)
  bool m_stopping = false;
  std::atomic<bool> m_stop{false};  ///< m_stopping, read between requests without the lock
  std::array<Batch, k_batches> m_batches;
  std::optional<std::thread> m_thread;
};

}  // namespace

std::unique_ptr<WorkloadSource> read_ahead(std::unique_ptr<WorkloadSource> inner) {
  if (inner->reactive()) return inner;
  auto ahead = std::make_unique<ReadAhead>(std::move(inner));
  if (!ahead->start()) return ahead->release();
  return ahead;
}

}  // namespace servesim
