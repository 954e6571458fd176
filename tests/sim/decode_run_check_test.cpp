// --check compares the scheduler's decode sums (core/batch_state.h, DecodeRun) with the plan they
// describe: each of the four sums wrong on its own stops the run, a plan that does not start
// with a one-token decode has no run to claim, and a run of no entries has no shortest read.
// Worked by hand: two requests of 4 and 8 prompt tokens, 3 output tokens each, arriving together.
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "schedulers/scheduler.h"
#include "tests/support.h"

namespace t_sim_decode_run_check_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Admits everything, prefills each prompt whole, then decodes every running request once a
/// step, giving the engine the decodes' sums, changed by `skew` before they are handed over.
class SummingScheduler final : public Scheduler {
 public:
  /// skew(run, decoding, first): `decoding` false for a step that prefills; `first` the first
  /// decode's read (0 when none).
  using Skew = std::function<void(DecodeRun&, bool, int64_t)>;
  explicit SummingScheduler(Skew skew) : m_skew(std::move(skew)) {}

  void plan_step(SchedulerView& s) override {
    while (!s.waiting().empty()) {
      Request& r = s.req(s.waiting().front());
      if (!s.kv().try_admit(r, 0, r.spec.prompt_tokens)) break;
      s.admit_front();
    }
    DecodeRun run;
    bool prefilling = false;
    int64_t first = 0;
    for (const uint32_t slot : s.running()) {
      Request& r = s.req(slot);
      if (r.prefilling()) {
        s.plan().push_back({slot, EntryKind::Prefill, r.prefill_target - r.context_tokens});
        prefilling = true;
        continue;
      }
      if (!s.kv().grow(r, r.context_tokens + 1)) continue;
      s.plan().push_back({slot, EntryKind::Decode, 0});
      const int64_t read = int64_t{r.context_tokens} + 1;
      if (run.entries++ == 0) first = read;
      run.read += read;
      run.longest = std::max(run.longest, read);
      run.shortest = std::min(run.shortest, read);
    }
    // A run describes leading decodes only: none while a prefill stands first.
    if (prefilling) run = DecodeRun{};
    m_skew(run, !prefilling, first);
    s.set_decode_run(run);
  }
  void after_step(SchedulerView& s) override {
    for (size_t i = s.running().size(); i-- > 0;)
      if (s.req(s.running()[i]).done()) s.release(s.running()[i]);
  }

 private:
  Skew m_skew;
};

/// Runs the two requests with --check; the error's text, empty when the run ends.
std::string run_with(SummingScheduler::Skew skew) {
  Scenario sc = build_scenario(doc_of(trace_scenario(
      "0,4,3\n0,8,3\n", "{kind: linear, base_ms: 1}", "{kind: continuous, max_num_seqs: 8}",
      "{policy: paged, capacity_tokens: 256, block_size: 16}")));
  sc.components.replicas[0].scheduler = std::make_unique<SummingScheduler>(std::move(skew));
  Simulation sim(std::move(sc.components), /*check=*/true);
  try {
    sim.run();
  } catch (const InvariantError& e) {
    return e.what();
  }
  return "";
}

const std::string k_sums = "the scheduler's decode sums";

}  // namespace

TEST_CASE("decode run check: true sums pass, each sum wrong alone stops the run", "[sim][check]") {
  // Step 1 prefills both (no run). Step 2 decodes both: reads 4 + 1 and 8 + 1, so the true run is
  // {2 entries, 14 read, longest 9, shortest 5}.
  CHECK(run_with([](DecodeRun&, bool, int64_t) {}) == "");
  CHECK_THAT(run_with([](DecodeRun& r, bool d, int64_t) {
               if (d) ++r.entries;  // one entry more than the plan holds
             }),
             Catch::Contains(k_sums) && Catch::Contains("(3 entries, 14 tokens read, longest 9)") &&
                 Catch::Contains("from the plan's (2, 14, 9)"));
  CHECK_THAT(
      run_with([](DecodeRun& r, bool d, int64_t) {
        if (d) ++r.read;
      }),
      Catch::Contains("(2 entries, 15 tokens read, longest 9) differ from the plan's (2, 14, 9)"));
  CHECK_THAT(
      run_with([](DecodeRun& r, bool d, int64_t) {
        if (d) ++r.longest;
      }),
      Catch::Contains("(2 entries, 14 tokens read, longest 10) differ from the plan's (2, 14, 9)"));
  CHECK_THAT(run_with([](DecodeRun& r, bool d, int64_t) {
               if (d) --r.shortest;
             }),
             Catch::Contains(k_sums));
  // The step being planned is named: step 2, the first to decode, planned at 1 ms (1 ms a step).
  CHECK_THAT(run_with([](DecodeRun& r, bool d, int64_t) {
               if (d) ++r.read;
             }),
             Catch::StartsWith("invariant broken after planning step 2 at 1000000 ns"));
}

TEST_CASE("decode run check: a run of one decode is checked on its shortest read too",
          "[sim][check]") {
  // A run that claims only the first decode (its read: 5 in step 2, 6 in step 3) and gets its
  // shortest wrong.
  CHECK_THAT(run_with([](DecodeRun& r, bool d, int64_t first) {
               if (d && r.entries > 0) r = DecodeRun{1, first, first, first - 1};
             }),
             Catch::Contains(k_sums));
  // The same run with its true shortest passes: the engine walks the second decode itself.
  CHECK(run_with([](DecodeRun& r, bool d, int64_t first) {
          if (d && r.entries > 0) r = DecodeRun{1, first, first, first};
        }) == "");
}

TEST_CASE("decode run check: a run of no entries has no shortest read to compare", "[sim][check]") {
  // No entries claimed, with any shortest: nothing to compare it with, the run passes.
  CHECK(run_with([](DecodeRun& r, bool, int64_t) {
          r = DecodeRun{};
          r.shortest = 5;
        }) == "");
}

TEST_CASE("decode run check: a plan that starts with a prefill has no decode run to claim",
          "[sim][check]") {
  // Step 1 is the two prefills; a run claiming one decode of read 1 there (a prefill's context 0
  // plus one) is refused: the plan's walk stops at its first entry that is no one-token decode.
  CHECK_THAT(
      run_with([](DecodeRun& r, bool d, int64_t) {
        if (!d) r = DecodeRun{1, 1, 1, 1};
      }),
      Catch::Contains("(1 entries, 1 tokens read, longest 1) differ from the plan's (0, 0, 0)"));
}

}  // namespace t_sim_decode_run_check_test
