#include "metrics/exports.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "core/errors.h"

namespace servesim {

LatencyStats latency_stats(std::vector<double> values, const std::vector<double>& percentiles) {
  LatencyStats s;
  s.count = static_cast<int64_t>(values.size());
  std::sort(values.begin(), values.end());
  for (double p : percentiles) s.percentiles.emplace_back(p, percentile(values, p));
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  double squares = 0;  // around the mean, as numpy's two-pass std
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(squares / static_cast<double>(values.size()));
  s.median = percentile(values, 50);
  s.max = values.back();
  return s;
}

std::vector<double> parse_percentiles(const std::string& list, const std::string& what) {
  std::vector<double> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    double p = -1;
    try {
      p = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || !(p >= 0 && p <= 100))
      throw InputError(fmt::format(
          "{} {}: {} is not a percentile (a comma-separated list of numbers in [0, 100], as "
          "50,90,99,99.9)",
          what, quote_input(list), quote_input(item)));
    out.push_back(p);
  }
  if (out.empty())
    throw InputError(
        fmt::format("{}: an empty list (give numbers in [0, 100], as 50,90,99)", what));
  return out;
}

std::string percentile_word(double p) {
  // Python's str(int(p)) when p is whole, else str(p): both the shortest round-trip form.
  if (p == std::floor(p)) return fmt::format("{}", static_cast<int64_t>(p));
  return fmt::format("{}", p);
}

void TokenTimes::on_step(const StepRecord& s) {
  if (s.replica >= m_step_durations_ns.size()) m_step_durations_ns.resize(s.replica + 1);
  m_step_ends.add(s.replica, (s.start + s.duration).count_ns(), s.kv_capacity_tokens);
  m_step_durations_ns[s.replica].push_back(s.duration.count_ns());
}

int64_t TokenTimes::step_duration_ns(uint32_t rep, int64_t end_ns) const {
  const GrowArray<int64_t>& ends = m_step_ends.of(rep);
  const auto it = std::lower_bound(ends.begin(), ends.end(), end_ns);
  if (it == ends.end() || *it != end_ns) return 0;
  return m_step_durations_ns[rep][static_cast<size_t>(it - ends.begin())];
}

void TokenTimes::record(const Request& r) {
  RequestTimes t;
  t.id = r.spec.id;
  t.prompt_tokens = r.spec.prompt_tokens;
  t.arrival_s = r.spec.arrival.seconds();
  t.preemptions = r.preemptions;
  t.finished = r.state == RequestState::Released;
  t.itl_begin = t.itl_end = m_itls_s.size();
  if (!t.finished) {
    t.error = r.reject_reason.empty() ? "unfinished" : r.reject_reason;
    m_sorted = m_sorted && (m_requests.empty() || m_requests.back().id < t.id);
    m_requests.push_back(std::move(t));
    return;
  }
  const int32_t n = r.spec.output_tokens;
  t.output_tokens = n;
  t.ttft_s = (r.first_token - r.spec.arrival).seconds();
  t.e2e_s = (r.release - r.spec.arrival).seconds();
  if (n > 1) t.tpot_s = (r.last_token - r.first_token).seconds() / (n - 1);
  t.queue_s = (r.first_admitted - r.spec.arrival).seconds();
  // The step that produced the first token ran where the request was first admitted.
  const uint32_t first_rep = r.prefill_replica != k_no_replica ? r.prefill_replica : r.replica;
  int64_t execution_ns = step_duration_ns(first_rep, r.first_token.count_ns());
  const GapsFrom from = request_gaps(m_step_ends, r, [&](double gap_s, std::ptrdiff_t step) {
    m_itls_s.push_back(gap_s);
    if (step >= 0) execution_ns += m_step_durations_ns[r.replica][static_cast<size_t>(step)];
  });
  m_stall_placed += from == GapsFrom::stall_placed || from == GapsFrom::mean;
  t.execution_s = static_cast<double>(execution_ns) * 1e-9;
  t.scheduled_to_first_token_s = (r.first_token - r.first_admitted).seconds();
  t.scheduled_to_finish_s = (r.finish - r.first_admitted).seconds();
  t.first_token_to_finish_s = (r.finish - r.first_token).seconds();
  t.preemption_s =
      static_cast<double>((r.finish - r.first_admitted).count_ns() - execution_ns) * 1e-9;
  t.itl_end = m_itls_s.size();
  m_sorted = m_sorted && (m_requests.empty() || m_requests.back().id < t.id);
  m_requests.push_back(std::move(t));
}

