#pragma once
// Progress of `servesim run` on stderr: requests that have left against the workload's count.
#include <cstdint>

#include "cli/progress.h"
#include "sim/recorder.h"

namespace servesim {

/// Counts requests as they leave (served, rejected or left unserved) and passes the count to a
/// Progress every `every` requests, so that a run pays one increment and one comparison per
/// request, and nothing per step. The Progress's total is the workload's request count when
/// known up front (WorkloadSource::size_hint()), else 0 (a count and rate with no ETA).
class RunProgress final : public RequestRecorder {
 public:
  /// REQUIRES: `progress` outlives this recorder; every >= 1.
  explicit RunProgress(Progress& progress, int64_t every = 256)
      : m_progress(progress), m_every(every) {}
  void record(const Request&) override {
    if (++m_departed % m_every == 0) m_progress.update(static_cast<double>(m_departed));
  }
  /// Passes the final count and finishes the Progress.
  void finish() {
    m_progress.update(static_cast<double>(m_departed));
    m_progress.finish();
  }
  [[nodiscard]] int64_t departed() const { return m_departed; }

 private:
  Progress& m_progress;
  int64_t m_every;
  int64_t m_departed = 0;
};

}  // namespace servesim
