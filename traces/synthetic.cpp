// A seeded synthetic workload, generated lazily one request at a time (memory does not grow with
// the request count). For each request the generator draws, in this order: the gap since the
// previous arrival, the prompt length, the output length.
//
//   arrival: {kind: poisson, rate_per_s}            gaps ~ Exponential(rate); the first arrival
//                                                   is one gap after start_s
//            {kind: fixed, rate_per_s | interval_s} the first arrival at start_s, then evenly
//   lengths: {kind: fixed, value}
//            {kind: uniform, min, max}              integers, both ends included
//            {kind: lognormal, median, sigma, min=1, max=1e9}
//                                                   round(median * exp(sigma * N(0,1))),
//                                                   clamped to [min, max]
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/random.h"
#include "traces/workload_source.h"

namespace servesim {
namespace {

struct LengthDist {
  enum class Kind { Fixed, Uniform, Lognormal } kind = Kind::Fixed;
  int64_t a = 1, b = 1;  // fixed: a; uniform: [a, b]; lognormal: clamp [a, b]
  double median = 1, sigma = 0;

  [[nodiscard]] int32_t draw(Rng& rng) const {
    switch (kind) {
      case Kind::Fixed:
        return static_cast<int32_t>(a);
      case Kind::Uniform:
        return static_cast<int32_t>(rng.uniform_int(a, b));
      case Kind::Lognormal: {
        const double v = std::round(median * std::exp(sigma * rng.normal()));
        return static_cast<int32_t>(std::clamp(v, static_cast<double>(a), static_cast<double>(b)));
      }
    }
    return 1;
  }
};

constexpr IntRange k_tokens{1, 1'000'000'000};
/// Simulated time is int64 nanoseconds (up to 9.2e9 s); arrivals stay below this, as in traces.
constexpr double k_max_arrival_s = 9.0e9;

LengthDist read_length(const Cfg& c) {
  LengthDist d;
  const std::string kind = c.get_choice("kind", {"fixed", "lognormal", "uniform"});
  if (kind == "fixed") {
    d.kind = LengthDist::Kind::Fixed;
    d.a = c.get_int("value", k_tokens);
  } else if (kind == "uniform") {
    d.kind = LengthDist::Kind::Uniform;
    d.a = c.get_int("min", k_tokens);
    d.b = c.get_int("max", k_tokens);
    if (d.b < d.a) c.fail("max", fmt::format("must be >= min ({})", d.a));
  } else {
    d.kind = LengthDist::Kind::Lognormal;
    d.median = c.get_real("median", {1.0, 1e9, false});
    d.sigma = c.get_real("sigma", {0.0, 10.0, false});
    d.a = c.get_int("min", 1, k_tokens);
    d.b = c.get_int("max", 1'000'000'000, k_tokens);
    if (d.b < d.a) c.fail("max", fmt::format("must be >= min ({})", d.a));
  }
  return d;
}

class Synthetic final : public WorkloadSource {
 public:
  Synthetic(uint64_t seed, int64_t count, bool poisson, double rate, double start_s,
            LengthDist prompt, LengthDist output, std::string where)
      : m_rng(seed), m_count(count), m_poisson(poisson), m_rate(rate), m_start_s(start_s),
        m_prompt(prompt), m_output(output), m_where(std::move(where)) {}

  bool next(RequestSpec& out) override {
    if (m_made == m_count) return false;
    if (m_poisson) {
      m_clock_s += m_rng.exponential(m_rate);
    } else if (m_made > 0) {
      m_clock_s = static_cast<double>(m_made) / m_rate;
    }
    out.id = static_cast<uint64_t>(m_made);
    // Exponential gaps can (rarely) carry a long workload past the limit the config check allows.
    if (!(m_start_s + m_clock_s <= k_max_arrival_s))
      throw InputError(fmt::format("{}: request {} would arrive at {:.4g} s, past the simulator's "
                                   "limit of {:.0e} s; raise the arrival rate or lower requests",
                                   m_where, m_made, m_start_s + m_clock_s, k_max_arrival_s));
    out.arrival = Time::from_seconds(m_start_s + m_clock_s);
    out.prompt_tokens = m_prompt.draw(m_rng);
    out.output_tokens = m_output.draw(m_rng);
    ++m_made;
    return true;
  }
  size_t size_hint() const override { return static_cast<size_t>(m_count); }

 private:
  Rng m_rng;
  int64_t m_count;
  bool m_poisson;
  double m_rate;
  double m_start_s;
  LengthDist m_prompt, m_output;
  std::string m_where;  // "workload.synthetic in file", for messages
  int64_t m_made = 0;
  double m_clock_s = 0;
};

}  // namespace

std::unique_ptr<WorkloadSource> make_synthetic(const Cfg& c,
                                               uint64_t seed) {
  const int64_t count = c.get_int("requests", {1, int64_t{1} << 40});
  const double start_s = c.get_real("start_s", 0.0, {0.0, 1e9, false});
  const Cfg arrival = c.child("arrival");
  const std::string kind = arrival.get_choice("kind", {"fixed", "poisson"});
  double rate = 0;
  const bool by_interval = kind == "fixed" && arrival.has("interval_s");
  if (by_interval) {
    if (arrival.has("rate_per_s"))
      arrival.fail("interval_s", "give rate_per_s or interval_s, not both");
    rate = 1.0 / arrival.get_real("interval_s", {0.0, 1e6, true});
  } else {
    rate = arrival.get_real("rate_per_s", {0.0, 1e9, true});
  }
  // The last arrival of a fixed workload, and the expected one of a Poisson workload.
  const double span_s = static_cast<double>(kind == "poisson" ? count : count - 1) / rate;
  if (!(start_s + span_s <= k_max_arrival_s))
    arrival.fail(by_interval ? "interval_s" : "rate_per_s",
                 fmt::format("{} requests from start_s {} at this rate arrive until {:.4g} s, past "
                             "the simulator's limit of {:.0e} s", count, start_s, start_s + span_s,
                             k_max_arrival_s));
  return std::make_unique<Synthetic>(seed, count, kind == "poisson", rate, start_s,
                                     read_length(c.child("prompt_tokens")),
                                     read_length(c.child("output_tokens")),
                                     fmt::format("{} in {}", c.path(), c.doc().file()));
}

}  // namespace servesim
