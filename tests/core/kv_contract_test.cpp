// Contract tests run over every registered KV policy (core/kv/kv_manager.h): admission that
// exactly fills the memory succeeds, nothing beyond it does, a refused call changes nothing,
// can_admit agrees with try_admit, and releasing everything gives all the memory back. A new
// policy is tested as soon as it is registered.
#include <catch2/catch.hpp>

#include "core/kv/kv_manager.h"
#include "tests/support.h"

namespace t_core_kv_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

constexpr int64_t k_capacity = 256;  // 16 blocks of 16

std::unique_ptr<KvManager> policy(const std::string& name) {
  auto doc = doc_of("policy: " + name + "\ncapacity_tokens: 256\nblock_size: 16\n");
  auto kv = make_kv_manager(Cfg::root(doc), nullptr);
  doc->check_all_read();
  return kv;
}

Request request(int32_t prompt, int32_t output) {
  Request r;
  r.spec.prompt_tokens = prompt;
  r.spec.output_tokens = output;
  r.prefill_target = prompt;
  return r;
}

/// The longest one-output-token prompt whose footprint is at most `tokens`.
int32_t longest_prompt_within(const KvManager& kv, int64_t tokens) {
  int32_t p = 1;
  while (kv.footprint_tokens(request(p + 1, 1)) <= tokens) ++p;
  return p;
}

}  // namespace

TEST_CASE("kv policies: a request needing exactly the capacity fits, one token more never does",
          "[core][kv][contract]") {
  for (const std::string& name : kv_policy_names()) {
    INFO(name);
    auto kv = policy(name);
    REQUIRE(kv->capacity_tokens() == k_capacity);
    const int32_t p = longest_prompt_within(*kv, k_capacity);
    CHECK(kv->footprint_tokens(request(p, 1)) == k_capacity);  // need == capacity
    CHECK(kv->never_fits(request(p, 1)).empty());
    CHECK_THAT(kv->never_fits(request(p + 1, 1)),
               Catch::Contains("needs 272 KV tokens at its peak but the KV capacity is 256"));
  }
}

TEST_CASE("kv policies: two halves exactly fill the memory, nothing more is admitted",
          "[core][kv][contract]") {
  for (const std::string& name : kv_policy_names()) {
    INFO(name);
    auto kv = policy(name);
    const int32_t p = longest_prompt_within(*kv, k_capacity / 2);
    Request a = request(p, 1), b = request(p, 1), c = request(1, 1);
    const int64_t need = kv->footprint_tokens(a);
    REQUIRE(need == k_capacity / 2);
    REQUIRE(kv->can_admit(a, 0, need));
    REQUIRE(kv->try_admit(a, 0, need));
    CHECK(kv->used_tokens() == 128);
    CHECK(kv->can_admit(b, 0, need));  // need == free admits
    REQUIRE(kv->try_admit(b, 0, need));
    CHECK(kv->used_tokens() == k_capacity);
    CHECK(kv->free_tokens() == 0);
    CHECK_FALSE(kv->can_admit(c, 0, 1));
    CHECK_FALSE(kv->try_admit(c, 0, 1));
    CHECK(kv->used_tokens() == k_capacity);  // a refusal changes nothing
    CHECK(c.kv_held_tokens == 0);
    kv->release(a);
    CHECK(kv->used_tokens() == 128);
    CHECK(kv->can_admit(c, 0, 1));
    kv->release(b);
    CHECK(kv->used_tokens() == 0);
    CHECK(kv->free_tokens() == k_capacity);
  }
}

TEST_CASE("kv policies: admit, grow and release never exceed the capacity and round-trip to 0",
          "[core][kv][contract]") {
  for (const std::string& name : kv_policy_names()) {
    INFO(name);
    auto kv = policy(name);
    std::vector<Request> reqs;
    for (int32_t i = 0; i < 12; ++i) reqs.push_back(request(10 + 7 * i, 1 + i % 5));
    std::vector<size_t> held;
    for (size_t i = 0; i < reqs.size(); ++i) {
      Request& r = reqs[i];
      const int64_t used = kv->used_tokens();
      const bool can = kv->can_admit(r, 0, r.spec.prompt_tokens);
      const bool did = kv->try_admit(r, 0, r.spec.prompt_tokens);
      CHECK(can == did);
      CHECK(kv->used_tokens() <= kv->capacity_tokens());
      if (did) {
        CHECK(kv->used_tokens() > used);
        CHECK(r.kv_held_tokens >= r.spec.prompt_tokens);
        held.push_back(i);
        // Growing by its outputs either fits or changes nothing.
        const int64_t before = kv->used_tokens();
        const int64_t had = r.kv_held_tokens;
        if (!kv->grow(r, r.peak_kv_tokens())) {
          CHECK(kv->used_tokens() == before);
          CHECK(r.kv_held_tokens == had);
        }
        CHECK(kv->used_tokens() <= kv->capacity_tokens());
        CHECK(kv->grow(r, r.kv_held_tokens));  // what it holds always fits
      } else {
        CHECK(kv->used_tokens() == used);
        CHECK(r.kv_held_tokens == 0);
      }
    }
    CHECK(held.size() >= 2);
    CHECK(held.size() < reqs.size());  // 12 requests of 10..87 tokens overflow 256
    for (size_t i : held) kv->release(reqs[i]);
    CHECK(kv->used_tokens() == 0);
  }
}

TEST_CASE("kv policies: growing to exactly the free memory succeeds, a block more does not",
          "[core][kv][contract]") {
  // Every policy whose requests grow (may_need_preemption), with and without prefix caching.
  std::vector<std::string> sections;
  for (const std::string& name : kv_policy_names())
    sections.push_back("policy: " + name + "\ncapacity_tokens: 256\nblock_size: 16\n");
  sections.push_back("policy: paged\ncapacity_tokens: 256\nblock_size: 16\nprefix_caching: true\n");
  for (const std::string& yaml : sections) {
    INFO(yaml);
    auto doc = doc_of(yaml);
    auto kv = make_kv_manager(Cfg::root(doc), nullptr);
    doc->check_all_read();
    if (!kv->may_need_preemption()) continue;  // it holds its whole footprint from admission
    Request a = request(16, 200), b = request(16, 200);
    REQUIRE(kv->try_admit(a, 0, 16));
    REQUIRE(kv->try_admit(b, 0, 16));
    CHECK(kv->used_tokens() == 32);
    CHECK(kv->grow(a, 128));          // 7 more blocks of the 14 free
    CHECK(kv->used_tokens() == 144);  // 9 blocks: 7 free
    CHECK_FALSE(kv->grow(b, 129));    // 8 more blocks of the 7 free: nothing changes
    CHECK(kv->used_tokens() == 144);  // 9 blocks: 7 free
    CHECK(b.kv_held_tokens == 16);
    CHECK(kv->grow(b, 128));  // exactly the 7 left
    CHECK(kv->used_tokens() == 256);
    CHECK(kv->free_tokens() == 0);
    CHECK_FALSE(kv->grow(a, 129));
    kv->release(a);
    kv->release(b);
    CHECK(kv->used_tokens() == 0);
  }
}

}  // namespace t_core_kv_contract_test
