#include "traces/length_dist.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/csv_columns.h"
#include "core/registry.h"

namespace servesim {
namespace {

constexpr int64_t k_max_tokens = 1'000'000'000;
constexpr IntRange k_tokens{1, k_max_tokens};

/// A real-valued draw rounded to the nearest integer and clamped to [min, max] (the lognormal
/// and normal kinds). Kept in double until the clamp so that huge draws cannot overflow.
int32_t round_clamp(double v, int64_t min, int64_t max) {
  return static_cast<int32_t>(
      std::clamp(std::round(v), static_cast<double>(min), static_cast<double>(max)));
}

class FixedLength final : public LengthDist {
 public:
  explicit FixedLength(int64_t value) : m_value(value) {}
  int32_t draw_tokens(Rng&) const override { return static_cast<int32_t>(m_value); }

 private:
  int64_t m_value;
};

class UniformLength final : public LengthDist {
 public:
  UniformLength(int64_t min, int64_t max) : m_min(min), m_max(max) {}
  int32_t draw_tokens(Rng& rng) const override {
    return static_cast<int32_t>(rng.uniform_int(m_min, m_max));
  }

 private:
  int64_t m_min, m_max;
};

/// round(median * exp(sigma * Z)), clamped. (The draw is unchanged from the first version:
/// golden tests and configs/default.yaml depend on it.)
class LognormalLength final : public LengthDist {
 public:
  LognormalLength(double median, double sigma, int64_t min, int64_t max)
      : m_median(median), m_sigma(sigma), m_min(min), m_max(max) {}
  int32_t draw_tokens(Rng& rng) const override {
    return round_clamp(m_median * std::exp(m_sigma * rng.normal()), m_min, m_max);
  }

 private:
  double m_median, m_sigma;
  int64_t m_min, m_max;
};

/// round(mean + stddev * Z), clamped.
class NormalLength final : public LengthDist {
 public:
  NormalLength(double mean, double stddev, int64_t min, int64_t max)
      : m_mean(mean), m_stddev(stddev), m_min(min), m_max(max) {}
  int32_t draw_tokens(Rng& rng) const override {
    return round_clamp(m_mean + m_stddev * rng.normal(), m_min, m_max);
  }

 private:
  double m_mean, m_stddev;
  int64_t m_min, m_max;
};

/// P(k) proportional to k^-s on k = min..max, by rejection-inversion (Hoermann and Derflinger,
/// "Rejection-inversion to generate variates from monotone discrete distributions", 1996):
/// O(1) time and memory per draw for any max. With h(x) = (x/min)^-s and H its integral from
/// min, x drawn by inverting H over [min - 1/2, max + 1/2] rounds to k; it is kept when it falls
/// in the part of k's cell whose area under h is exactly h(k). Since h is convex, every cell has
/// at least that much area, so the kept k are exactly Zipf. Cell `min` is cut to area h(min),
/// so it is always kept; a try is wasted only in the thin convexity gap of a cell. Scaling h by
/// min keeps H's values near min well apart: unscaled, x^(1-s) for a large min and s rounds
/// every H(x) to the same double and no draw is ever accepted.
class ZipfLength final : public LengthDist {
 public:
  ZipfLength(double s, int64_t min, int64_t max)
      : m_s(s),
        m_min(min),
        m_max(max),
        m_x0(static_cast<double>(min)),
        m_u_low(big_h(m_x0 + 0.5) - 1.0),  // h(min) = 1
        m_u_high(big_h(static_cast<double>(max) + 0.5)) {}

  int32_t draw_tokens(Rng& rng) const override {
    for (;;) {
      const double u = m_u_high + rng.uniform01() * (m_u_low - m_u_high);  // in (low, high]
      const double x = big_h_inverse(u);
      // Far in the tail of a steep law H flattens out in doubles and its inverse overflows;
      // that region's probability is below double precision, so the try is simply redrawn.
      if (!std::isfinite(x)) continue;
      const int64_t k = std::clamp(static_cast<int64_t>(std::llround(x)), m_min, m_max);
      const double kd = static_cast<double>(k);
      if (u >= big_h(kd + 0.5) - h(kd)) return static_cast<int32_t>(k);
    }
  }

 private:
  // (e^t - 1) / t and log(1 + t) / t, continuous through t = 0 (s = 1, or x near min).
  static double expm1_over(double t) {
    return std::fabs(t) > 1e-8 ? std::expm1(t) / t : 1.0 + t / 2.0;
  }
  static double log1p_over(double t) {
    return std::fabs(t) > 1e-8 ? std::log1p(t) / t : 1.0 - t / 2.0;
  }
  [[nodiscard]] double h(double x) const { return std::exp(-m_s * std::log(x / m_x0)); }
  /// H(x) = min ((x/min)^(1-s) - 1) / (1-s), or min log(x/min) when s = 1.
  [[nodiscard]] double big_h(double x) const {
    const double log_x = std::log(x / m_x0);
    return m_x0 * expm1_over((1.0 - m_s) * log_x) * log_x;
  }
  [[nodiscard]] double big_h_inverse(double u) const {
    const double y = u / m_x0;
    return m_x0 * std::exp(y * log1p_over((1.0 - m_s) * y));
  }

