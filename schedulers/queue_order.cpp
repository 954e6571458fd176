#include "schedulers/queue_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim {
namespace {

// SplitMix64's finaliser: a well-mixed 64-bit value from (seed, id) alone, so a request's
// prediction does not depend on the order requests arrive or on other draws.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A standard normal from two uniforms in (0, 1] drawn from the hash (Box-Muller's cosine
// branch), written out so that the same seed gives the same value with any library.
double normal_of(uint64_t seed, uint64_t id) {
  const uint64_t a = mix64(seed + 0x9e3779b97f4a7c15ull * (2 * id + 1));
  const uint64_t b = mix64(a ^ 0xd1b54a32d192ed03ull);
  const double u1 = (static_cast<double>(a >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(b >> 11) * 0x1.0p-53;          // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace

const std::vector<std::string>& queue_policy_names() {
  static const std::vector<std::string> names{"fcfs", "priority", "sjf", "edf", "fair"};
  return names;
}

int64_t QueueOrder::predicted_output_tokens(const RequestSpec& spec) const {
  if (sjf_oracle) return spec.output_tokens;
  const double f = std::exp(sjf_sigma * normal_of(sjf_seed, spec.id));
  const double p = std::round(static_cast<double>(spec.output_tokens) * f);
  return static_cast<int64_t>(std::clamp(p, 1.0, 1e15));
}

int64_t QueueOrder::key(const Request& r) const {
  switch (policy) {
    case QueuePolicy::Priority:
      return r.spec.priority;
    case QueuePolicy::Sjf:
      return predicted_output_tokens(r.spec);
    case QueuePolicy::Edf:
      return r.spec.ttft_slo.count_ns() > 0 ? (r.spec.arrival + r.spec.ttft_slo).count_ns()
                                            : std::numeric_limits<int64_t>::max();
    case QueuePolicy::Fcfs:
    case QueuePolicy::Fair:
      break;
  }
  return 0;
}

QueueOrder read_queue_order(const Cfg& c, const std::string& key,
                            const std::vector<std::string>& allowed) {
  QueueOrder o;
  const std::string name = c.get_choice(key, "fcfs", allowed);
  const auto& names = queue_policy_names();
  o.policy = static_cast<QueuePolicy>(std::find(names.begin(), names.end(), name) - names.begin());
  // The `sjf` and `fair` maps are read whatever the policy (each takes effect with its own), so
  // that a sweep over the policy can keep them.
  if (const auto s = c.optional_child("sjf")) {
    o.sjf_oracle = s->get_choice("predictor", "oracle", {"oracle", "lognormal"}) == "oracle";
    if (o.sjf_oracle) {
      for (const char* k : {"sigma", "seed"})
        if (s->has(k)) s->fail(k, "is only used with predictor: lognormal");
    } else {
      o.sjf_sigma = s->get_real("sigma", 0.5, {0.0, 10.0});
      o.sjf_seed = static_cast<uint64_t>(s->get_int("seed", 1, {0, int64_t{1} << 62}));
    }
  }
  if (const auto f = c.optional_child("fair")) {
    o.fair_prompt_weight = f->get_real("prompt_weight", 1.0, {0.0, 1e6});
    o.fair_output_weight = f->get_real("output_weight", 2.0, {0.0, 1e6});
    if (o.fair_prompt_weight == 0 && o.fair_output_weight == 0)
      f->fail("output_weight", "prompt_weight and output_weight are both 0: nothing would count");
  }
  return o;
}

size_t preemption_victim(const QueueOrder& order, const SchedulerView& s) {
  const std::vector<uint32_t>& running = s.running();
  if (!order.keyed()) return running.size() - 1;
  const auto earlier = [&](uint32_t a, uint32_t b) {
    const Request& x = s.req(a);
    const Request& y = s.req(b);
    if (x.order_key != y.order_key) return x.order_key < y.order_key;
    return x.spec.arrival != y.spec.arrival ? x.spec.arrival < y.spec.arrival
                                            : x.spec.id < y.spec.id;
  };
  return static_cast<size_t>(std::max_element(running.begin(), running.end(), earlier) -
                             running.begin());
}

void FairShare::grow(uint16_t tenant) {
  if (tenant < m_counter.size()) return;
  m_counter.resize(size_t{tenant} + 1, 0.0);
  m_backlogged.resize(size_t{tenant} + 1, 0);
  m_waiting_now.resize(size_t{tenant} + 1, 0);
}

void FairShare::begin_step(const SchedulerView& s) {
  std::fill(m_waiting_now.begin(), m_waiting_now.end(), uint8_t{0});
  for (const uint32_t slot : s.waiting()) {
    const uint16_t t = s.req(slot).spec.tenant_id;
    grow(t);
    m_waiting_now[t] = 1;
  }
  double floor = std::numeric_limits<double>::infinity();
  for (size_t t = 0; t < m_counter.size(); ++t)
    if (m_backlogged[t] && m_waiting_now[t]) floor = std::min(floor, m_counter[t]);
  for (size_t t = 0; t < m_counter.size(); ++t) {
    if (m_waiting_now[t] && !m_backlogged[t] && std::isfinite(floor))
      m_counter[t] = std::max(m_counter[t], floor);
    m_backlogged[t] = m_waiting_now[t];
  }
}

size_t FairShare::pick(const SchedulerView& s) const {
  const std::deque<uint32_t>& w = s.waiting();
  size_t best = 0;
  double least = counter(s.req(w[0]).spec.tenant_id);
  for (size_t i = 1; i < w.size(); ++i) {
    const double c = counter(s.req(w[i]).spec.tenant_id);
    if (c < least) {
      least = c;
      best = i;
    }
  }
  return best;
}

void FairShare::charge(const SchedulerView& s, const StepEntry& e) {
  const Request& r = s.req(e.slot);
  const uint16_t t = r.spec.tenant_id;
  grow(t);
  if (e.kind == EntryKind::Decode) {
    m_counter[t] += m_output_weight;
  } else if (e.kind == EntryKind::Prefill) {
    m_counter[t] += m_prompt_weight * e.prefill_tokens;
    // The chunk that ends a prefill also produces an output token. (Planned before the step
    // runs: context_tokens does not yet include this chunk.)
    if (r.context_tokens + e.prefill_tokens >= r.prefill_target) m_counter[t] += m_output_weight;
  }
}

}  // namespace servesim
