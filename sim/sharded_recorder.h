#pragma once
// A recorder that the parallel engine (sim/parallel_engine.h) splits by shard: each shard's
// requests and steps go to a part of it, on the shard's thread, in the shard's own order, and
// the parts are folded back into it after the run. The recorder's figures must then be those
// it gives when it sees the whole run in the sequential engine's order: what it sums in that
// order it sums per replica (each replica's records come in the same order in both engines)
// and then over the replicas, in replica order, in both engines.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

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
  /// Under MPI ranks (sim/parallel_mpi.h): a part, done recording and finished, as bytes for
  /// rank 0, which loads them into a fresh make_part() of its own recorder and folds that as
  /// it folds its own parts. A recorder that cannot travel keeps these defaults (the engine then
  /// refuses the ranks).
  virtual void save_part(std::string& /*out*/) const {
    throw std::logic_error("this recorder's parts cannot be sent between ranks");
  }
  virtual void load_part(std::string_view /*in*/) {
    throw std::logic_error("this recorder's parts cannot be sent between ranks");
  }
};

}  // namespace servesim
