#include "sim/api_latency.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace servesim {
namespace {

class ApiLatencySource final : public WorkloadSource {
 public:
  ApiLatencySource(std::unique_ptr<WorkloadSource> inner, const ApiLatency& api)
      : m_inner(std::move(inner)), m_api(api) {}

  bool next(RequestSpec& out) override {
    // A held request may leave once no later one from the source can reach the engine before
    // it: every later one is sent at or after the next one's send time, plus the fixed part.
    while (true) {
      if (!m_peeked && !m_inner_done) {
        m_peeked = m_inner->next(m_peek);
        m_inner_done = !m_peeked;
      }
      if (!m_held.empty() &&
          (!m_peeked || !(sent(m_peek.arrival) + m_api.request_overhead < m_held.front().arrival)))
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

  void shift(RequestSpec& s) const {
    const Time engine = sent(s.arrival) + m_api.request_overhead +
                        Time::ns(static_cast<int64_t>(std::llround(
                            m_api.tokenize_ns_per_token * static_cast<double>(s.prompt_tokens))));
    s.api_in = engine - s.arrival;
    s.api_out = m_api.response_overhead;
    s.arrival = engine;
  }

  std::unique_ptr<WorkloadSource> m_inner;
  ApiLatency m_api;
  std::vector<RequestSpec> m_held;  // a min-heap by (engine arrival, id)
  RequestSpec m_peek;
  bool m_peeked = false;
  bool m_inner_done = false;
};

}  // namespace

std::optional<ApiLatency> read_api_latency(const Cfg& root) {
  const std::optional<Cfg> c = root.optional_child("api");
  if (!c) return std::nullopt;
  constexpr RealRange k_ms{0.0, 1e9, false};
  ApiLatency a;
  a.request_overhead = Time::from_ms(c->get_real("request_overhead_ms", 0.0, k_ms));
  a.response_overhead = Time::from_ms(c->get_real("response_overhead_ms", 0.0, k_ms));
  a.tokenize_ns_per_token = c->get_real("tokenize_ms_per_1k_tokens", 0.0, k_ms) * 1e6 / 1000.0;
  a.coalesce = Time::from_ms(c->get_real("coalesce_ms", 0.0, k_ms));
  return a;
}

std::unique_ptr<WorkloadSource> with_api_latency(std::unique_ptr<WorkloadSource> inner,
                                                 const ApiLatency& api) {
  return std::make_unique<ApiLatencySource>(std::move(inner), api);
}

}  // namespace servesim
