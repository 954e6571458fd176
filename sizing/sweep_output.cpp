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

#include "metrics/exports.h"

namespace servesim {
namespace {

// The columns after the axis columns: the sweep point's fields (PointResult's field list in
// sizing/sweep_run.h) that are not k_lead. An axis whose key is one of these (replicas) has no
// column of its own: this one holds the same value.
const std::vector<std::string>& metric_columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> names;
    const PointResult none;
    for_each_field(none, [&](const Field& f, const auto&) {
      if ((f.outputs & k_csv) && !(f.outputs & k_lead)) names.emplace_back(f.name);
    });
    return names;
  }();
  return c;
}

// --percentiles' columns, after the fields, in PointResult::latency_ms's order: vLLM's key names
// ("p99_ttft_ms"), which differ from the summary's own ttft_p99_ms (its quantile sketch's).
std::vector<std::string> latency_columns(const SweepSpec& spec) {
  std::vector<std::string> names;
  for (const char* metric : {"ttft", "tpot", "itl", "e2e"})
    for (double p : spec.percentiles)
      names.push_back(fmt::format("p{}_{}_ms", percentile_word(p), metric));
  return names;
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

// A field of a row as points.csv writes it ("" where not measured), not yet quoted.
template <class T>
std::string field_text(const Field& f, const T& v, bool feasible) {
  if ((f.outputs & k_measured) && !feasible) return "";
  if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, std::string>)
    return v;
  else if constexpr (requires { v.has_value(); })
    return v ? fmt::format("{}", *v) : "";
  else
    return fmt::format("{}", v);
}

// Calls out(field, text) for the fields of `r` that go to `output`: the lead ones (k_lead)
// or the rest.
template <class Out>
void row_fields(const PointResult& r, unsigned output, bool lead, Out&& out) {
  for_each_field(r, [&](const Field& f, const auto& v) {
    if ((f.outputs & output) && static_cast<bool>(f.outputs & k_lead) == lead)
      out(f, v, field_text(f, v, r.feasible));
  });
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

// A row of the sweep's summary.json: the fields in points.csv's order, numbers with the same
// digits as points.csv, null where points.csv is empty.
nlohmann::ordered_json row_json(const SweepSpec& spec, const PointResult& r) {
  using J = nlohmann::ordered_json;
  J j;
  const auto add = [&](const Field& f, const auto& v, const std::string& text) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>)
      j[std::string(f.name)] = v;
    else
      j[std::string(f.name)] = text.empty() ? J(nullptr) : J::parse(text);
  };
  row_fields(r, k_json, true, add);
  j["label"] = spec.label(r.point);
  const std::vector<size_t> c = spec.coordinates(r.point);
  for (size_t k = 0; k < spec.axes.size(); ++k)
    if (has_own_column(spec.axes[k])) j[spec.axes[k].key] = spec.axes[k].values[c[k]];
  j["step_source"] = spec.step_source(r.point);
  row_fields(r, k_json, false, add);
  const std::vector<std::string> latency = latency_columns(spec);
  for (size_t k = 0; k < latency.size(); ++k)
    j[latency[k]] = k < r.latency_ms.size() ? J(r.latency_ms[k]) : J(nullptr);
  return j;
}

bool priced(const PointResult& r) { return r.feasible && r.cost_per_hour_usd.has_value(); }

}  // namespace

