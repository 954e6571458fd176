// A conservation contract over the engine's features: whatever a run does (time-outs,
// cancellations, admission refusals and sheds, requests too long to serve, replica failures with
// and without retries, autoscaling, LoRA, speculative decoding, prefill/decode pools, a bounded
// run), the summary's counts are the counts of requests.csv's rows: rows per status equal
// `by_status`, finished rows' tokens equal the summary's, the failure block's failed requests
// equal the rows ending `failed`, the per-replica figures add up to the run's, and the TTFT and
// E2E distributions hold one value per row that has one. No figure can be counted in one output
// and not in the other.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "metrics/metrics.h"
#include "metrics/run_scenario.h"
#include "tests/support.h"

namespace t_sim_run_identity_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// The fields of one CSV line, quotes removed ("" inside quotes is one ").
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

/// requests.csv as rows of named fields.
std::vector<std::map<std::string, std::string>> rows_of(const std::string& csv) {
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  size_t at = 0;
  while (at < csv.size()) {
    const size_t end = csv.find('\n', at);
    const std::string line = csv.substr(at, end == std::string::npos ? end : end - at);
    at = end == std::string::npos ? csv.size() : end + 1;
    if (line.empty()) continue;
    const std::vector<std::string> f = fields_of(line);
    if (header.empty()) {
      header = f;
      continue;
    }
    REQUIRE(f.size() == header.size());
    auto& row = rows.emplace_back();
    for (size_t i = 0; i < f.size(); ++i) row[header[i]] = f[i];
  }
  return rows;
}

