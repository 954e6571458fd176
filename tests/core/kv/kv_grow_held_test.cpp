// KvManager::try_grow's documented promise (core/kv/kv_manager.h): a request that already holds
// `tokens` always succeeds and nothing changes, on every policy (paged, paged with a prefix
// cache, reserve). grow() answers that case inline, so only a direct call checks the managers.
#include <catch2/catch.hpp>
#include <string>

#include "core/kv/kv_manager.h"
#include "tests/support.h"

namespace t_core_kv_kv_grow_held_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("kv grow: a request growing to what it holds always succeeds", "[core][kv]") {
  for (const char* kv :
       {"policy: paged", "policy: paged, prefix_caching: true", "policy: reserve"}) {
    INFO(kv);
    const auto doc = doc_of(std::string("kv: {") + kv + ", capacity_tokens: 64, block_size: 16}\n");
    const std::unique_ptr<KvManager> m = make_kv_manager(Cfg::root(doc).child("kv"), nullptr);
    // 10 prompt and 6 output tokens: one block of 16 either way (paged: the prompt's 10 in one
    // block; reserve: prompt plus output, 16, exactly one block).
    Request r;
    r.spec.id = 1;
    r.spec.prompt_tokens = 10;
    r.spec.output_tokens = 6;
    REQUIRE(m->try_admit(r, 0, 10));
    REQUIRE(r.kv_held_tokens == 16);
    REQUIRE(m->used_tokens() == 16);
    CHECK(m->try_grow(r, 16));
    CHECK(m->try_grow(r, 11));
    CHECK(r.kv_held_tokens == 16);
    CHECK(m->used_tokens() == 16);
    m->release(r);
    CHECK(m->used_tokens() == 0);
  }
}

}  // namespace t_core_kv_kv_grow_held_test
