#include "report/step_series.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/csv_columns.h"
#include "core/errors.h"
#include "report/numbers.h"

namespace servesim {

namespace {

StepSeries::Bucket merged(const StepSeries::Bucket& a, const StepSeries::Bucket& b) {
  StepSeries::Bucket m;
  m.steps = a.steps + b.steps;
  m.running_sum = a.running_sum + b.running_sum;
  m.waiting_sum = a.waiting_sum + b.waiting_sum;
  m.batch_sum = a.batch_sum + b.batch_sum;
  m.tokens_sum = a.tokens_sum + b.tokens_sum;
  m.running_max = std::max(a.running_max, b.running_max);
  m.waiting_max = std::max(a.waiting_max, b.waiting_max);
  m.batch_max = std::max(a.batch_max, b.batch_max);
  m.tokens_max = std::max(a.tokens_max, b.tokens_max);
  m.kv_use_max = std::max(a.kv_use_max, b.kv_use_max);
  m.preemptions = a.preemptions + b.preemptions;
  return m;
}

}  // namespace

StepSeries::StepSeries(size_t max_buckets, size_t max_points)
    : m_max_buckets(std::max<size_t>(max_buckets, 2)),
      m_max_points(std::max<size_t>(max_points, 2)) {}

void StepSeries::halve_buckets() {
  std::vector<Bucket> half((m_buckets.size() + 1) / 2);
  for (size_t i = 0; i < m_buckets.size(); ++i) half[i / 2] = merged(half[i / 2], m_buckets[i]);
  m_buckets = std::move(half);
  m_width_ns *= 2;
}

void StepSeries::add(const StepRow& r) {
  ++m_steps;
  const int64_t start = std::max<int64_t>(r.start_ns, 0);
  while (static_cast<size_t>(start / m_width_ns) >= m_max_buckets) halve_buckets();
  const auto index = static_cast<size_t>(start / m_width_ns);
  if (index >= m_buckets.size()) m_buckets.resize(index + 1);
  Bucket& b = m_buckets[index];
  ++b.steps;
  b.running_sum += static_cast<double>(r.running);
  b.waiting_sum += static_cast<double>(r.waiting);
  b.batch_sum += static_cast<double>(r.sequences);
  b.tokens_sum += static_cast<double>(r.tokens);
  b.running_max = std::max(b.running_max, r.running);
  b.waiting_max = std::max(b.waiting_max, r.waiting);
  b.batch_max = std::max(b.batch_max, r.sequences);
  b.tokens_max = std::max(b.tokens_max, r.tokens);
  if (r.kv_capacity_tokens > 0)
    b.kv_use_max = std::max(b.kv_use_max, static_cast<double>(r.kv_used_tokens) /
                                              static_cast<double>(r.kv_capacity_tokens));
  if (r.replica >= m_last_preemptions.size()) m_last_preemptions.resize(r.replica + 1, 0);
  b.preemptions += std::max<int64_t>(r.preemptions - m_last_preemptions[r.replica], 0);
  m_last_preemptions[r.replica] = std::max(m_last_preemptions[r.replica], r.preemptions);

  if (r.bound < 0 || !(r.bytes > 0) || !(r.flops > 0) || r.duration_ns <= 0) return;
  if (m_costed % m_stride == 0) {
    m_points.push_back(
        {r.flops / r.bytes, r.flops / (static_cast<double>(r.duration_ns) * 1e-9), r.bound});
    if (m_points.size() > m_max_points) {  // keep the multiples of twice the stride
      size_t kept = 0;
      for (size_t i = 0; i < m_points.size(); i += 2) m_points[kept++] = m_points[i];
      m_points.resize(kept);
      m_stride *= 2;
    }
  }
  ++m_costed;
  m_flops += r.flops;
  m_bytes += r.bytes;
  m_costed_busy_ns += r.duration_ns;
}

nlohmann::json StepSeries::series_json() const {
  using nlohmann::json;
  json t = json::array(), run_mean = json::array(), run_max = json::array(),
       wait_mean = json::array(), wait_max = json::array(), batch_mean = json::array(),
       batch_max = json::array(), tok_mean = json::array(), tok_max = json::array(),
       kv = json::array(), pre = json::array();
  for (size_t i = 0; i < m_buckets.size(); ++i) {
    const Bucket& b = m_buckets[i];
    t.push_back(round_sig(static_cast<double>(i) * static_cast<double>(m_width_ns) * 1e-9, 9));
    if (b.steps == 0) {
      for (json* a : {&run_mean, &run_max, &wait_mean, &wait_max, &batch_mean, &batch_max,
                      &tok_mean, &tok_max, &kv})
        a->push_back(nullptr);
      pre.push_back(0);
      continue;
    }
    const auto n = static_cast<double>(b.steps);
    run_mean.push_back(round_sig(b.running_sum / n, 4));
    run_max.push_back(b.running_max);
    wait_mean.push_back(round_sig(b.waiting_sum / n, 4));
    wait_max.push_back(b.waiting_max);
    batch_mean.push_back(round_sig(b.batch_sum / n, 4));
    batch_max.push_back(b.batch_max);
    tok_mean.push_back(round_sig(b.tokens_sum / n, 4));
    tok_max.push_back(b.tokens_max);
    kv.push_back(round_sig(b.kv_use_max, 4));
    pre.push_back(b.preemptions);
  }
  return {{"bucket_s", static_cast<double>(m_width_ns) * 1e-9},
          {"steps", m_steps},
          {"t_s", t},
          {"running_mean", run_mean},
          {"running_max", run_max},
          {"waiting_mean", wait_mean},
          {"waiting_max", wait_max},
          {"batch_mean", batch_mean},
          {"batch_max", batch_max},
          {"tokens_mean", tok_mean},
          {"tokens_max", tok_max},
          {"kv_use_max", kv},
          {"preemptions", pre}};
}

nlohmann::json StepSeries::roofline_json() const {
  if (m_costed == 0) return nullptr;
  nlohmann::json x = nlohmann::json::array(), y = nlohmann::json::array(),
                 bound = nlohmann::json::array();
  for (const Point& p : m_points) {
    x.push_back(round_sig(p.intensity, 4));
    y.push_back(round_sig(p.flops_per_s, 4));
    bound.push_back(p.bound);
  }
  return {{"intensity", x},
          {"flops_per_s", y},
          {"bound", bound},
          {"steps", m_costed},
          {"sampled", m_points.size()},
          {"flops", m_flops},
          {"bytes", m_bytes},
          {"busy_s", static_cast<double>(m_costed_busy_ns) * 1e-9}};
}

StepSeries StepSeries::read_file(const std::string& path) {
  enum {
    Replica,
    Start,
    Duration,
    Seqs,
    Prefill,
    Decode,
    KvUsed,
    KvCap,
    Waiting,
    Running,
    Preempt,
    Bound,
    Bytes,
    Flops
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", printable(path, 1024)));
  CsvColumns csv(
      in, path,
      {"replica", "start_s", "duration_s", "sequences", "prefill_tokens", "decode_tokens",
       "kv_used_tokens", "kv_capacity_tokens", "waiting", "running", "preemptions", "bound"},
      {"bytes", "flops"});
  constexpr int64_t k_big = int64_t{1} << 52;
  StepSeries s;
  StepRow r;
  while (csv.next_row()) {
    r.replica = static_cast<uint32_t>(csv.integer(Replica, 0, 1 << 20));
    r.start_ns = std::llround(csv.real(Start, 0, 1e9) * 1e9);
    r.duration_ns = std::llround(csv.real(Duration, 0, 1e9) * 1e9);
    r.sequences = csv.integer(Seqs, 0, k_big);
    r.tokens = csv.integer(Prefill, 0, k_big) + csv.integer(Decode, 0, k_big);
    r.kv_used_tokens = csv.integer(KvUsed, 0, k_big);
    r.kv_capacity_tokens = csv.integer(KvCap, 0, k_big);
    r.waiting = csv.integer(Waiting, 0, k_big);
    r.running = csv.integer(Running, 0, k_big);
    r.preemptions = csv.integer(Preempt, 0, k_big);
    const std::string_view bound = csv.field(Bound);
    r.bound = bound == "bandwidth" ? 0 : bound == "compute" ? 1 : -1;
    const bool costed = r.bound >= 0 && csv.has(Bytes) && !csv.field(Bytes).empty() &&
                        csv.has(Flops) && !csv.field(Flops).empty();
    r.bytes = costed ? csv.real(Bytes, 0, 1e30) : 0;
    r.flops = costed ? csv.real(Flops, 0, 1e30) : 0;
    if (!costed) r.bound = -1;
    s.add(r);
  }
  return s;
}

}  // namespace servesim
