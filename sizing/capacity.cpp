#include "sizing/capacity.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "sizing/sweep.h"

namespace servesim {
namespace {

// The override that scales the workload's rate by `s`, composed with the config's own scaling.
struct RateKnob {
  std::string key = "workload.transform.rate_scale";
  double base = 1;
  /// The requests/s the workload offers at scale 1 (the synthetic Poisson rate times base, or
  /// target_rate_per_s); 0 when the config is not a synthetic Poisson workload.
  double rate_per_s = 0;
  [[nodiscard]] std::string at(double s) const { return fmt::format("{}={}", key, base * s); }
};

/// The synthetic workload's Poisson rate, or 0.
double poisson_rate(const YAML::Node& root) {
  const YAML::Node a = yaml_child(yaml_child(yaml_child(root, "workload"), "synthetic"), "arrival");
  try {
    if (yaml_child(a, "kind").IsScalar() && a["kind"].as<std::string>() == "poisson" &&
        yaml_child(a, "rate_per_s").IsScalar())
      return a["rate_per_s"].as<double>();
  } catch (const YAML::Exception&) {
    // Not a number: the first probe's checks report it with the file and line.
  }
  return 0;
}

RateKnob rate_knob(const std::string& text, const std::string& file,
                   const std::vector<std::string>& overrides) {
  Document doc(text, file);
  for (const auto& o : overrides) doc.apply_override(o);
  RateKnob k;
  const YAML::Node root = doc.root();
  const YAML::Node t = yaml_child(yaml_child(root, "workload"), "transform");
  try {
    if (yaml_child(t, "target_rate_per_s").IsScalar()) {
      k.key = "workload.transform.target_rate_per_s";
      k.base = t["target_rate_per_s"].as<double>();
    } else if (yaml_child(t, "rate_scale").IsScalar()) {
      k.base = t["rate_scale"].as<double>();
    }
  } catch (const YAML::Exception&) {
    // Not a number: the first probe's checks report it with the file and line.
  }
  const double poisson = poisson_rate(root);
  if (poisson > 0)
    k.rate_per_s = k.key == "workload.transform.rate_scale" ? poisson * k.base : k.base;
  return k;
}

CapacityProbe probe_at(const std::string& text, const std::string& file,
                       const std::vector<std::string>& overrides, const RateKnob& knob, double s,
                       const CapacityOptions& o, TokenTimes* tokens) {
  std::vector<std::string> all = overrides;
  if (o.mlperf)
    for (std::string& m :
         mlperf_server_overrides(*o.mlperf, knob.rate_per_s * s, o.mlperf_min_duration_s))
      all.push_back(std::move(m));
  all.push_back(knob.at(s));
  CapacityProbe p{s, false,
                  run_probe(text, file, all, ProbeOptions{o.limits, o.percentiles, tokens})};
  if (!p.run.built || !p.run.error.empty()) throw InputError(p.run.error);
  if (!p.run.summary.slo)
    throw InputError(
        fmt::format("{}: capacity needs an slo section (ttft_ms, tpot_ms, e2e_ms, itl_ms; "
                    "docs/config.md#slo)",
                    file));
  p.meets_slo = meets_slo(p.run.summary, o.min_attainment);
  return p;
}

}  // namespace

CapacityResult find_capacity(const std::string& text, const std::string& file,
                             const std::vector<std::string>& overrides, const CapacityOptions& o) {
  const RateKnob knob = rate_knob(text, file, overrides);
  if (o.mlperf && !(knob.rate_per_s > 0))
    throw InputError(fmt::format(
        "{}: --mlperf needs a synthetic workload with Poisson arrivals (workload.synthetic."
        "arrival: {{kind: poisson, rate_per_s: R}}): LoadGen's Server scenario, whose query count "
        "follows from the rate",
        file));
  CapacityResult r;
  auto probe = [&](double s) {
    // Each probe records into a fresh TokenTimes; the one of the latest probe that met the SLOs
    // (always the highest such rate: the search only moves the meeting scale up) is kept.
    std::shared_ptr<TokenTimes> tokens = o.keep_tokens ? std::make_shared<TokenTimes>() : nullptr;
    r.probes.push_back(probe_at(text, file, overrides, knob, s, o, tokens.get()));
    const size_t i = r.probes.size() - 1;
    (r.probes[i].meets_slo ? r.meeting : r.failing) = i;
    if (r.probes[i].meets_slo) r.tokens = std::move(tokens);
    return r.probes[i].meets_slo;
  };
  // Bracket: from 1, double while the SLOs hold, or halve while they do not.
  if (probe(1.0)) {
    for (double s = 2; s <= o.max_scale && probe(s); s *= 2) {
    }
  } else {
    for (double s = 0.5; s >= o.min_scale && !probe(s); s /= 2) {
    }
  }
  if (!r.meeting || !r.failing) return r;
  // Bisect: the meeting scale is below the failing one (assuming monotone SLOs).
  for (;;) {
    const double lo = r.probes[*r.meeting].rate_scale, hi = r.probes[*r.failing].rate_scale;
    if (hi - lo <= o.tolerance * lo) break;
    probe((lo + hi) / 2);
  }
  return r;
}

}  // namespace servesim
