// Inter-token latency in summary.json (itl_s), per class, in the printed table and as an SLO
// target (slo.itl_ms), on tests/metrics/slo_test.cpp's tiny trace with every time worked by hand;
// and the bounded step ends it is derived from (metrics/token_gaps.h, docs/metrics.md#itl).
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/random.h"
#include "metrics/exports.h"
#include "metrics/metrics.h"
#include "metrics/output.h"
#include "sizing/sweep.h"
#include "tests/support.h"

namespace t_metrics_itl_test {

using namespace servesim;
using namespace servesim::test;

namespace {

// Every step lasts 10 ms per sequence in it; two seats; 100 KV tokens.
// r0 (t=0, prompt 1, 3 tokens, chat), r1 (t=0, 1, 2, batch), r2 (t=0, 1, 1, chat),
// r3 (t=0, prompt 1000: rejected at arrival, batch), r4 (t=100 ms, 1, 2, chat).
// Step ends: 20, 40, 60, 110, 120 ms. Gaps: r0 20, 20; r1 20; r4 10 (r2: one token, none).
// ITL = {20, 20, 20, 10} ms: mean 17.5, median 20, std sqrt(18.75) = 4.33013, p25 17.5.
// chat: {20, 20, 10}; batch: {20}. Largest gap: r0 20, r1 20, r4 10 ms.
std::string scenario(const std::string& slo) {
  const std::string path =
      write_temp("itl.csv",
                 "arrival_s,prompt_tokens,output_tokens,class\n0,1,3,chat\n0,1,2,batch\n"
                 "0,1,1,chat\n0,1000,1,batch\n0.1,1,2,chat\n");
  return "workload: {trace: {path: " + path +
         "}}\nstep_time: {kind: linear, per_seq_ms: 10}\n"
         "scheduler: {kind: continuous, max_num_seqs: 2}\n"
         "kv: {policy: paged, capacity_tokens: 100, block_size: 1}\n" +
         slo;
}

RunOutput run(const std::string& yaml, std::vector<double> percentiles = {},
              TokenTimes* tokens = nullptr) {
  RunOptions o;
  o.no_requests_csv = true;
  o.percentiles = std::move(percentiles);
  if (tokens) {
    o.step_observers.push_back(tokens);
    o.request_recorders.push_back(tokens);
  }
  return run_scenario(build_scenario(doc_of(yaml)), o);
}

}  // namespace

TEST_CASE("itl: summary.json has every gap pooled, as the hand-worked trace says",
          "[metrics][itl]") {
  const RunOutput out = run(scenario(""), {25, 99.9});
  const GapDistribution& d = out.summary.itl_s;
  CHECK(d.count == 4);
  CHECK(d.mean == Approx(0.0175));
  CHECK(d.median == Approx(0.020));
  CHECK(d.p50 == Approx(0.020));
  CHECK(d.std == Approx(std::sqrt(18.75) * 1e-3));
  CHECK(d.max == Approx(0.020));
  CHECK(d.exact);
  REQUIRE(d.percentiles.size() == 2);
  CHECK(d.percentiles[0].first == "p25");
  CHECK(d.percentiles[0].second == Approx(0.0175));
  CHECK(d.percentiles[1].first == "p99.9");
  const auto j = nlohmann::json::parse(out.summary_json);
  CHECK(j["itl_s"]["count"] == 4);
  CHECK(j["itl_s"]["median"].get<double>() == Approx(0.020));
  CHECK(j["itl_s"]["std"].get<double>() == Approx(std::sqrt(18.75) * 1e-3));
  CHECK(j["itl_s"]["percentiles"]["p25"].get<double>() == Approx(0.0175));
  // Without --percentiles: no percentiles key.
  CHECK_FALSE(
      nlohmann::json::parse(run(scenario("")).summary_json)["itl_s"].contains("percentiles"));
}

TEST_CASE("itl: summary.json's ITL is the --percentiles and vllm-bench ITL", "[metrics][itl]") {
  // A run with preemptions and chunked prefill, so that some stalls are placed (token_gaps.h).
  const std::string yaml = R"(workload:
  synthetic:
    requests: 300
    arrival: {kind: poisson, rate_per_s: 40}
    prompt_tokens: {kind: uniform, min: 10, max: 400}
    output_tokens: {kind: uniform, min: 1, max: 120}
step_time: {kind: linear, base_ms: 5, per_seq_ms: 0.5, per_prefill_token_ms: 0.01}
scheduler: {kind: continuous, max_num_seqs: 32, max_num_batched_tokens: 128, chunked_prefill: true}
kv: {policy: paged, capacity_tokens: 3000, block_size: 16}
)";
  TokenTimes tokens;
  const RunOutput out = run(yaml, {50, 90, 99}, &tokens);
  const LatencyReport lr = latency_report(tokens, {50, 90, 99});
  const GapDistribution& d = out.summary.itl_s;
  REQUIRE(out.summary.preemptions > 0);
  CHECK(tokens.stall_placed_requests() > 0);
  CHECK(d.count == lr.itl.count);
  CHECK(d.mean == Approx(lr.itl.mean).epsilon(1e-12));
  CHECK(d.median == lr.itl.median);
  CHECK(d.std == Approx(lr.itl.std).epsilon(1e-9));
  CHECK(d.max == lr.itl.max);
  CHECK(d.p90 == lr.itl.percentiles[1].second);
  CHECK(d.p99 == lr.itl.percentiles[2].second);
}

