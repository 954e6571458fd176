// --check: the engine's invariants catch a scheduler that breaks the rules.
#include <catch2/catch.hpp>

#include "schedulers/scheduler.h"
#include "tests/support.h"

namespace t_sim_invariants_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Admits the head of the queue without asking the KV manager: KV use then disagrees with what
// the running requests hold.
class CheatingScheduler final : public Scheduler {
 public:
  void plan_step(SchedulerView& s) override {
    if (s.running().empty() && !s.waiting().empty()) {
      const uint32_t slot = s.waiting().front();
      s.req(slot).kv_held_tokens = 16;  // claims memory it never allocated
      s.admit_front();
    }
    for (uint32_t slot : s.running()) {
      const Request& r = s.req(slot);
      s.plan().push_back({slot, r.prefilling() ? EntryKind::Prefill : EntryKind::Decode,
                          r.prefilling() ? r.prefill_target - r.context_tokens : 0});
    }
  }
  void after_step(SchedulerView& s) override {
    while (!s.running().empty() && s.req(s.running().back()).done()) s.release(s.running().back());
  }
};

Components components() {
  Scenario sc = build_scenario(doc_of(
      "workload: {synthetic: {requests: 3, arrival: {kind: fixed, rate_per_s: 10},\n"
      "  prompt_tokens: {kind: fixed, value: 8}, output_tokens: {kind: fixed, value: 2}}}\n"
      "step_time: {kind: linear, base_ms: 1}\nscheduler: {kind: continuous, max_num_seqs: 1}\n"
      "kv: {policy: paged, capacity_tokens: 64, block_size: 16}\n"));
  sc.components.replicas[0].scheduler = std::make_unique<CheatingScheduler>();
  return std::move(sc.components);
}

}  // namespace

TEST_CASE("invariants: --check stops a run whose KV books do not balance", "[sim][check]") {
  Simulation checked(components(), /*check=*/true);
  CHECK_THROWS_WITH(
      checked.run(),
      Catch::Contains("invariant broken after planning step 1 at 0 ns") &&
          Catch::Contains("KV use 0 differs from the 16 tokens the running requests hold"));
  // Without --check the same bug goes unnoticed until the numbers are wrong.
  Simulation unchecked(components(), /*check=*/false);
  CHECK_NOTHROW(unchecked.run());
}

TEST_CASE("invariants: every shipped scheduler passes --check on the default scenario",
          "[sim][check]") {
  const auto dir = temp_dir();
  const CliResult r = cli({"run", "--out", dir.string(), "--quiet", "--check"});
  CHECK(r.err == "");
  CHECK(r.code == 0);
}

TEST_CASE("invariants: the message names the replica only when there are several", "[sim][check]") {
  // A single engine: the first step, at 0 ns, breaks the books.
  Simulation single(components(), /*check=*/true);
  CHECK_THROWS_WITH(single.run(),
                    "invariant broken after planning step 1 at 0 ns: KV use 0 differs from the "
                    "16 tokens the running requests hold");
  // Two replicas, round robin: request 0 (t=0) goes to replica 0, which keeps the rules;
  // request 1 (t=100 ms) to replica 1, whose first step breaks them.
  Scenario sc = build_scenario(doc_of(
      "workload: {synthetic: {requests: 2, arrival: {kind: fixed, rate_per_s: 10},\n"
      "  prompt_tokens: {kind: fixed, value: 8}, output_tokens: {kind: fixed, value: 2}}}\n"
      "step_time: {kind: linear, base_ms: 1}\nscheduler: {kind: continuous, max_num_seqs: 1}\n"
      "kv: {policy: paged, capacity_tokens: 64, block_size: 16}\n"
      "cluster: {replicas: 2, router: {kind: round_robin}}\n"));
  REQUIRE(sc.components.replicas.size() == 2);
  sc.components.replicas[1].scheduler = std::make_unique<CheatingScheduler>();
  Simulation pair(std::move(sc.components), /*check=*/true);
  CHECK_THROWS_WITH(pair.run(),
                    "invariant broken after planning step 1 at 100000000 ns on replica 1: KV use 0 "
                    "differs from the 16 tokens the running requests hold");
}

}  // namespace t_sim_invariants_test
