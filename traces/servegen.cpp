// workload.servegen: replays one client of Alibaba's ServeGen release (alibaba/ServeGen) the way
// ServeGen's own generator builds a workload from it. Two files describe the client:
//   chunk-N-trace.csv    no header; one row per time window (600 s in the release):
//                        window_start_s, rate_per_s, cv, distribution (Gamma, Weibull or empty
//                        for an idle window), shape, scale
//   chunk-N-dataset.json {"<period start s>": {"input_tokens": "{tokens: p, ...}",
//                        "output_tokens": "..."}} -- each value a Python dict literal holding an
//                        empirical PMF; "{}" means no data for that period.
// A window of length W at rate r gets n = ceil(rate_scale * r * W) gaps drawn from the row's
// distribution with its shape; the gaps are then scaled so that all n together fill the window
// exactly (so the row's scale parameter never matters), and the arrivals are the first n - 1
// partial sums (the n-th lands on the window's end and is not a request). Lengths come from the
// latest period with data starting at or before the window, by inverting each PMF's CDF at one
// uniform shared by prompt and output (ServeGen's draw) or two independent ones.
// docs/workloads.md (ServeGen) gives the exact semantics and every message.
//
// Memory: the trace is streamed with one row of lookahead, and a window's arrivals are made one
// at a time -- the sum of its n gaps is found first on a copy of the generator, then the same
// gaps are drawn again as the requests are asked for -- so memory does not grow with the
// duration or the rate. The dataset file (a few hundred KB per client) is parsed whole up front.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/csv_columns.h"
#include "core/errors.h"
#include "core/random.h"
#include "traces/arrival_process.h"
#include "traces/factories.h"
#include "traces/servegen_dataset.h"

namespace servesim {
namespace {

using servegen::Period;
using servegen::read_dataset;

constexpr double k_max_clock_s = 9.0e9;
/// Only the shape of a window's gap law matters; outside this range the draws under- or
/// overflow doubles (a Weibull shape of 0.001 raises an exponential draw to the 1000th power).
constexpr double k_min_shape = 0.01, k_max_shape = 1000.0;
constexpr uint64_t k_length_seed_salt = 0x6c656e67746873;  // "lengths"

// ---- the trace: one row per window -------------------------------------------------------------

enum class GapLaw { None, Gamma, Weibull };

struct Row {
  size_t line = 0;
  int64_t start_s = 0;
  double rate_per_s = 0;
  GapLaw law = GapLaw::None;
  double shape = 0;
};

class TraceRows {
 public:
  explicit TraceRows(const std::string& path)
      : m_in(path, std::ios::binary), m_name(printable(path, 1024)) {
    if (!m_in) throw InputError(fmt::format("{}: cannot open the file", m_name));
  }
  const std::string& name() const { return m_name; }

  /// The next non-blank row; false at the end. Throws naming file:line and the column.
  bool next(Row& row) {
    std::string line;
    for (;;) {
      if (!read_bounded_line(m_in, line, CsvColumns::k_max_line_bytes, m_name, m_line + 1,
                             "ServeGen trace row"))
        return false;
      ++m_line;
      if (line.find_first_not_of(" \t\r") != std::string::npos) break;
    }
    const std::vector<std::string> fields = csv_fields(line, m_name, m_line);
    const std::vector<std::string_view> f(fields.begin(), fields.end());
    if (f.size() != 6)
      throw InputError(
          fmt::format("{}:{}: {} fields, expected 6 (window_start_s, rate_per_s, cv, "
                      "distribution, shape, scale; no header): {}",
                      m_name, m_line, f.size(), quote_input(line, 80)));
    row.line = m_line;
    const double start = number(f, 0, 0, k_max_clock_s);
    if (start != std::floor(start)) bad(f, 0, "must be an integer number of seconds from 0 to 9e9");
    row.start_s = static_cast<int64_t>(start);
    if (m_line_prev > 0 && row.start_s <= m_start_prev)
      throw InputError(
          fmt::format("{}:{}: column 1 (window_start_s) = {} is not after the previous "
                      "row's {} (line {}): windows must be in increasing order",
                      m_name, m_line, quote_input(f[0]), m_start_prev, m_line_prev));
    row.rate_per_s = number(f, 1, 0, 1e9);
    (void)number(f, 2, 0, 1e9);  // cv: measured on the original trace, not used to generate
    const double shape = number(f, 4, -1e300, 1e300);
    const double scale = number(f, 5, -1e300, 1e300);
    if (f[3].empty()) {
      if (row.rate_per_s > 0)
        bad(f, 3,
            fmt::format("is empty (an idle window) but the rate is {}: name the gap "
                        "distribution, Gamma or Weibull",
                        f[1]));
      row.law = GapLaw::None;
    } else if (f[3] == "Gamma" || f[3] == "Weibull") {
      row.law = f[3] == "Gamma" ? GapLaw::Gamma : GapLaw::Weibull;
      if (!(shape >= k_min_shape && shape <= k_max_shape))
        bad(f, 4,
            fmt::format("the {} shape must be from {} to {}", f[3], k_min_shape, k_max_shape));
      if (!(scale > 0)) bad(f, 5, fmt::format("the {} scale must be > 0", f[3]));
    } else {
      bad(f, 3, "must be Gamma, Weibull, or empty for an idle window");
    }
    row.shape = shape;
    m_start_prev = row.start_s;
    m_line_prev = m_line;
    return true;
  }

