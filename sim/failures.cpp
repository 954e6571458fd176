#include "sim/failures.h"

#include <fmt/format.h>

#include <algorithm>

namespace servesim {

namespace {

/// SplitMix64's finaliser: each replica's failure stream from the seed and its index alone.
uint64_t mix(uint64_t seed, uint64_t rep) {
  uint64_t z = seed ^ 0x6661696c75726573ull ^ (rep * 0x9e3779b97f4a7c15ull);  // "failures"
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// `t + s` seconds, or Time::max() past the clock's limit (a failure that never comes).
Time later_by(Time t, double s) {
  if (t == Time::max() || !(s >= 0 && s <= Time::limit_seconds())) return Time::max();
  return t.plus_within(Time::from_seconds(s)).value_or(Time::max());
}

/// A scheduler section's preemption_mode: swap keeps host memory the failure would orphan.
void check_no_swap(const Cfg& owner, const Cfg& failures) {
  const std::optional<Cfg> s = owner.optional_child("scheduler");
  if (s && s->has("preemption_mode") && s->get_string("preemption_mode") == "swap")
    failures.fail("",
                  "is not modelled with scheduler.preemption_mode: swap (a failed replica's "
                  "swapped-out requests); use preemption_mode: recompute");
}

}  // namespace

std::shared_ptr<FailureSpec> read_failures(const Cfg& root, int64_t replicas) {
  const std::optional<Cfg> cluster = root.optional_child("cluster");
  if (!cluster) return nullptr;
  const std::optional<Cfg> f = cluster->optional_child("failures");
  if (!f) return nullptr;
  auto s = std::make_shared<FailureSpec>();
  if (f->has("script"))
    for (const Cfg& e : f->list_of_maps("script")) {
      FailureSpec::Outage o;
      o.replica = static_cast<uint32_t>(e.get_int("replica", {0, 4095}));
      if (static_cast<int64_t>(o.replica) >= replicas)
        e.fail("replica", fmt::format("names no replica: the cluster has {} (0 to {})", replicas,
                                      replicas - 1));
      o.at = Time::from_seconds(e.get_real("at_s", {0.0, 1e9}));
      o.down = Time::from_seconds(e.get_real("down_s", {0.0, 1e9, true}));
      s->script.push_back(o);
    }
  std::stable_sort(s->script.begin(), s->script.end(), [](const auto& a, const auto& b) {
    return a.replica != b.replica ? a.replica < b.replica : a.at < b.at;
  });
  if (const std::optional<double> mtbf = f->optional_real("mtbf_h", {0.0, 1e7, true})) {
    s->mtbf_h = *mtbf;
    s->mttr_h = f->get_real("mttr_h", {0.0, 1e5, true});
  } else if (f->has("mttr_h")) {
    f->fail("mttr_h", "only with mtbf_h (the drawn failures' mean time between them)");
  }
  if (s->script.empty() && s->mtbf_h == 0)
    f->fail("", "needs a script of outages, or mtbf_h and mttr_h to draw them");
  s->retry = f->get_choice("on_failure", "retry", {"fail", "retry"}) == "retry";
  s->max_retries = static_cast<int32_t>(f->get_int("max_retries", 3, {0, 1000}));
  if (cluster->has("pools")) {
    for (const Cfg& p : cluster->list_of_maps("pools")) {
      if (p.has("role") && p.get_string("role") != "mixed")
        f->fail("",
                "is not modelled with prefill/decode pools (a transfer's replica failing); "
                "use mixed pools or cluster.replicas");
      check_no_swap(p, *f);
    }
  }
  check_no_swap(root, *f);
  if (cluster->has("autoscale"))
    f->fail("",
            "is not modelled beside cluster.autoscale yet (a failed replica in the "
            "autoscaler's phases); give one of the two");
  return s;
}

FailureClock::FailureClock(std::shared_ptr<const FailureSpec> spec, uint32_t replicas,
                           uint64_t seed)
    : m_spec(std::move(spec)) {
  m_reps.reserve(replicas);
  for (uint32_t i = 0; i < replicas; ++i) {
    m_reps.emplace_back(mix(seed, i));
    Rep& r = m_reps.back();
    for (const FailureSpec::Outage& o : m_spec->script)
      if (o.replica == i) r.scripted.push_back({o.at, later_by(o.at, o.down.seconds())});
    if (m_spec->mtbf_h > 0) {
      const int64_t chips = i < m_spec->accelerators.size() ? m_spec->accelerators[i] : 1;
      r.rate_per_h = static_cast<double>(std::max<int64_t>(chips, 1)) / m_spec->mtbf_h;
      draw(r, Time::ns(0));
    }
    Interval first;
    if (peek(r, first)) r.next = first.from;
  }
}

void FailureClock::draw(Rep& r, Time after) {
  // Up for Exp(rate), then down for Exp(1 / mttr): two draws a failure, in this order.
  const double up_h = r.rng.exponential(r.rate_per_h);
  const double down_h = r.rng.exponential(1.0 / m_spec->mttr_h);
  r.drawn.from = later_by(after, up_h * 3600.0);
  r.drawn.to = later_by(r.drawn.from, down_h * 3600.0);
}

bool FailureClock::peek(const Rep& r, Interval& out) const {
  const bool scripted = r.script < r.scripted.size();
  if (!scripted && r.drawn.from == Time::max()) return false;
  out = scripted && r.scripted[r.script].from <= r.drawn.from ? r.scripted[r.script] : r.drawn;
  return out.from != Time::max();
}

void FailureClock::take(Rep& r) {
  if (r.script < r.scripted.size() && r.scripted[r.script].from <= r.drawn.from)
    ++r.script;
  else
    draw(r, r.drawn.to);
}

bool FailureClock::advance(uint32_t rep, Time now) {
  Rep& r = m_reps[rep];
  Interval i;
  if (!r.down) {
    r.down = true;
    r.down_since = now;
    Time up = now;
    // This interval and every one that starts before it ends: one failure.
    while (peek(r, i) && i.from <= up) {
      up = std::max(up, i.to);
      take(r);
    }
    r.next = up;
    ++stats.failures;
    return true;
  }
  r.down = false;
  r.down_s += (now - r.down_since).seconds();
  r.next = peek(r, i) ? i.from : Time::max();
  return false;
}

double FailureClock::downtime_s(uint32_t rep, Time end) const {
  const Rep& r = m_reps[rep];
  return r.down_s + (r.down && end > r.down_since ? (end - r.down_since).seconds() : 0.0);
}

}  // namespace servesim
