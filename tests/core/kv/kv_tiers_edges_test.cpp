// Tiered KV offload (core/kv/kv_tiers.h) at its edges: the tier count's limits, a reload that
// costs exactly what recomputing does, and the run's figures summed field by field over
// replicas whose tiers are not shared.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "core/kv/kv_manager.h"
#include "core/kv/kv_tiers.h"
#include "tests/support.h"

namespace t_core_kv_kv_tiers_edges_test {

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

std::string tiers_of(int n) {
  std::string list;
  for (int i = 0; i < n; ++i)
    list += (i ? ", " : "") + std::string("{name: t") + std::to_string(i) +
            ", capacity_gib: 1, bandwidth_gb_s: 10}";
  return "{kv_bytes_per_token: 1000, tiers: [" + list + "]}";
}

// Blocks of 16 tokens x 65,536 bytes = 1 MiB.
KvTiers chain(std::vector<TierSpec> specs) {
  return KvTiers(specs, KvTiers::Overlap::layerwise, false, 0, 16, 65536);
}

}  // namespace

TEST_CASE("kv tiers edges: 1 and 8 tiers are accepted, 0 and 9 refused", "[core][offload]") {
  CHECK(offload_error(tiers_of(1)) == "(no error)");
  CHECK(offload_error(tiers_of(8)) == "(no error)");
  CHECK_THAT(offload_error(tiers_of(9)),
             Catch::Contains("kv.offload.tiers") && Catch::Contains("must list 1 to 8 tiers"));
  CHECK_THAT(offload_error(tiers_of(0)), Catch::Contains("kv.offload.tiers"));
  // One shared tier alone, and shared tiers last, are fine; an unshared one under a shared one
  // is not, wherever the pair sits.
  CHECK(offload_error("{kv_bytes_per_token: 1000, tiers: [{name: r, capacity_gib: 1, "
                      "bandwidth_gb_s: 1, shared: true}]}") == "(no error)");
  CHECK(offload_error("{kv_bytes_per_token: 1000, tiers: [{name: h, capacity_gib: 1, "
                      "bandwidth_gb_s: 1}, {name: r, capacity_gib: 1, bandwidth_gb_s: 1, "
                      "shared: true}, {name: s, capacity_gib: 1, bandwidth_gb_s: 1, shared: "
                      "true}]}") == "(no error)");
  CHECK_THAT(offload_error("{kv_bytes_per_token: 1000, tiers: [{name: h, capacity_gib: 1, "
                           "bandwidth_gb_s: 1}, {name: r, capacity_gib: 1, bandwidth_gb_s: 1, "
                           "shared: true}, {name: s, capacity_gib: 1, bandwidth_gb_s: 1}]}"),
             Catch::Contains("list shared tiers last"));
}

TEST_CASE("kv tiers edges: a tier of exactly one block is accepted, less refused",
          "[core][offload]") {
  // 1,024 tokens of 1,024 bytes in blocks of 16: 16 KiB a block = 2^-16 GiB.
  const std::string block = "{kv_bytes_per_token: 1024, tiers: [{name: h, capacity_gib: ";
  CHECK(offload_error(block + "0.0000152587890625, bandwidth_gb_s: 1}]}") == "(no error)");
  CHECK_THAT(offload_error(block + "0.0000152, bandwidth_gb_s: 1}]}"),
             Catch::Contains("less than one KV block"));
}

TEST_CASE("kv tiers edges: reload if_faster reloads when it costs exactly the recompute",
          "[core][offload]") {
  // One 1 MiB block over 1,048,576,000 B/s with no latency: 1 ms, the time 16 tokens take at
  // 16,000 tokens/s. Both quotients round the same real number, so they are equal doubles.
  const TierSpec disk{"disk", 100 * 1048576.0, 1048576000.0, 0.0, false};
  KvTiers t({disk}, KvTiers::Overlap::layerwise, true, 16000, 16, 65536);
  const int64_t one[1] = {1};
  CHECK(t.reload_seconds(0, 1) == 16.0 / 16000.0);
  CHECK(t.worth_reloading(one));
  KvTiers slower({{"disk", 100 * 1048576.0, 1048575000.0, 0.0, false}}, KvTiers::Overlap::layerwise,
                 true, 16000, 16, 65536);
  CHECK_FALSE(slower.worth_reloading(one));
  // Two tiers: the blocks of both are weighed together (1 ms + 1 ms against 2 ms).
  KvTiers two({disk, disk}, KvTiers::Overlap::layerwise, true, 16000, 16, 65536);
  const int64_t both[2] = {1, 1}, lower[2] = {0, 1};
  CHECK(two.worth_reloading(both));
  CHECK(two.worth_reloading(lower));
}

