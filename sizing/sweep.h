#pragma once
// A sizing sweep (`servesim size SWEEP.yaml`, docs/sizing.md): a base scenario, SLO targets and
// axes whose cartesian product are the points. Each point is the base scenario with `--set`
// style overrides applied (Document::apply_override), so every point gets the checks a scenario
// file gets. The spec is plain data: threads and MPI ranks share one read-only SweepSpec and each
// point builds its own Document from `base_text`.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metrics.h"
#include "models/catalog.h"

namespace servesim {

/// The sweep's `slo` section: the scenario's `slo` keys plus `min_attainment`.
struct SweepSlo {
  std::optional<double> ttft_ms, tpot_ms, e2e_ms, itl_ms;
  double percentile = 99;
  /// When given, a run meets its SLOs only if this share of requests met every target.
  std::optional<double> min_attainment;

  /// The scenario override that installs the targets: "slo={ttft_ms: 2000, ...}".
  [[nodiscard]] std::string override_text() const;
};

/// Whether a run meets its SLOs: every request finished (none rejected or unfinished), each
/// target of `s.slo` met at its percentile, and attainment >= `min_attainment` when given.
/// REQUIRES: the run had an `slo` section (false otherwise).
[[nodiscard]] bool meets_slo(const Summary& s, std::optional<double> min_attainment);

/// What an axis varies (docs/sizing.md#axis-roles): a deployment choice (accelerator, replicas,
/// parallelism, scheduler and engine settings), which sizing picks the cheapest of, or the
/// scenario (request rate, trace, workload, SLO), for each value of which it picks one.
enum class AxisRole : uint8_t { Deployment, Scenario };

/// "deployment" or "scenario".
[[nodiscard]] const char* role_name(AxisRole r);
/// The role of an axis whose file gives none: scenario for a key under `workload` or `slo`, for
/// `seed`, and for a rate-like last component (`rate_scale`, `rate_per_s`, `target_rate_per_s`);
/// deployment for everything else, the shorthands included.
[[nodiscard]] AxisRole inferred_role(const std::string& key);

struct SweepAxis {
  std::string key;  ///< "accelerator" (a shorthand) or a key path
  AxisRole role = AxisRole::Deployment;
  bool role_given = false;          ///< `role:` in the sweep file (else inferred_role(key))
  std::vector<std::string> values;  ///< each value as flow-style YAML, as labels show it
  /// The overrides each value stands for (one for a key path, several for a shorthand).
  std::vector<std::vector<std::string>> expansions;
  std::string where;  ///< "file:line:col" of the axis key, for messages
};

enum class SweepMode : uint8_t { Fixed, MinReplicas };

struct SweepSpec {
  std::string file;       ///< the sweep file, as named on the command line
  std::string base_text;  ///< the base scenario's YAML
  std::string base_file;  ///< its name for messages; relative paths resolve against its folder
  std::vector<std::string> sets;  ///< "key=value" applied to every point before its axes
  SweepSlo slo;
  SweepMode mode = SweepMode::Fixed;
  int64_t max_replicas = 64;  ///< min_replicas: the most replicas tried
  std::string accelerator;    ///< prices points whose step_time names no hardware ("": none)
  std::string price_tier = k_default_price_tier;  ///< the catalogue price tier points pay
  std::vector<SweepAxis> axes;
  /// Not from the file: `servesim size --percentiles` (sweep(percentiles=...)), the latency
  /// percentiles each point's row reports (PointResult::latency_ms); empty: none.
  std::vector<double> percentiles;

  /// The product of the axes' sizes (1 with no axes). Capped by load_sweep at k_max_points.
  [[nodiscard]] size_t point_count() const;
  /// Each axis's value index for point `i`; the last axis varies fastest.
  [[nodiscard]] std::vector<size_t> coordinates(size_t i) const;
  /// "accelerator=h100-sxm;replicas=2" for point `i` ("base" with no axes).
  [[nodiscard]] std::string label(size_t i) const;
  /// Whether any axis is a scenario axis.
  [[nodiscard]] bool has_scenario_axes() const;
  /// The number of scenario points: the product of the scenario axes' sizes (1 with none).
  [[nodiscard]] size_t scenario_count() const;
  /// The scenario point (0 to scenario_count() - 1) point `i` belongs to: its scenario axes'
  /// coordinates, the last varying fastest.
  [[nodiscard]] size_t scenario_of(size_t i) const;
  /// Point `i`'s scenario axes as `label` writes them ("" with no scenario axes).
  [[nodiscard]] std::string scenario_label(size_t i) const;
  /// Point `i`'s deployment axes as `label` writes them ("base" with no deployment axes).
  [[nodiscard]] std::string deployment_label(size_t i) const;
  /// Every override of point `i`, in order: `sets`, the SLO, then each axis's expansion.
  [[nodiscard]] std::vector<std::string> overrides(size_t i) const;
  /// Where point `i`'s step times come from, for the step_source column: its step_time kind
  /// ("roofline", "table"...), for kind operator "operator:roofline" or
  /// "operator:tables:<gpu>:<engine>" (the accelerator shorthand picks one per chip), "file"
  /// for a step_time given as a file. Parses the base once per call.
  [[nodiscard]] std::string step_source(size_t i) const;
};

inline constexpr size_t k_max_sweep_points = 1'000'000;

/// Reads and checks a sweep file. `extra_sets` (the command line's --set) are applied to the
/// base scenario after the file's own `set`. Throws InputError naming the file, line and key for
/// an unknown key, an empty axis, an unknown shorthand axis or catalogue name, or an axis value
/// the scenario refuses for that key (each value is tried alone on the base scenario; a value
/// refused only in combination with others makes an infeasible point instead).
[[nodiscard]] SweepSpec load_sweep(const std::string& path,
                                   const std::vector<std::string>& extra_sets = {});
/// The same for text already read; `file` names it and anchors relative paths.
[[nodiscard]] SweepSpec parse_sweep(const std::string& text, const std::string& file,
                                    const std::vector<std::string>& extra_sets = {});

/// The accelerator catalogue entry that prices a point: its `step_time.hardware`, else the
/// sweep's `accelerator`; nullopt when neither names one.
[[nodiscard]] std::optional<double> price_per_accelerator_hour(const SweepSpec& spec,
                                                               const YAML::Node& point_root);

/// `n[key]` when `n` is a map holding `key`, else a null node (never yaml-cpp's invalid node,
/// which throws when asked its type).
[[nodiscard]] YAML::Node yaml_child(const YAML::Node& n, const std::string& key);

/// The contents of a whole file; throws InputError naming `path` if it cannot be read.
[[nodiscard]] std::string read_text_file(const std::string& path, const std::string& what);

}  // namespace servesim