const std::vector<RequestTimes>& TokenTimes::requests() {
  if (!m_sorted) {
    std::sort(m_requests.begin(), m_requests.end(),
              [](const RequestTimes& a, const RequestTimes& b) { return a.id < b.id; });
    m_sorted = true;
  }
  return m_requests;
}

LatencyReport latency_report(TokenTimes& t, const std::vector<double>& percentiles) {
  std::vector<double> ttft, tpot, e2e;
  for (const RequestTimes& r : t.requests()) {
    if (!r.finished) continue;
    ttft.push_back(r.ttft_s);
    e2e.push_back(r.e2e_s);
    if (r.output_tokens > 1) tpot.push_back(r.tpot_s);
  }
  LatencyReport out;
  out.ttft = latency_stats(std::move(ttft), percentiles);
  out.tpot = latency_stats(std::move(tpot), percentiles);
  out.itl = latency_stats(t.itls_s(), percentiles);
  out.e2e = latency_stats(std::move(e2e), percentiles);
  return out;
}

std::string latency_table(const LatencyReport& r) {
  std::string out =
      fmt::format("{:<10}{:>8}{:>12}{:>12}{:>12}", "metric", "count", "mean", "median", "std");
  for (const auto& [p, v] : r.ttft.percentiles)
    out += fmt::format("{:>12}", "p" + percentile_word(p));
  out += "\n";
  const auto row = [&](const char* name, const LatencyStats& s, double scale, const char* unit) {
    out += fmt::format("{:<10}{:>8}{:>12.3f}{:>12.3f}{:>12.3f}", name, s.count, s.mean * scale,
                       s.median * scale, s.std * scale);
    for (const auto& [p, v] : s.percentiles) out += fmt::format("{:>12.3f}", v * scale);
    out += fmt::format("  {}\n", unit);
  };
  row("TTFT", r.ttft, 1e3, "ms");
  row("TPOT", r.tpot, 1e3, "ms");
  row("ITL", r.itl, 1e3, "ms");
  row("E2E", r.e2e, 1.0, "s");
  return out;
}

namespace {

/// vLLM's peak output tokens per second and the concurrent requests in that second: one-second
/// buckets from the first request's start, over successful requests.
std::pair<double, int64_t> peaks(const std::vector<RequestTimes>& rs,
                                 const std::vector<double>& itls) {
  double start = 0, end = 0;
  bool any = false;
  for (const RequestTimes& r : rs) {
    if (!r.finished) continue;
    start = any ? std::min(start, r.arrival_s) : r.arrival_s;
    end = any ? std::max(end, r.arrival_s + r.e2e_s) : r.arrival_s + r.e2e_s;
    any = true;
  }
  if (!any) return {0.0, 0};
  const auto seconds = static_cast<size_t>(std::ceil(end - start)) + 1;
  std::vector<double> tokens(seconds, 0);
  std::vector<int64_t> concurrent(seconds, 0);
  const auto bucket = [&](double t) { return static_cast<int64_t>(t - start); };
  for (const RequestTimes& r : rs) {
    if (!r.finished) continue;
    double at = r.arrival_s + r.ttft_s;
    for (size_t i = r.itl_begin;; ++i) {
      const int64_t b = bucket(at);
      if (b >= 0 && static_cast<size_t>(b) < seconds) tokens[static_cast<size_t>(b)] += 1;
      if (i == r.itl_end) break;
      at += itls[i];
    }
    const int64_t last = std::min<int64_t>(bucket(r.arrival_s + r.e2e_s), seconds - 1);
    for (int64_t b = bucket(r.arrival_s); b <= last; ++b) ++concurrent[static_cast<size_t>(b)];
  }
  return {*std::max_element(tokens.begin(), tokens.end()),
          *std::max_element(concurrent.begin(), concurrent.end())};
}

void put_stats(nlohmann::ordered_json& j, const char* name, const LatencyStats& s) {
  j[fmt::format("mean_{}_ms", name)] = s.mean * 1e3;
  j[fmt::format("median_{}_ms", name)] = s.median * 1e3;
  j[fmt::format("std_{}_ms", name)] = s.std * 1e3;
  for (const auto& [p, v] : s.percentiles)
    j[fmt::format("p{}_{}_ms", percentile_word(p), name)] = v * 1e3;
}

}  // namespace