/// 24 requests in three bursts (0 to 3 ms apart, 40 ms between bursts), prompts of 1 to 60
/// tokens, 1 to 30 output tokens; a small LCG keeps them the same on every platform.
std::string rows(uint32_t seed, const std::string& extra_row = "") {
  uint64_t x = seed * 2654435761u + 777;
  auto next = [&x](int n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  std::string out;
  int at_ms = 0;
  for (int i = 0; i < 24; ++i) {
    at_ms += (i % 8 == 0 && i > 0 ? 40 : 0) + next(4);
    out += fmt::format("{},{},{}\n", at_ms * 0.001, 1 + next(60), 1 + next(30));
  }
  return out + extra_row;
}

const std::string k_step = "{kind: linear, base_ms: 2, per_prefill_token_ms: 0.1, per_seq_ms: 0.3}";
const std::string k_sched = "{kind: continuous, max_num_seqs: 4, max_num_batched_tokens: 64}";
const std::string k_kv = "{policy: paged, capacity_tokens: 256, block_size: 8}";

std::string base(uint32_t seed, const std::string& scheduler = k_sched,
                 const std::string& extra_row = "") {
  return trace_scenario(rows(seed, extra_row), k_step, scheduler, k_kv);
}

std::string two_replicas(uint32_t seed, const std::string& cluster_extra) {
  return base(seed) + "cluster: {replicas: 2, router: {kind: round_robin}" + cluster_extra + "}\n";
}

struct Case {
  std::string name;
  std::string yaml;
  RunLimits limits;
  bool by_status = false;  ///< the summary must have a by_status block
};

std::vector<Case> cases(uint32_t seed) {
  RunLimits bounded;
  bounded.max_sim_time = Time::ns(ms(60));
  std::vector<Case> c = {
      {"plain", base(seed), {}},
      {"a prompt longer than the KV", base(seed, k_sched, "0.3,300,2\n0.301,257,1\n"), {}},
      {"timeouts and cancellations",
       base(seed) + "abandonment: {timeout_s: 0.02, cancel: {fraction: 0.4}}\n",
       {},
       true},
      {"queue cap and rate limit",
       base(seed) + "admission: {queue_cap: 3, rate_limit: {rate_per_s: 100, burst: 6}}\n",
       {},
       true},
      {"a failure, on_failure fail",
       two_replicas(seed,
                    ", failures: {script: [{replica: 0, at_s: 0.004, down_s: 0.1}, "
                    "{replica: 1, at_s: 0.04, down_s: 0.06}], on_failure: fail}"),
       {},
       true},
      {"failures with retries",
       two_replicas(seed,
                    ", failures: {script: [{replica: 0, at_s: 0.004, down_s: 0.02}, "
                    "{replica: 1, at_s: 0.01, down_s: 0.02}, {replica: 0, at_s: 0.05, "
                    "down_s: 0.01}], max_retries: 1}"),
       {},
       true},
      {"autoscale",
       base(seed) +
           "cluster: {replicas: 1, router: {kind: least_outstanding}, autoscale: {signal: queue, "
           "target: 1, window_s: 0.01, min: 1, max: 3, provision_s: 0.005, cooldown_s: 0}}\n",
       {}},
      {"lora",
       trace_scenario(rows(seed), k_step,
                      "{kind: vllm, max_num_seqs: 4, enable_prefix_caching: false}", k_kv) +
           "lora: {adapters: 5, max_loras: 2, max_cpu_loras: 3, adapter_bytes: 1.0e8, "
           "host_to_gpu_gbps: 10, disk_gbps: 4, peak_tflops: 1.0e5, peak_memory_gbps: 1.0e5}\n",
       {}},
      {"speculative",
       trace_scenario(rows(seed), k_step,
                      "{kind: vllm, max_num_seqs: 4, enable_prefix_caching: false}", k_kv) +
           "speculative: {method: ngram, k: 3, acceptance: {rate: 0.6}}\n",
       {}},
      {"prefill and decode pools",
       base(seed) +
           "cluster:\n  router: {kind: round_robin}\n  decode_router: {kind: round_robin}\n"
           "  pools:\n    - {name: p, role: prefill, replicas: 1}\n"
           "    - {name: d, role: decode, replicas: 2}\n"
           "  kv_transfer: {bandwidth_gb_s: 10, latency_us: 50, kv_bytes_per_token: 1000}\n",
       {}},
      {"a bounded run", base(seed), bounded},
      {"three replicas",
       base(seed) +
           "cluster: {replicas: 3, router: {kind: least_outstanding, load_refresh_ms: 5}}\n",
       {}},
      {"three replicas, a bounded run",
       base(seed) + "cluster: {replicas: 3, router: {kind: round_robin, load_refresh_ms: 5}}\n",
       bounded},
  };
  return c;
}

/// Every identity between the summary and requests.csv.
void check_identities(const Summary& s, const std::string& csv, bool want_by_status) {
  const auto rs = rows_of(csv);
  CHECK(static_cast<int64_t>(rs.size()) == s.requests);
  std::map<std::string, int64_t> by;
  int64_t prompt = 0, output = 0, preempt = 0, ttfts = 0, queues = 0;
  for (const auto& r : rs) {
    const std::string& st = r.at("status");
    ++by[st];
    if (st == "finished" && !r.at("ttft_s").empty()) ++ttfts;
    if (!r.at("queue_s").empty()) ++queues;
    if (st == "finished") {
      prompt += std::stoll(r.at("prompt_tokens"));
      output += std::stoll(r.at("output_tokens"));
      preempt += std::stoll(r.at("preemptions"));
      CHECK(!r.at("e2e_s").empty());
      CHECK(!r.at("ttft_s").empty());
    }
  }
  CHECK(by["finished"] == s.finished);
  CHECK(by["unfinished"] == s.unfinished);
  CHECK(s.rejected <= by["rejected"]);
  CHECK(s.prompt_tokens == prompt);
  CHECK(s.output_tokens == output);
  CHECK(s.preemptions == preempt);
  CHECK(s.e2e_s.count == s.finished);
  CHECK(s.ttft_s.count == ttfts);
  CHECK(s.queue_s.count <= queues);
  CHECK(s.by_status.has_value() == want_by_status);
  if (s.by_status) {
    const StatusCounts& b = *s.by_status;
    CHECK(b.finished == by["finished"]);
    CHECK(b.rejected == by["rejected"]);
    CHECK(b.shed == by["shed"]);
    CHECK(b.timed_out == by["timed_out"]);
    CHECK(b.cancelled == by["cancelled"]);
    CHECK(b.failed == by["failed"]);
    CHECK(b.unfinished == by["unfinished"]);
  } else {
    CHECK(by["finished"] + by["rejected"] + by["unfinished"] == s.requests);
    CHECK(s.rejected == by["rejected"]);
  }
  if (s.failures) {
    CHECK(s.failures->failed_requests == by["failed"]);
  } else {
    CHECK(by["failed"] == 0);
  }
  if (!s.replicas.empty()) {
    int64_t finished = 0, steps = 0, preemptions = 0;
    for (const ReplicaSummary& r : s.replicas) {
      finished += r.finished;
      steps += r.steps;
      preemptions += r.preemptions;
      CHECK(r.finished <= r.requests);
      CHECK(r.ttft_s.count <= r.routed);
    }
    CHECK(finished == s.finished);
    CHECK(steps == s.steps);
    CHECK(preemptions == s.preemptions);
  }
}

/// The identities between the summary and steps.csv: one row a step, the prefill tokens
/// computed, each replica's steps and its peak KV at least every step's.
void check_steps(const Summary& s, const std::string& csv) {
  const auto rs = rows_of(csv);
  CHECK(static_cast<int64_t>(rs.size()) == s.steps);
  int64_t prefill = 0, seats = 0;
  std::map<int64_t, int64_t> steps, peak;
  for (const auto& r : rs) {
    prefill += std::stoll(r.at("prefill_tokens"));
    seats += std::stoll(r.at("sequences"));
    const int64_t rep = std::stoll(r.at("replica"));
    ++steps[rep];
    peak[rep] = std::max<int64_t>(peak[rep], std::stoll(r.at("kv_used_tokens")));
  }
  CHECK(prefill == s.prefill_tokens_computed);
  if (s.steps > 0)
    CHECK(s.mean_batch_sequences ==
          Approx(static_cast<double>(seats) / static_cast<double>(s.steps)));
  int64_t most = 0;
  for (const auto& [rep, p] : peak) most = std::max(most, p);
  CHECK(most <= s.kv_peak_used_tokens);
  for (size_t i = 0; i < s.replicas.size(); ++i) {
    INFO("replica " << i);
    const int64_t rep = static_cast<int64_t>(i);
    CHECK(steps[rep] == s.replicas[i].steps);
    CHECK(peak[rep] <= s.replicas[i].kv_peak_used_tokens);
  }
}

}  // namespace

