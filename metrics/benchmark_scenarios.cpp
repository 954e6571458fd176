// The benchmark tools' definitions (docs/metrics.md#benchmark-scenarios). Only the finished
// requests enter a figure, as in every tool; MLPerf also requires that none was dropped.
#include "metrics/benchmark_scenarios.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {

/// Seconds of a nanosecond count, divided (correctly rounded) so that whole milliseconds
/// compare equal to limits given in milliseconds.
double seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

using Rule = double (*)(const std::vector<double>&, double);

/// The per-request latencies every tool reports, in seconds, each sorted.
struct Latencies {
  std::vector<double> ttft_s, tpot_s, e2e_s, gen_tokens_per_s;
};

Latencies latencies(const std::vector<BenchmarkSample>& xs) {
  Latencies l;
  for (const BenchmarkSample& x : xs) {
    l.ttft_s.push_back(seconds(x.first_token_ns - x.arrival_ns));
    l.e2e_s.push_back(seconds(x.release_ns - x.arrival_ns));
    // A reply of one token has no time per output token (every tool leaves it out).
    if (x.output_tokens > 1) {
      const double gen_s = seconds(x.release_ns - x.first_token_ns);
      l.tpot_s.push_back(gen_s / static_cast<double>(x.output_tokens - 1));
      if (gen_s > 0) l.gen_tokens_per_s.push_back(static_cast<double>(x.output_tokens - 1) / gen_s);
    }
  }
  for (auto* v : {&l.ttft_s, &l.tpot_s, &l.e2e_s, &l.gen_tokens_per_s})
    std::sort(v->begin(), v->end());
  return l;
}

