// Tiered KV offload's stores (core/kv/kv_tiers.h): reload cost, the overlap rule, the LRU
// cascade, capacity, conservation and a shared tier, worked out by hand.
#include <catch2/catch.hpp>
#include <random>

#include "tests/support.h"

namespace t_core_kv_kv_tiers_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// A tier of `blocks` 1 MiB blocks (16 tokens of 65,536 bytes).
TierSpec tier(const char* name, double blocks, double gb_s, double latency_us,
              bool shared = false) {
  return {name, blocks * 1048576.0, gb_s * 1e9, latency_us * 1e-6, shared};
}

KvTiers chain(std::vector<TierSpec> specs, KvTiers::Overlap overlap = KvTiers::Overlap::layerwise) {
  return KvTiers(specs, overlap, false, 0, 16, 65536);
}

/// Demotes a block to the tiers and records nothing else.
void admit_reload(KvTiers& t, int64_t host_blocks, int64_t disk_blocks = 0) {
  const int64_t hits[2] = {host_blocks, disk_blocks};
  const int64_t none[2] = {0, 0};
  t.record_admission(1600, 100, 0, hits, none);
}

}  // namespace

TEST_CASE("kv tiers: a host-tier hit costs blocks x block bytes / bandwidth plus latency",
          "[core][offload]") {
  // Blocks of 16 x 65,536 = 1,048,576 bytes. 5 from a 10 GB/s host with 20 us latency:
  // 5 x 1,048,576 / 1e10 s = 524.288 us, + 20 us = 544.288 us.
  KvTiers t = chain({tier("host", 100, 10, 20), tier("disk", 100, 2, 100)});
  CHECK(t.block_bytes() == 1048576.0);
  CHECK(t.reload_seconds(0, 5) == Approx(544.288e-6).epsilon(1e-12));
  CHECK(t.reload_seconds(0, 0) == 0.0);
  // 3 from the 2 GB/s disk (100 us): 3 x 1,048,576 / 2e9 = 1,572.864 us, + 100 us.
  CHECK(t.reload_seconds(1, 3) == Approx(1672.864e-6).epsilon(1e-12));
  // One admission reloading from both pays both, added (one link into the GPU).
  admit_reload(t, 5, 3);
  const TierStats host = t.tier_stats(0);
  CHECK(host.reloads == 1);
  CHECK(host.hit_blocks == 5);
  CHECK(host.hit_tokens == 80);
  CHECK(host.reload_bytes == 5 * 1048576.0);
  // Lookups: 100 blocks queried, none in GPU memory: host sees 100, disk the 95 host missed.
  CHECK(host.queried_blocks == 100);
  CHECK(t.tier_stats(1).queried_blocks == 95);
  CHECK(t.tier_stats(1).queried_tokens == 1600 - 80);
  CHECK(t.run_stats().prefill_tokens_saved == 8 * 16);
  // The step waits for 544.288 + 1,672.864 = 2,217.152 us whatever its compute below that.
  CHECK(t.step_with_reload(Time::ns(1'000'000)).count_ns() == 2'217'152);
  // Nothing is left to reload for the next step.
  CHECK(t.step_with_reload(Time::ns(1'000'000)).count_ns() == 1'000'000);
}