TEST_CASE("run identity: the summary's counts are requests.csv's rows, for every engine feature",
          "[sim][contract]") {
  std::map<std::string, std::map<std::string, int64_t>> seen;  // case -> status -> rows
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    for (const Case& c : cases(seed)) {
      INFO(c.name << " / seed " << seed);
      RunOptions o;
      o.check = true;
      o.limits = c.limits;
      std::ostringstream steps;
      o.steps_csv = &steps;
      CollectingRecorder rec;
      o.request_recorders = {&rec};
      const RunOutput out = run_scenario(doc_of(c.yaml), o);
      o.request_recorders.clear();
      CHECK(static_cast<int64_t>(rec.requests.size()) == out.summary.requests);
      if (out.summary.failures) {
        int64_t retries = 0;
        for (const Request& r : rec.requests) retries += r.spec.retries;
        CHECK(out.summary.failures->retries == retries);
      }
      REQUIRE(!out.requests_csv.empty());
      check_identities(out.summary, out.requests_csv, c.by_status);
      check_steps(out.summary, steps.str());
      o.steps_csv = nullptr;
      for (const auto& r : rows_of(out.requests_csv)) {
        ++seen[c.name][r.at("status")];
        if (r.at("reason").find("every replica was down") != std::string::npos)
          ++seen[c.name]["at the router"];
      }
      seen[c.name]["preemptions"] += out.summary.preemptions;
      // The parallel engine gives the same outputs, or says why it runs the sequential one.
      o.threads = 2;
      const RunOutput par = run_scenario(doc_of(c.yaml), o);
      if (par.engine_notice.empty()) {
        ++seen[c.name]["parallel"];
        CHECK(par.requests_csv == out.requests_csv);
        CHECK(par.summary_json == out.summary_json);
      }
    }
  }
  // The workloads reach what each case is for.
  CHECK(seen["plain"]["preemptions"] > 0);
  CHECK(seen["a prompt longer than the KV"]["rejected"] >= 6);
  CHECK(seen["timeouts and cancellations"]["timed_out"] > 0);
  CHECK(seen["timeouts and cancellations"]["cancelled"] > 0);
  CHECK(seen["queue cap and rate limit"]["rejected"] > 0);
  CHECK(seen["queue cap and rate limit"]["shed"] > 0);
  CHECK(seen["a failure, on_failure fail"]["failed"] >
        seen["a failure, on_failure fail"]["at the router"]);
  CHECK(seen["a failure, on_failure fail"]["at the router"] > 0);
  CHECK(seen["failures with retries"]["failed"] > 0);
  CHECK(seen["failures with retries"]["finished"] > 0);
  CHECK(seen["three replicas"]["parallel"] == 3);
  CHECK(seen["three replicas, a bounded run"]["unfinished"] > 0);
  CHECK(seen["autoscale"]["parallel"] == 0);  // the parallel engine does not autoscale
  CHECK(seen["a failure, on_failure fail"]["parallel"] == 0);
  CHECK(seen["a bounded run"]["unfinished"] > 0);
}

}  // namespace t_sim_run_identity_test