std::optional<double> mean(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

std::optional<double> pct(const std::vector<double>& v, double p, Rule rule) {
  if (v.empty()) return std::nullopt;
  return rule(v, p);
}

std::optional<double> per_s(double amount, double seconds) {
  if (!(seconds > 0)) return std::nullopt;
  return amount / seconds;
}

struct Totals {
  double requests = 0, prompt = 0, output = 0;
  int64_t first_arrival_ns = 0, last_release_ns = 0;
};

Totals totals(const std::vector<BenchmarkSample>& xs) {
  Totals t;
  t.requests = static_cast<double>(xs.size());
  if (xs.empty()) return t;
  t.first_arrival_ns = xs.front().arrival_ns;
  t.last_release_ns = xs.front().release_ns;
  for (const BenchmarkSample& x : xs) {
    t.prompt += static_cast<double>(x.prompt_tokens);
    t.output += static_cast<double>(x.output_tokens);
    t.first_arrival_ns = std::min(t.first_arrival_ns, x.arrival_ns);
    t.last_release_ns = std::max(t.last_release_ns, x.release_ns);
  }
  return t;
}

void mlperf(const BenchmarkSpec& spec, const std::vector<BenchmarkSample>& xs, int64_t not_finished,
            BenchmarkSummary& b) {
  const Totals t = totals(xs);
  // LoadGen's clock starts at the test's start (simulated time 0), not at the first sample.
  const double span_s = seconds(t.last_release_ns);
  const char* span = "(last completion - test start at simulated time 0)";
  b.figures.push_back({"duration_s", xs.empty() ? std::nullopt : std::optional(span_s),
                       "last completion - test start (simulated time 0)"});
  b.figures.push_back(
      {"samples_per_s", per_s(t.requests, span_s), fmt::format("completed samples / {}", span)});
  b.figures.push_back({"tokens_per_s", per_s(t.output, span_s),
                       fmt::format("output tokens of completed samples / {}", span)});
  if (spec.kind != BenchmarkKind::MlperfServer) return;
  const Latencies l = latencies(xs);
  const double p = spec.percentile;
  const std::string rule = fmt::format("sorted[floor(n x {:g}/100)], LoadGen's index", p);
  const std::optional<double> ttft = pct(l.ttft_s, p, &percentile_floor_index);
  const std::optional<double> tpot = pct(l.tpot_s, p, &percentile_floor_index);
  b.figures.push_back(
      {fmt::format("ttft_p{:g}_s", p), ttft, fmt::format("first token - issue, {}", rule)});
  b.figures.push_back(
      {fmt::format("tpot_p{:g}_s", p), tpot,
       fmt::format("(completion - first token) / (output tokens - 1) over samples of more than "
                   "one token, {}",
                   rule)});
  const double ttft_limit_s = *spec.ttft_limit_ms / 1e3, tpot_limit_s = *spec.tpot_limit_ms / 1e3;
  b.figures.push_back({"ttft_limit_s", ttft_limit_s, "benchmark.ttft_limit_ms / 1000"});
  b.figures.push_back({"tpot_limit_s", tpot_limit_s, "benchmark.tpot_limit_ms / 1000"});
  std::vector<std::string> why;
  if (xs.empty()) why.emplace_back("no sample completed");
  if (not_finished > 0) why.push_back(fmt::format("{} samples not completed", not_finished));
  if (ttft && *ttft > ttft_limit_s)
    why.push_back(fmt::format("TTFT p{:g} {:.4g} s > limit {:.4g} s", p, *ttft, ttft_limit_s));
  if (tpot && *tpot > tpot_limit_s)
    why.push_back(fmt::format("TPOT p{:g} {:.4g} s > limit {:.4g} s", p, *tpot, tpot_limit_s));
  b.valid = why.empty();
  b.validity = why.empty() ? "every sample completed and both percentiles are within their limits"
                           : fmt::format("{}", fmt::join(why, "; "));
}

void trtllm_bench(const std::vector<BenchmarkSample>& xs, BenchmarkSummary& b) {
  const Totals t = totals(xs);
  const double span_s = seconds(t.last_release_ns - t.first_arrival_ns);
  const char* per = "/ total latency";
  b.figures.push_back({"total_latency_s", xs.empty() ? std::nullopt : std::optional(span_s),
                       "last request end - first request start"});
  b.figures.push_back(
      {"request_throughput_per_s", per_s(t.requests, span_s), fmt::format("requests {}", per)});
  b.figures.push_back({"output_throughput_tokens_per_s", per_s(t.output, span_s),
                       fmt::format("output tokens {}", per)});
  b.figures.push_back({"total_token_throughput_per_s", per_s(t.prompt + t.output, span_s),
                       fmt::format("(input + output tokens) {}", per)});
  const Latencies l = latencies(xs);
  b.figures.push_back({"per_user_output_tokens_per_s_mean", mean(l.gen_tokens_per_s),
                       "mean over requests of (output tokens - 1) / (end - first token)"});
  const char* idx = "sorted[floor(n x p/100)]";
  b.figures.push_back({"ttft_mean_s", mean(l.ttft_s), "mean of first token - start"});
  b.figures.push_back({"ttft_p50_s", pct(l.ttft_s, 50, &percentile_floor_index), idx});
  b.figures.push_back({"ttft_p99_s", pct(l.ttft_s, 99, &percentile_floor_index), idx});
  b.figures.push_back({"request_latency_mean_s", mean(l.e2e_s), "mean of end - start"});
  b.figures.push_back({"request_latency_p50_s", pct(l.e2e_s, 50, &percentile_floor_index), idx});
  b.figures.push_back({"request_latency_p99_s", pct(l.e2e_s, 99, &percentile_floor_index), idx});
}

void vllm_bench(const std::vector<BenchmarkSample>& xs, BenchmarkSummary& b) {
  const Totals t = totals(xs);
  const double span_s = seconds(t.last_release_ns - t.first_arrival_ns);
  const char* per = "/ benchmark duration";
  b.figures.push_back({"duration_s", xs.empty() ? std::nullopt : std::optional(span_s),
                       "last reply - first request sent"});
  b.figures.push_back({"request_throughput_per_s", per_s(t.requests, span_s),
                       fmt::format("completed requests {}", per)});
  b.figures.push_back({"output_throughput_tokens_per_s", per_s(t.output, span_s),
                       fmt::format("output tokens {}", per)});
  b.figures.push_back({"total_token_throughput_per_s", per_s(t.prompt + t.output, span_s),
                       fmt::format("(input + output tokens) {}", per)});
  const Latencies l = latencies(xs);
  const char* lin = "numpy linear percentile";
  const auto add = [&](const char* name, const std::vector<double>& v, const char* what) {
    b.figures.push_back({fmt::format("mean_{}_s", name), mean(v), fmt::format("mean of {}", what)});
    b.figures.push_back({fmt::format("median_{}_s", name), pct(v, 50, &percentile_linear),
                         fmt::format("{} of {}, p50", lin, what)});
    b.figures.push_back({fmt::format("p99_{}_s", name), pct(v, 99, &percentile_linear),
                         fmt::format("{} of {}, p99", lin, what)});
  };
  add("ttft", l.ttft_s, "first token - sent");
  add("tpot", l.tpot_s, "(latency - TTFT) / (output tokens - 1), replies of more than one token");
  add("e2el", l.e2e_s, "last token - sent");
}

}  // namespace

