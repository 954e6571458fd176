// workload.servegen on an excerpt of ServeGen's m-large client (tests/data/README.md): eleven
// 600 s windows from 31,200 s (one idle, one Gamma window at 0.0433/s, four idle, six Weibull
// windows at 1.6 to 3.2/s) and the length PMFs of the period starting at 21,600 s.
//
// Tolerances: a statistical check allows 5 standard deviations of its statistic, measured over
// seeds 1..30 (written next to the check); the counts and bounds are exact.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/traces/trace_test_support.h"

namespace t_traces_servegen_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_trace = k_test_data + "servegen_m_large_excerpt-trace.csv";

/// The requests of workload.servegen with the excerpt and `keys` (a flow map's body).
std::vector<RequestSpec> replay(const std::string& keys = "", uint64_t seed = 1) {
  auto source = workload_of(
      fmt::format("servegen: {{trace: {}{}{}}}", k_trace, keys.empty() ? "" : ", ", keys), seed);
  return drain(*source);
}

std::vector<double> seconds(const std::vector<RequestSpec>& rs) {
  std::vector<double> out;
  for (const auto& r : rs) out.push_back(r.arrival.seconds());
  return out;
}

/// Gaps between arrivals, the first from `from_s`.
std::vector<double> gaps(const std::vector<RequestSpec>& rs, double from_s) {
  std::vector<double> out;
  for (double t : seconds(rs)) {
    out.push_back(t - from_s);
    from_s = t;
  }
  return out;
}

double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

double cv(const std::vector<double>& x) {
  const double m = mean(x);
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size())) / m;
}

/// The message replaying `trace_text` (and `dataset_text`, when given) throws.
std::string servegen_error(const std::string& trace_text, const std::string& dataset_text = "",
                           const std::string& keys = "") {
  const std::string trace = write_temp("c-trace.csv", trace_text);
  std::string extra = keys;
  if (!dataset_text.empty())
    extra +=
        (extra.empty() ? "" : ", ") + ("dataset: " + write_temp("c-dataset.json", dataset_text));
  else
    extra += (extra.empty() ? "" : ", ") +
             ("dataset: " + k_test_data + "servegen_m_large_excerpt-dataset.json");
  return error_from([&] {
    auto source = workload_of(fmt::format("servegen: {{trace: {}, {}}}", trace, extra));
    (void)drain(*source);
  });
}

const std::string k_gamma_row = "0,0.5,1.0,Gamma,1.0,2.0\n";

}  // namespace

TEST_CASE("servegen: a window at rate r holds ceil(r * 600) - 1 requests, inside the window",
          "[traces]") {
  const auto rs = replay();
  // Busy windows of the excerpt: start, ceil(rate * 600) - 1 (computed from the file's rates).
  const std::vector<std::pair<double, size_t>> busy = {{31800, 25},   {34200, 974},  {34800, 1467},
                                                       {35400, 1690}, {36000, 1305}, {36600, 1714},
                                                       {37200, 1903}};
  size_t total = 0;
  for (const auto& [start, count] : busy) {
    const auto start_s = start;  // clang 14 cannot capture a structured binding
    const auto in_window = std::count_if(rs.begin(), rs.end(), [&](const RequestSpec& r) {
      return r.arrival.seconds() >= start_s && r.arrival.seconds() < start_s + 600;
    });
    INFO("window at " << start_s);
    CHECK(static_cast<size_t>(in_window) == count);
    total += count;
  }
  // Nothing else: the idle windows (31,200 s and 32,400 to 34,200 s) hold no request.
  CHECK(rs.size() == total);
  CHECK(rs.front().arrival.seconds() > 31800);
  // The replayed rate is within 1/600 per second of the file's (the n-th arrival is dropped).
  CHECK(std::fabs(static_cast<double>(busy[1].second) / 600 - 1.625) <= 1.0 / 600 + 1e-12);
  for (size_t i = 0; i < rs.size(); ++i) {
    REQUIRE(rs[i].id == i);
    if (i > 0) REQUIRE(rs[i].arrival >= rs[i - 1].arrival);
  }
}

TEST_CASE("servegen: start_s and end_s cut the windows, and start_s becomes time 0", "[traces]") {
  // Half of the 34,200 s window: ceil(1.625 * 300) - 1 = 487 requests in [0, 300) s.
  const auto rs = replay("start_s: 34500, end_s: 34800");
  CHECK(rs.size() == 487);
  CHECK(rs.front().arrival.seconds() >= 0);
  CHECK(rs.back().arrival.seconds() < 300);
  CHECK(replay("start_s: 34500, end_s: 34800, requests: 10").size() == 10);
  // rate_scale multiplies each window's rate: ceil(2 * 1.625 * 300) - 1.
  CHECK(replay("start_s: 34500, end_s: 34800, rate_scale: 2").size() == 974);
}

