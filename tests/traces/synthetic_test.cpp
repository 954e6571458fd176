// Synthetic workloads: each arrival process and length distribution reproduces its definition
// (docs/workloads-synthetic.md) on a fixed seed, the same seed gives the same requests, and
// each bad key gets a message naming it.
//
// Tolerances: every statistical check allows 5 standard deviations of its statistic at the
// sample size used. Where the spread has a simple formula it is given; otherwise it was measured
// over seeds 1..30 (written next to the check). A correct generator then fails a check with
// probability below 1e-6 (the seed is fixed, so a pass is repeatable), while the mistakes these
// guard against (a wrong shape or scale, a rate off by a factor, a shifted curve) move the
// statistics by far more.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <numeric>
#include <tuple>

#include "core/errors.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "traces/workload_source.h"

namespace t_traces_synthetic_test {

using namespace servesim;
using namespace servesim::test;

namespace {

constexpr int64_t k_draws = 200'000;

/// A source from a `workload.synthetic` map given as YAML flow text, read the way a scenario
/// reads it (make_workload, then every key checked). Relative paths resolve against tests/.
std::unique_ptr<WorkloadSource> source_of(const std::string& synthetic, uint64_t seed = 1) {
  auto doc = std::make_shared<Document>("workload: {synthetic: " + synthetic + "}\n",
                                        std::string(SERVESIM_SOURCE_DIR) + "/tests/s.yaml");
  auto source = make_workload(Cfg::root(doc).child("workload"), seed);
  doc->check_all_read();
  return source;
}

std::string fixed_lengths() {
  return "prompt_tokens: {kind: fixed, value: 1}, output_tokens: {kind: fixed, value: 1}";
}

/// `requests` requests with `arrival` (a flow map) and fixed lengths.
std::vector<RequestSpec> arrivals(const std::string& arrival, int64_t requests = k_draws,
                                  const std::string& extra = "") {
  auto source = source_of(fmt::format("{{requests: {}, arrival: {}, {}{}}}", requests, arrival,
                                      fixed_lengths(), extra));
  std::vector<RequestSpec> out;
  for (RequestSpec r; source->next(r);) out.push_back(r);
  REQUIRE(out.size() == static_cast<size_t>(requests));
  return out;
}

/// k_draws output lengths from `dist` (a flow map), at one request per second.
std::vector<double> lengths(const std::string& dist) {
  auto source =
      source_of(fmt::format("{{requests: {}, arrival: {{kind: fixed, rate_per_s: 1}}, "
                            "prompt_tokens: {{kind: fixed, value: 1}}, "
                            "output_tokens: {}}}",
                            k_draws, dist));
  std::vector<double> out;
  for (RequestSpec r; source->next(r);) out.push_back(r.output_tokens);
  return out;
}

struct Moments {
  double mean = 0, stddev = 0;
};
Moments moments(const std::vector<double>& x) {
  double sum = 0, sum_sq = 0;
  for (double v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  for (double v : x) sum_sq += (v - mean) * (v - mean);
  return {mean, std::sqrt(sum_sq / static_cast<double>(x.size()))};
}

/// The gaps between arrivals (the first from 0), in seconds.
std::vector<double> gaps_s(const std::vector<RequestSpec>& rs) {
  std::vector<double> out;
  double last_s = 0;
  for (const auto& r : rs) {
    out.push_back(r.arrival.seconds() - last_s);
    last_s = r.arrival.seconds();
  }
  return out;
}

double fraction(const std::vector<double>& x, double value) {
  return static_cast<double>(std::count(x.begin(), x.end(), value)) / static_cast<double>(x.size());
}

/// Arrivals per hour of the day (by the simulated clock), over the whole days from `start_s`
/// only, so that every hour is counted equally often; `n` is their sum, `days` how many.
struct HourCounts {
  std::vector<double> count = std::vector<double>(24);
  double n = 0, days = 0;
};
HourCounts hour_counts(const std::vector<RequestSpec>& rs, double start_s) {
  HourCounts out;
  out.days = std::floor((rs.back().arrival.seconds() - start_s) / 86400);
  for (const auto& r : rs)
    if (r.arrival.seconds() < start_s + out.days * 86400) {
      ++out.count[static_cast<size_t>(std::fmod(r.arrival.seconds(), 86400) / 3600)];
      ++out.n;
    }
  return out;
}

/// 5 binomial standard errors of a frequency p estimated from n draws.
double five_se(double p, double n) { return 5.0 * std::sqrt(p * (1.0 - p) / n); }

}  // namespace

TEST_CASE("synthetic: gamma arrivals reach the target rate and cv", "[traces]") {
  // Rate: gaps are i.i.d., so the mean gap has relative SE cv / sqrt(n) (0.45% at cv 2, 0.11%
  // at cv 0.5). The sample cv's SE was measured over 30 seeds: 0.37% at cv 2 (shape 0.25, the
  // boosted sampler), 0.18% at cv 0.5.
  for (const auto& [cv, rate_tol, cv_tol] :
       {std::tuple{2.0, 0.0225, 0.019}, std::tuple{0.5, 0.0056, 0.009}}) {
    const auto g =
        moments(gaps_s(arrivals(fmt::format("{{kind: gamma, rate_per_s: 10, cv: {}}}", cv))));
    CHECK(1.0 / g.mean == Approx(10.0).epsilon(rate_tol));
    CHECK(g.stddev / g.mean == Approx(cv).epsilon(cv_tol));
  }
}

TEST_CASE("synthetic: onoff arrivals have the long-run rate and the MMPP's gap cv", "[traces]") {
  const double rate_on = 20, rate_off = 2, mean_on_s = 1, mean_off_s = 4;
  const auto g = moments(gaps_s(arrivals(fmt::format(
      "{{kind: onoff, rate_on_per_s: {}, rate_off_per_s: {}, mean_on_s: {}, mean_off_s: {}}}",
      rate_on, rate_off, mean_on_s, mean_off_s))));
  // Long-run rate: (rate_on mean_on + rate_off mean_off) / (mean_on + mean_off) = 5.6/s.
  const double mean_rate = (rate_on * mean_on_s + rate_off * mean_off_s) / (mean_on_s + mean_off_s);
  // The gap between arrivals is phase-type: from the state at an arrival, pi_a = (pi_on rate_on,
  // pi_off rate_off) / mean_rate, with sub-generator D0 = [[-(a + rate_on), a], [b, -(b +
  // rate_off)]] (a = 1/mean_on, b = 1/mean_off). E[X^n] = n! pi_a (-D0)^-n 1.
  const double a = 1 / mean_on_s, b = 1 / mean_off_s;
  const double m00 = a + rate_on, m01 = -a, m10 = -b, m11 = b + rate_off;  // -D0
  const double det = m00 * m11 - m01 * m10;
  const double i00 = m11 / det, i01 = -m01 / det, i10 = -m10 / det, i11 = m00 / det;
  const double pa_on = mean_on_s / (mean_on_s + mean_off_s) * rate_on / mean_rate;
  const double pa_off = 1 - pa_on;
  const double v0 = i00 + i01, v1 = i10 + i11;                      // (-D0)^-1 1
  const double w0 = i00 * v0 + i01 * v1, w1 = i10 * v0 + i11 * v1;  // (-D0)^-2 1
  const double ex = pa_on * v0 + pa_off * v1, ex2 = 2 * (pa_on * w0 + pa_off * w1);
  REQUIRE(ex == Approx(1 / mean_rate));
  const double cv = std::sqrt(ex2 - ex * ex) / ex;  // 1.7905
  // Gaps within a burst are correlated, so the spread was measured over 30 seeds: 0.81% for the
  // rate, 0.49% for the cv.
  CHECK(1.0 / g.mean == Approx(mean_rate).epsilon(0.041));
  CHECK(g.stddev / g.mean == Approx(cv).epsilon(0.025));
}

TEST_CASE("synthetic: onoff with a silent off state sends nothing while off", "[traces]") {
  // rate_off_per_s defaults to 0: every gap longer than a few on-state gaps spans an off period.
  const auto g =
      gaps_s(arrivals("{kind: onoff, rate_on_per_s: 100, mean_on_s: 0.5, mean_off_s: 10}", 20'000));
  const auto m = moments(g);
  CHECK(1.0 / m.mean == Approx(100 * 0.5 / 10.5).epsilon(0.05));  // ~420 cycles; SE about 1%
  CHECK(m.stddev / m.mean > 3);                                   // far burstier than Poisson
}

TEST_CASE("synthetic: daily sinusoid arrivals follow the curve hour by hour", "[traces]") {
  // mean 0.25/s, peak/trough 3 (amplitude 0.5), peak at 14:00; start_s 6:00 shows that the
  // curve is a function of the simulated clock.
  const double period_s = 86400, peak_at_s = 50400, amplitude = 0.5, start_s = 21600;
  const auto rs = arrivals(
      "{kind: daily, mean_rate_per_s: 0.25, peak_to_trough: 3, "
      "peak_at_s: 50400}",
      k_draws, ", start_s: 21600");
  const auto [count, n, days] = hour_counts(rs, start_s);
  CHECK(n / (days * period_s) == Approx(0.25).epsilon(0.012));  // Poisson count: SE 0.24%
  for (int h = 0; h < 24; ++h) {
    // The share of hour h: the integral of 1 + a cos(2 pi (t - peak) / P) over it, over P.
    const auto phase = [&](double t_s) {
      return 2 * std::numbers::pi * (t_s - peak_at_s) / period_s;
    };
    const double p =
        1.0 / 24 + amplitude / (2 * std::numbers::pi) *
                       (std::sin(phase((h + 1) * 3600.0)) - std::sin(phase(h * 3600.0)));
    INFO("hour " << h);
    CHECK(std::fabs(count[h] / n - p) <= five_se(p, n));
  }
  CHECK(count[14] > 2.5 * count[2]);  // peak hour against trough hour: 3x
}

TEST_CASE("synthetic: daily hourly weights set each hour's share, zero means none", "[traces]") {
  const std::vector<double> w{2, 1, 1,  0,  1, 2, 4, 6, 8, 9, 10, 10,
                              9, 9, 10, 10, 9, 8, 7, 6, 5, 4, 3,  2};
  const auto rs = arrivals(
      fmt::format("{{kind: daily, mean_rate_per_s: 0.3, hourly: [{}]}}", fmt::join(w, ", ")));
  const auto [count, n, days] = hour_counts(rs, 0);
  CHECK(n / (days * 86400) == Approx(0.3).epsilon(0.012));  // Poisson count: SE 0.24%
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  for (size_t h = 0; h < 24; ++h) {
    INFO("hour " << h);
    CHECK(std::fabs(count[h] / n - w[h] / sum) <= five_se(w[h] / sum, n));
  }
  CHECK(count[3] == 0);
  // period_s scales the curve: with a 600 s period, weight only in the first slot (25 s).
  for (const auto& r :
       arrivals("{kind: daily, mean_rate_per_s: 1, period_s: 600, hourly: [1, 0, "
                "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}",
                2000))
    REQUIRE(std::fmod(r.arrival.seconds(), 600) < 25.0 + 1e-6);
}

TEST_CASE("synthetic: normal lengths have the mean and stddev, clamped to [min, max]", "[traces]") {
  // SEs: stddev / sqrt(n) = 0.22 tokens for the mean; measured 0.14% for the stddev.
  const auto m = moments(lengths("{kind: normal, mean: 500, stddev: 100}"));
  CHECK(m.mean == Approx(500).margin(1.1));
  CHECK(m.stddev == Approx(100).epsilon(0.007));
  const auto clamped = lengths("{kind: normal, mean: 10, stddev: 100, min: 5, max: 20}");
  CHECK(*std::min_element(clamped.begin(), clamped.end()) == 5);
  CHECK(*std::max_element(clamped.begin(), clamped.end()) == 20);
  // P(draw <= 5) = Phi((5.5 - 10) / 100) = 0.48205.
  CHECK(std::fabs(fraction(clamped, 5) - 0.48205) <= five_se(0.48205, k_draws));
}

TEST_CASE("synthetic: zipf lengths follow k^-s (frequency of each k and the mean)", "[traces]") {
  const auto zipf_pmf = [](double s, int64_t min, int64_t max) {
    std::vector<double> p;
    double sum = 0;
    for (int64_t k = min; k <= max; ++k) sum += p.emplace_back(std::pow(double(k), -s));
    for (double& x : p) x /= sum;
    return p;
  };
  const auto x = lengths("{kind: zipf, s: 1.2, max: 1000}");
  const auto p = zipf_pmf(1.2, 1, 1000);
  CHECK(std::fabs(fraction(x, 1) - p[0]) <= five_se(p[0], k_draws));  // p[0] = 0.2307
  double mean = 0;
  for (size_t k = 0; k < p.size(); ++k) mean += double(k + 1) * p[k];
  CHECK(moments(x).mean == Approx(mean).epsilon(0.022));  // measured SE 0.43%
  // A small support, every k checked; min shifts the support.
  const auto y = lengths("{kind: zipf, s: 0.8, min: 3, max: 12}");
  const auto q = zipf_pmf(0.8, 3, 12);
  for (int64_t k = 3; k <= 12; ++k) {
    INFO("k = " << k);
    CHECK(std::fabs(fraction(y, double(k)) - q[size_t(k - 3)]) <=
          five_se(q[size_t(k - 3)], k_draws));
  }
  // s = 1 (H(x) = log x) over a support of 10^9: P(10) = 0.1 / (H_1e9 - H_9).
  const auto z = lengths("{kind: zipf, s: 1, min: 10, max: 1000000000}");
  double harmonic_9 = 0;
  for (int k = 1; k <= 9; ++k) harmonic_9 += 1.0 / k;
  const double harmonic_1e9 = std::log(1e9) + 0.5772156649015329 + 0.5e-9;  // Euler-Maclaurin
  const double p10 = 0.1 / (harmonic_1e9 - harmonic_9);
  CHECK(std::fabs(fraction(z, 10) - p10) <= five_se(p10, k_draws));
  CHECK(*std::min_element(z.begin(), z.end()) == 10);
  // A steep law on a far support: P(min) = 1 / (1 + (min/max)^10), just over 1/2.
  const auto far = lengths("{kind: zipf, s: 10, min: 999999999, max: 1000000000}");
  CHECK(std::fabs(fraction(far, 999999999) - 0.5) <= five_se(0.5, k_draws));
}

TEST_CASE("synthetic: empirical lengths resample a trace column or a list", "[traces]") {
  // azure-conv-300.csv's prompt_tokens: mean 900.0, stddev 820.4 over its 300 rows.
  const auto x = lengths(
      "{kind: empirical, path: ../traces/data/azure-conv-300.csv, "
      "column: prompt_tokens}");
  CHECK(moments(x).mean == Approx(900.0).margin(5 * 820.4 / std::sqrt(k_draws)));
  CHECK(fraction(x, 374) > 0);  // the first row's value
  const auto y = lengths("{kind: empirical, values: [10, 20, 20, 50]}");
  CHECK(std::fabs(fraction(y, 10) - 0.25) <= five_se(0.25, k_draws));
  CHECK(std::fabs(fraction(y, 20) - 0.5) <= five_se(0.5, k_draws));
  CHECK(std::fabs(fraction(y, 50) - 0.25) <= five_se(0.25, k_draws));
}

TEST_CASE("synthetic: the same seed gives the same requests, another seed others", "[traces]") {
  for (const std::string arrival :
       {"{kind: gamma, rate_per_s: 3, cv: 3}",
        "{kind: daily, mean_rate_per_s: 2, peak_to_trough: 5}",
        "{kind: onoff, rate_on_per_s: 5, mean_on_s: 2, mean_off_s: 2}"}) {
    const std::string yaml = "{requests: 2000, arrival: " + arrival +
                             ", prompt_tokens: {kind: zipf, s: 1.1, max: 4096}, "
                             "output_tokens: {kind: empirical, values: [1, 7, 300]}}";
    auto a = source_of(yaml, 7), b = source_of(yaml, 7), c = source_of(yaml, 8);
    RequestSpec ra, rb, rc;
    bool differs = false;
    while (a->next(ra)) {
      REQUIRE(b->next(rb));
      REQUIRE(c->next(rc));
      REQUIRE(ra.arrival == rb.arrival);
      REQUIRE(ra.prompt_tokens == rb.prompt_tokens);
      REQUIRE(ra.output_tokens == rb.output_tokens);
      differs |= ra.arrival != rc.arrival || ra.prompt_tokens != rc.prompt_tokens;
    }
    CHECK_FALSE(b->next(rb));
    CHECK(differs);
  }
}

namespace {
/// The message for a scenario whose synthetic arrival map is `arrival` (line 4, column 14) and
/// whose prompt_tokens map is `prompt` (line 5, column 20).
std::string error_of(const std::string& arrival,
                     const std::string& prompt = "{kind: fixed, value: 1}",
                     const std::vector<std::string>& sets = {}) {
  try {
    auto doc = doc_of("workload:\n  synthetic:\n    requests: 100\n    arrival: " + arrival +
                      "\n    prompt_tokens: " + prompt +
                      "\n    output_tokens: {kind: fixed, value: 1}\n"
                      "step_time: {kind: linear, base_ms: 1}\n"
                      "scheduler: {kind: static, max_batch_size: 1}\n"
                      "kv: {policy: paged, capacity_tokens: 100000}\n");
    for (const auto& s : sets) doc->apply_override(s);
    (void)build_scenario(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
const std::string k_poisson = "{kind: poisson, rate_per_s: 1}";
}  // namespace

/// A daily arrival map at 1/s whose 24 hourly weights are all `fill` but `item`, at index 2;
/// `extra` is added to the map.
std::string hourly_with(const std::string& item, const std::string& fill = "1",
                        const std::string& extra = "") {
  std::string w = fill + ", " + fill + ", " + item;
  for (int h = 3; h < 24; ++h) w += ", " + fill;
  return "{kind: daily, mean_rate_per_s: 1, hourly: [" + w + "]" + extra + "}";
}

TEST_CASE("synthetic: bad arrival keys name the key and what is allowed", "[traces]") {
  const std::string arrival = "workload.synthetic.arrival.";
  CHECK(error_of("{kind: gama, rate_per_s: 1}") ==
        arrival +
            "kind = \"gama\" at test.yaml:4:21: unknown \"gama\" (did you mean gamma?) (valid: "
            "burst, daily, fixed, gamma, onoff, poisson)");
  CHECK(error_of("{kind: gamma, rate_per_s: 1, cv: 0}") ==
        arrival + "cv = \"0\" at test.yaml:4:47: must be >= 0.001 and <= 10");
  CHECK(error_of("{kind: gamma, rate_per_s: 1, cv: 1, shape: 2}") ==
        arrival + "shape at test.yaml:4:50: unknown key (valid here: cv, kind, rate_per_s)");
  CHECK(error_of("{kind: poisson, rate_per_s: 1, cv: 1}") ==
        arrival + "cv at test.yaml:4:45: unknown key (valid here: kind, rate_per_s)");
  CHECK(error_of("{kind: onoff, rate_on_per_s: 1, mean_on_s: 0, mean_off_s: 1}") ==
        arrival + "mean_on_s = \"0\" at test.yaml:4:57: must be > 0 and <= 1000000000");
  CHECK(error_of("{kind: onoff, rate_on_per_s: 1, rate_off_per_s: -1, mean_on_s: 1, "
                 "mean_off_s: 1}") ==
        arrival + "rate_off_per_s = \"-1\" at test.yaml:4:62: must be >= 0 and <= 1000000000");
  CHECK(error_of("{kind: onoff, rate_on_per_s: 1, mean_on_s: 1e-4, mean_off_s: 1}") ==
        arrival +
            "mean_on_s = \"1e-4\" at test.yaml:4:57: rate_on_per_s * mean_on_s + "
            "rate_off_per_s * mean_off_s = 0.0001 arrivals per on/off cycle; must be >= "
            "0.001 (switching this fast is a Poisson stream at the mean rate: use kind: "
            "poisson)");
  CHECK(error_of("{kind: onoff, rate_on_per_s: 1e-7, mean_on_s: 1e4, mean_off_s: 1e5}") ==
        arrival +
            "rate_on_per_s = \"1e-7\" at test.yaml:4:43: 100 requests from start_s 0 at a "
            "long-run mean rate of 9.091e-09/s arrive until 1.1e+10 s, past the simulator's "
            "limit of 9e+09 s");
  CHECK(error_of("{kind: daily, mean_rate_per_s: 1}") ==
        "workload.synthetic.arrival at test.yaml:4:14: needs exactly one of hourly, "
        "peak_to_trough");
  CHECK(error_of("{kind: daily, mean_rate_per_s: 1, peak_to_trough: 2, hourly: [1]}") ==
        "workload.synthetic.arrival at test.yaml:4:14: give only one of hourly, "
        "peak_to_trough (found hourly, peak_to_trough)");
  CHECK(error_of("{kind: daily, mean_rate_per_s: 1, peak_to_trough: 0.5}") ==
        arrival + "peak_to_trough = \"0.5\" at test.yaml:4:64: must be >= 1 and <= 1000000");
  CHECK(error_of("{kind: daily, mean_rate_per_s: 1, peak_to_trough: 2, peak_at_s: 86400}") ==
        arrival + "peak_at_s = \"86400\" at test.yaml:4:78: must be < period_s (86400)");
  CHECK(error_of("{kind: daily, mean_rate_per_s: 1, peak_to_trough: 2, period_s: 0}") ==
        arrival + "period_s = \"0\" at test.yaml:4:77: must be > 0 and <= 1000000000");
  CHECK(error_of(hourly_with("-1")) ==
        arrival + "hourly[2] = \"-1\" at test.yaml:4:63: must be >= 0 and <= 1000000000");
  CHECK(error_of(hourly_with("x")) ==
        arrival + "hourly[2] = \"x\" at test.yaml:4:63: must be a number");
  CHECK(error_of(hourly_with("inf")) ==
        arrival + "hourly[2] = \"inf\" at test.yaml:4:63: must be a finite number");
  CHECK(error_of(hourly_with("[1]")) ==
        arrival + "hourly[2] = a list at test.yaml:4:63: must be a number");
  CHECK(error_of(hourly_with("0", "0")) ==
        arrival +
            "hourly = a list at test.yaml:4:56: the weights are all 0: at least one hour "
            "needs traffic");
  CHECK(error_of("{kind: daily, mean_rate_per_s: 1, hourly: [1, 2, 3]}") ==
        arrival +
            "hourly = a list at test.yaml:4:56: must list 24 weights, one per hour (period_s "
            "/ 24) of the period (found 3)");
  CHECK(error_of("{kind: daily, mean_rate_per_s: 1, hourly: 5}") ==
        arrival + "hourly = \"5\" at test.yaml:4:56: must be a non-empty list of numbers");
  CHECK(error_of(hourly_with("1", "1", ", peak_at_s: 3")) ==
        arrival +
            "peak_at_s = \"3\" at test.yaml:4:141: goes with peak_to_trough; with hourly the "
            "weights place the peak");
  CHECK(error_of("{kind: daily, mean_rate_per_s: 1e-8, peak_to_trough: 2}") ==
        arrival +
            "mean_rate_per_s = \"1e-8\" at test.yaml:4:45: 100 requests from start_s 0 at this "
            "mean rate arrive until 1e+10 s, past the simulator's limit of 9e+09 s");
  // A list item set from the command line is named as such.
  CHECK(
      error_of(k_poisson, "{kind: fixed, value: 1}",
               {"workload.synthetic.arrival={kind: daily, mean_rate_per_s: 1, hourly: [1, -2]}"}) ==
      arrival +
          "hourly[1] = \"-2\" at test.yaml (from --set workload.synthetic.arrival): must be "
          ">= 0 and <= 1000000000");
}

TEST_CASE("synthetic: bad length keys name the key and what is allowed", "[traces]") {
  const std::string prompt = "workload.synthetic.prompt_tokens.";
  const std::string azure = std::string(SERVESIM_SOURCE_DIR) + "/traces/data/azure-conv-300.csv";
  CHECK(error_of(k_poisson, "{kind: zipff}") ==
        prompt +
            "kind = \"zipff\" at test.yaml:5:27: unknown \"zipff\" (did you mean zipf?) (valid: "
            "empirical, fixed, lognormal, normal, uniform, zipf)");
  CHECK(error_of(k_poisson, "{kind: normal, mean: 100, stddev: -1}") ==
        prompt + "stddev = \"-1\" at test.yaml:5:54: must be >= 0 and <= 1000000000");
  CHECK(error_of(k_poisson, "{kind: normal, mean: 100, stddev: 10, min: 50, max: 20}") ==
        prompt + "max = \"20\" at test.yaml:5:72: must be >= min (50)");
  CHECK(error_of(k_poisson, "{kind: zipf, s: 0, max: 10}") ==
        prompt + "s = \"0\" at test.yaml:5:36: must be > 0 and <= 10");
  CHECK(error_of(k_poisson, "{kind: zipf, s: 1, max: 10, min: 11}") ==
        prompt + "max = \"10\" at test.yaml:5:44: must be >= min (11)");
  CHECK(error_of(k_poisson, "{kind: zipf, s: 1}") ==
        prompt +
            "max: required key missing in workload.synthetic.prompt_tokens at test.yaml:5:20 "
            "(an integer)");
  CHECK(error_of(k_poisson, "{kind: empirical}") ==
        "workload.synthetic.prompt_tokens at test.yaml:5:20: needs exactly one of path, "
        "values");
  CHECK(error_of(k_poisson, "{kind: empirical, values: [1], path: a.csv, column: x}") ==
        "workload.synthetic.prompt_tokens at test.yaml:5:20: give only one of path, "
        "values (found path, values)");
  CHECK(error_of(k_poisson, "{kind: empirical, values: [1, 0]}") ==
        prompt + "values[1] = \"0\" at test.yaml:5:50: must be an integer from 1 to 1000000000");
  CHECK(error_of(k_poisson, "{kind: empirical, values: [1, 2.5]}") ==
        prompt + "values[1] = \"2.5\" at test.yaml:5:50: must be an integer");
  CHECK(error_of(k_poisson, "{kind: empirical, path: /nonexistent/a.csv, column: x}") ==
        prompt +
            "path = \"/nonexistent/a.csv\" at test.yaml:5:44: no such empirical length file "
            "(/nonexistent/a.csv; relative paths are resolved against the config file's "
            "folder)");
  CHECK(error_of(k_poisson, "{kind: empirical, path: " + azure + ", column: input_tokens}") ==
        azure +
            ":1: the header lacks column input_tokens (needs "
            "input_tokens; found: arrival_s,prompt_tokens,output_tokens)");
  CHECK(error_of(k_poisson, "{kind: empirical, path: " + azure + "}") ==
        prompt +
            "column: required key missing in workload.synthetic.prompt_tokens at "
            "test.yaml:5:20 (a string)");
  // A bad value in the file is named by its file, line and column.
  const std::string bad_row = write_temp("z.csv", "n\n5\n0\n");
  CHECK(error_of(k_poisson, "{kind: empirical, path: " + bad_row + ", column: n}") ==
        bad_row + ":3: column n = \"0\": must be an integer from 1 to 1000000000");
  const std::string header_only = write_temp("e.csv", "n\n");
  CHECK(error_of(k_poisson, "{kind: empirical, path: " + header_only + ", column: n}") ==
        prompt + "path = \"" + header_only +
            "\" at test.yaml:5:44: the file has a header but no "
            "rows");
}

}  // namespace t_traces_synthetic_test
