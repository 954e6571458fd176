#include "sizing/sweep_output.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

namespace servesim {
namespace {

// The fixed columns after the axis columns. An axis whose key is one of these (replicas) has no
// column of its own: this one holds the same value.
const std::vector<std::string>& metric_columns() {
  static const std::vector<std::string> c{"feasible",
                                          "reason",
                                          "meets_slo",
                                          "pareto",
                                          "replicas",
                                          "accelerators",
                                          "cost_per_hour_usd",
                                          "requests_per_s",
                                          "output_tokens_per_s",
                                          "tokens_per_usd",
                                          "ttft_p50_ms",
                                          "ttft_p99_ms",
                                          "tpot_p50_ms",
                                          "tpot_p99_ms",
                                          "e2e_p99_ms",
                                          "goodput_req_per_s",
                                          "slo_attainment"};
  return c;
}

bool has_own_column(const SweepAxis& a) {
  const auto& m = metric_columns();
  return a.key != "point" && a.key != "label" && std::find(m.begin(), m.end(), a.key) == m.end();
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string opt_num(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; }

// The metric columns of a row, as text in metric_columns() order ("" where not measured).
std::vector<std::string> metric_fields(const PointResult& r) {
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  auto n = [&](double v) { return r.feasible ? fmt::format("{}", v) : std::string(); };
  return {b(r.feasible),
          r.reason,
          b(r.meets_slo),
          b(r.pareto),
          r.feasible ? fmt::format("{}", r.replicas) : "",
          r.feasible ? fmt::format("{}", r.accelerators) : "",
          r.feasible ? opt_num(r.cost_per_hour_usd) : "",
          n(r.requests_per_s),
          n(r.output_tokens_per_s),
          r.feasible ? opt_num(r.tokens_per_usd) : "",
          n(r.ttft_p50_ms),
          n(r.ttft_p99_ms),
          n(r.tpot_p50_ms),
          n(r.tpot_p99_ms),
          n(r.e2e_p99_ms),
          n(r.goodput_req_per_s),
          n(r.slo_attainment)};
}

// step_source per point, parsing the base once per distinct set of step_time overrides.
class StepSources {
 public:
  explicit StepSources(const SweepSpec& spec) : m_spec(spec) {}
  const std::string& operator()(size_t point) {
    std::string key;
    for (const auto& s : m_spec.overrides(point))
      if (s.rfind("step_time", 0) == 0) key += s + "\n";
    auto it = m_memo.find(key);
    if (it == m_memo.end()) it = m_memo.emplace(key, m_spec.step_source(point)).first;
    return it->second;
  }

 private:
  const SweepSpec& m_spec;
  std::map<std::string, std::string> m_memo;
};

nlohmann::ordered_json row_json(const SweepSpec& spec, const PointResult& r) {
  nlohmann::ordered_json j;
  j["point"] = r.point;
  j["label"] = spec.label(r.point);
  const std::vector<size_t> c = spec.coordinates(r.point);
  for (size_t k = 0; k < spec.axes.size(); ++k)
    if (has_own_column(spec.axes[k])) j[spec.axes[k].key] = spec.axes[k].values[c[k]];
  j["step_source"] = spec.step_source(r.point);
  const std::vector<std::string> f = metric_fields(r);
  const auto& names = metric_columns();
  for (size_t k = 0; k < names.size(); ++k) {
    if (k < 4) {
      j[names[k]] = k == 1 ? nlohmann::ordered_json(f[k]) : nlohmann::ordered_json(f[k] == "true");
    } else if (f[k].empty()) {
      j[names[k]] = nullptr;
    } else {
      j[names[k]] = nlohmann::ordered_json::parse(f[k]);  // the same digits as points.csv
    }
  }
  return j;
}

bool priced(const PointResult& r) { return r.feasible && r.cost_per_hour_usd.has_value(); }

}  // namespace

void mark_pareto(std::vector<PointResult>& rows) {
  std::vector<size_t> order;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].pareto = false;
    if (priced(rows[i])) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto ka = std::tuple(*rows[a].cost_per_hour_usd, rows[a].ttft_p99_ms, a);
    const auto kb = std::tuple(*rows[b].cost_per_hour_usd, rows[b].ttft_p99_ms, b);
    return ka < kb;
  });
  // Within a group of equal cost, the first has the group's lowest TTFT; a row is on the front
  // when it ties that and beats every cheaper row's TTFT.
  double best_cheaper = std::numeric_limits<double>::infinity();
  for (size_t g = 0; g < order.size();) {
    size_t e = g;
    const double cost = *rows[order[g]].cost_per_hour_usd;
    const double group_min = rows[order[g]].ttft_p99_ms;
    while (e < order.size() && *rows[order[e]].cost_per_hour_usd == cost) {
      PointResult& r = rows[order[e]];
      r.pareto = r.ttft_p99_ms == group_min && r.ttft_p99_ms < best_cheaper;
      ++e;
    }
    best_cheaper = std::min(best_cheaper, group_min);
    g = e;
  }
}

std::optional<size_t> cheapest(const std::vector<PointResult>& rows) {
  std::optional<size_t> best;
  for (size_t i = 0; i < rows.size(); ++i) {
    const PointResult& r = rows[i];
    if (!priced(r) || !r.meets_slo) continue;
    if (!best || std::pair(*r.cost_per_hour_usd, r.ttft_p99_ms) <
                     std::pair(*rows[*best].cost_per_hour_usd, rows[*best].ttft_p99_ms))
      best = i;
  }
  return best;
}

