#include "sim/admission.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "traces/trace_rows.h"

namespace servesim {

namespace {

/// SplitMix64's finaliser: a well-mixed 64-bit value from (seed, request id, stream), so each
/// request's cancel draw is its own whatever the order requests arrive in.
uint64_t mix(uint64_t seed, uint64_t id, uint64_t stream) {
  uint64_t z = seed ^ (id * 0x9e3779b97f4a7c15ull) ^ (stream * 0xbf58476d1ce4e5b9ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Uniform in [0, 1) from 53 bits of `h`.
double unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

bool due_later(const AdmissionControl::Watch& a, const AdmissionControl::Watch& b) {
  return a.deadline != b.deadline ? a.deadline > b.deadline : a.id > b.id;
}

CancelAfterDist read_cancel_after(const Cfg& c) {
  CancelAfterDist d;
  constexpr RealRange k_seconds{0.0, 1e6, true};
  const std::string kind = c.get_choice("kind", {"fixed", "uniform", "exponential"});
  if (kind == "fixed") {
    d.a = c.get_real("value_s", k_seconds);
  } else if (kind == "uniform") {
    d.kind = CancelAfterDist::Kind::Uniform;
    d.a = c.get_real("min_s", k_seconds);
    d.b = c.get_real("max_s", k_seconds);
    if (d.b <= d.a) c.fail("max_s", fmt::format("must exceed min_s = {:g}", d.a));
  } else {
    d.kind = CancelAfterDist::Kind::Exponential;
    d.a = c.get_real("mean_s", k_seconds);
  }
  return d;
}

std::vector<TenantRate> read_tenant_rates(const Cfg& r) {
  std::vector<TenantRate> out;
  const YAML::Node map = r.node("tenants");
  if (!map) return out;
  if (!map.IsMap()) r.fail("tenants", "must be a map of tenant names to {rate_per_s, burst}");
  const Cfg tenants = r.child("tenants");
  for (const auto& kv : map) {
    const std::string name = kv.first.Scalar();
    if (!valid_class_name(name))
      tenants.fail(name, fmt::format("\"{}\": a tenant name must be {}", printable(name, 80),
                                     k_class_name_allowed));
    const Cfg t = tenants.child(name);
    TenantRate tr;
    tr.tenant = name;
    tr.rate_per_s = t.get_real("rate_per_s", {0.0, 1e9, true});
    tr.burst = t.get_real("burst", 1.0, {1.0, 1e9});
    out.push_back(tr);
  }
  return out;
}

}  // namespace

double CancelAfterDist::seconds(double u) const {
  switch (kind) {
    case Kind::Fixed:
      return a;
    case Kind::Uniform:
      return a + u * (b - a);
    case Kind::Exponential:
      return std::min(-a * std::log1p(-u), 1e6);  // u < 1: finite
  }
  return a;
}

std::shared_ptr<const AdmissionSpec> read_admission(const Cfg& root,
                                                    const std::optional<SloTargets>& slo) {
  const std::optional<Cfg> a = root.optional_child("admission");
  const std::optional<Cfg> b = root.optional_child("abandonment");
  if (!a && !b) return nullptr;
  auto s = std::make_shared<AdmissionSpec>();
  if (a) {
    s->queue_cap = a->get_int("queue_cap", 0, {0, 1 << 30});
    if (const std::optional<Cfg> r = a->optional_child("rate_limit")) {
      // With per-tenant rates the default rate may be left out: the other tenants are then
      // not limited.
      s->tenant_rates = read_tenant_rates(*r);
      if (s->tenant_rates.empty() || r->has("rate_per_s"))
        s->rate_per_s = r->get_real("rate_per_s", {0.0, 1e9, true});
      if (s->rate_per_s > 0)
        s->burst = r->get_real("burst", 1.0, {1.0, 1e9});
      else if (r->has("burst"))
        r->fail("burst", "is the default bucket's depth: give rate_per_s with it");
    }
    s->slo_reject = a->get_bool("slo_reject", false);
    if (s->slo_reject && slo && slo->ttft_ms) s->slo_ttft = Time::from_ms(*slo->ttft_ms);
  }
  if (b) {
    if (const std::optional<double> t = b->optional_real("timeout_s", {0.0, 1e6, true}))
      s->timeout = Time::from_seconds(*t);
    if (const std::optional<Cfg> c = b->optional_child("cancel")) {
      s->cancel_fraction = c->get_real("fraction", {0.0, 1.0});
      if (const std::optional<Cfg> d = c->optional_child("after_s"))
        s->cancel_after = read_cancel_after(*d);
    }
  }
  return s;
}

AdmissionControl::AdmissionControl(std::shared_ptr<const AdmissionSpec> spec, uint64_t seed)
    : m_spec(std::move(spec)), m_seed(seed) {}

void AdmissionControl::draw_cancel(Request& r) const {
  if (m_spec->cancel_fraction <= 0 || r.spec.cancel_after_tokens > 0 ||
      r.spec.cancel_after > Time::ns(0))
    return;
  if (m_spec->cancel_after) {  // by time: any request may be cancelled, even a 1-token one
    if (unit(mix(m_seed, r.spec.id, 1)) >= m_spec->cancel_fraction) return;
    const double at_s = m_spec->cancel_after->seconds(unit(mix(m_seed, r.spec.id, 3)));
    r.spec.cancel_after = std::max(Time::from_seconds(at_s), Time::ns(1));
    return;
  }
  if (r.spec.output_tokens < 2) return;
  if (unit(mix(m_seed, r.spec.id, 1)) >= m_spec->cancel_fraction) return;
  // Uniform on 1 .. output_tokens - 1: it leaves with at least one token and not all of them.
  const auto n = static_cast<uint64_t>(r.spec.output_tokens - 1);
  r.spec.cancel_after_tokens = 1 + static_cast<int32_t>(mix(m_seed, r.spec.id, 2) % n);
}

std::string AdmissionControl::refuse(const Request& r, const SchedulerView& state,
                                     const StepTimeModel& model, Time now, EndCause& cause) {
  cause = EndCause::None;
  const AdmissionSpec& s = *m_spec;
  if (s.rate_per_s > 0 || !s.tenant_rates.empty()) {
    Bucket& b = bucket(r.spec.tenant_id, now);
    if (b.rate_per_s > 0) {
      // rate x ns / 1e9: whole seconds of refill come out exact.
      b.tokens = std::min(
          b.burst, b.tokens + b.rate_per_s * static_cast<double>((now - b.at).count_ns()) / 1e9);
      b.at = now;
      if (b.tokens < 1.0) {
        cause = EndCause::Shed;
        return fmt::format("shed: its tenant's rate limit ({:g} a second, burst {:g}) has no token",
                           b.rate_per_s, b.burst);
      }
      b.tokens -= 1.0;
    }
  }
  cause = EndCause::Refused;
  if (s.queue_cap > 0 && static_cast<int64_t>(state.waiting().size()) >= s.queue_cap)
    return fmt::format("admission.queue_cap: {} requests already queued", s.queue_cap);
  const Time target = r.spec.ttft_slo > Time::ns(0) ? r.spec.ttft_slo : s.slo_ttft;
  if (s.slo_reject && target > Time::ns(0)) {
    StepShape shape;
    const auto add = [&shape](int64_t tokens) {
      if (tokens <= 0) return;
      shape.prefill_tokens += tokens;
      shape.prefill_tokens_sq += static_cast<double>(tokens) * static_cast<double>(tokens);
      ++shape.sequences;
    };
    for (uint32_t slot : state.waiting()) {
      const Request& q = state.req(slot);
      add(int64_t{q.prefill_target} - q.context_tokens);
    }
    for (uint32_t slot : state.running()) {
      const Request& q = state.req(slot);
      if (q.prefilling()) add(int64_t{q.prefill_target} - q.context_tokens);
    }
    add(r.spec.prompt_tokens);
    const double estimate_ms = model.step_ms(shape);
    const double target_ms = static_cast<double>(target.count_ns()) / 1e6;
    if (estimate_ms > target_ms)
      return fmt::format(
          "admission.slo_reject: estimated TTFT {:.4g} ms (one prefill step of the {} tokens "
          "ahead and its own) exceeds its target {:.4g} ms",
          estimate_ms, shape.prefill_tokens, target_ms);
  }
  cause = EndCause::None;
  return {};
}

AdmissionControl::Bucket& AdmissionControl::bucket(uint16_t t, Time now) {
  if (m_buckets.size() <= t) m_buckets.resize(t + 1u);
  Bucket& b = m_buckets[t];
  if (b.burst > 0) return b;
  b.rate_per_s = m_spec->rate_per_s;
  b.burst = m_spec->rate_per_s > 0 ? m_spec->burst : 1.0;
  if (m_tenant_names && t < m_tenant_names->size())
    for (const TenantRate& tr : m_spec->tenant_rates)
      if (tr.tenant == (*m_tenant_names)[t]) {
        b.rate_per_s = tr.rate_per_s;
        b.burst = tr.burst;
      }
  b.tokens = b.burst;
  b.at = now;
  return b;
}

void AdmissionControl::watch(const Watch& w) {
  m_watches.push_back(w);
  std::push_heap(m_watches.begin(), m_watches.end(), due_later);
}

bool AdmissionControl::pop_due(Time now, Watch& out) {
  if (m_watches.empty() || m_watches.front().deadline > now) return false;
  std::pop_heap(m_watches.begin(), m_watches.end(), due_later);
  out = m_watches.back();
  m_watches.pop_back();
  return true;
}

}  // namespace servesim