TEST_CASE("servegen: an idle stretch replays as an error, not as an empty run", "[traces]") {
  const std::string msg = error_from([] { (void)replay("start_s: 32400, end_s: 34200"); });
  CHECK_THAT(msg, Catch::Contains("no request from 32400 s to 34200 s"));
  CHECK_THAT(msg, Catch::Contains("servegen_m_large_excerpt-trace.csv"));
}

TEST_CASE("servegen: Gamma gaps have the file's cv, Weibull gaps the law of their shape",
          "[traces]") {
  // Gamma window (31,800 s), shape 0.9094: the file's cv 1.0486 is 1/sqrt(shape). At 1000 times
  // the rate, 25,999 gaps; sample CV sd over seeds 1..30: 0.0068, so 5 sd = 0.034.
  const auto g = replay("start_s: 31800, end_s: 32400, rate_scale: 1000");
  REQUIRE(g.size() == 25999);
  CHECK(cv(gaps(g, 0)) == Approx(1.0486253901923495).margin(0.034));
  // Weibull window (34,200 s), shape 0.3519. Its cv column (10.47) was measured on the original
  // requests and is not what a Weibull of that shape gives (3.93), so the check is on the shape:
  // median gap / mean gap = ln(2)^(1/k) / Gamma(1 + 1/k) = 0.07151. At 100 times the rate,
  // 97,499 gaps; sd over seeds 1..30: 0.0011, so 5 sd = 0.0056.
  auto w = gaps(replay("start_s: 34200, end_s: 34800, rate_scale: 100"), 0);
  REQUIRE(w.size() == 97499);
  const double m = mean(w);
  std::nth_element(w.begin(), w.begin() + static_cast<long>(w.size() / 2), w.end());
  CHECK(w[w.size() / 2] / m == Approx(0.07150793).margin(0.0056));
}

TEST_CASE("servegen: lengths follow the period's PMFs", "[traces]") {
  // Period 21,600 s: input mean 350.30 (sd 36.79, keys 143..1616), output mean 80.71 (sd 32.09,
  // keys 18..332). Over 9,078 requests, sd of the means over seeds 1..30: 0.41 and 0.33, so
  // 5 sd = 2.0 and 1.7.
  const auto rs = replay();
  std::vector<double> in, out;
  for (const auto& r : rs) {
    in.push_back(r.prompt_tokens);
    out.push_back(r.output_tokens);
    REQUIRE(r.prompt_tokens >= 143);
    REQUIRE(r.prompt_tokens <= 1616);
    REQUIRE(r.output_tokens >= 18);
    REQUIRE(r.output_tokens <= 332);
  }
  CHECK(mean(in) == Approx(350.2994).margin(2.0));
  CHECK(mean(out) == Approx(80.7122).margin(1.7));
  // length_draw: shared (the default, as ServeGen) takes both at one quantile, so ordering the
  // requests by prompt orders their outputs too; independent draws do not.
  const auto comonotone = [](std::vector<RequestSpec> v) {
    std::sort(v.begin(), v.end(), [](const RequestSpec& a, const RequestSpec& b) {
      return std::tie(a.prompt_tokens, a.output_tokens) <
             std::tie(b.prompt_tokens, b.output_tokens);
    });
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i].output_tokens < v[i - 1].output_tokens) return false;
    return true;
  };
  CHECK(comonotone(rs));
  CHECK_FALSE(comonotone(replay("length_draw: independent")));
}

TEST_CASE("servegen: the same seed gives the same requests", "[traces]") {
  const auto a = replay("", 7), b = replay("", 7), c = replay("", 8);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].arrival == b[i].arrival);
    REQUIRE(a[i].prompt_tokens == b[i].prompt_tokens);
    REQUIRE(a[i].output_tokens == b[i].output_tokens);
  }
  // Another seed moves the arrivals, not the counts.
  REQUIRE(c.size() == a.size());
  CHECK(arrivals_ns(c) != arrivals_ns(a));
}