void write_vllm_bench_json(std::ostream& out, const Summary& s, TokenTimes& t,
                           const std::vector<double>& percentiles) {
  const std::vector<RequestTimes>& rs = t.requests();
  const LatencyReport lat = latency_report(t, percentiles);
  const std::vector<double>& itls = t.itls_s();
  nlohmann::ordered_json j;
  // The run's setup, as vLLM's main writes it before the results.
  // vLLM's "date" (the wall clock) is left out: the same run writes the same file.
  j["endpoint_type"] = "servesim";
  j["backend"] = "servesim";
  j["label"] = "servesim";
  j["model_id"] = "servesim";
  j["tokenizer_id"] = "servesim";
  j["num_prompts"] = s.requests;
  // The workload's offered rate: requests over the span of their arrivals ("inf" when they
  // all arrive at once, as vLLM writes an unpaced run). No burstiness: a trace has none.
  double first = 0, last = 0;
  for (size_t i = 0; i < rs.size(); ++i) {
    first = i ? std::min(first, rs[i].arrival_s) : rs[i].arrival_s;
    last = i ? std::max(last, rs[i].arrival_s) : rs[i].arrival_s;
  }
  if (last > first)
    j["request_rate"] = static_cast<double>(rs.size()) / (last - first);
  else
    j["request_rate"] = "inf";
  j["burstiness"] = nullptr;
  j["max_concurrency"] = nullptr;
  const double d = s.duration_s;
  const auto per_s = [d](double x) { return d > 0 ? x / d : 0.0; };
  j["duration"] = d;
  j["completed"] = s.finished;
  j["failed"] = s.requests - s.finished;
  j["total_input_tokens"] = s.prompt_tokens;
  j["total_output_tokens"] = s.output_tokens;
  j["request_throughput"] = per_s(static_cast<double>(s.finished));
  j["request_goodput"] = s.slo ? nlohmann::ordered_json(s.slo->goodput_per_s) : nullptr;
  j["output_throughput"] = per_s(static_cast<double>(s.output_tokens));
  j["total_token_throughput"] = per_s(static_cast<double>(s.prompt_tokens + s.output_tokens));
  auto& input_lens = j["input_lens"] = nlohmann::ordered_json::array();
  auto& output_lens = j["output_lens"] = nlohmann::ordered_json::array();
  auto& ttfts = j["ttfts"] = nlohmann::ordered_json::array();
  auto& itl_lists = j["itls"] = nlohmann::ordered_json::array();
  auto& texts = j["generated_texts"] = nlohmann::ordered_json::array();
  auto& errors = j["errors"] = nlohmann::ordered_json::array();
  for (const RequestTimes& r : rs) {
    input_lens.push_back(r.prompt_tokens);
    output_lens.push_back(r.output_tokens);
    ttfts.push_back(r.ttft_s);  // 0.0 for a failed request, as vLLM's default
    nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
    for (size_t i = r.itl_begin; i < r.itl_end; ++i) gaps.push_back(itls[i]);
    itl_lists.push_back(std::move(gaps));
    texts.push_back("");
    errors.push_back(r.error);
  }
  const auto [peak_tokens, peak_concurrent] = peaks(rs, itls);
  j["max_output_tokens_per_s"] = peak_tokens;
  j["max_concurrent_requests"] = peak_concurrent;
  put_stats(j, "ttft", lat.ttft);
  put_stats(j, "tpot", lat.tpot);
  put_stats(j, "itl", lat.itl);
  put_stats(j, "e2el", lat.e2e);
  out << j.dump() << "\n";
}