TEST_CASE("itl: per class, and a row of the printed table", "[metrics][itl]") {
  const RunOutput out = run(scenario(""));
  REQUIRE(out.summary.classes.size() == 2);
  const ClassSummary& chat = out.summary.classes[0].second;
  const ClassSummary& batch = out.summary.classes[1].second;
  CHECK(chat.itl_s.count == 3);
  CHECK(chat.itl_s.mean == Approx(0.050 / 3));
  CHECK(chat.itl_s.p50 == Approx(0.020));
  CHECK(batch.itl_s.count == 1);
  CHECK(batch.itl_s.max == Approx(0.020));
  const auto j = nlohmann::json::parse(out.summary_json);
  CHECK(j["classes"]["chat"]["itl_s"]["count"] == 3);
  const std::string table = summary_table(out.summary);
  CHECK_THAT(table,
             Catch::Contains(fmt::format("{:<12}{:>12.3f}{:>12.3f}{:>12.3f}{:>12.3f}{:>12.3f}  ms",
                                         "ITL", 17.5, 20.0, 20.0, 20.0, 20.0)));
  CHECK_THAT(table, Catch::Contains("class      chat: 3 finished") &&
                        Catch::Contains("; ITL p99 20.00 ms"));
}

TEST_CASE("itl: slo.itl_ms checks each request's largest gap and the run's percentile",
          "[metrics][itl][slo]") {
  // itl_ms 15 at p50: r0 (20) and r1 (20) miss, r2 (no gap) and r4 (10) meet: 2 of 5 (r3 was
  // rejected). p50 of {10, 20, 20, 20} = 20 > 15: missed.
  Summary s = run(scenario("slo: {itl_ms: 15, percentile: 50}\n")).summary;
  REQUIRE(s.slo);
  REQUIRE(s.slo->itl);
  CHECK_FALSE(s.slo->ttft);
  CHECK(s.slo->itl->requests_met == 2);
  CHECK(s.slo->itl->attainment == Approx(0.4));
  CHECK(*s.slo->itl->percentile_ms == Approx(20));
  CHECK_FALSE(s.slo->itl->met);
  CHECK(s.slo->requests_met == 2);
  CHECK(s.slo->goodput_per_s == Approx(2 / 0.12));
  CHECK_FALSE(meets_slo(s, std::nullopt));
  // chat: r2, r4 meet, r0 misses; batch: r1 misses, r3 rejected.
  CHECK(s.classes[0].second.slo->itl->requests_met == 2);
  CHECK(s.classes[1].second.slo->itl->requests_met == 0);
  // A gap equal to the target meets it: every finished request, and p99 20 <= 20.
  s = run(scenario("slo: {itl_ms: 20, ttft_ms: 1000}\n")).summary;
  CHECK(s.slo->itl->requests_met == 4);
  CHECK(s.slo->itl->met);
  CHECK(s.slo->requests_met == 4);
  CHECK(meets_slo(s, std::nullopt) == false);  // r3 was rejected: capacity never counts it met
  const std::string table = summary_table(s);
  CHECK_THAT(table, Catch::Contains("ITL p99 20.0 ms <= 20 ms met"));
  CHECK_THAT(table, Catch::Contains("meet both"));
  const auto j = nlohmann::json::parse(run(scenario("slo: {itl_ms: 20}\n")).summary_json);
  CHECK(j["slo"]["itl"]["target_ms"] == 20.0);
  CHECK(j["slo"]["itl"]["requests_met"] == 4);
  CHECK_FALSE(
      nlohmann::json::parse(run(scenario("slo: {ttft_ms: 20}\n")).summary_json)["slo"].contains(
          "itl"));
}

