// Swap preemption takes the KV bytes of a token from the replica's KV manager when the scheduler
// section does not give them (schedulers/continuous.h): a KV that counts tokens only (bytes a
// token 0) cannot time a swap and is refused when the scheduler is bound to it, as a second
// line behind sim/scenario_rules.cpp's check of the scenario.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "core/kv/factories.h"
#include "schedulers/scheduler.h"
#include "tests/support.h"

namespace t_schedulers_swap_bytes_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("swap: a KV of no bytes a token cannot time a swap and is refused at binding",
          "[schedulers][swap]") {
  for (const char* kind : {"continuous", "orca"}) {
    INFO(kind);
    const std::string section =
        std::string("{kind: ") + kind +
        (std::string(kind) == "orca" ? ", max_batch_size: 4" : ", max_num_seqs: 4") +
        ", preemption_mode: swap, swap_bandwidth_gb_s: 25}";
    const auto sched = make_scheduler(Cfg::root(doc_of(section)));
    const auto kv = make_paged_kv(Cfg::root(doc_of("{policy: paged, block_size: 16}")), 4096);
    CHECK(kv->bytes_per_token() == 0);
    CHECK_THROWS_WITH(sched->bind_kv(*kv), Catch::Contains("KV bytes of a token are unknown"));
  }
}

}  // namespace t_schedulers_swap_bytes_test
