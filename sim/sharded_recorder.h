#pragma once
// A recorder that the parallel engine (sim/parallel_engine.h) splits by shard: each shard's
// requests and steps go to a part of it, on the shard's thread, in the shard's own order, and
// the parts are folded back into it after the run. The recorder's figures must then be those
// it gives when it sees the whole run in the sequential engine's order: what it sums in that
// order it sums per replica (each replica's records come in the same order in both engines)
// and then over the replicas, in replica order, in both engines.
#include <cstdint>
#include <memory>

#include "sim/recorder.h"
#include "sim/step_observer.h"

namespace servesim {

class ShardedRecorder : public RequestRecorder, public StepObserver {
 public:
  /// A part for one shard, whose replicas are numbered from 0 in what the part is handed
  /// (Request::replica, StepRecord::replica): its replica i is this recorder's
  /// first_replica + i.
  [[nodiscard]] virtual std::unique_ptr<ShardedRecorder> make_part(uint32_t first_replica) = 0;
  /// On the shard's thread once it has run: the part's work that can be done before folding
  /// (sorting what it kept).
  virtual void finish_part() {}
  /// Folds `part` (from this recorder's make_part, done recording) into this one. The engine
  /// folds every part, in replica order, on the calling thread.
  virtual void merge_part(ShardedRecorder& part) = 0;
};

}  // namespace servesim