TEST_CASE("kv tiers edges: the run's figures are the replicas' sums, field by field",
          "[core][offload]") {
  // Two replicas, each with its own host (2 blocks) and disk (4 blocks, 2 GB/s, 100 us).
  const TierSpec host{"host", 2 * 1048576.0, 1e10, 20e-6, false};
  const TierSpec disk{"disk", 4 * 1048576.0, 2e9, 100e-6, false};
  KvTiers a = chain({host, disk});
  KvTiers b = chain({host, disk});
  for (uint64_t k = 1; k <= 5; ++k) a.demote(k);  // host 5, 4; disk 3, 2, 1
  for (uint64_t k = 1; k <= 3; ++k) b.demote(k);  // host 3, 2; disk 1
  // a: 10 blocks queried (160 tokens), 2 in GPU memory, 3 from the host, 1 from the disk, and
  // 2 disk blocks declined. b: 4 blocks (64 tokens), none in GPU, 1 from the disk.
  const int64_t a_hits[2] = {3, 1}, a_declined[2] = {0, 2};
  const int64_t b_hits[2] = {0, 1}, b_declined[2] = {0, 0};
  a.record_admission(160, 10, 2, a_hits, a_declined);
  b.record_admission(64, 4, 0, b_hits, b_declined);
  const double mib = 1048576.0;
  const double a_host_s = 3 * mib / 1e10 + 20e-6, a_disk_s = mib / 2e9 + 100e-6;
  const double b_disk_s = mib / 2e9 + 100e-6;
  CHECK(a.tier_stats(0).queried_blocks == 8);
  CHECK(a.tier_stats(0).queried_tokens == 128);
  CHECK(a.tier_stats(1).queried_blocks == 5);
  CHECK(a.tier_stats(1).queried_tokens == 80);
  CHECK(a.tier_stats(1).reload_s == a_disk_s);
  // A's step is 0.5 ms of compute; the reload (334.57 + 624.288 us) is longer and sets it.
  const Time a_step = a.step_with_reload(Time::ns(500'000));
  CHECK(a_step == Time::from_seconds(a_host_s + a_disk_s));
  (void)b.step_with_reload(Time::ns(10'000'000));  // hidden under 10 ms of compute
  std::optional<OffloadStats> run;
  std::vector<const TierStore*> seen;
  add_offload_stats(run, a, seen);
  add_offload_stats(run, b, seen);
  REQUIRE(run);
  CHECK(run->overlap == "layerwise");
  CHECK(run->reload == "always");
  CHECK(run->prefill_tokens_saved == (3 + 1 + 1) * 16);
  CHECK(run->reload_s == Approx(a_host_s + a_disk_s + b_disk_s).epsilon(1e-12));
  CHECK(run->stall_s == Approx(a_host_s + a_disk_s - 0.5e-3).margin(1e-9));
  CHECK(run->reload_steps == 2);
  REQUIRE(run->tiers.size() == 2);
  const TierStats& h = run->tiers[0];
  const TierStats& d = run->tiers[1];
  CHECK(h.name == "host");
  CHECK(d.name == "disk");
  CHECK(h.queried_blocks == 8 + 4);
  CHECK(h.queried_tokens == 128 + 64);
  CHECK(h.hit_blocks == 3);
  CHECK(h.hit_tokens == 48);
  CHECK(d.queried_blocks == 5 + 4);
  CHECK(d.queried_tokens == 80 + 64);
  CHECK(d.hit_blocks == 2);
  CHECK(d.hit_tokens == 32);
  CHECK(d.declined_blocks == 2);
  CHECK(h.declined_blocks == 0);
  CHECK(h.reloads == 1);
  CHECK(d.reloads == 2);
  CHECK(h.reload_bytes == 3 * mib);
  CHECK(d.reload_bytes == 2 * mib);
  CHECK(d.reload_s == Approx(a_disk_s + b_disk_s).epsilon(1e-12));
  CHECK(h.capacity_blocks == 4);
  CHECK(d.capacity_blocks == 8);
  CHECK(h.stored_blocks == 5 + 3);
  CHECK(h.resident_blocks == 4);
  CHECK(h.moved_down_blocks == 4);
  CHECK(d.stored_blocks == 4);
  CHECK(d.resident_blocks == 4);
  CHECK(d.moved_down_blocks == 0);
}

// The check that every tier holds at least one KV block applies at the smallest accepted size
// of a token's KV, one byte.
TEST_CASE("kv tiers: a tier smaller than one block of 1-byte tokens is refused",
          "[core][offload]") {
  // Blocks of 16 tokens of 1 byte: 16 bytes = 2^-26 GiB (1.49e-8). A tier of 1e-8 GiB (10.7
  // bytes) holds no block; one of 2^-26 GiB holds exactly one.
  const std::string tiers = "{kv_bytes_per_token: 1, tiers: [{name: h, capacity_gib: ";
  CHECK_THAT(offload_error(tiers + "0.00000001, bandwidth_gb_s: 1}]}"),
             Catch::Contains("tier \"h\"") && Catch::Contains("less than one KV block"));
  CHECK(offload_error(tiers + "0.000000014901161193847656, bandwidth_gb_s: 1}]}") == "(no error)");
}

}  // namespace t_core_kv_kv_tiers_edges_test
