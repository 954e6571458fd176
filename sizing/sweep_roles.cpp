#include "sizing/sweep_roles.h"

#include <fmt/format.h>

#include <string_view>

namespace servesim {
namespace {

const std::vector<std::string>& role_names() {
  static const std::vector<std::string> names{"deployment", "scenario"};
  return names;
}

// A rate-like key component: "rate", "rate_scale", "rate_per_s", "target_rate_per_s"...
bool rate_like(std::string_view part) {
  return part == "rate" || part.starts_with("rate_") || part.find("_rate") != std::string::npos;
}

}  // namespace

const char* role_name(AxisRole r) { return r == AxisRole::Scenario ? "scenario" : "deployment"; }

AxisRole inferred_role(const std::string& key) {
  const std::string_view k(key);
  const std::string_view first = k.substr(0, k.find('.'));
  const size_t dot = k.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? k : k.substr(dot + 1);
  if (first == "admission") return AxisRole::Deployment;  // a rate limit is the server's choice
  if (first == "abandonment") return AxisRole::Scenario;  // what clients do
  if (first == "workload" || first == "slo" || first == "seed" || rate_like(last))
    return AxisRole::Scenario;
  return AxisRole::Deployment;
}

AxisForm read_axis_form(const Cfg& axes, const std::string& key, const YAML::Node& node) {
  AxisForm f;
  if (!node.IsMap()) {
    f.values = node;
    return f;
  }
  const Cfg c = axes.child(key);
  for (const auto& kv : node) {
    const std::string k = kv.first.Scalar();
    if (k != "values" && k != "role")
      c.fail(k, fmt::format("unknown key{}: an axis given as a map has `values` (a list) and "
                            "`role` ({})",
                            did_you_mean(k, {"values", "role"}), join_names(role_names())));
  }
  if (!c.has("values")) c.fail("", "needs `values`, a non-empty list of values");
  f.values = c.node("values");
  if (c.has("role"))
    f.role = c.get_choice("role", role_names()) == "scenario" ? AxisRole::Scenario
                                                              : AxisRole::Deployment;
  return f;
}

bool SweepSpec::has_scenario_axes() const {
  for (const auto& a : axes)
    if (a.role == AxisRole::Scenario) return true;
  return false;
}

size_t SweepSpec::scenario_count() const {
  size_t n = 1;
  for (const auto& a : axes)
    if (a.role == AxisRole::Scenario) n *= a.values.size();
  return n;
}

size_t SweepSpec::scenario_of(size_t i) const {
  const std::vector<size_t> c = coordinates(i);
  size_t s = 0;
  for (size_t k = 0; k < axes.size(); ++k)
    if (axes[k].role == AxisRole::Scenario) s = s * axes[k].values.size() + c[k];
  return s;
}

namespace {

std::string label_of(const SweepSpec& spec, size_t i, AxisRole role) {
  const std::vector<size_t> c = spec.coordinates(i);
  std::string out;
  for (size_t k = 0; k < spec.axes.size(); ++k)
    if (spec.axes[k].role == role)
      out += fmt::format("{}{}={}", out.empty() ? "" : ";", spec.axes[k].key,
                         spec.axes[k].values[c[k]]);
  return out;
}

}  // namespace

std::string SweepSpec::scenario_label(size_t i) const {
  return label_of(*this, i, AxisRole::Scenario);
}

std::string SweepSpec::deployment_label(size_t i) const {
  const std::string l = label_of(*this, i, AxisRole::Deployment);
  return l.empty() ? "base" : l;
}

}  // namespace servesim
