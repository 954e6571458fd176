// Prefill/decode disaggregation (cluster.pools with roles; sim/disagg_engine.cpp,
// sim/disagg_links.cpp, sim/topology.cpp). Every step takes 10 ms (linear, base_ms: 10), and a
// prompt token moves 1,000 bytes of KV (kv_transfer.kv_bytes_per_token), so a 1,000-token
// prompt moves 10^6 bytes: 1 ms on a 1 GB/s link (1 byte per ns).
#include <catch2/catch.hpp>
#include <set>

#include "core/errors.h"
#include "tests/support.h"

namespace t_sim_disagg_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_engine =
    "step_time: {kind: linear, base_ms: 10}\n"
    "scheduler: {kind: continuous, max_num_seqs: 8}\n"
    "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n";

std::string trace(const std::string& rows) {
  return "workload: {trace: {path: " +
         write_temp("t.csv", "arrival_s,prompt_tokens,output_tokens\n" + rows) + "}}\n";
}

// `prefill` and `decode` replicas, one link of `gb_s` and `latency_us` between the pools.
std::string disagg(int prefill, int decode, double gb_s, double latency_us,
                   const std::string& extra = "") {
  return k_engine +
         "cluster:\n  router: {kind: round_robin}\n"
         "  decode_router: {kind: round_robin}\n"
         "  pools:\n"
         "    - {name: p, role: prefill, replicas: " +
         std::to_string(prefill) +
         "}\n"
         "    - {name: d, role: decode, replicas: " +
         std::to_string(decode) + "}\n" +
         "  kv_transfer: {bandwidth_gb_s: " + std::to_string(gb_s) +
         ", latency_us: " + std::to_string(latency_us) + ", kv_bytes_per_token: 1000}\n" + extra;
}

}  // namespace

TEST_CASE("disagg: on an idle link a transfer takes latency + bytes / bandwidth", "[sim][disagg]") {
  // Requests 1 s apart, each alone: prefill 0-10 ms on p (first token at 10 ms); 10^6 bytes at
  // 1 GB/s = 1,000,000 ns plus 20 us latency: delivered at 11.02 ms; 4 decodes on d end at
  // 21.02, 31.02, 41.02 and 51.02 ms.
  const std::string yaml = trace("0,1000,5\n1,1000,5\n2,1000,5\n") + disagg(1, 1, 1.0, 20);
  const auto reqs = run_requests(yaml);
  REQUIRE(reqs.size() == 3);
  for (const Request& r : reqs) {
    CHECK(r.state == RequestState::Released);
    CHECK(r.replica == 1);  // left from the decode replica
    CHECK(r.first_token - r.spec.arrival == Time::ns(10'000'000));
    CHECK(r.release - r.spec.arrival == Time::ns(51'020'000));
    CHECK(r.generated_tokens == 5);
  }
  const RunOutput out = run_scenario(doc_of(yaml));
  REQUIRE(out.summary.kv_transfer);
  CHECK(out.summary.kv_transfer->transfers == 3);
  CHECK(out.summary.kv_transfer->bytes == 3e6);
  CHECK(out.summary.kv_transfer->transfer_s.mean == Approx(1.02e-3).epsilon(1e-12));
  CHECK(out.summary.kv_transfer->admit_wait_s.max == 0);
  // TTFT on the prefill replica; TPOT over the decode tokens (the transfer included).
  CHECK(out.summary.ttft_s.mean == Approx(0.010).epsilon(1e-12));
  CHECK(out.summary.tpot_s.mean == Approx(0.04102 / 4).epsilon(1e-12));
  REQUIRE(out.summary.pools.size() == 2);
  CHECK(out.summary.pools[0].handed_off == 3);
  CHECK(out.summary.pools[1].received == 3);
  CHECK(out.summary.pools[1].finished == 3);
}