double percentile_linear(const std::vector<double>& sorted, double p) {
  const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double percentile_floor_index(const std::vector<double>& sorted, double p) {
  const auto k = static_cast<size_t>(std::floor(static_cast<double>(sorted.size()) * p / 100.0));
  return sorted[std::min(k, sorted.size() - 1)];
}

BenchmarkSummary benchmark_summary(const BenchmarkSpec& spec,
                                   const std::vector<BenchmarkSample>& finished,
                                   int64_t not_finished) {
  BenchmarkSummary b;
  b.kind = spec.kind;
  switch (spec.kind) {
    case BenchmarkKind::MlperfOffline:
    case BenchmarkKind::MlperfServer:
      mlperf(spec, finished, not_finished, b);
      break;
    case BenchmarkKind::TrtllmBench:
      trtllm_bench(finished, b);
      break;
    case BenchmarkKind::VllmBench:
      vllm_bench(finished, b);
      break;
  }
  return b;
}

void BenchmarkRecorder::record(const Request& r) {
  if (r.state != RequestState::Released) {
    ++m_not_finished;
    return;
  }
  m_samples.push_back({r.spec.arrival.count_ns(), r.first_token.count_ns(), r.release.count_ns(),
                       r.spec.prompt_tokens, r.spec.output_tokens});
}

nlohmann::ordered_json benchmark_json(const BenchmarkSummary& b) {
  nlohmann::ordered_json j;
  j["kind"] = benchmark_kind_name(b.kind);
  nlohmann::ordered_json figures = nlohmann::ordered_json::object();
  for (const BenchmarkFigure& f : b.figures)
    figures[f.key] = {{"value", f.value ? nlohmann::ordered_json(*f.value) : nullptr},
                      {"definition", f.definition}};
  j["figures"] = figures;
  if (b.valid) {
    j["valid"] = *b.valid;
    j["validity"] = b.validity;
  }
  return j;
}

std::string benchmark_table(const BenchmarkSummary& b) {
  std::string out = fmt::format("benchmark  {} definitions (summary.json: benchmark)\n",
                                benchmark_kind_name(b.kind));
  for (const BenchmarkFigure& f : b.figures)
    out += f.value ? fmt::format("  {:<36} {:.6g}\n", f.key, *f.value)
                   : fmt::format("  {:<36} -\n", f.key);
  if (b.valid)
    out += fmt::format("  {:<36} {} ({})\n", "result", *b.valid ? "VALID" : "INVALID", b.validity);
  return out;
}

}  // namespace servesim
