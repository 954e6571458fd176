// Tiered KV offload (core/kv/kv_tiers.cpp): the check that every tier holds at least one KV block
// applies at the smallest accepted size of a token's KV, one byte.
#include <catch2/catch.hpp>
#include <string>

#include "core/config.h"
#include "core/errors.h"
#include "core/kv/kv_manager.h"
#include "tests/support.h"

namespace t_core_kv_kv_tiers_byte_tokens_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string offload_error(const std::string& offload) {
  try {
    const auto doc = doc_of(
        "kv: {policy: paged, prefix_caching: true, capacity_tokens: 1024, offload: " + offload +
        "}\n");
    (void)make_kv_manager(Cfg::root(doc).child("kv"), nullptr);
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("kv tiers: a tier smaller than one block of 1-byte tokens is refused",
          "[core][offload]") {
  // Blocks of 16 tokens of 1 byte: 16 bytes = 2^-26 GiB (1.49e-8). A tier of 1e-8 GiB (10.7
  // bytes) holds no block; one of 2^-26 GiB holds exactly one.
  const std::string tiers = "{kv_bytes_per_token: 1, tiers: [{name: h, capacity_gib: ";
  CHECK_THAT(offload_error(tiers + "0.00000001, bandwidth_gb_s: 1}]}"),
             Catch::Contains("tier \"h\"") && Catch::Contains("less than one KV block"));
  CHECK(offload_error(tiers + "0.000000014901161193847656, bandwidth_gb_s: 1}]}") == "(no error)");
}

}  // namespace t_core_kv_kv_tiers_byte_tokens_test