TEST_CASE("disagg: transfers sharing a link split its bandwidth", "[sim][disagg]") {
  // Two prefill replicas finish at 10 ms together; A moves 10^6 bytes, B 5 x 10^5, on one
  // 1 GB/s link with 20 us latency. Shared, each sends at 0.5 byte/ns: B has sent all at
  // 1,000,000 ns (delivered 1,020,000 ns after the prefill); A has 5 x 10^5 bytes left, then
  // alone at 1 byte/ns ends sending at 1,500,000 ns (delivered at 1,520,000 ns). Alone they
  // would take 1,020,000 and 520,000 ns.
  const std::string yaml = trace("0,1000,2\n0,500,2\n") + disagg(2, 1, 1.0, 20);
  const RunOutput out = run_scenario(doc_of(yaml));
  REQUIRE(out.summary.kv_transfer);
  CHECK(out.summary.kv_transfer->transfer_s.max == Approx(1.52e-3).epsilon(1e-12));
  CHECK(out.summary.kv_transfer->transfer_s.mean == Approx((1.52e-3 + 1.02e-3) / 2).epsilon(1e-12));
  // B is admitted at 11.02 ms and decodes at once (until 21.02 ms); A, delivered at 11.52 ms
  // while that step runs, joins the batch for the next one (21.02-31.02 ms).
  const auto reqs = run_requests(yaml);
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[1].release == Time::ns(21'020'000));
  CHECK(reqs[0].release == Time::ns(31'020'000));
  // Two equal transfers: each at half rate, both delivered 2,020,000 ns after the prefill.
  const auto same = run_requests(trace("0,1000,2\n0,1000,2\n") + disagg(2, 1, 1.0, 20));
  REQUIRE(same.size() == 2);
  for (const Request& r : same) CHECK(r.release == Time::ns(10'000'000 + 2'020'000 + 10'000'000));
}

TEST_CASE("disagg: a transfer takes the path of least latency", "[sim][disagg]") {
  // p -> d directly: 50 us; p -> spine -> d: 10 + 10 us (and a faster link to the spine does
  // not matter: the path is picked by latency, then moves at its slowest link's rate, 1 GB/s).
  const std::string links =
      "  switches: [{name: spine}]\n"
      "  links:\n"
      "    - {from: p, to: d, bandwidth_gb_s: 1, latency_us: 50}\n"
      "    - {from: p, to: spine, bandwidth_gb_s: 4, latency_us: 10}\n"
      "    - {from: spine, to: 'd[0]', bandwidth_gb_s: 1, latency_us: 10}\n";
  const std::string yaml =
      trace("0,1000,2\n") + k_engine +
      "cluster:\n  router: {kind: round_robin}\n  decode_router: {kind: round_robin}\n"
      "  pools:\n    - {name: p, role: prefill, replicas: 1}\n"
      "    - {name: d, role: decode, replicas: 1}\n"
      "  kv_transfer: {kv_bytes_per_token: 1000}\n" +
      links;
  const auto reqs = run_requests(yaml);
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].release == Time::ns(10'000'000 + 1'020'000 + 10'000'000));
}

TEST_CASE("disagg: back-pressure holds a request's KV on the prefill replica", "[sim][disagg]") {
  // Both replicas hold 1,024 KV tokens (64 blocks of 16): one 1,000-token request at a time
  // (63 blocks). A, B and C arrive at 0; 1 ms transfers (1 GB/s, no latency).
  //   A: prefill 0-10 ms, delivered 11 ms, admitted (p's KV freed), decodes until 51 ms.
  //   B: prefill 11-21 ms, delivered 22 ms; d is full: B waits, its KV held on p, until A
  //      leaves at 51 ms; decodes 51-91 ms.
  //   C: p is full until B is admitted on d at 51 ms: prefill 51-61 ms, delivered 62 ms,
  //      waits for B to leave at 91 ms, decodes 91-131 ms.
  std::string yaml = trace("0,1000,5\n0,1000,5\n0,1000,5\n") + disagg(1, 1, 1.0, 0);
  yaml.replace(yaml.find("capacity_tokens: 65536"), 22, "capacity_tokens: 1024");
  const auto reqs = run_requests(yaml);
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[0].first_token == Time::from_ms(10));
  CHECK(reqs[0].release == Time::from_ms(51));
  CHECK(reqs[1].first_token == Time::from_ms(21));
  CHECK(reqs[1].release == Time::from_ms(91));
  CHECK(reqs[2].first_token == Time::from_ms(61));
  CHECK(reqs[2].release == Time::from_ms(131));
  const RunOutput out = run_scenario(doc_of(yaml));
  REQUIRE(out.summary.kv_transfer);
  // B waited 22 -> 51 ms, C 62 -> 91 ms.
  CHECK(out.summary.kv_transfer->admit_wait_s.max == Approx(0.029).epsilon(1e-12));
  CHECK(out.summary.kv_transfer->admit_wait_s.mean == Approx(0.029 * 2 / 3).epsilon(1e-12));
}

