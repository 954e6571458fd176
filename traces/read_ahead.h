#pragma once
// A workload read ahead on a second thread (core/side_thread.h), so that parsing a trace (and
// its transform) runs beside the engine instead of in it. What the engine sees is what the
// source itself would give it, request by request: the same requests in the same order, the
// class and tenant names and the counters as they stood when each request was yielded (a run
// stopped early reports the counts up to where it stopped, not up to where the thread had
// read), and a source's error where the source raised it (a bad row past where a bounded run
// stops is never reported, as before). At most a few hundred requests are held ahead.
#include <memory>

#include "traces/workload_source.h"

namespace servesim {

/// `inner`, read ahead on a second thread. Returns `inner` itself when it is reactive (its
/// requests depend on the run) or when no thread could be started.
/// REQUIRES: nothing has been taken from `inner` through the returned source's back (the
/// returned source owns it).
[[nodiscard]] std::unique_ptr<WorkloadSource> read_ahead(std::unique_ptr<WorkloadSource> inner);

}  // namespace servesim
