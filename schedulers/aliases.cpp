// Named settings of the continuous policy (continuous.cpp), after the papers that introduced
// them; each is exactly one ContinuousSettings, documented in docs/schedulers.md.
//
// orca (Yu et al., OSDI '22): iteration-level scheduling with selective batching. The batch is
// re-formed every step; a joining request's whole prompt runs in one step beside the running
// decodes (no token budget, no chunking), up to max_batch_size requests.
//
// sarathi (Agrawal et al., OSDI '24, Sarathi-Serve): chunked prefill under a per-step token
// budget with stall-free batching: the running decodes first, then the unfinished prefill
// chunks, then new requests' first chunks, from whatever budget is left.
#include "schedulers/iteration_level.h"

namespace servesim {

std::unique_ptr<Scheduler> make_orca(const Cfg& c) {
  ContinuousSettings s;
  s.max_num_seqs = c.get_int("max_batch_size", {1, 1 << 20});
  s.swap = read_swap_settings(c);
  return make_continuous_scheduler(s);
}

std::unique_ptr<Scheduler> make_sarathi(const Cfg& c) {
  ContinuousSettings s;
  s.max_num_seqs = c.get_int("max_batch_size", {1, 1 << 20});
  s.max_num_batched_tokens = c.get_int("token_budget", {1, int64_t{1} << 40});
  s.chunked_prefill = true;
  s.swap = read_swap_settings(c);
  return make_continuous_scheduler(s);
}

}  // namespace servesim
