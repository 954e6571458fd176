#pragma once
// One field list per summary (issue 17). Each summary struct (Summary, ReplicaSummary,
// PoolSummary, Distribution, SloSummary, ... in metrics/metrics.h; PointResult in
// sizing/sweep_run.h) lists its fields once, in a `for_each_field(summary, f)` beside the struct,
// which calls `f(Field, value)` for each field in output order. Everything that writes a summary
// walks that list: summary.json (fields_json below), the printed tables (Field::col and
// Field::row, metrics/summary_output.cpp), points.csv and the sweep's summary.json rows
// (sizing/sweep_output.cpp), and the rows MPI ranks send each other (sizing/sweep_run.cpp).
// Adding a metric is its member and its field line beside the struct, and its computation.
#include <array>
#include <concepts>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace servesim {

/// Where a field goes and how (bits of Field::outputs).
enum FieldOutput : unsigned {
  k_json = 1u << 0,        ///< a key of summary.json (a sweep: of its rows)
  k_short = 1u << 1,       ///< part of a nested struct's short form (Field::as_short)
  k_csv = 1u << 2,         ///< a column of points.csv
  k_wire = 1u << 3,        ///< sent between MPI ranks (sweep rows)
  k_lead = 1u << 4,        ///< sweep rows: before the label, axis and step_source columns
  k_measured = 1u << 5,    ///< sweep rows: empty (CSV) / null (JSON) when the point is infeasible
  k_omit_empty = 1u << 6,  ///< JSON: no key at all when empty or none (otherwise null)
  k_as_short = 1u << 7,    ///< JSON: a nested struct in its short form (its k_short fields)
};

/// A statistic of a Distribution, for a printed column.
enum class Stat : uint8_t { none, mean, p50, p90, p99, max };

/// One printed column (replica and pool tables) or row (the run's latency table) of a field.
struct Shown {
  std::string_view header;  ///< column header, or the row's label; empty: not printed
  int width = 0;            ///< column width (right-aligned)
  Stat stat = Stat::none;   ///< a Distribution's column: which statistic
  double scale = 1;         ///< printed value = value x scale (1e3: seconds as ms)
  int digits = 0;           ///< digits after the point
  std::string_view unit;    ///< a row's unit, after its values
};

/// A field of a summary: its name (JSON key, CSV column), where it goes and how it is printed.
struct Field {
  static constexpr size_t k_max_shown = 3;

  constexpr explicit Field(std::string_view n, unsigned out = k_json) : name(n), outputs(out) {}
  /// Printed as a column of the replica and pool tables.
  constexpr Field col(std::string_view header, int width, Stat stat = Stat::none, double scale = 1,
                      int digits = 0) {
    add(Shown{header, width, stat, scale, digits, {}});
    return *this;
  }
  /// A Distribution printed as a row of the run's latency table (mean p50 p90 p99 max).
  constexpr Field row(std::string_view label, double scale, std::string_view unit) {
    add(Shown{label, 0, Stat::none, scale, 3, unit});
    return *this;
  }
  /// A list of summaries: each one's position, under this key, before its fields.
  constexpr Field index(std::string_view key) {
    index_key = key;
    return *this;
  }

  std::string_view name;
  unsigned outputs = k_json;
  std::array<Shown, k_max_shown> shown{};
  size_t shown_count = 0;
  std::string_view index_key;

 private:
  constexpr void add(Shown s) {
    if (shown_count == k_max_shown) throw "Field: more printed columns than k_max_shown";
    shown[shown_count++] = s;
  }
};

/// A struct with a field list.
template <class T>
concept HasFields = requires(const T& t) {
  for_each_field(t, [](const Field&, const auto&) {});
};

/// Whether a value counts as empty for k_omit_empty.
template <class T>
[[nodiscard]] bool field_empty(const T& v) {
  if constexpr (requires { v.has_value(); })
    return !v.has_value();
  else if constexpr (requires { v.empty(); })
    return v.empty();
  else
    return false;
}

template <HasFields T>
void add_fields_json(nlohmann::ordered_json& j, const T& s, unsigned form = k_json);

/// A field's value as summary.json writes it.
template <class T>
[[nodiscard]] nlohmann::ordered_json field_json(const T& v, const Field& f) {
  using J = nlohmann::ordered_json;
  if constexpr (HasFields<T>) {
    J j = J::object();
    add_fields_json(j, v, (f.outputs & k_as_short) ? k_short : k_json);
    return j;
  } else if constexpr (requires { v.has_value(); }) {
    return v ? field_json(*v, f) : J(nullptr);
  } else if constexpr (requires {
                         v.begin()->first.size();
                         v.begin()->second;
                       }) {
    J j = J::object();  // named values: counters, or summaries by name (classes)
    for (const auto& [name, x] : v) j[name] = field_json(x, f);
    return j;
  } else if constexpr (requires { v.begin(); } && !std::is_convertible_v<T, std::string>) {
    J a = J::array();  // a list of summaries
    for (size_t i = 0; i < v.size(); ++i) {
      J e = J::object();
      if (!f.index_key.empty()) e[std::string(f.index_key)] = i;
      add_fields_json(e, v[i]);
      a.push_back(std::move(e));
    }
    return a;
  } else {
    return J(v);
  }
}

/// Adds the fields of `s` that go to `form` (k_json, or k_short for a short form) to `j`, in the
/// field list's order.
template <HasFields T>
void add_fields_json(nlohmann::ordered_json& j, const T& s, unsigned form) {
  for_each_field(s, [&](const Field& f, const auto& v) {
    if (!(f.outputs & form) || ((f.outputs & k_omit_empty) && field_empty(v))) return;
    j[std::string(f.name)] = field_json(v, f);
  });
}

/// The names of the fields of T that go to `output`, in order (T default-constructed: fields
/// present only with some values, such as a replica's pool, are not listed).
template <HasFields T>
[[nodiscard]] std::vector<std::string> field_names(unsigned output) {
  std::vector<std::string> names;
  const T none{};
  for_each_field(none, [&](const Field& f, const auto&) {
    if (f.outputs & output) names.emplace_back(f.name);
  });
  return names;
}

}  // namespace servesim
