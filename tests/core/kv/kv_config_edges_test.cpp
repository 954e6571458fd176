// Every range of the kv section (core/kv/kv_registry.cpp, kv_paged.cpp, kv_reserve.cpp,
// kv_tiers.cpp) at both ends and one past each: accepted at the end, refused one past it with
// the key named.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "core/config.h"
#include "core/errors.h"
#include "core/kv/kv_manager.h"
#include "tests/support.h"

namespace t_core_kv_kv_config_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string kv_error(const std::string& kv) {
  try {
    const auto doc = doc_of("kv: {" + kv + "}\n");
    (void)make_kv_manager(Cfg::root(doc).child("kv"), nullptr);
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "(no error)";
}

std::string num(int64_t v) { return std::to_string(v); }

}  // namespace

TEST_CASE("kv config edges: block_size from 1 to 2^20, never above the capacity", "[core][kv]") {
  for (const char* policy : {"paged", "reserve"}) {
    INFO(policy);
    const std::string p = std::string("policy: ") + policy + ", ";
    CHECK(kv_error(p + "capacity_tokens: 16, block_size: 1") == "(no error)");
    CHECK_THAT(kv_error(p + "capacity_tokens: 16, block_size: 0"),
               Catch::Contains("kv.block_size") && Catch::Contains("1048576"));
    CHECK(kv_error(p + "capacity_tokens: 1048576, block_size: 1048576") == "(no error)");
    CHECK_THAT(kv_error(p + "capacity_tokens: 4194304, block_size: 1048577"),
               Catch::Contains("kv.block_size") && Catch::Contains("1048576"));
    CHECK(kv_error(p + "capacity_tokens: 16, block_size: 16") == "(no error)");
    CHECK_THAT(kv_error(p + "capacity_tokens: 15, block_size: 16"),
               Catch::Contains("kv.block_size") &&
                   Catch::Contains("must not exceed the KV capacity (15 tokens)"));
  }
}

TEST_CASE("kv config edges: capacity_tokens from 1 to 2^50", "[core][kv]") {
  const int64_t top = int64_t{1} << 50;
  CHECK(kv_error("policy: paged, capacity_tokens: 1, block_size: 1") == "(no error)");
  CHECK_THAT(kv_error("policy: paged, capacity_tokens: 0, block_size: 1"),
             Catch::Contains("kv.capacity_tokens") && Catch::Contains(num(top)));
  CHECK(kv_error("policy: paged, capacity_tokens: " + num(top)) == "(no error)");
  CHECK_THAT(kv_error("policy: paged, capacity_tokens: " + num(top + 1)),
             Catch::Contains("kv.capacity_tokens") && Catch::Contains(num(top)));
}

TEST_CASE("kv config edges: max_output_tokens from 1 to 2^40, and not with prefix caching",
          "[core][kv]") {
  const int64_t top = int64_t{1} << 40;
  for (const char* policy : {"paged", "reserve"}) {
    INFO(policy);
    const std::string p = std::string("policy: ") + policy + ", capacity_tokens: 1024, ";
    CHECK(kv_error(p + "max_output_tokens: 1") == "(no error)");
    CHECK(kv_error(p + "max_output_tokens: " + num(top)) == "(no error)");
    CHECK_THAT(kv_error(p + "max_output_tokens: 0"),
               Catch::Contains("kv.max_output_tokens") && Catch::Contains(num(top)));
    CHECK_THAT(kv_error(p + "max_output_tokens: " + num(top + 1)),
               Catch::Contains("kv.max_output_tokens") && Catch::Contains(num(top)));
  }
  CHECK_THAT(
      kv_error("policy: paged, capacity_tokens: 1024, prefix_caching: true, max_output_tokens: 8"),
      Catch::Contains("kv.max_output_tokens") && Catch::Contains("not supported with prefix"));
}

TEST_CASE("kv config edges: offload's prefill_tokens_per_s above 0 up to 1e9, tier names",
          "[core][kv][offload]") {
  const std::string p =
      "policy: paged, prefix_caching: true, capacity_tokens: 1024, offload: "
      "{kv_bytes_per_token: 1000, reload: if_faster, prefill_tokens_per_s: ";
  const std::string tiers = ", tiers: [{name: host, capacity_gib: 1, bandwidth_gb_s: 10}]}";
  CHECK(kv_error(p + "1e9" + tiers) == "(no error)");
  CHECK(kv_error(p + "0.001" + tiers) == "(no error)");
  CHECK_THAT(kv_error(p + "1.000001e9" + tiers),
             Catch::Contains("kv.offload.prefill_tokens_per_s"));
  CHECK_THAT(kv_error(p + "0" + tiers), Catch::Contains("kv.offload.prefill_tokens_per_s"));
  CHECK_THAT(kv_error("policy: paged, prefix_caching: true, capacity_tokens: 1024, offload: "
                      "{kv_bytes_per_token: 1000, tiers: [{name: '', capacity_gib: 1, "
                      "bandwidth_gb_s: 10}]}"),
             Catch::Contains("name") && Catch::Contains("must not be empty"));
}

}  // namespace t_core_kv_kv_config_edges_test