TEST_CASE("kv tiers: layerwise overlap waits max(0, reload - compute), none waits it all",
          "[core][offload]") {
  // 1 block from a 1 GB/s host, no latency: 1,048,576 ns.
  KvTiers lw = chain({tier("host", 10, 1, 0)});
  admit_reload(lw, 1);
  CHECK(lw.step_with_reload(Time::ns(3'000'000)).count_ns() == 3'000'000);  // hidden
  admit_reload(lw, 1);
  CHECK(lw.step_with_reload(Time::ns(48'576)).count_ns() == 1'048'576);  // waits 1 ms more
  CHECK(lw.run_stats().stall_s == Approx(1e-3).epsilon(1e-12));
  CHECK(lw.run_stats().reload_steps == 2);
  KvTiers bulk = chain({tier("host", 10, 1, 0)}, KvTiers::Overlap::none);
  admit_reload(bulk, 1);
  CHECK(bulk.step_with_reload(Time::ns(3'000'000)).count_ns() == 4'048'576);
  CHECK(bulk.run_stats().stall_s == Approx(1.048576e-3).epsilon(1e-12));
}

TEST_CASE("kv tiers: evicted blocks cascade down LRU and drop from the last tier",
          "[core][offload]") {
  // Host holds 2 blocks, disk 3. Keys 1..6 demoted in order: 1, 2 fill the host; 3 pushes 1
  // (host's least recent) to disk; 4 pushes 2; 5 pushes 3: disk 3,2,1 (most recent first);
  // 6 pushes 4 into a full disk, which drops its least recent, 1.
  KvTiers t = chain({tier("host", 2, 10, 0), tier("disk", 3, 1, 0)});
  for (uint64_t k = 1; k <= 6; ++k) t.demote(k);
  CHECK(t.find(6) == 0);
  CHECK(t.find(5) == 0);
  CHECK(t.find(4) == 1);
  CHECK(t.find(3) == 1);
  CHECK(t.find(2) == 1);
  CHECK(t.find(1) == -1);
  // A block kept below is only marked used when evicted again: 2 becomes disk's most recent,
  // so 7 pushes 5 into the disk, which drops 3 (now its least recent), not 2.
  t.demote(2);
  CHECK(t.find(2) == 1);
  t.demote(7);
  CHECK(t.find(7) == 0);
  CHECK(t.find(5) == 1);
  CHECK(t.find(3) == -1);
  CHECK(t.find(2) == 1);
  // A reload marks the block used in its tier: touching 4 makes 2 the disk's least recent.
  t.touch(1, 4);
  t.demote(8);  // pushes 6 down; the disk drops 2
  CHECK(t.find(2) == -1);
  CHECK(t.find(4) == 1);
  // Conservation: what entered a tier is held or moved down.
  const TierStats host = t.tier_stats(0), disk = t.tier_stats(1);
  CHECK(host.stored_blocks == 8);  // 1..8 (2 went back only as a touch)
  CHECK(host.resident_blocks == 2);
  CHECK(host.moved_down_blocks == 6);
  CHECK(disk.stored_blocks == 6);
  CHECK(disk.resident_blocks == 3);
  CHECK(disk.moved_down_blocks == 3);  // 1, 3, 2 dropped
}

TEST_CASE("kv tiers: no tier ever holds more than its capacity and blocks are conserved",
          "[core][offload]") {
  KvTiers t = chain({tier("host", 37, 10, 0), tier("disk", 101, 1, 0), tier("r", 5, 1, 0)});
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    t.demote(1 + rng() % 400);
    if (i % 97 == 0)
      for (size_t k = 0; k < t.size(); ++k) {
        const TierStats s = t.tier_stats(k);
        REQUIRE(s.resident_blocks <= s.capacity_blocks);
        REQUIRE(s.stored_blocks == s.resident_blocks + s.moved_down_blocks);
      }
  }
  // Each tier full, and every block that left one but the last entered the next.
  CHECK(t.tier_stats(0).resident_blocks == 37);
  CHECK(t.tier_stats(1).resident_blocks == 101);
  CHECK(t.tier_stats(2).resident_blocks == 5);
  CHECK(t.tier_stats(0).moved_down_blocks >= t.tier_stats(1).stored_blocks);
}

TEST_CASE("kv tiers: a shared tier holds what another replica moved down", "[core][offload]") {
  KvTiers a = chain({tier("host", 1, 10, 0), tier("remote", 8, 5, 50, true)});
  KvTiers b = chain({tier("host", 1, 10, 0), tier("remote", 8, 5, 50, true)});
  b.share_tier(1, a);
  a.demote(11);
  a.demote(12);  // pushes 11 to the shared remote tier
  CHECK(b.find(11) == 1);
  CHECK(b.find(12) == -1);  // a's own host
  // b evicting 11 again only marks it used there: no second copy, in b's host or the store.
  b.demote(11);
  CHECK(b.find(11) == 1);
  CHECK(b.tier_stats(0).stored_blocks == 0);
  CHECK(a.tier_stats(1).stored_blocks == 1);
  // Counted once in the run's figures although both chains see the store.
  std::optional<OffloadStats> run;
  std::vector<const TierStore*> seen;
  add_offload_stats(run, a, seen);
  add_offload_stats(run, b, seen);
  CHECK(run->tiers[1].stored_blocks == 1);
  CHECK(run->tiers[1].capacity_blocks == 8);
  CHECK(run->tiers[0].capacity_blocks == 2);
}

TEST_CASE("kv tiers: reload if_faster reloads only when the transfer beats recomputing",
          "[core][offload]") {
  // 1 MiB blocks of 16 tokens. Prefill at 16,000 tokens/s computes a block in 1 ms. A 2 GB/s
  // tier with 500 us latency reloads n blocks in n x 0.524288 ms + 0.5 ms: worth it from
  // n = 2 (1.548576 ms < 2 ms) but not for n = 1 (1.024288 ms > 1 ms).
  KvTiers t({tier("disk", 100, 2, 500)}, KvTiers::Overlap::layerwise, true, 16000, 16, 65536);
  const int64_t one[1] = {1}, two[1] = {2};
  CHECK_FALSE(t.worth_reloading(one));
  CHECK(t.worth_reloading(two));
  KvTiers always = chain({tier("disk", 100, 2, 500)});
  CHECK(always.worth_reloading(one));
}

TEST_CASE("kv tiers: kv.offload is refused where it cannot work, naming key and values",
          "[core][offload]") {
  const auto err = [](const std::string& offload,
                      const std::string& rest = "policy: paged, prefix_caching: true") {
    try {
      const auto doc =
          doc_of("kv: {" + rest + ", capacity_tokens: 1024, offload: " + offload + "}\n");
      (void)make_kv_manager(Cfg::root(doc).child("kv"), nullptr);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string host = "{name: host, capacity_gib: 1, bandwidth_gb_s: 10}";
  CHECK(err("{kv_bytes_per_token: 1000, tiers: [" + host + "]}") == "(no error)");
  CHECK_THAT(err("{kv_bytes_per_token: 1000, tiers: [" + host + "]}", "policy: paged"),
             Catch::Contains("kv.offload") && Catch::Contains("prefix_caching: true"));
  CHECK_THAT(err("{kv_bytes_per_token: 1000, overlap: async, tiers: [" + host + "]}"),
             Catch::Contains("kv.offload.overlap") && Catch::Contains("layerwise") &&
                 Catch::Contains("none") && Catch::Contains("async"));
  CHECK_THAT(err("{tiers: [" + host + "]}"), Catch::Contains("kv_bytes_per_token"));
  CHECK_THAT(err("{kv_bytes_per_token: 1000, tiers: []}"), Catch::Contains("kv.offload.tiers"));
  CHECK_THAT(err("{kv_bytes_per_token: 1000, tiers: [" + host + ", " + host + "]}"),
             Catch::Contains("names two tiers"));
  CHECK_THAT(err("{kv_bytes_per_token: 1000, tiers: [{name: r, capacity_gib: 1, "
                 "bandwidth_gb_s: 1, shared: true}, " +
                 host + "]}"),
             Catch::Contains("list shared tiers last"));
  CHECK_THAT(err("{kv_bytes_per_token: 1e7, tiers: [{name: host, capacity_gib: 0.1, "
                 "bandwidth_gb_s: 10}]}"),
             Catch::Contains("less than one KV block"));
  CHECK_THAT(err("{kv_bytes_per_token: 1000, tiers: [{name: host, capacity_gib: 1, "
                 "bandwidth_gb_s: 1e9}]}"),
             Catch::Contains("bandwidth_gb_s"));
  CHECK_THAT(err("{kv_bytes_per_token: 1000, prefill_tokens_per_s: 5, tiers: [" + host + "]}"),
             Catch::Contains("only used with reload: if_faster"));
  CHECK_THAT(err("{kv_bytes_per_token: 1000, reload: if_faster, tiers: [" + host + "]}"),
             Catch::Contains("prefill_tokens_per_s"));
}

}  // namespace t_core_kv_kv_tiers_test
