// Tiered KV offload in whole runs (kv.offload): a block the GPU evicted is found in the host
// tier and reloaded, its time overlapped with the step's compute; a shared tier across
// replicas; conservation and capacity over a longer run.
#include <catch2/catch.hpp>

#include "tests/support.h"

namespace t_sim_offload_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Requests given in the test, in arrival order.
class ListSource final : public WorkloadSource {
 public:
  explicit ListSource(std::vector<RequestSpec> specs) : m_specs(std::move(specs)) {}
  bool next(RequestSpec& out) override {
    if (m_pos == m_specs.size()) return false;
    out = m_specs[m_pos];
    out.id = m_pos++;
    return true;
  }
  size_t size_hint() const override { return m_specs.size(); }

 private:
  std::vector<RequestSpec> m_specs;
  size_t m_pos = 0;
};

RequestSpec spec(double arrival_s, int32_t prompt, int32_t output, uint64_t stream) {
  RequestSpec s;
  s.arrival = Time::from_seconds(arrival_s);
  s.prompt_tokens = prompt;
  s.output_tokens = output;
  s.content_stream = stream;
  return s;
}

struct Result {
  Summary summary;
  std::vector<Request> requests;
};

/// Continuous batching, 1 ms + 0.01 ms a prefill token, 16-token blocks, 1 MB a token (a
/// block is 16 MB: 16 ms over 1 GB/s), the given KV capacity and kv.offload (empty: none).
Result run(std::vector<RequestSpec> specs, int64_t capacity_tokens, const std::string& offload,
           const std::string& cluster = "") {
  Scenario sc = build_scenario(doc_of(
      "workload: {synthetic: {requests: 1, arrival: {kind: fixed, rate_per_s: 1},\n"
      "  prompt_tokens: {kind: fixed, value: 1}, output_tokens: {kind: fixed, value: 1}}}\n"
      "step_time: {kind: linear, base_ms: 1, per_prefill_token_ms: 0.01}\n"
      "scheduler: {kind: continuous, max_num_seqs: 4}\n" +
      cluster + "kv: {policy: paged, block_size: 16, prefix_caching: true, capacity_tokens: " +
      std::to_string(capacity_tokens) +
      (offload.empty() ? "" : ", offload: {kv_bytes_per_token: 1e6, " + offload + "}") + "}\n"));
  sc.components.source = std::make_unique<ListSource>(std::move(specs));
  Simulation sim(std::move(sc.components), /*check=*/true);
  CollectingRecorder rec;
  sim.add_recorder(rec);
  MetricsRecorder metrics;
  sim.add_recorder(metrics);
  sim.run();
  return {metrics.summary(sim.stats()), rec.by_id()};
}

int64_t ttft_ns(const Request& r) { return (r.first_token - r.spec.arrival).count_ns(); }

// prefix_cache_test's LRU case: 4 GPU blocks; r1 (stream 2) evicts r0's (stream 1) block 1,
// so r2 (stream 1, 40 tokens) finds only block 0 in GPU memory.
std::vector<RequestSpec> lru_case() {
  return {spec(0, 32, 1, 1), spec(1, 48, 1, 2), spec(2, 40, 1, 1)};
}

const std::string k_host =
    "tiers: [{name: host, capacity_gib: 1, bandwidth_gb_s: 1, latency_us: 100}]";

}  // namespace

TEST_CASE("offload: a block evicted to host is reloaded, its time overlapped with compute",
          "[sim][offload]") {
  // Without offload r2 computes 40 - 16 = 24 tokens: 1 + 0.24 ms.
  const Result gpu = run(lru_case(), 64, "");
  CHECK(gpu.requests[2].cached_prompt_tokens == 16);
  CHECK(ttft_ns(gpu.requests[2]) == ms(1.24));
  // With a host tier r0's block 1 was moved down when r1 took it, and r2 reloads it: 32
  // tokens cached, 8 computed (1.08 ms); the reload is 1 block x 16 MB / 1 GB/s + 100 us =
  // 16.1 ms. Layerwise: the step lasts max(1.08, 16.1) ms.
  const Result lw = run(lru_case(), 64, "overlap: layerwise, " + k_host);
  CHECK(lw.requests[2].cached_prompt_tokens == 32);
  CHECK(ttft_ns(lw.requests[2]) == ms(16.1));
  REQUIRE(lw.summary.offload.has_value());
  const TierStats& host = lw.summary.offload->tiers.at(0);
  CHECK(host.hit_blocks == 1);
  CHECK(host.reload_bytes == 16e6);
  CHECK(host.reload_s == Approx(0.0161).epsilon(1e-12));
  CHECK(lw.summary.offload->prefill_tokens_saved == 16);
  CHECK(lw.summary.offload->stall_s == Approx(0.0161 - 0.00108).epsilon(1e-9));
  CHECK(lw.summary.prefill_tokens_computed == gpu.summary.prefill_tokens_computed - 16);
  // GPU hits are counted apart: r2's block 0 only.
  CHECK(lw.summary.prefix->hit_tokens == 16);
  // Bulk load before the forward pass: 16.1 + 1.08 ms.
  const Result bulk = run(lru_case(), 64, "overlap: none, " + k_host);
  CHECK(ttft_ns(bulk.requests[2]) == ms(17.18));
}