std::string points_csv(const SweepSpec& spec, const std::vector<PointResult>& rows) {
  std::string out = "point,label";
  for (const auto& a : spec.axes)
    if (has_own_column(a)) fmt::format_to(std::back_inserter(out), ",{}", csv_field(a.key));
  out += ",step_source";
  for (const auto& c : metric_columns()) fmt::format_to(std::back_inserter(out), ",{}", c);
  out += "\n";
  StepSources source(spec);
  for (const PointResult& r : rows) {
    out += fmt::format("{},{}", r.point, csv_field(spec.label(r.point)));
    const std::vector<size_t> c = spec.coordinates(r.point);
    for (size_t k = 0; k < spec.axes.size(); ++k)
      if (has_own_column(spec.axes[k]))
        fmt::format_to(std::back_inserter(out), ",{}", csv_field(spec.axes[k].values[c[k]]));
    fmt::format_to(std::back_inserter(out), ",{}", csv_field(source(r.point)));
    for (const auto& f : metric_fields(r))
      fmt::format_to(std::back_inserter(out), ",{}", csv_field(f));
    out += "\n";
  }
  return out;
}

std::string sweep_summary_json(const SweepSpec& spec, const std::vector<PointResult>& rows) {
  nlohmann::ordered_json j;
  j["kind"] = "sweep";
  j["sweep"] = spec.file;
  j["base"] = spec.base_file;
  j["mode"] = spec.mode == SweepMode::Fixed ? "fixed" : "min_replicas";
  j["price_tier"] = spec.price_tier;
  nlohmann::ordered_json slo;
  slo["ttft_ms"] = spec.slo.ttft_ms ? nlohmann::ordered_json(*spec.slo.ttft_ms) : nullptr;
  slo["tpot_ms"] = spec.slo.tpot_ms ? nlohmann::ordered_json(*spec.slo.tpot_ms) : nullptr;
  slo["percentile"] = spec.slo.percentile;
  slo["min_attainment"] =
      spec.slo.min_attainment ? nlohmann::ordered_json(*spec.slo.min_attainment) : nullptr;
  j["slo"] = slo;
  j["axes"] = nlohmann::ordered_json::array();
  for (const auto& a : spec.axes) j["axes"].push_back({{"key", a.key}, {"values", a.values}});
  j["points"] = rows.size();
  j["feasible"] = std::count_if(rows.begin(), rows.end(), [](auto& r) { return r.feasible; });
  j["meeting_slo"] = std::count_if(rows.begin(), rows.end(), [](auto& r) { return r.meets_slo; });
  const std::optional<size_t> best = cheapest(rows);
  j["cheapest"] = best ? row_json(spec, rows[*best]) : nlohmann::ordered_json();
  std::vector<size_t> front;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].pareto) front.push_back(i);
  std::sort(front.begin(), front.end(), [&](size_t a, size_t b) {
    return std::tuple(*rows[a].cost_per_hour_usd, rows[a].ttft_p99_ms, a) <
           std::tuple(*rows[b].cost_per_hour_usd, rows[b].ttft_p99_ms, b);
  });
  j["pareto_front"] = nlohmann::ordered_json::array();
  for (size_t i : front) j["pareto_front"].push_back(row_json(spec, rows[i]));
  return j.dump(2) + "\n";
}

std::string sweep_report(const SweepSpec& spec, const std::vector<PointResult>& rows) {
  const auto feasible = std::count_if(rows.begin(), rows.end(), [](auto& r) { return r.feasible; });
  const auto meeting = std::count_if(rows.begin(), rows.end(), [](auto& r) { return r.meets_slo; });
  std::string out = fmt::format("points     {} ({} feasible, {} meet the SLOs)\n", rows.size(),
                                feasible, meeting);
  // Where the points' step times come from, when they differ (the accelerator shorthand on the
  // operator model): each source with the points it times, as points.csv's step_source.
  std::map<std::string, std::vector<size_t>> sources;
  StepSources source(spec);
  for (const PointResult& r : rows) sources[source(r.point)].push_back(r.point);
  if (sources.size() > 1) {
    out += "step times";
    const char* sep = " ";
    for (const auto& [name, points] : sources) {
      out += fmt::format("{}{} (point{} {})", sep, name, points.size() > 1 ? "s" : "",
                         fmt::join(points, ", "));
      sep = "; ";
    }
    out += "\n";
  }
  auto line = [&](const PointResult& r) {
    return fmt::format("{:>5}  {:>9}  {:>8.1f}  {:>8.1f}  {:>12.0f}  {:>5}  {}\n", r.point,
                       r.cost_per_hour_usd ? fmt::format("{:.2f}", *r.cost_per_hour_usd) : "-",
                       r.ttft_p99_ms, r.tpot_p99_ms, r.tokens_per_usd.value_or(0),
                       r.meets_slo ? "yes" : "no", spec.label(r.point));
  };
  const std::string head =
      fmt::format("{:>5}  {:>9}  {:>8}  {:>8}  {:>12}  {:>5}  {}\n", "point", "$/hour", "TTFT p99",
                  "TPOT p99", "tokens/$", "meets", "label") +
      fmt::format("{:>5}  {:>9}  {:>8}  {:>8}\n", "", "", "ms", "ms");
  if (const auto best = cheapest(rows))
    out += "\ncheapest meeting the SLOs\n" + head + line(rows[*best]);
  else
    out += "\nno priced point meets the SLOs\n";
  std::vector<size_t> front;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].pareto) front.push_back(i);
  std::sort(front.begin(), front.end(), [&](size_t a, size_t b) {
    return std::tuple(*rows[a].cost_per_hour_usd, rows[a].ttft_p99_ms, a) <
           std::tuple(*rows[b].cost_per_hour_usd, rows[b].ttft_p99_ms, b);
  });
  out +=
      fmt::format("\nPareto front (cost per hour vs p99 TTFT), {} points\n", front.size()) + head;
  for (size_t i : front) out += line(rows[i]);
  return out;
}

}  // namespace servesim