  double m_s;
  int64_t m_min, m_max;
  double m_x0;               // min, the scale of h
  double m_u_low, m_u_high;  // u is uniform on (H(min + 1/2) - h(min), H(max + 1/2)]
};

/// One of the values, each with equal probability.
class EmpiricalLength final : public LengthDist {
 public:
  explicit EmpiricalLength(std::vector<int32_t> values) : m_values(std::move(values)) {}
  int32_t draw_tokens(Rng& rng) const override {
    return m_values[static_cast<size_t>(
        rng.uniform_int(0, static_cast<int64_t>(m_values.size()) - 1))];
  }

 private:
  std::vector<int32_t> m_values;
};

/// `min` (default 1) and `max` (default 10^9) of a clamped kind; max >= min.
std::pair<int64_t, int64_t> read_clamp(const Cfg& c) {
  const int64_t min = c.get_int("min", 1, k_tokens);
  const int64_t max = c.get_int("max", k_max_tokens, k_tokens);
  if (max < min) c.fail("max", fmt::format("must be >= min ({})", min));
  return {min, max};
}

std::unique_ptr<LengthDist> read_fixed(const Cfg& c) {
  return std::make_unique<FixedLength>(c.get_int("value", k_tokens));
}

std::unique_ptr<LengthDist> read_uniform(const Cfg& c) {
  const int64_t min = c.get_int("min", k_tokens);
  const int64_t max = c.get_int("max", k_tokens);
  if (max < min) c.fail("max", fmt::format("must be >= min ({})", min));
  return std::make_unique<UniformLength>(min, max);
}

std::unique_ptr<LengthDist> read_lognormal(const Cfg& c) {
  const double median = c.get_real("median", {1.0, 1e9, false});
  const double sigma = c.get_real("sigma", {0.0, 10.0, false});
  const auto [min, max] = read_clamp(c);
  return std::make_unique<LognormalLength>(median, sigma, min, max);
}

std::unique_ptr<LengthDist> read_normal(const Cfg& c) {
  const double mean = c.get_real("mean", {0.0, 1e9, true});
  const double stddev = c.get_real("stddev", {0.0, 1e9, false});
  const auto [min, max] = read_clamp(c);
  return std::make_unique<NormalLength>(mean, stddev, min, max);
}

std::unique_ptr<LengthDist> read_zipf(const Cfg& c) {
  const double s = c.get_real("s", {0.0, 10.0, true});
  const int64_t max = c.get_int("max", k_tokens);
  const int64_t min = c.get_int("min", 1, k_tokens);
  if (max < min) c.fail("max", fmt::format("must be >= min ({})", min));
  return std::make_unique<ZipfLength>(s, min, max);
}

std::vector<int32_t> read_column(const Cfg& c) {
  const std::string path = c.existing_file("path", "empirical length file");
  const std::string column = c.get_string("column");
  CsvColumns csv(path, {column});
  std::vector<int32_t> values;
  while (csv.next_row()) values.push_back(static_cast<int32_t>(csv.integer(0, 1, k_max_tokens)));
  if (values.empty()) c.fail("path", "the file has a header but no rows");
  return values;
}

std::unique_ptr<LengthDist> read_empirical(const Cfg& c) {
  std::vector<int32_t> values;
  if (c.one_of({"path", "values"}) == "path") {
    values = read_column(c);
  } else {
    for (double v : get_number_list(c, "values", {1.0, 1e9, false}, true))
      values.push_back(static_cast<int32_t>(v));
  }
  return std::make_unique<EmpiricalLength>(std::move(values));
}

using LengthReader = std::unique_ptr<LengthDist> (*)(const Cfg&);

// Sorted by name. A new kind is one class, one reader and one line here.
constexpr Registry<LengthReader, 6> k_kinds{{{
    {"empirical", &read_empirical},
    {"fixed", &read_fixed},
    {"lognormal", &read_lognormal},
    {"normal", &read_normal},
    {"uniform", &read_uniform},
    {"zipf", &read_zipf},
}}};

class IndependentLengths final : public LengthPairs {
 public:
  IndependentLengths(std::unique_ptr<LengthDist> prompt, std::unique_ptr<LengthDist> output)
      : m_prompt(std::move(prompt)), m_output(std::move(output)) {}
  std::pair<int32_t, int32_t> draw_pair(Rng& rng) override {
    const int32_t prompt = m_prompt->draw_tokens(rng);  // named: the prompt is drawn first
    return {prompt, m_output->draw_tokens(rng)};
  }

