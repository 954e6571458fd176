#pragma once
// Decode streaks: the engine's way to run a step in which every running request decodes one
// token, and nothing else happens, without touching the requests (sim/decode_streak.cpp).
//
// When every running request is decoding, the queue (if any) could take nothing, and the
// scheduler promises then to plan just their decodes (Scheduler::repeat_decode_limit and
// admits_nothing), the step's shape follows from the previous one: each request's context
// grows by one, so the sum of the reads grows by the batch and the longest and the shortest by
// one. The engine then captures the batch once (a streak) and counts its steps instead of
// crediting each request: a member's context and output are what they were at the capture plus
// the streak's steps, and its last token is the latest step's end. The KV blocks a step needs
// are known in advance (a member needs a new block every block_tokens() steps from the step its
// holding first runs out), so they are counted by the step number modulo the block size and
// taken at once.
//
// The batch changes without ending the streak. A member that produces its last token leaves
// at that step's end (its state written back, finished, released by the scheduler's
// after_step and departed, as after an ordinary step) and the others stay captured. When the
// queue's head could join, the scheduler plans the admissions alone beside the members'
// decodes (Scheduler::plan_admissions); their prefills are credited at the step's end, and at
// the next step a request admitted so, now decoding, joins the streak with its counts kept
// less the steps already run, as if captured with the rest. Both kinds of step end by their
// event. A step in which the KV runs short, a policy that cannot plan admissions alone, a
// request admitted that cannot join (a chunked prefill unfinished), or any event other than a
// step end, an arrival or a schedule, writes the members' state back (materialises it) and
// the step goes the ordinary way. A step in which the KV runs short stays a streak's where the
// scheduler preempts the newest (Scheduler::preempts_newest): the engine works out its victims
// and preempts them itself.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/time.h"
#include "models/decode_stretch.h"
#include "sim/step_observer.h"

namespace servesim {

/// A member's entry in DecodeStreak::leaves: its leave step (at least 1 and below 2^32: counts
/// are int32, and a request joins only before step 2^28) above its slot, so that the keys order
/// as the pairs (step, slot) do, in one compare.
[[nodiscard]] constexpr uint64_t leave_key(int64_t step, uint32_t slot) {
  return static_cast<uint64_t>(step) << 32 | slot;
}
[[nodiscard]] constexpr int64_t leave_step(uint64_t key) { return static_cast<int64_t>(key >> 32); }
[[nodiscard]] constexpr uint32_t leave_slot(uint64_t key) { return static_cast<uint32_t>(key); }

struct DecodeStreak {
  bool enabled = false;    // this replica's scheduler, KV policy and the run allow streaks
  bool active = false;     // running()'s first `members` are captured: their counts lag
  bool in_flight = false;  // a streak step is running (its KV taken, its tokens not credited)
  int64_t steps = 0;       // streak steps completed since the capture (including a member's
                           // own: its counts are kept less the steps run when it joined)
  Time last_end;           // the end of the latest completed streak step
  int64_t members = 0;     // the first of running(); those admitted since come after them
  int64_t limit = 0;       // the scheduler's repeat_decode_limit (read once)
  int64_t block = 0;       // KV tokens per block
  // The scheduler's preempts_newest() (a step short of KV stays a streak's:
  // Simulation::preempt_streak_members) and admits_nothing_as_kv_fills(); with the latter,
  // whether admits_nothing() said true at this queue and batch (reset by every step that
  // may change either: the loop's steps that change neither only take blocks).
  bool preempts = false;
  bool nothing_holds = false;
  bool admits_none = false;
  // The sum, longest and shortest of the members' context_tokens as kept (as at the capture,
  // less the steps run when they joined), and the fewest tokens any member had to produce so
  // counted: summed again as members leave, added to as they join. A member leaves at the end
  // of step left_min.
  int64_t context_sum = 0, context_max = 0, context_min = 0;
  int64_t left_min = 0;
  // Members whose next new block is needed at streak step j, by j modulo `block` (a member
  // needs one at step held - context + 1 of the capture, then every `block` steps).
  std::vector<int32_t> boundaries;
  // The members by the step at whose end each leaves (its tokens left as kept), a min-heap of
  // leave_key(step, slot): who leaves is found without walking the members.
  std::vector<uint64_t> leaves;
  // The step-time model's decode-only cost at the batch last asked about (stretch_asked; its
  // batch 0 where the model has none): the batch holds for stretches of the streak's steps.
  DecodeStretch stretch;
  int64_t stretch_asked = 0;
  // A streak written back for the ordinary step in which its KV ran short
  // (Simulation::suspend_streak): its figures are kept, and so is what each member was at the
  // write-back, in running()'s order, so that after that one step (the scheduler's
  // preemptions, the members' decodes) the streak takes up again those it decoded
  // (resume_streak), taking the others out of its figures, instead of capturing the batch
  // afresh. `suspended_at` is the replica's step count at the write-back.
  struct Written {
    uint64_t key;      // its leave_key in `leaves`
    int32_t context;   // its context_tokens as kept
    int32_t boundary;  // its index in `boundaries`, before taken modulo the block
  };
  bool suspended = false;
  int64_t suspended_at = 0;
  std::vector<Written> written;
  // The one ends_only observer's array for this replica's step ends, asked for as each run of
  // streak steps starts (start_streak_step, once `end_sink_asked` is reset by streak_step);
  // none with several such observers.
  StepEndSink end_sink;
  bool end_sink_asked = false;
};

}  // namespace servesim