 private:
  static std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
      s.remove_suffix(1);
    return s;
  }
  [[noreturn]] void bad(const std::vector<std::string_view>& f, size_t k,
                        const std::string& allowed) const {
    static const char* const names[] = {"window_start_s", "rate_per_s", "cv",
                                        "distribution",   "shape",      "scale"};
    throw InputError(fmt::format("{}:{}: column {} ({}) = {}: {}", m_name, m_line, k + 1, names[k],
                                 quote_input(f[k]), allowed));
  }
  double number(const std::vector<std::string_view>& f, size_t k, double min, double max) const {
    double v = 0;
    const std::string_view s = f[k];
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) ||
        v < min || v > max)
      bad(f, k,
          min > -1e300 ? fmt::format("must be a finite number from {} to {:g}", min, max)
                       : std::string("must be a finite number"));
    return v;
  }

  std::ifstream m_in;
  std::string m_name;
  size_t m_line = 0, m_line_prev = 0;
  int64_t m_start_prev = 0;
};

// ---- the generator -----------------------------------------------------------------------------

struct Options {
  std::string trace, dataset;
  double start_s = 0, end_s = k_max_clock_s;
  int64_t max_requests = 0;  // 0: no cap
  double rate_scale = 1;
  bool shared_uniform = true;
  std::string where;  // "workload.servegen in file", for messages
};

class ServeGen final : public WorkloadSource {
 public:
  ServeGen(Options o, uint64_t seed)
      : m_o(std::move(o)),
        m_periods(read_dataset(m_o.dataset)),
        m_rows(m_o.trace),
        m_arrival_rng(seed),
        m_length_rng(seed ^ k_length_seed_salt) {
    m_has_next = m_rows.next(m_next);
    m_pending = make_next(m_lookahead);
    if (!m_pending)
      throw InputError(fmt::format(
          "{}: no request from {} s to {} s of {}: every window there is idle or too slow to "
          "hold one (a window at rate r and length W holds ceil(rate_scale * r * W) - 1)",
          m_o.where, m_o.start_s, m_o.end_s, m_rows.name()));
  }

  bool next(RequestSpec& out) override {
    if (!m_pending) return false;
    out = std::move(m_lookahead);
    m_pending = make_next(m_lookahead);
    return true;
  }
  size_t size_hint() const override { return 0; }

 private:
  /// The next request into `r`; false when there are no more.
  bool make_next(RequestSpec& r) {
    if (m_o.max_requests > 0 && m_made == m_o.max_requests) return false;
    while (m_drawn + 1 >= m_gaps)  // the window's last gap ends it; no request there
      if (!open_window()) return false;
    m_cum += draw_gap(m_arrival_rng);
    ++m_drawn;
    const double frac =
        m_sum > 0 ? m_cum / m_sum : static_cast<double>(m_drawn) / static_cast<double>(m_gaps);
    const double at_s = (m_from_s - m_o.start_s) + (m_to_s - m_from_s) * frac;
    r = RequestSpec{};
    r.id = static_cast<uint64_t>(m_made++);
    // Rounding must not let a late arrival of one window pass the next window's first.
    r.arrival = std::max(Time::from_seconds(at_s), m_last);
    m_last = r.arrival;
    const double u = m_length_rng.uniform01();
    r.prompt_tokens = m_period->input.quantile(u);
    r.output_tokens = m_period->output.quantile(m_o.shared_uniform ? u : m_length_rng.uniform01());
    return true;
  }

  double draw_gap(Rng& rng) const {
    return m_law == GapLaw::Gamma ? rng.gamma(m_shape) : rng.weibull(m_shape);
  }