 private:
  std::unique_ptr<LengthDist> m_prompt, m_output;
};

enum class RowOrder { Resample, Sequential, Shuffle };

/// The rows of a length-only trace. `shuffle` is a Fisher-Yates shuffle done one step per
/// request: request i swaps row i with a row drawn from i..n-1 and takes it, which gives a
/// uniformly random permutation of the rows taken in order, each row at most once.
class RowLengths final : public LengthPairs {
 public:
  RowLengths(std::vector<std::pair<int32_t, int32_t>> rows, RowOrder order)
      : m_rows(std::move(rows)), m_order(order) {}
  std::pair<int32_t, int32_t> draw_pair(Rng& rng) override {
    const int64_t last = static_cast<int64_t>(m_rows.size()) - 1;
    switch (m_order) {
      case RowOrder::Resample:
        return m_rows[static_cast<size_t>(rng.uniform_int(0, last))];
      case RowOrder::Shuffle:
        std::swap(m_rows[m_next],
                  m_rows[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(m_next), last))]);
        break;
      case RowOrder::Sequential:
        break;
    }
    return m_rows[m_next++];  // read_length_pairs() checked that the rows suffice
  }

 private:
  std::vector<std::pair<int32_t, int32_t>> m_rows;
  RowOrder m_order;
  size_t m_next = 0;
};

}  // namespace

std::unique_ptr<LengthDist> read_length_dist(const Cfg& c) { return k_kinds.pick(c, "kind")(c); }

std::vector<std::string> length_kind_names() { return k_kinds.names(); }

std::unique_ptr<LengthPairs> independent_lengths(std::unique_ptr<LengthDist> prompt,
                                                 std::unique_ptr<LengthDist> output) {
  return std::make_unique<IndependentLengths>(std::move(prompt), std::move(output));
}

std::unique_ptr<LengthPairs> read_length_pairs(const Cfg& c, int64_t requests) {
  const std::string path = c.existing_file("path", "length trace file");
  // Vidur's processed traces name them so (num_prefill_tokens, num_decode_tokens).
  const std::string prompt = c.get_string("prompt_column", "num_prefill_tokens");
  const std::string output = c.get_string("output_column", "num_decode_tokens");
  const std::string order_name =
      c.get_choice("order", "shuffle", {"resample", "sequential", "shuffle"});
  const RowOrder order = order_name == "resample"     ? RowOrder::Resample
                         : order_name == "sequential" ? RowOrder::Sequential
                                                      : RowOrder::Shuffle;
  CsvColumns csv(path, {prompt, output});
  std::vector<std::pair<int32_t, int32_t>> rows;
  while (csv.next_row())
    rows.emplace_back(static_cast<int32_t>(csv.integer(0, 1, k_max_tokens)),
                      static_cast<int32_t>(csv.integer(1, 1, k_max_tokens)));
  if (rows.empty()) c.fail("path", "the file has a header but no rows");
  if (order != RowOrder::Resample && requests > static_cast<int64_t>(rows.size()))
    c.fail("order", fmt::format("{} uses each row once, but requests ({}) is more than the file's "
                                "{} rows; order: resample draws rows with replacement",
                                order_name, requests, rows.size()));
  return std::make_unique<RowLengths>(std::move(rows), order);
}

std::vector<double> get_number_list(const Cfg& c, const std::string& key, RealRange r,
                                    bool integers) {
  if (!c.has(key)) c.fail(key, "required key missing (a list of numbers)");
  const YAML::Node list = c.node(key);
  if (!list.IsSequence() || list.size() == 0) c.fail(key, "must be a non-empty list of numbers");
  std::vector<double> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string item_path = fmt::format("{}[{}]", c.key_path(key), i);
    const auto bad = [&](const std::string& allowed) {
      throw InputError(fmt::format("{} = {} at {}: {}", item_path,
                                   item.IsScalar()     ? quote_input(item.Scalar())
                                   : item.IsSequence() ? std::string("a list")
                                                       : std::string("a map"),
                                   c.doc().where(item, item_path), allowed));
    };
    if (!item.IsScalar()) bad("must be a number");
    const std::string& s = item.Scalar();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size())
      bad(integers ? "must be an integer" : "must be a number");
    if (!std::isfinite(v)) bad(integers ? "must be an integer" : "must be a finite number");
    if (integers && v != std::floor(v)) bad("must be an integer");
    const bool low = r.min_exclusive ? !(v > r.min) : !(v >= r.min);
    if (integers && (low || v > r.max))
      bad(fmt::format("must be an integer from {} to {}", r.min, r.max));
    if (low || v > r.max) {
      const std::string lo = fmt::format("{} {}", r.min_exclusive ? ">" : ">=", r.min);
      bad(std::isinf(r.max) ? fmt::format("must be {}", lo)
                            : fmt::format("must be {} and <= {}", lo, r.max));
    }
    out.push_back(v);
  }
  return out;
}

std::unique_ptr<LengthPairs> read_request_lengths(const Cfg& c, int64_t requests) {
  if (!c.has("lengths_from"))
    return independent_lengths(read_length_dist(c.child("prompt_tokens")),
                               read_length_dist(c.child("output_tokens")));
  for (const char* key : {"prompt_tokens", "output_tokens"})
    if (c.has(key))
      c.fail(key,
             "lengths_from gives both lengths: give it, or prompt_tokens and "
             "output_tokens, not both");
  return read_length_pairs(c.child("lengths_from"), requests);
}

}  // namespace servesim