void write_vidur_request_metrics(std::ostream& out, TokenTimes& t) {
  out << "Request Id,request_e2e_time,request_e2e_time_normalized,request_execution_time,"
         "request_execution_time_normalized,request_model_execution_time,"
         "request_model_execution_time_normalized,request_preemption_time,"
         "request_scheduling_delay,request_execution_plus_preemption_time,"
         "request_execution_plus_preemption_time_normalized,prefill_e2e_time,"
         "prefill_time_execution_plus_preemption,"
         "prefill_time_execution_plus_preemption_normalized,"
         "decode_time_execution_plus_preemption_normalized,request_inter_arrival_delay,"
         "request_num_tokens,request_num_prefill_tokens,request_num_decode_tokens,"
         "request_pd_ratio,request_num_restarts\n";
  const std::vector<RequestTimes>& rs = t.requests();
  std::string row;
  for (size_t i = 0; i < rs.size(); ++i) {
    const RequestTimes& r = rs[i];
    const double decode = r.output_tokens, prefill = r.prompt_tokens;
    row = fmt::format("{},", r.id);
    if (r.finished) {
      const double busy = r.scheduled_to_finish_s;  // executing or waiting once scheduled
      fmt::format_to(std::back_inserter(row), "{},{},{},{},{},{},{},{},{},{},{},{},{},{},", r.e2e_s,
                     r.e2e_s / decode, r.execution_s, r.execution_s / decode, r.execution_s,
                     r.execution_s / decode, r.preemption_s, r.queue_s, busy, busy / decode,
                     r.ttft_s, r.scheduled_to_first_token_s, r.scheduled_to_first_token_s / prefill,
                     r.first_token_to_finish_s / decode);
    } else {
      row += ",,,,,,,,,,,,,,";
    }
    if (i > 0) fmt::format_to(std::back_inserter(row), "{}", r.arrival_s - rs[i - 1].arrival_s);
    fmt::format_to(std::back_inserter(row), ",{},{},{},{},{}\n", r.prompt_tokens + r.output_tokens,
                   r.prompt_tokens, r.output_tokens,
                   r.output_tokens ? fmt::format("{}", prefill / decode) : std::string(),
                   r.preemptions);
    out << row;
  }
}

namespace {

// GenAI-Perf's fixed percentiles (genai_perf/metrics/statistics.py).
constexpr double k_genai_perf_percentiles[] = {1, 5, 10, 25, 50, 75, 90, 95, 99};

// One of GenAI-Perf's per-request metrics: unit, avg, p1..p99 (and any further percentile
// asked), min, max, std, in its key order; `scale` turns seconds into ms.
nlohmann::ordered_json genai_perf_stats(const char* unit, std::vector<double> values,
                                        const std::vector<double>& extra, double scale) {
  std::vector<double> ps(std::begin(k_genai_perf_percentiles), std::end(k_genai_perf_percentiles));
  for (double p : extra)
    if (std::find(ps.begin(), ps.end(), p) == ps.end()) ps.push_back(p);
  const double min = values.empty() ? 0 : *std::min_element(values.begin(), values.end());
  const LatencyStats s = latency_stats(std::move(values), ps);
  nlohmann::ordered_json j;
  j["unit"] = unit;
  j["avg"] = s.mean * scale;
  for (const auto& [p, v] : s.percentiles) j["p" + percentile_word(p)] = v * scale;
  j["min"] = min * scale;
  j["max"] = s.max * scale;
  j["std"] = s.std * scale;
  return j;
}

nlohmann::ordered_json genai_perf_rate(const char* unit, double per_s) {
  nlohmann::ordered_json j;
  j["unit"] = unit;
  j["avg"] = per_s;
  return j;
}

}  // namespace