  /// Moves to the next window that overlaps [start_s, end_s) and holds a request; false at the
  /// end of the trace or of the replay.
  bool open_window() {
    if (m_drawn > 0) m_arrival_rng = m_after_window;  // skip the unused last gap
    m_drawn = m_gaps = 0;
    while (m_has_next) {
      const Row row = m_next;
      m_has_next = m_rows.next(m_next);
      // A window lasts until the next row's start; the last one as long as the one before it
      // (600 s when the trace has one row).
      const double length_s =
          m_has_next ? static_cast<double>(m_next.start_s - row.start_s) : m_last_length_s;
      m_last_length_s = length_s;
      const double from_s = std::max(static_cast<double>(row.start_s), m_o.start_s);
      const double to_s = std::min(static_cast<double>(row.start_s) + length_s, m_o.end_s);
      if (static_cast<double>(row.start_s) >= m_o.end_s) return m_has_next = false;
      if (!(to_s > from_s) || row.law == GapLaw::None) continue;
      const double n = std::ceil(m_o.rate_scale * row.rate_per_s * (to_s - from_s));
      if (n < 2) continue;
      m_law = row.law;
      m_shape = row.shape;
      m_gaps = static_cast<int64_t>(n);
      m_from_s = from_s;
      m_to_s = to_s;
      m_period = period_for(row, m_gaps - 1);
      // The sum of the window's gaps, from a copy of the generator; make_next() then draws the
      // same gaps again, one per request.
      m_after_window = m_arrival_rng;
      m_sum = 0;
      for (int64_t k = 0; k < m_gaps; ++k) m_sum += draw_gap(m_after_window);
      if (!std::isfinite(m_sum)) m_sum = 0;  // unreachable within the shape bounds; even spacing
      m_cum = 0;
      return true;
    }
    return false;
  }

  const Period* period_for(const Row& row, int64_t requests) const {
    const double at_s = static_cast<double>(row.start_s);
    auto it = std::upper_bound(m_periods.begin(), m_periods.end(), at_s,
                               [](double t, const Period& p) { return t < p.start_s; });
    if (it == m_periods.begin())
      throw InputError(fmt::format(
          "{}:{}: the window at {} s holds {} requests but {} has no lengths for it: no period "
          "starting at or before {} s has input_tokens and output_tokens ({})",
          m_rows.name(), row.line, row.start_s, requests, printable(m_o.dataset, 1024), row.start_s,
          m_periods.empty() ? std::string("every period is \"{}\"")
                            : fmt::format("the first starts at {} s", m_periods.front().start_s)));
    return &*std::prev(it);
  }

  Options m_o;
  std::vector<Period> m_periods;
  TraceRows m_rows;
  Row m_next;
  bool m_has_next = false;
  double m_last_length_s = 600;
  Rng m_arrival_rng, m_length_rng, m_after_window{0};
  // The open window: [m_from_s, m_to_s) on the trace's clock, its gap law, its n gaps (m_gaps),
  // how many have been drawn and their running sum, against the sum of all n.
  GapLaw m_law = GapLaw::None;
  double m_shape = 1, m_from_s = 0, m_to_s = 0, m_sum = 0, m_cum = 0;
  int64_t m_gaps = 0, m_drawn = 0;
  const Period* m_period = nullptr;
  int64_t m_made = 0;
  Time m_last;
  RequestSpec m_lookahead;  // the next request, made one ahead so an empty replay fails up front
  bool m_pending = false;
};

}  // namespace

std::unique_ptr<WorkloadSource> make_servegen(const Cfg& c, uint64_t seed) {
  Options o;
  o.trace = c.existing_file("trace", "ServeGen trace file");
  if (c.has("dataset")) {
    o.dataset = c.existing_file("dataset", "ServeGen dataset file");
  } else {
    const std::string suffix = "-trace.csv";
    if (o.trace.size() < suffix.size() ||
        o.trace.compare(o.trace.size() - suffix.size(), suffix.size(), suffix) != 0)
      c.fail("trace",
             "does not end in -trace.csv, so the dataset file cannot be found beside "
             "it: give workload.servegen.dataset");
    o.dataset = o.trace.substr(0, o.trace.size() - suffix.size()) + "-dataset.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.dataset, ec))
      c.fail("trace", fmt::format("no dataset file beside it ({}): give workload.servegen.dataset",
                                  printable(o.dataset, 1024)));
  }
  o.start_s = c.get_real("start_s", 0.0, {0.0, k_max_clock_s, false});
  if (const auto end = c.optional_real("end_s", {0.0, k_max_clock_s, true})) {
    if (!(*end > o.start_s)) c.fail("end_s", fmt::format("must be > start_s ({})", o.start_s));
    o.end_s = *end;
  }
  o.max_requests = c.optional_int("requests", {1, int64_t{1} << 40}).value_or(0);
  o.rate_scale = c.get_real("rate_scale", 1.0, {0.0, 1e6, true});
  o.shared_uniform = c.get_choice("length_draw", "shared", {"independent", "shared"}) == "shared";
  o.where = fmt::format("{} in {}", c.path(), c.doc().file());
  return std::make_unique<ServeGen>(std::move(o), seed);
}

}  // namespace servesim
