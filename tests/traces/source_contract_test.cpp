// Contract tests run over every registered workload source (traces/workload_source.h), as the
// scheduler x KV-policy one does for schedulers: a source registered without a case here fails
// the first test, so a new source is held to the same contract.
//   - ids are 0, 1, 2, ... in the order next() gives them;
//   - a non-reactive source gives arrivals in non-decreasing order, prompt and output >= 1 token;
//   - size_hint(), when non-zero, is the number of requests;
//   - the same config and seed give the same requests; a reactive source's first requests too;
//   - every request's class is one of class_names() (class 0 when the list is empty);
//   - read ahead on a second thread (traces/read_ahead.h), a non-reactive source gives the same
//     requests, names and counters at every request as it does itself;
//   - counters_total() is the sum of counters() at every request, read ahead or not.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "tests/traces/trace_test_support.h"
#include "traces/read_ahead.h"
#include "traces/trace_rows.h"

namespace t_traces_source_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// One small config for each registered source.
std::map<std::string, std::string> k_cases() {
  const std::string csv = write_temp("contract.csv",
                                     "arrival_s,prompt_tokens,output_tokens\n"
                                     "0,10,5\n0.5,20,3\n0.5,7,1\n2,100,40\n");
  return {
      {"closed_loop",
       "closed_loop: {users: 3, requests: 12, think_s: 0.5, think: fixed, ramp_s: 0.03,\n"
       "  prompt_tokens: {kind: uniform, min: 10, max: 50}, output_tokens: {kind: uniform, min: 1, "
       "max: 20}}\n"},
      {"mix",
       "mix: {components: [{name: chat, priority: 0, synthetic: {requests: 20, arrival: {kind: "
       "poisson, rate_per_s: 5}, prompt_tokens: {kind: uniform, min: 1, max: 50}, "
       "output_tokens: {kind: uniform, min: 1, max: 20}}},\n"
       "  {name: batch, trace: {path: " +
           csv + "}}]}\n"},
      {"servegen",
       fmt::format("servegen: {{trace: {}servegen_m_large_excerpt-trace.csv}}\n", k_test_data)},
      {"synthetic",
       "synthetic: {requests: 200, arrival: {kind: poisson, rate_per_s: 5},\n"
       "  prompt_tokens: {kind: lognormal, median: 300, sigma: 0.8, max: 4096},\n"
       "  output_tokens: {kind: uniform, min: 1, max: 300}}\n"},
      {"trace", "trace: {path: " + csv + "}\n"},
  };
}

/// One file (in tests/data/, or a path) for each trace format (traces/trace_format.cpp's table),
/// read through the `trace` source with the format named: a format added to the table without a
/// case here fails below.
std::map<std::string, std::string> k_format_files() {
  return {
      {"azure", "azure_conv_2023_excerpt.csv"},
      {"burstgpt", "burstgpt_excerpt.csv"},
      {"mooncake", "mooncake_conversation_excerpt.jsonl"},
      {"sharegpt",
       write_temp("contract-sharegpt.json",
                  "[{\"id\": \"a\", \"conversations\": [{\"from\": \"human\", \"value\": "
                  "\"Hi there\"}, {\"from\": \"gpt\", \"value\": \"Hello!\"}]},\n"
                  " {\"id\": \"b\", \"conversations\": [{\"from\": \"human\", \"value\": "
                  "\"a longer question\"}, {\"from\": \"gpt\", \"value\": \"ok\"}]}]\n")},
      {"vidur", write_temp("contract-vidur.csv",
                           "arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,100,7\n0.5,"
                           "20,3\n2,8,1\n")},
      {"servesim_csv", write_temp("contract-servesim.csv",
                                  "arrival_s,prompt_tokens,output_tokens\n0,10,5\n1.5,3,2\n")},
      {"vllm_jsonl", "vllm_requests_excerpt.jsonl"},
  };
}

std::vector<RequestSpec> first(WorkloadSource& s, size_t n) {
  std::vector<RequestSpec> out;
  for (RequestSpec r; out.size() < n && s.next(r);) out.push_back(r);
  return out;
}

bool same(const std::vector<RequestSpec>& a, const std::vector<RequestSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].id != b[i].id || a[i].arrival != b[i].arrival ||
        a[i].prompt_tokens != b[i].prompt_tokens || a[i].output_tokens != b[i].output_tokens ||
        a[i].class_id != b[i].class_id || a[i].priority != b[i].priority)
      return false;
  return true;
}

}  // namespace

TEST_CASE("workload sources: every registered source has a contract case", "[traces]") {
  const auto cases = k_cases();
  for (const std::string& name : workload_source_names()) {
    INFO(name);
    CHECK(cases.count(name) == 1);
  }
  CHECK(cases.size() == workload_source_names().size());
}