TEST_CASE("disagg: a decode replica admits delivered requests only into free seats",
          "[sim][disagg]") {
  // The decode pool's scheduler has one seat (max_num_seqs: 1); its KV could hold both.
  // Two prefill replicas take A and B at 0: both prefilled at 10 ms, both 10^6 bytes, sharing
  // the 1 GB/s link: delivered together at 12 ms. A takes the seat and decodes 12-52 ms; B
  // waits (its KV held on its prefill replica) until A leaves, then decodes 52-92 ms.
  const std::string yaml = trace("0,1000,5\n0,1000,5\n") + disagg(2, 1, 1.0, 0, "");
  std::string seats = yaml;
  seats.replace(seats.find("    - {name: d, role: decode, replicas: 1}"),
                std::string("    - {name: d, role: decode, replicas: 1}").size(),
                "    - {name: d, role: decode, replicas: 1, scheduler: {kind: continuous, "
                "max_num_seqs: 1}}");
  const auto reqs = run_requests(seats);
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].release == Time::from_ms(52));
  CHECK(reqs[1].release == Time::from_ms(92));
  const RunOutput out = run_scenario(doc_of(seats));
  REQUIRE(out.summary.kv_transfer);
  CHECK(out.summary.kv_transfer->admit_wait_s.max == Approx(0.040).epsilon(1e-12));
  // With the top-level 8 seats both decode together, 12-52 ms.
  for (const Request& r : run_requests(yaml)) CHECK(r.release == Time::from_ms(52));
}

TEST_CASE("disagg: every request is served once, checked at every step", "[sim][disagg]") {
  const std::string yaml =
      "workload: {synthetic: {requests: 300, arrival: {kind: poisson, rate_per_s: 40},\n"
      "  prompt_tokens: {kind: uniform, min: 1, max: 1500},\n"
      "  output_tokens: {kind: uniform, min: 1, max: 60}}}\n" +
      disagg(2, 3, 2.0, 5);
  std::string small = yaml;
  small.replace(small.find("capacity_tokens: 65536"), 22, "capacity_tokens: 4096");
  for (const std::string& y : {yaml, small}) {
    const auto reqs = run_requests(y);  // run_requests runs with the invariant checks on
    REQUIRE(reqs.size() == 300);
    std::set<uint64_t> ids;
    for (const Request& r : reqs) {
      ids.insert(r.spec.id);
      CHECK(r.state == RequestState::Released);
      CHECK(r.generated_tokens == r.spec.output_tokens);
      // One-token requests finish on their prefill replica; the others on a decode replica.
      CHECK((r.replica >= 2) == (r.spec.output_tokens > 1));
    }
    CHECK(ids.size() == 300);
    CHECK(run_scenario(doc_of(y)).summary_json == run_scenario(doc_of(y)).summary_json);
  }
}

TEST_CASE("disagg: a request no decode replica can hold is rejected at arrival", "[sim][disagg]") {
  // The prefill replica holds the prompt (1,000), but no decode replica the whole request.
  std::string yaml = trace("0,1000,500\n1,100,5\n") + disagg(1, 1, 1.0, 0);
  const std::string decode_pool = "{name: d, role: decode, replicas: 1}";
  yaml.replace(yaml.find(decode_pool), decode_pool.size(),
               "{name: d, role: decode, replicas: 1,\n"
               "       kv: {policy: paged, block_size: 16, capacity_tokens: 1024}}");
  const RunOutput out = run_scenario(doc_of(yaml));
  CHECK(out.summary.rejected == 1);
  CHECK(out.summary.finished == 1);
  CHECK_THAT(out.first_rejection, Catch::Contains("request 0: no decode replica can ever hold it"));
}