TEST_CASE("offload: a higher hit rate with a slow tier raises latency, if_faster declines it",
          "[sim][offload]") {
  // The host hit lifts r2's hit rate from 16 to 32 of 40 tokens but its TTFT from 1.24 to
  // 16.1 ms: the reload (16.1 ms) costs more than computing 16 tokens (0.16 ms here).
  const Result gpu = run(lru_case(), 64, "");
  const Result lw = run(lru_case(), 64, k_host);
  CHECK(lw.requests[2].cached_prompt_tokens > gpu.requests[2].cached_prompt_tokens);
  CHECK(ttft_ns(lw.requests[2]) > ttft_ns(gpu.requests[2]));
  // reload: if_faster with a prefill rate of 100,000 tokens/s (16 tokens: 0.16 ms) recomputes.
  const Result rec =
      run(lru_case(), 64, "reload: if_faster, prefill_tokens_per_s: 100000, " + k_host);
  CHECK(rec.requests[2].cached_prompt_tokens == 16);
  CHECK(ttft_ns(rec.requests[2]) == ms(1.24));
  CHECK(rec.summary.offload->tiers.at(0).declined_blocks == 1);
  CHECK(rec.summary.offload->tiers.at(0).hit_blocks == 0);
  // At 1,000 tokens/s (16 ms a block) the 16.1 ms reload is still slower; at 900 it is not.
  CHECK(run(lru_case(), 64, "reload: if_faster, prefill_tokens_per_s: 1000, " + k_host)
            .requests[2]
            .cached_prompt_tokens == 16);
  CHECK(run(lru_case(), 64, "reload: if_faster, prefill_tokens_per_s: 900, " + k_host)
            .requests[2]
            .cached_prompt_tokens == 32);
}

TEST_CASE("offload: a shared remote tier is seen by another replica", "[sim][offload]") {
  // Round robin over 2 replicas of 4 blocks: r0 (stream 1, 32 tokens) and r2 (stream 2, 64
  // tokens, which needs all 4 blocks and evicts r0's 2) run on replica 0; r1 and r3 on
  // replica 1. r3 (stream 1, 40 tokens) finds r0's blocks 0 and 1 only in the shared tier.
  const std::vector<RequestSpec> specs = {spec(0, 32, 1, 1), spec(0.5, 20, 1, 3), spec(1, 63, 1, 2),
                                          spec(2, 40, 1, 1)};
  const std::string cluster = "cluster: {replicas: 2, router: {kind: round_robin}}\n";
  const std::string remote =
      "tiers: [{name: remote, capacity_gib: 1, bandwidth_gb_s: 10, "
      "latency_us: 500, shared: ";
  const Result shared = run(specs, 64, remote + "true}]", cluster);
  CHECK(shared.requests[3].cached_prompt_tokens == 32);
  CHECK(shared.summary.offload->tiers.at(0).hit_blocks == 2);
  CHECK(shared.summary.offload->tiers.at(0).capacity_blocks == 67);  // once: 1 GiB / 16 MB
  const Result own = run(specs, 64, remote + "false}]", cluster);
  CHECK(own.requests[3].cached_prompt_tokens == 0);
  CHECK(own.summary.offload->tiers.at(0).capacity_blocks == 2 * 67);
}

TEST_CASE("offload: over a long run every tier stays within capacity and keeps its blocks",
          "[sim][offload]") {
  // 300 turns of 9 conversations through 16 GPU blocks, a 6-block host and a 20-block disk.
  std::vector<RequestSpec> specs;
  for (int i = 0; i < 300; ++i) specs.push_back(spec(0.05 * i, 40 + (i * 7) % 90, 3, 1 + i % 9));
  const std::string tiers =
      "tiers: [{name: host, capacity_gib: 0.09, bandwidth_gb_s: 20}, "
      "{name: disk, capacity_gib: 0.3, bandwidth_gb_s: 2, latency_us: 80}]";
  const Result r = run(specs, 256, tiers);
  CHECK(r.summary.finished == 300);
  const OffloadStats& o = *r.summary.offload;
  REQUIRE(o.tiers.size() == 2);
  CHECK(o.tiers[0].capacity_blocks == 6);
  CHECK(o.tiers[1].capacity_blocks == 20);
  for (const TierStats& t : o.tiers) {
    CHECK(t.resident_blocks <= t.capacity_blocks);
    CHECK(t.stored_blocks == t.resident_blocks + t.moved_down_blocks);
  }
  CHECK(o.tiers[0].hit_blocks + o.tiers[1].hit_blocks > 0);
  // What the host pushed out entered the disk unless the disk already held it.
  CHECK(o.tiers[1].stored_blocks <= o.tiers[0].moved_down_blocks);
  CHECK(r.summary.prefix->evicted_blocks >= o.tiers[0].stored_blocks);
  // Every token is computed or found: GPU hits plus tier hits plus computed = prompts.
  int64_t tier_hits = 0;
  for (const TierStats& t : o.tiers) tier_hits += t.hit_tokens;
  CHECK(o.prefill_tokens_saved == tier_hits);
}

TEST_CASE("offload: a bad kv.offload exits with status 2 naming the key and allowed values",
          "[sim][offload]") {
  const std::string path = write_temp(
      "offload_bad.yaml",
      "workload: {synthetic: {requests: 1, arrival: {kind: fixed, rate_per_s: 1},\n"
      "  prompt_tokens: {kind: fixed, value: 1}, output_tokens: {kind: fixed, value: 1}}}\n"
      "step_time: {kind: linear, base_ms: 1}\n"
      "scheduler: {kind: continuous}\n"
      "kv: {policy: paged, prefix_caching: true, capacity_tokens: 1024,\n"
      "  offload: {kv_bytes_per_token: 1000, reload: sometimes,\n"
      "    tiers: [{name: host, capacity_gib: 1, bandwidth_gb_s: 10}]}}\n");
  const CliResult r = cli({"run", path, "--out", (temp_dir() / "offload_bad").string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("kv.offload.reload") && Catch::Contains("sometimes") &&
                        Catch::Contains("always") && Catch::Contains("if_faster") &&
                        Catch::Contains("offload_bad.yaml:6"));
}

}  // namespace t_sim_offload_test