void write_genai_perf_json(std::ostream& out, const Summary& s, TokenTimes& t,
                           const std::vector<double>& percentiles) {
  std::vector<double> ttft, itl, e2e, per_request_tput, osl, isl;
  for (const RequestTimes& r : t.requests()) {
    if (!r.finished) continue;  // GenAI-Perf's records are its successful responses
    ttft.push_back(r.ttft_s);
    e2e.push_back(r.e2e_s);
    // GenAI-Perf's inter_token_latency is per request: (latency - TTFT) / (tokens - 1), its
    // TPOT; servesim's tpot_s, from the first token to the last.
    if (r.output_tokens > 1) itl.push_back(r.tpot_s);
    if (r.e2e_s > 0) per_request_tput.push_back(r.output_tokens / r.e2e_s);
    osl.push_back(r.output_tokens);
    isl.push_back(r.prompt_tokens);
  }
  const double d = s.duration_s;
  const auto per_s = [d](double x) { return d > 0 ? x / d : 0.0; };
  nlohmann::ordered_json j;
  // Its key order (LLMMetrics: request metrics, then system metrics); a metric without data
  // is left out, as GenAI-Perf skips it.
  const auto put = [&](const char* key, const char* unit, std::vector<double> v, double scale) {
    if (!v.empty()) j[key] = genai_perf_stats(unit, std::move(v), percentiles, scale);
  };
  put("time_to_first_token", "ms", std::move(ttft), 1e3);
  put("inter_token_latency", "ms", std::move(itl), 1e3);
  put("request_latency", "ms", std::move(e2e), 1e3);
  put("output_token_throughput_per_request", "tokens/sec", std::move(per_request_tput), 1);
  put("output_sequence_length", "tokens", std::move(osl), 1);
  put("input_sequence_length", "tokens", std::move(isl), 1);
  j["output_token_throughput"] =
      genai_perf_rate("tokens/sec", per_s(static_cast<double>(s.output_tokens)));
  if (s.slo) j["request_goodput"] = genai_perf_rate("requests/sec", s.slo->goodput_per_s);
  j["request_throughput"] = genai_perf_rate("requests/sec", per_s(static_cast<double>(s.finished)));
  j["request_count"] = genai_perf_rate("count", static_cast<double>(s.finished));
  // GenAI-Perf's command line; servesim's run has none of its client settings.
  j["input_config"] = {{"model", {"servesim"}},
                       {"endpoint_type", "servesim"},
                       {"service_kind", "servesim"},
                       {"profile_export_file", "profile_export.json"}};
  out << j.dump(2) << "\n";
}

const std::vector<ExportFormat>& export_formats() {
  static const std::vector<ExportFormat> k{
      {"genai-perf", "profile_export_genai_perf.json", "GenAI-Perf's profile export JSON"},
      {"vidur", "request_metrics.csv", "Vidur's per-request metrics"},
      {"vllm-bench", "vllm-bench.json", "vllm bench serve's result JSON"},
  };
  return k;
}

const ExportFormat& export_format(const std::string& name, const std::string& option) {
  std::string valid;
  for (const ExportFormat& f : export_formats()) {
    if (name == f.name) return f;
    valid += fmt::format("{}{}", valid.empty() ? "" : ", ", f.name);
  }
  throw InputError(
      fmt::format("{} {}: unknown format (valid: {})", option, quote_input(name), valid));
}

void write_export(const ExportFormat& f, std::ostream& out, const Summary& s, TokenTimes& t,
                  const std::vector<double>& percentiles) {
  if (std::string_view(f.name) == "vidur")
    write_vidur_request_metrics(out, t);
  else if (std::string_view(f.name) == "genai-perf")
    write_genai_perf_json(out, s, t, percentiles);
  else  // vllm-bench; vLLM's --metric-percentiles defaults to 99
    write_vllm_bench_json(out, s, t, percentiles.empty() ? std::vector<double>{99} : percentiles);
}

}  // namespace servesim