TEST_CASE("servegen: bad trace rows are named by file, line and column", "[traces]") {
  CHECK(servegen_error("0,0.5,1.0,Gamma,1.0\n") ==
        "c-trace.csv:1: 5 fields, expected 6 (window_start_s, rate_per_s, cv, distribution, "
        "shape, scale; no header): \"0,0.5,1.0,Gamma,1.0\"");
  CHECK(servegen_error(k_gamma_row + "600,0.5,1.0,Lognormal,1.0,2.0\n") ==
        "c-trace.csv:2: column 4 (distribution) = \"Lognormal\": must be Gamma, Weibull, or "
        "empty for an idle window");
  CHECK(servegen_error(k_gamma_row + "\n600,-1,1.0,Gamma,1.0,2.0\n") ==
        "c-trace.csv:3: column 2 (rate_per_s) = \"-1\": must be a finite number from 0 to 1e+09");
  CHECK(servegen_error("timestamp,rate,cv,pat,a,b\n") ==
        "c-trace.csv:1: column 1 (window_start_s) = \"timestamp\": must be a finite number from 0 "
        "to 9e+09");
  CHECK(servegen_error(k_gamma_row + "0,0.5,1.0,Gamma,1.0,2.0\n") ==
        "c-trace.csv:2: column 1 (window_start_s) = \"0\" is not after the previous row's 0 (line "
        "1): windows must be in increasing order");
  CHECK(servegen_error("0,0.5,1.0,,0,0\n") ==
        "c-trace.csv:1: column 4 (distribution) = \"\": is empty (an idle window) but the rate is "
        "0.5: name the gap distribution, Gamma or Weibull");
  CHECK(servegen_error("0,0.5,1.0,Weibull,0.001,1\n") ==
        "c-trace.csv:1: column 5 (shape) = \"0.001\": the Weibull shape must be from 0.01 to 1000");
}

TEST_CASE("servegen: bad dataset entries are named by file, line, period and field", "[traces]") {
  const std::string head = "{\n  \"0\": {\n    \"input_tokens\": \"{10: 1.0}\",\n";
  CHECK(servegen_error(k_gamma_row, head + "    \"output_tokens\": \"{5: 0.5, 6: x}\"\n  }\n}\n") ==
        "c-dataset.json:4: period \"0\", field \"output_tokens\": probability \"x\" of key 6 is "
        "not a finite number >= 0 at character 13 of \"{5: 0.5, 6: x}\"");
  CHECK(
      servegen_error(k_gamma_row, head + "    \"output_tokens\": \"{5: 0.5, 6: 0.4}\"\n  }\n}\n") ==
      "c-dataset.json:4: period \"0\", field \"output_tokens\": the probabilities add up to 0.9, "
      "not 1 (within 0.0001)");
  CHECK(servegen_error(k_gamma_row, head + "    \"output_tokens\": \"{0: 1.0}\"\n  }\n}\n") ==
        "c-dataset.json:4: period \"0\", field \"output_tokens\": key \"0\" is not a token count "
        "(an integer from 1 to 1000000000) at character 2 of \"{0: 1.0}\"");
  CHECK_THAT(servegen_error(k_gamma_row, head),
             Catch::StartsWith("c-dataset.json:4: not valid JSON"));
  CHECK(
      servegen_error(k_gamma_row, "{\n  \"0\": {\n    \"input_tokens\": \"{10: 1.0}\"\n  }\n}\n") ==
      "c-dataset.json:2: period \"0\": field \"output_tokens\" is missing");
  // A busy window with no period of data at or before it.
  const std::string none =
      servegen_error(k_gamma_row, "{\"0\": {\"input_tokens\": \"{}\", \"output_tokens\": \"{}\"}}");
  CHECK_THAT(none, Catch::StartsWith("c-trace.csv:1: the window at 0 s holds 299 requests but "));
  CHECK_THAT(none, Catch::EndsWith("c-dataset.json has no lengths for it: no period starting at "
                                   "or before 0 s has input_tokens and output_tokens (every "
                                   "period is \"{}\")"));
}

TEST_CASE("servegen: config keys are checked", "[traces]") {
  CHECK_THAT(error_from([] { (void)replay("rate_scle: 2"); }), Catch::Contains("rate_scle"));
  CHECK_THAT(error_from([] { (void)replay("start_s: 600, end_s: 600"); }),
             Catch::Contains("must be > start_s (600)"));
  CHECK_THAT(error_from([] { (void)replay("length_draw: joint"); }),
             Catch::Contains("independent, shared"));
  const std::string odd = write_temp("odd.csv", k_gamma_row);
  CHECK_THAT(error_from([&] { (void)workload_of("servegen: {trace: " + odd + "}"); }),
             Catch::Contains("does not end in -trace.csv"));
}

}  // namespace t_traces_servegen_test