TEST_CASE("workload sources: every trace format has a contract case", "[traces]") {
  const auto files = k_format_files();
  for (const TraceFormatSpec& spec : trace_format_specs()) {
    INFO(spec.name);
    CHECK(files.count(spec.name) == 1);
  }
  CHECK(files.size() == trace_format_specs().size());
}

TEST_CASE("workload sources: ids in order, arrivals never go back, lengths >= 1, same twice",
          "[traces]") {
  auto cases = k_cases();
  for (const auto& [format, file] : k_format_files())
    cases["trace as " + format] =
        fmt::format("trace: {{path: {}{}, format: {}{}}}\n",
                    file.front() == '/' ? std::string() : k_test_data, file, format,
                    format == "burstgpt" ? ", zero_tokens: skip" : "");  // its excerpt has 0s
  for (const auto& [name, yaml] : cases) {
    INFO(name);
    auto a = workload_of(yaml, 7);
    auto b = workload_of(yaml, 7);
    // A reactive source gives only the requests no one waits for until the engine reports
    // departures: check those.
    const std::vector<RequestSpec> ra = a->reactive() ? first(*a, 1000) : drain(*a);
    const std::vector<RequestSpec> rb = b->reactive() ? first(*b, 1000) : drain(*b);
    REQUIRE(!ra.empty());
    CHECK(same(ra, rb));
    for (size_t i = 0; i < ra.size(); ++i) {
      CHECK(ra[i].id == i);
      CHECK(ra[i].prompt_tokens >= 1);
      CHECK(ra[i].output_tokens >= 1);
      CHECK(ra[i].class_id < std::max<size_t>(1, a->class_names().size()));
      if (i > 0) CHECK(ra[i - 1].arrival <= ra[i].arrival);
    }
    if (!a->reactive() && a->size_hint() != 0) CHECK(a->size_hint() == ra.size());
  }
}

/// The sum of `s`'s counters, as WorkloadSource::counters_total promises it.
int64_t sum_of_counters(const WorkloadSource& s) {
  int64_t total = 0;
  for (const auto& c : s.counters()) total += c.second;
  return total;
}

TEST_CASE("workload sources: read ahead, each gives the same requests, names and counters",
          "[traces]") {
  auto cases = k_cases();
  for (const auto& [format, file] : k_format_files())
    cases["trace as " + format] = fmt::format(
        "trace: {{path: {}{}, format: {}{}}}\n", file.front() == '/' ? std::string() : k_test_data,
        file, format, format == "burstgpt" ? ", zero_tokens: skip" : "");
  // Names learnt as the trace is read, and a transform's counters.
  const std::string named = write_temp("contract-named.csv",
                                       "arrival_s,prompt_tokens,output_tokens,class,tenant\n"
                                       "0,10,5,a,x\n1,30,2,b,x\n2,4,4,a,y\n3,50,1,c,z\n");
  cases["trace with classes, transformed"] =
      "trace: {path: " + named + "}\ntransform: {max_context_tokens: 20}\n";
  // Counters that move inside a repeated copy (rows skipped, prompts capped) and across copies,
  // and a mix whose component skips rows: counters_total() is each wrapper's own sum.
  const std::string zeros = write_temp("contract-zeros.csv",
                                       "arrival_s,prompt_tokens,output_tokens\n"
                                       "0,10,5\n1,0,3\n2,40,0\n3,50,1\n4,9,9\n");
  cases["trace skipping rows, capped, repeated"] =
      "trace: {path: " + zeros +
      ", zero_tokens: skip}\ntransform: {max_context_tokens: 20, repeat_to_s: 30}\n";
  cases["mix with a component skipping rows"] =
      "mix: {components: [{name: a, trace: {path: " + zeros +
      ", zero_tokens: skip}}, {name: b, trace: {path: " + named + "}}]}\n";
  for (const auto& [name, yaml] : cases) {
    INFO(name);
    auto direct = workload_of(yaml, 7);
    if (direct->reactive()) continue;  // left as it is (read_ahead_test.cpp)
    auto ahead = read_ahead(workload_of(yaml, 7));
    CHECK(ahead->size_hint() == direct->size_hint());
    CHECK(source_state(*ahead) == source_state(*direct));
    RequestSpec a, b;
    for (;;) {
      const bool got = direct->next(a);
      REQUIRE(ahead->next(b) == got);
      CHECK(source_state(*ahead) == source_state(*direct));
      CHECK(direct->counters_total() == sum_of_counters(*direct));
      CHECK(ahead->counters_total() == sum_of_counters(*ahead));
      if (!got) break;
      REQUIRE(spec_text(b) == spec_text(a));
    }
  }
}

}  // namespace t_traces_source_contract_test
