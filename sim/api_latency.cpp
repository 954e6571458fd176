#include "sim/api_latency.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace servesim {
namespace {

class ApiLatencySource final : public WorkloadSource {
 public:
  ApiLatencySource(std::unique_ptr<WorkloadSource> inner, const ApiLatency& api)
      : m_inner(std::move(inner)),
        m_api(api),
        m_free(static_cast<size_t>(std::max(api.workers, int32_t{0})), Time::ns(0)) {}

  bool next(RequestSpec& out) override {
    // A held request may leave once no later one from the source can reach the engine before
    // it: every later one starts at or after the next one's send time and the first free
    // worker's time, and takes at least the fixed part. (With one worker the engine arrivals
    // come in send order, so nothing is held for long.)
    while (true) {
      if (!m_peeked && !m_inner_done) {
        m_peeked = m_inner->next(m_peek);
        m_inner_done = !m_peeked;
      }
      if (!m_held.empty() && (!m_peeked || !(earliest_start(m_peek) + m_api.request_overhead <
                                             m_held.front().arrival)))
        break;
      if (!m_peeked) return false;
      shift(m_peek);
      m_held.push_back(std::move(m_peek));
      std::push_heap(m_held.begin(), m_held.end(), later);
      m_peeked = false;
    }
    std::pop_heap(m_held.begin(), m_held.end(), later);
    out = std::move(m_held.back());
    m_held.pop_back();
    return true;
  }

  [[nodiscard]] size_t size_hint() const override { return m_inner->size_hint(); }
  [[nodiscard]] std::vector<std::pair<std::string, int64_t>> counters() const override {
    return m_inner->counters();
  }
  [[nodiscard]] bool reactive() const override { return m_inner->reactive(); }
  [[nodiscard]] size_t waiting() const override { return m_inner->waiting(); }
  [[nodiscard]] const std::vector<std::string>& class_names() const override {
    return m_inner->class_names();
  }
  [[nodiscard]] const std::vector<std::string>& tenant_names() const override {
    return m_inner->tenant_names();
  }

  void on_depart(const Request& r, Time now, std::vector<RequestSpec>& ready) override {
    const size_t from = ready.size();
    m_inner->on_depart(r, now + m_api.response_overhead, ready);  // when the client has it
    for (size_t i = from; i < ready.size(); ++i) shift(ready[i]);
  }

 private:
  static bool later(const RequestSpec& a, const RequestSpec& b) {
    return a.arrival != b.arrival ? a.arrival > b.arrival : a.id > b.id;
  }

  [[nodiscard]] Time sent(Time t) const {
    const int64_t x = m_api.coalesce.count_ns();
    if (x == 0) return t;
    const int64_t c = t.count_ns();
    return Time::ns((c + x - 1) / x * x);
  }

  /// The earliest a request not yet shifted can start on a worker.
  [[nodiscard]] Time earliest_start(const RequestSpec& s) const {
    const Time t = sent(s.arrival);
    return m_free.empty() ? t : std::max(t, m_free.front());  // front: the first free worker
  }

  // Called once per request, in the order the source produces them: the workers serve them
  // first come first served in that order.
  void shift(RequestSpec& s) {
    const Time work = m_api.request_overhead +
                      Time::ns(static_cast<int64_t>(std::llround(
                          m_api.tokenize_ns_per_token * static_cast<double>(s.prompt_tokens))));
    Time start = sent(s.arrival);
    if (!m_free.empty()) {  // the worker free first takes it (a min-heap of free times)
      std::pop_heap(m_free.begin(), m_free.end(), std::greater<>());
      start = std::max(start, m_free.back());
      m_free.back() = start + work;
      std::push_heap(m_free.begin(), m_free.end(), std::greater<>());
    }
    const Time engine = start + work;
    s.api_in = engine - s.arrival;
    s.api_out = m_api.response_overhead;
    s.arrival = engine;
  }

  std::unique_ptr<WorkloadSource> m_inner;
  ApiLatency m_api;
  std::vector<RequestSpec> m_held;  // a min-heap by (engine arrival, id)
  std::vector<Time> m_free;         // each worker's next free time: a min-heap, fixed size
  RequestSpec m_peek;
  bool m_peeked = false;
  bool m_inner_done = false;
};

/// An engine's measured front end (api.engine): each value's source is in docs/calibration.md
/// (#time-outside-the-engine-issue-31), printed by scripts/api_time_constants.py.
struct ApiPreset {
  const char* name;
  double request_overhead_ms, tokenize_ms_per_1k_tokens, response_overhead_ms;
  int64_t workers;
};

constexpr ApiPreset k_none{"none", 0.0, 0.0, 0.0, 0};
// vLLM 0.15 behind an HTTP streaming client: the tokenization and worker of vLLM 0.19's front
// end (the same V1 API server; no 0.15 server-side times are measured), and the client-side
// time outside the engine the inference-perf runs on H100 measure: the median, over the
// CodeLlama-34B stages that do not queue, of the measured mean TTFT less servesim's with this
// term at 0 (printed by scripts/replay_inference_perf.py --part runs). It stands for the fixed
// per-request time of both directions (HTTP, the first chunk's detokenizing and streaming),
// which those runs cannot split.
// vLLM 0.19: the lower envelope of the measured runs' arrival-to-queued times (RTX PRO 6000,
// 900 requests); one worker (model_config.renderer_num_workers 1, one API server process); no
// client-side token times are measured, so no streaming time.
constexpr ApiPreset k_presets[] = {{"vllm-0.15", 0.0, 0.85, 5.0, 1},
                                   {"vllm-0.19", 0.0, 0.85, 0.0, 1}};

}  // namespace

const std::vector<std::string>& api_engine_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{k_none.name};
    for (const ApiPreset& p : k_presets) n.emplace_back(p.name);
    return n;
  }();
  return names;
}

std::optional<ApiLatency> read_api_latency(const Cfg& root) {
  const std::optional<Cfg> c = root.optional_child("api");
  if (!c) return std::nullopt;
  const std::string engine = c->get_choice("engine", k_none.name, api_engine_names());
  ApiPreset p = k_none;
  for (const ApiPreset& x : k_presets)
    if (engine == x.name) p = x;
  constexpr RealRange k_ms{0.0, 1e9, false};
  ApiLatency a;
  a.request_overhead =
      Time::from_ms(c->get_real("request_overhead_ms", p.request_overhead_ms, k_ms));
  a.response_overhead =
      Time::from_ms(c->get_real("response_overhead_ms", p.response_overhead_ms, k_ms));
  a.tokenize_ns_per_token =
      c->get_real("tokenize_ms_per_1k_tokens", p.tokenize_ms_per_1k_tokens, k_ms) * 1e6 / 1000.0;
  a.coalesce = Time::from_ms(c->get_real("coalesce_ms", 0.0, k_ms));
  a.workers = static_cast<int32_t>(c->get_int("workers", p.workers, IntRange{0, 4096}));
  return a;
}

std::unique_ptr<WorkloadSource> with_api_latency(std::unique_ptr<WorkloadSource> inner,
                                                 const ApiLatency& api) {
  return std::make_unique<ApiLatencySource>(std::move(inner), api);
}

}  // namespace servesim