TEST_CASE("itl: slo.itl_ms is validated", "[metrics][itl][slo]") {
  const std::string path = write_temp("itl_bad.yaml", scenario("slo: {itl_ms: 0}\n"));
  const CliResult r = cli({"run", path, "--out", (temp_dir() / "itl_bad").string(), "-q"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("slo.itl_ms = \"0\"") && Catch::Contains("must be > 0"));
}

TEST_CASE("itl: bounded step ends keep what a request's gaps need", "[metrics][itl]") {
  // kv capacity 1: keeps at least 1 + k_slack ends, at most twice that.
  StepEnds ends(true);
  const size_t keep = 1 + StepEnds::k_slack;
  for (size_t k = 1; k <= 5 * keep; ++k) ends.add(0, static_cast<int64_t>(k) * 10, 1);
  CHECK(ends.trimmed(0));
  CHECK(ends.of(0).size() >= keep);
  CHECK(ends.of(0).size() <= 2 * keep);
  CHECK(ends.of(0).back() == static_cast<int64_t>(5 * keep) * 10);
  Request r;
  r.state = RequestState::Released;
  r.spec.output_tokens = 3;  // recent: its steps are kept, gaps exact
  r.last_token = Time::ns(static_cast<int64_t>(5 * keep) * 10);
  r.first_token = Time::ns(r.last_token.count_ns() - 20);
  std::vector<double> gaps;
  CHECK(request_gaps(ends, r, [&](double g, std::ptrdiff_t) { gaps.push_back(g); }) ==
        GapsFrom::steps);
  CHECK(gaps == std::vector<double>{10e-9, 10e-9});
  // One whose first steps were dropped: n - 1 gaps of its mean, the sum exact.
  r.spec.output_tokens = static_cast<int32_t>(3 * keep);
  r.first_token = Time::ns(10);
  r.last_token = Time::ns(10 + (r.spec.output_tokens - 1) * 10);
  gaps.clear();
  CHECK(request_gaps(ends, r, [&](double g, std::ptrdiff_t) { gaps.push_back(g); }) ==
        GapsFrom::mean);
  CHECK(gaps.size() == 3 * keep - 1);
  CHECK(gaps.front() == Approx(10e-9));
  // Unbounded (TokenTimes): nothing dropped.
  StepEnds all(false);
  for (size_t k = 1; k <= 5 * keep; ++k) all.add(0, static_cast<int64_t>(k) * 10, 1);
  CHECK(all.of(0).size() == 5 * keep);
  CHECK_FALSE(all.trimmed(0));
}

TEST_CASE("itl: a request's steps are found as the two upper bounds would find them",
          "[metrics][itl]") {
  // request_gap_run searches back from the last end and takes the end n steps before its last
  // token when that is its first: against the plain upper bounds over the whole array, on
  // random non-decreasing ends (some equal, to test the shortcut's check), first and last
  // tokens at ends, between them, before the first and past the last, trimmed or not.
  Rng rng(20261207);
  for (int round = 0; round < 40; ++round) {
    StepEnds ends(round % 2 == 0);
    int64_t t = 5;
    const int64_t count = rng.uniform_int(1, 400);
    for (int64_t k = 0; k < count; ++k) {
      t += rng.uniform_int(0, 3) == 0 ? 0 : rng.uniform_int(1, 20);
      ends.add(0, t, 1 + (round % 4 == 0 ? 0 : 100000));
    }
    const GrowArray<int64_t>& e = ends.of(0);
    for (int q = 0; q < 200; ++q) {
      Request r;
      r.state = RequestState::Released;
      r.replica = 0;
      r.spec.output_tokens = static_cast<int32_t>(rng.uniform_int(2, 60));
      auto pick = [&] {
        const int64_t k = rng.uniform_int(-2, static_cast<int64_t>(e.size()) + 1);
        if (k < 0) return e[0] - 1 + k;
        if (k >= static_cast<int64_t>(e.size())) return e.back() + k;
        return e[static_cast<size_t>(k)] - (rng.uniform_int(0, 2) == 0 ? 1 : 0);
      };
      int64_t t0 = pick(), t1 = pick();
      if (rng.uniform_int(0, 1) == 0 && e.size() >= static_cast<size_t>(r.spec.output_tokens)) {
        // One end a token: the shortcut's case.
        const auto last = static_cast<size_t>(
            rng.uniform_int(r.spec.output_tokens - 1, static_cast<int64_t>(e.size()) - 1));
        t1 = e[last];
        t0 = e[last - static_cast<size_t>(r.spec.output_tokens - 1)];
      }
      if (t0 > t1) std::swap(t0, t1);
      r.first_token = Time::ns(t0);
      r.last_token = Time::ns(t1);
      // The plain searches (the code before the shortcut).
      const int32_t n = r.spec.output_tokens;
      const auto lo = std::upper_bound(e.begin(), e.end(), t0);
      const auto hi = std::upper_bound(lo, e.end(), t1);
      GapsFrom want = GapsFrom::mean;
      const int64_t* want_at = nullptr;
      if (hi - lo >= n - 1 && hi != lo && *(hi - 1) == t1) {
        const bool more = hi - lo > n - 1 || (lo == e.begin() && ends.trimmed(0));
        want = more ? GapsFrom::stall_placed : GapsFrom::steps;
        want_at = hi - (n - 1);
      }
      const GapRun got = request_gap_run(ends, r);
      INFO("round " << round << " query " << q << ": t0 " << t0 << ", t1 " << t1 << ", n " << n);
      REQUIRE(got.from == want);
      CHECK(got.at == want_at);
      CHECK(got.count == n - 1);
    }
  }
}

TEST_CASE("itl: capacity and size count a missed ITL check as a miss", "[metrics][itl][slo]") {
  Summary s;
  s.slo.emplace();
  s.slo->itl = SloCheck{};
  s.slo->itl->met = true;
  CHECK(meets_slo(s, std::nullopt));
  s.slo->itl->met = false;
  CHECK_FALSE(meets_slo(s, std::nullopt));
  SweepSlo slo;
  slo.itl_ms = 50;
  CHECK(slo.override_text() == "slo={itl_ms: 50, percentile: 99}");
}

TEST_CASE("itl: gaps counted a step at a time give the figures of each gap added alone",
          "[metrics][itl]") {
  // Replica 0's step ends at irregular whole nanoseconds, kept bounded (capacity 1: 4,097 to
  // 8,194 ends, so older ends are dropped many times over); requests finishing at a step over
  // runs of the steps before it, some with more steps than gaps (a placed stall), some whose
  // first token is not one of these ends (made elsewhere), some on replica 1, which ran no
  // step (mean gaps). The recorder's figures against a GapSketch given each gap alone, across
  // the exact limit.
  for (size_t limit : {size_t{0}, size_t{1}, size_t{3000}, size_t{1} << 21}) {
    MetricsRecorder rec(limit);
    GapSketch slow(limit);
    StepEnds all(false);
    Rng rng(7);
    int64_t t = 0;
    int64_t placed = 0, elsewhere = 0, means = 0;
    for (size_t i = 0; i < 20000; ++i) {
      t += 1 + static_cast<int64_t>(2e7 * rng.uniform01());
      rec.on_step_end(0, Time::ns(t), 1);
      all.add(0, t, 1);
      const GrowArray<int64_t>& e = all.of(0);
      for (int k = static_cast<int>(4 * rng.uniform01()); k > 0; --k) {
        Request r;
        r.state = RequestState::Released;
        const auto n = static_cast<int32_t>(1 + 60 * rng.uniform01());
        const size_t extra = rng.uniform01() < 0.2 ? 2 : 0;
        if (i < static_cast<size_t>(n) - 1 + extra) continue;
        r.spec.output_tokens = n;
        r.replica = rng.uniform01() < 0.1 ? 1 : 0;
        r.first_token = Time::ns(e[i - (static_cast<size_t>(n) - 1 + extra)]);
        if (rng.uniform01() < 0.1) r.first_token = r.first_token - Time::ns(5);
        r.last_token = Time::ns(e[i]);
        r.release = r.last_token;
        rec.record(r);
        const GapRun run = request_gap_run(all, r);
        placed += run.from == GapsFrom::stall_placed;
        elsewhere += r.first_token.count_ns() != e[i - (static_cast<size_t>(n) - 1 + extra)];
        means += run.from == GapsFrom::mean && n > 1;
        if (run.from == GapsFrom::mean) {
          (void)slow.add_run(run);
          continue;
        }
        int64_t prev = run.t0;
        for (int64_t j = 0; j < run.count; ++j) {
          slow.add_ns(run.at[j] - prev);
          prev = run.at[j];
        }
      }
    }
    CHECK(placed > 100);
    CHECK(elsewhere > 100);
    CHECK(means > 100);
    const Summary s = rec.summary(RunStats{});
    REQUIRE(s.itl_s.count == slow.q.count());
    CHECK(s.itl_s.count > 500000);
    CHECK(s.itl_s.exact == slow.q.exact());
    CHECK(s.itl_s.max == slow.q.max());
    CHECK(s.itl_s.mean == slow.mean());
    CHECK(s.itl_s.std == slow.std());
    CHECK(s.itl_s.p50 == slow.q.percentile(50));
    CHECK(s.itl_s.p90 == slow.q.percentile(90));
    CHECK(s.itl_s.p99 == slow.q.percentile(99));
  }
}

TEST_CASE("itl: the mean and std come from exact sums, whatever the order of the gaps",
          "[metrics][itl]") {
  // Gaps of 1, 2 and 3 s and a 10 ns one, 10^6 of each big one: a double sum in some orders
  // loses the small gap; the exact sums do not. Mean (6e6 * 1e9 + 10) / (3e6 + 1) ns.
  GapSketch a(16), b(16);
  a.add_ns(10);
  for (int64_t ns : {int64_t{1'000'000'000}, int64_t{2'000'000'000}, int64_t{3'000'000'000}})
    a.add_ns(ns, 1'000'000);
  for (int64_t ns : {int64_t{3'000'000'000}, int64_t{2'000'000'000}, int64_t{1'000'000'000}})
    b.add_ns(ns, 1'000'000);
  b.add_ns(10);
  CHECK(a.mean() == b.mean());
  CHECK(a.std() == b.std());
  const double n = 3e6 + 1;
  CHECK(a.mean() == Approx((6e15 + 10) / n * 1e-9).epsilon(1e-15));
  // Population variance: (sum of squares - n * mean^2) / n, in ns^2.
  const double m = (6e15 + 10) / n;
  const double var = (14e24 + 100) / n - m * m;
  CHECK(a.std() == Approx(std::sqrt(var) * 1e-9).epsilon(1e-12));
  CHECK(a.q.count() == 3'000'001);
  CHECK(a.q.max() == 3.0);
  CHECK_FALSE(a.q.exact());
  // Folded parts give the whole's sums.
  const GapSketch::Moments f = GapSketch::fold(a.moments(), b.moments());
  CHECK(f.n == 6'000'002);
  CHECK(f.sum_ns == 2 * (static_cast<GapSketch::Wide>(6'000'000'000'000'000) + 10));
}

TEST_CASE("itl: step gaps with counts give add_ns's sums, past 64 bits too, and the open count",
          "[metrics][itl]") {
  // Steps of 20 ms (ns * count well inside 64 bits) and of 2^40 ns with 2^30 sequences open
  // (ns * count = 2^70: the 128-bit products), against add_ns with each step's count; the
  // sums compared exactly. Open: 3, then 2^30 + 3 from the second step to the fifth, then 3.
  // The gaps' sum is the caller's: each range's span (3 over steps 1-6, 2^30 over 2-5).
  const int64_t big = int64_t{1} << 40;
  const std::vector<int64_t> ends = {0,
                                     20'000'000,
                                     40'000'000,
                                     40'000'000 + big,
                                     60'000'000 + big,
                                     60'000'000 + 2 * big,
                                     80'000'000 + 2 * big};
  const std::vector<int32_t> counts = {3, 0, 1 << 30, 0, 0, 0, -(1 << 30)};
  for (size_t limit : {size_t{16}, size_t{1} << 21}) {
    GapSketch fast(limit), slow(limit);
    CHECK(fast.add_step_gaps(ends.data(), counts.data(), ends.size()) == 3);
    fast.add_step_sum_ns(3 * static_cast<GapSketch::Wide>(ends[6] - ends[0]) +
                         static_cast<GapSketch::Wide>(ends[5] - ends[1]) * (int64_t{1} << 30));
    int64_t open = counts[0];
    for (size_t i = 1; i < ends.size(); ++i) {
      open += counts[i];
      if (open > 0) slow.add_ns(ends[i] - ends[i - 1], open);
    }
    const GapSketch::Moments f = fast.moments(), s = slow.moments();
    CHECK(f.n == s.n);
    CHECK(f.n == 3 + 4 * ((int64_t{1} << 30) + 3) + 3);
    CHECK(f.sum_ns == s.sum_ns);
    CHECK(f.squares == s.squares);
    // By hand: the two long steps' squares alone are 2 * 2^80 * (2^30 + 3).
    const auto w = static_cast<GapSketch::Wide>(big);
    const GapSketch::Wide small = 20'000'000;
    CHECK(f.squares == 2 * w * w * ((int64_t{1} << 30) + 3) +
                           small * small * (3 + 2 * ((int64_t{1} << 30) + 3) + 3));
    CHECK(fast.q.max() == slow.q.max());
    CHECK(fast.q.percentile(0) == slow.q.percentile(0));
    CHECK(fast.q.percentile(50) == slow.q.percentile(50));
  }
  // One step: no gap, and its count is what stays open.
  GapSketch one(16);
  const int64_t e0 = 5;
  const int32_t c0 = 4;
  CHECK(one.add_step_gaps(&e0, &c0, 1) == 4);
  CHECK(one.q.count() == 0);
}

TEST_CASE("itl: a bounded replica's first end reserves the room it will use", "[metrics][itl]") {
  // At most its bound (twice kv capacity + k_slack), or the size from which GrowArray maps its
  // own pages, whose growth moves them: either way no realloc copies many ends on the way.
  // (The bound is at least 2 x k_slack ends, past the first room.)
  static_assert(2 * StepEnds::k_slack >= StepEnds::k_first_room);
  StepEnds ends(true);
  ends.add(0, 10, 1);
  CHECK(ends.of(0).capacity() == StepEnds::k_first_room);
  ends.add(1, 10, 1000000);
  CHECK(ends.of(1).capacity() == StepEnds::k_first_room);
  CHECK(ends.of(1).capacity() * sizeof(int64_t) == GrowArray<int64_t>::k_map_bytes);
  const int64_t* const at = ends.of(1).data();
  for (int64_t k = 2; k <= static_cast<int64_t>(StepEnds::k_first_room); ++k)
    ends.add(1, 10 * k, 1000000);
  CHECK(ends.of(1).data() == at);  // filled where it was reserved
  CHECK(ends.of(1).back() == 10 * static_cast<int64_t>(StepEnds::k_first_room));
  StepEnds all(false);  // unbounded: grows as it goes
  all.add(0, 10, 100);
  CHECK(all.of(0).capacity() < 2 * (100 + StepEnds::k_slack));
}

TEST_CASE("itl: record's plain path gives the figures of its general path", "[metrics][itl]") {
  // A run without targets, classes, tenants or replicas records a finished request by
  // record_plain (its gaps counted a step at a time); a class name sends every request through
  // record()'s general path (each gap into each tally). The run's figures must be the same.
  const std::vector<std::string> classes{"only"};
  MetricsRecorder plain, general;
  general.set_class_names(&classes);
  Rng rng(11);
  int64_t t = 0;
  std::vector<int64_t> ends;
  for (uint64_t i = 0; i < 3000; ++i) {
    t += 1 + static_cast<int64_t>(2e7 * rng.uniform01());
    ends.push_back(t);
    plain.on_step_end(0, Time::ns(t), 1000);
    general.on_step_end(0, Time::ns(t), 1000);
    Request r;
    r.spec.id = i;
    r.spec.arrival = Time::ns(t / 2);
    r.spec.prompt_tokens = 1 + static_cast<int32_t>(i % 7);
    r.spec.output_tokens = 1 + static_cast<int32_t>(rng.uniform01() * 40);
    const int kind = static_cast<int>(rng.uniform01() * 10);
    r.state = kind == 0 ? RequestState::Rejected : RequestState::Released;
    if (kind == 1) r.state = RequestState::Running;  // left unfinished by a bounded run
    const size_t n = static_cast<size_t>(r.spec.output_tokens);
    if (ends.size() < n) continue;
    r.first_token = Time::ns(ends[ends.size() - n] - (kind == 2 ? 3 : 0));
    r.last_token = Time::ns(t);
    r.first_admitted = r.spec.arrival + Time::ns(1);
    r.release = r.last_token;
    r.finish = r.release;
    r.preemptions = kind == 3 ? 2 : 0;
    plain.record(r);
    general.record(r);
  }
  const Summary a = plain.summary(RunStats{});
  const Summary b = general.summary(RunStats{});
  CHECK(a.requests == b.requests);
  CHECK(a.finished == b.finished);
  CHECK(a.rejected == b.rejected);
  CHECK(a.unfinished == b.unfinished);
  CHECK(a.prompt_tokens == b.prompt_tokens);
  CHECK(a.output_tokens == b.output_tokens);
  CHECK(a.preemptions == b.preemptions);
  CHECK(a.preempted_requests == b.preempted_requests);
  CHECK(a.last_release_s == b.last_release_s);
  CHECK(a.finished > 2000);
  for (auto [x, y] : {std::pair{&a.ttft_s, &b.ttft_s},
                      {&a.tpot_s, &b.tpot_s},
                      {&a.e2e_s, &b.e2e_s},
                      {&a.queue_s, &b.queue_s}}) {
    CHECK(x->count == y->count);
    CHECK(x->mean == y->mean);
    CHECK(x->p50 == y->p50);
    CHECK(x->p99 == y->p99);
  }
  CHECK(a.itl_s.count == b.itl_s.count);
  CHECK(a.itl_s.count > 20000);
  CHECK(a.itl_s.mean == b.itl_s.mean);
  CHECK(a.itl_s.std == b.itl_s.std);
  CHECK(a.itl_s.p50 == b.itl_s.p50);
  CHECK(a.itl_s.p90 == b.itl_s.p90);
  CHECK(a.itl_s.p99 == b.itl_s.p99);
  CHECK(a.itl_s.max == b.itl_s.max);
}

}  // namespace t_metrics_itl_test
