#pragma once
// The parallel engine's shards and the keys that order their outputs (sim/parallel_engine.h),
// shared by its files: sim/parallel_engine.cpp (threads) and sim/parallel_ranks.cpp (MPI ranks).
#include <deque>
#include <exception>
#include <memory>
#include <vector>

#include "sim/parallel_engine.h"

namespace servesim {

// Named, not anonymous: ParallelSimulation::Shard holds these.
namespace parallel_detail {

/// Where an output stands in the sequential engine's order: the event it came from (time,
/// phase, then the replica, or for arrivals their order) and its order within the shard.
struct Key {
  Time t;
  uint8_t phase = 0;
  uint64_t tag = 0;
  uint64_t n = 0;
  bool operator<(const Key& o) const {
    if (t != o.t) return t < o.t;
    if (phase != o.phase) return phase < o.phase;
    if (tag != o.tag) return tag < o.tag;
    return n < o.n;
  }
};

/// Record: a request left (a copy kept for the recorders); Leave: one left, counted only (no
/// recorder takes the merged stream); Step: a step planned; Admit: a request held.
enum class ItemKind : uint8_t { Record, Leave, Step, Admit };

struct Item {
  Key key;
  ItemKind kind;
  uint32_t index;  // into the shard's requests or steps
};

}  // namespace parallel_detail

using parallel_detail::Item;
using parallel_detail::ItemKind;
using parallel_detail::Key;

struct ParallelSimulation::Shard {
  struct Pending {
    RequestSpec spec;
    uint32_t rep;  // local
    uint64_t order;
  };
  /// Hands what the shard's engine records to the shard's buffers, keyed.
  struct Tap final : RequestRecorder, StepObserver {
    explicit Tap(Shard& s) : sh(s) {}
    void record(const Request& r) override {
      if (!sh.keep_requests) {
        if (r.state != RequestState::Rejected) sh.push(sh.key, ItemKind::Leave, 0);
        return;
      }
      Buffer& b = sh.out();
      if (b.n_requests == b.requests.size()) b.requests.emplace_back();
      Request& copy = b.requests[b.n_requests];
      copy = r;  // its vectors keep their capacity from window to window
      copy.replica += sh.base;
      sh.push(sh.key, ItemKind::Record, b.n_requests++);
    }
    void on_step(const StepRecord& s) override {
      if (!sh.keep_steps) return;
      Buffer& b = sh.out();
      if (b.n_steps == b.steps.size()) b.steps.emplace_back();
      StepRecord& copy = b.steps[b.n_steps];
      copy = s;
      copy.replica += sh.base;
      // A step is planned by its replica's Schedule event, or at once when nothing else is
      // due at that instant: either way it comes where that Schedule event would.
      sh.push({s.start, phase_of(EventKind::Schedule), copy.replica, 0}, ItemKind::Step,
              b.n_steps++);
    }
    Shard& sh;
  };

  /// The tap takes the shard's steps only where the merged stream has an observer
  /// (ParallelSimulation::start_recording): a step observer that builds each step's record
  /// costs every step, and keeps the decode streaks from their plain loop.
  Shard(std::unique_ptr<Simulation> s, uint32_t b) : sim(std::move(s)), base(b), tap(*this) {
    sim->add_recorder(tap);
  }
  /// One window's outputs. Two, so that the engine merges one window's while the shard runs
  /// the next.
  struct Buffer {
    std::vector<Item> items;
    std::vector<Request> requests;
    std::vector<StepRecord> steps;
    uint32_t n_requests = 0, n_steps = 0;
    void clear() {
      items.clear();
      n_requests = n_steps = 0;
    }
  };
  Buffer& out() { return buffers[current]; }
  void push(Key k, ItemKind kind, uint32_t index) {
    k.n = counter++;
    out().items.push_back({k, kind, index});
  }

  std::unique_ptr<Simulation> sim;
  uint32_t base;
  Tap tap;
  std::deque<Pending> arrivals;  // routed here, their Arrival events posted
  std::deque<bool> markers;      // per Routed event posted: true a window's end, false the last
  Key key;                       // of the event running
  uint64_t counter = 0;
  Buffer buffers[2];
  int current = 0;  // the buffer the running window writes
  std::exception_ptr error;
  bool keep_requests = true, keep_steps = true;  // for the merged stream's recorders, observers
  std::unique_ptr<ShardedRecorder> part;         // of ParallelSimulation::m_sharded
};

/// An item to merge and the shard whose buffer holds it.
struct ParallelSimulation::Ref {
  const Item* item;
  uint32_t shard;
};

/// One request taken in (+1) or let go (-1) by a shard, where the sequential engine does it:
/// what the ranks swap at each window's start.
struct ParallelSimulation::Change {
  Key key;
  int8_t delta = 0;
};

}  // namespace servesim