TEST_CASE("disagg: bad sections are config errors", "[sim][disagg]") {
  const std::string base = trace("0,100,5\n") + k_engine;
  const std::string pools =
      "  pools:\n    - {name: p, role: prefill, replicas: 1}\n"
      "    - {name: d, role: decode, replicas: 1}\n";
  const std::string head = "cluster:\n  router: {kind: round_robin}\n";
  const std::string dr = "  decode_router: {kind: round_robin}\n";
  // A link to a pool that does not exist.
  CHECK_THAT(input_error_of(base + head + dr + pools +
                            "  kv_transfer: {kv_bytes_per_token: 10}\n"
                            "  links: [{from: p, to: decdoe, bandwidth_gb_s: 1}]\n"),
             Catch::Contains("cluster.links[0].to") && Catch::Contains("not a pool") &&
                 Catch::Contains("d, p"));
  CHECK_THAT(input_error_of(base + head + dr + pools +
                            "  kv_transfer: {kv_bytes_per_token: 10}\n"
                            "  links: [{from: 'p[1]', to: d, bandwidth_gb_s: 1}]\n"),
             Catch::Contains("cluster.links[0].from"));
  // A prefill pool without a decode pool.
  CHECK_THAT(input_error_of(base + head + "  pools: [{name: p, role: prefill, replicas: 2}]\n"),
             Catch::Contains("at least one prefill pool and one decode pool"));
  // No decode router; no links or kv_transfer bandwidth.
  CHECK_THAT(input_error_of(base + head + pools + "  kv_transfer: {bandwidth_gb_s: 1}\n"),
             Catch::Contains("decode_router"));
  CHECK_THAT(input_error_of(base + head + dr + pools), Catch::Contains("kv_transfer"));
  // KV bytes per token unknown (linear model, capacity_tokens).
  CHECK_THAT(input_error_of(base + head + dr + pools + "  kv_transfer: {bandwidth_gb_s: 1}\n"),
             Catch::Contains("kv_bytes_per_token"));
  // Links that leave a decode replica unreachable.
  CHECK_THAT(input_error_of(base + head + dr + pools +
                            "  kv_transfer: {kv_bytes_per_token: 10}\n"
                            "  switches: [{name: s}]\n"
                            "  links: [{from: p, to: s, bandwidth_gb_s: 1}]\n"),
             Catch::Contains("no path from p[0] to d[0]"));
  // Request-level batching cannot take a request already prefilled.
  CHECK_THAT(input_error_of(base + head + dr +
                            "  pools:\n    - {name: p, role: prefill, replicas: 1}\n"
                            "    - {name: d, role: decode, replicas: 1,\n"
                            "       scheduler: {kind: static, batch_size: 4}}\n"
                            "  kv_transfer: {bandwidth_gb_s: 1, kv_bytes_per_token: 10}\n"),
             Catch::Contains("iteration-level"));
}

TEST_CASE("disagg: step observers see the steps of prefill and decode replicas", "[sim][disagg]") {
  struct Replicas final : StepObserver {
    std::set<uint32_t> seen;
    int64_t prefill_tokens = 0, decode_tokens = 0;
    void on_step(const StepRecord& s) override {
      seen.insert(s.replica);
      prefill_tokens += s.prefill_tokens;
      decode_tokens += s.decode_tokens;
    }
  } obs;
  Scenario sc = build_scenario(doc_of(trace("0,1000,5\n0,1000,5\n") + disagg(2, 2, 1.0, 0)));
  Simulation sim(std::move(sc.components), /*check=*/true);
  sim.add_step_observer(obs);
  sim.run();
  CHECK(obs.seen == std::set<uint32_t>{0, 1, 2, 3});
  CHECK(obs.prefill_tokens == 2000);  // prefills only on 0 and 1, nothing recomputed
  CHECK(obs.decode_tokens == 8);      // 4 decodes each on 2 and 3
  CHECK(sim.stats().replicas[0].handed_off == 1);
  CHECK(sim.stats().replicas[3].received == 1);
}

}  // namespace t_sim_disagg_test