namespace {

// The cheapest row meeting the SLOs among rows[members] (cheapest()'s order).
std::optional<size_t> cheapest_of(const std::vector<PointResult>& rows,
                                  const std::vector<size_t>& members) {
  std::optional<size_t> best;
  for (size_t i : members) {
    const PointResult& r = rows[i];
    if (!priced(r) || !r.meets_slo) continue;
    if (!best || std::pair(*r.cost_per_hour_usd, r.ttft_p99_ms) <
                     std::pair(*rows[*best].cost_per_hour_usd, rows[*best].ttft_p99_ms))
      best = i;
  }
  return best;
}

// Sets `pareto` on the front of rows[members].
void mark_front(std::vector<PointResult>& rows, const std::vector<size_t>& members) {
  std::vector<size_t> order;
  for (size_t i : members) {
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

// The front's rows of `members` by cost, then p99 TTFT, then point.
std::vector<size_t> front_of(const std::vector<PointResult>& rows,
                             const std::vector<size_t>& members) {
  std::vector<size_t> front;
  for (size_t i : members)
    if (rows[i].pareto) front.push_back(i);
  std::sort(front.begin(), front.end(), [&](size_t a, size_t b) {
    return std::tuple(*rows[a].cost_per_hour_usd, rows[a].ttft_p99_ms, a) <
           std::tuple(*rows[b].cost_per_hour_usd, rows[b].ttft_p99_ms, b);
  });
  return front;
}

}  // namespace

std::vector<std::vector<size_t>> rows_by_scenario(const SweepSpec& spec,
                                                  const std::vector<PointResult>& rows) {
  std::vector<std::vector<size_t>> groups(spec.scenario_count());
  for (size_t i = 0; i < rows.size(); ++i) groups.at(spec.scenario_of(rows[i].point)).push_back(i);
  return groups;
}

void mark_pareto(std::vector<PointResult>& rows, const SweepSpec& spec) {
  for (const std::vector<size_t>& group : rows_by_scenario(spec, rows)) {
    mark_front(rows, group);
    for (size_t i : group) rows[i].cheapest = false;
    if (const auto best = cheapest_of(rows, group)) rows[*best].cheapest = true;
  }
}

std::optional<size_t> cheapest(const std::vector<PointResult>& rows) {
  std::vector<size_t> all(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) all[i] = i;
  return cheapest_of(rows, all);
}

std::string points_csv(const SweepSpec& spec, const std::vector<PointResult>& rows) {
  std::string out;
  auto it = std::back_inserter(out);
  const char* sep = "";
  const auto column = [&](const std::string& name) {
    fmt::format_to(it, "{}{}", sep, csv_field(name));
    sep = ",";
  };
  const auto name_of = [&](const Field& f, const auto&, const std::string&) {
    column(std::string(f.name));
  };
  const PointResult none;
  row_fields(none, k_csv, true, name_of);
  column("label");
  for (const auto& a : spec.axes)
    if (has_own_column(a)) column(a.key);
  column("step_source");
  row_fields(none, k_csv, false, name_of);
  const std::vector<std::string> latency = latency_columns(spec);
  for (const std::string& name : latency) column(name);
  out += "\n";
  StepSources source(spec);
  for (const PointResult& r : rows) {
    sep = "";
    const auto text_of = [&](const Field&, const auto&, const std::string& text) { column(text); };
    row_fields(r, k_csv, true, text_of);
    column(spec.label(r.point));
    const std::vector<size_t> c = spec.coordinates(r.point);
    for (size_t k = 0; k < spec.axes.size(); ++k)
      if (has_own_column(spec.axes[k])) column(spec.axes[k].values[c[k]]);
    column(source(r.point));
    row_fields(r, k_csv, false, text_of);
    for (size_t k = 0; k < latency.size(); ++k)
      column(k < r.latency_ms.size() ? fmt::format("{}", r.latency_ms[k]) : std::string());
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
  slo["e2e_ms"] = spec.slo.e2e_ms ? nlohmann::ordered_json(*spec.slo.e2e_ms) : nullptr;
  slo["itl_ms"] = spec.slo.itl_ms ? nlohmann::ordered_json(*spec.slo.itl_ms) : nullptr;
  slo["percentile"] = spec.slo.percentile;
  slo["min_attainment"] =
      spec.slo.min_attainment ? nlohmann::ordered_json(*spec.slo.min_attainment) : nullptr;
  j["slo"] = slo;
  j["axes"] = nlohmann::ordered_json::array();
  for (const auto& a : spec.axes)
    j["axes"].push_back({{"key", a.key}, {"values", a.values}, {"role", role_name(a.role)}});
  j["points"] = rows.size();
  j["scenarios"] = spec.scenario_count();
  j["feasible"] = std::count_if(rows.begin(), rows.end(), [](auto& r) { return r.feasible; });
  j["meeting_slo"] = std::count_if(rows.begin(), rows.end(), [](auto& r) { return r.meets_slo; });
  // The cheapest deployment is chosen per scenario point: across scenario points (a lighter
  // traffic, a looser SLO) "cheapest" would compare traffic, not deployments.
  const std::vector<std::vector<size_t>> groups = rows_by_scenario(spec, rows);
  nlohmann::ordered_json per = nlohmann::ordered_json::array();
  std::vector<size_t> front;
  for (const std::vector<size_t>& group : groups) {
    if (group.empty()) continue;
    const size_t first = rows[group.front()].point;
    nlohmann::ordered_json scenario = nlohmann::ordered_json::object();
    const std::vector<size_t> c = spec.coordinates(first);
    for (size_t k = 0; k < spec.axes.size(); ++k)
      if (spec.axes[k].role == AxisRole::Scenario)
        scenario[spec.axes[k].key] = spec.axes[k].values[c[k]];
    const std::optional<size_t> best = cheapest_of(rows, group);
    per.push_back(
        {{"scenario", scenario},
         {"label", spec.scenario_label(first)},
         {"cheapest", best ? row_json(spec, rows[*best]) : nlohmann::ordered_json()},
         {"deployment", best ? nlohmann::ordered_json(spec.deployment_label(rows[*best].point))
                             : nlohmann::ordered_json()}});
    for (size_t i : front_of(rows, group)) front.push_back(i);
  }
  const std::optional<size_t> best = groups.size() == 1 ? cheapest(rows) : std::nullopt;
  j["cheapest"] = best ? row_json(spec, rows[*best]) : nlohmann::ordered_json();
  j["cheapest_per_scenario"] = per;
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
  const bool per_scenario = spec.scenario_count() > 1;
  const char* label_head = per_scenario ? "deployment" : "label";
  auto line = [&](const PointResult& r) {
    return fmt::format("{:>5}  {:>9}  {:>8.1f}  {:>8.1f}  {:>12.0f}  {:>5}  {}\n", r.point,
                       r.cost_per_hour_usd ? fmt::format("{:.2f}", *r.cost_per_hour_usd) : "-",
                       r.ttft_p99_ms, r.tpot_p99_ms, r.tokens_per_usd.value_or(0),
                       r.meets_slo ? "yes" : "no",
                       per_scenario ? spec.deployment_label(r.point) : spec.label(r.point));
  };

  const std::string head =
      fmt::format("{:>5}  {:>9}  {:>8}  {:>8}  {:>12}  {:>5}  {}\n", "point", "$/hour", "TTFT p99",
                  "TPOT p99", "tokens/$", "meets", label_head) +
      fmt::format("{:>5}  {:>9}  {:>8}  {:>8}\n", "", "", "ms", "ms");
  const std::vector<std::vector<size_t>> groups = rows_by_scenario(spec, rows);
  if (!per_scenario) {
    if (const auto best = cheapest(rows))
      out += "\ncheapest meeting the SLOs\n" + head + line(rows[*best]);
    else
      out += "\nno priced point meets the SLOs\n";
    const std::vector<size_t> front = front_of(rows, groups.front());
    out +=
        fmt::format("\nPareto front (cost per hour vs p99 TTFT), {} points\n", front.size()) + head;
    for (size_t i : front) out += line(rows[i]);
    return out;
  }
  // Scenario axes: the cheapest deployment and the front of each scenario point, under its
  // scenario values; the rows name the deployment only.
  std::vector<std::string> keys;
  for (const auto& a : spec.axes)
    if (a.role == AxisRole::Scenario) keys.push_back(a.key);
  out += fmt::format("\ncheapest deployment meeting the SLOs, per scenario ({})\n{}",
                     fmt::join(keys, ", "), head);
  size_t front_size = 0;
  for (const auto& group : groups) {
    if (group.empty()) continue;
    out += fmt::format("{}\n", spec.scenario_label(rows[group.front()].point));
    const std::optional<size_t> best = cheapest_of(rows, group);
    out += best ? line(rows[*best]) : "    -  no priced deployment meets the SLOs\n";
    front_size += front_of(rows, group).size();
  }
  out += fmt::format("\nPareto front (cost per hour vs p99 TTFT) per scenario, {} points\n{}",
                     front_size, head);
  for (const auto& group : groups) {
    if (group.empty()) continue;
    out += fmt::format("{}\n", spec.scenario_label(rows[group.front()].point));
    for (size_t i : front_of(rows, group)) out += line(rows[i]);
  }
  return out;
}

}  // namespace servesim
