#pragma once
// What `servesim report` draws, read from result directories into the JSON embedded in the
// page (docs/report.md lists each chart and the columns it comes from).
#include <csignal>
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace servesim {

/// The empirical CDF of `values`: {"x": [...], "p": [...]} with x ascending and p the share of
/// values <= x, at most `max_points` points (evenly spaced ranks, the smallest and largest
/// always kept; equal values make one point, with the share of the last). Values are multiplied
/// by `scale` (seconds to milliseconds: 1000).
/// REQUIRES: max_points >= 2. Empty input gives empty arrays.
[[nodiscard]] nlohmann::json cdf_points(std::vector<double> values, double scale,
                                        size_t max_points);

/// Prices a run from its whole summary.json (sizing/run_cost.h: the report layer knows no
/// catalogue): an object, or null when the cost is not known.
using RunCost = std::function<nlohmann::json(const nlohmann::json& summary)>;

/// One result directory as the page wants it. A run directory (summary.json, and when present
/// requests.csv and steps.csv) gives
///   {"kind": "run", "name", "summary": {...}, "cost": run_cost(summary.json) or null, "cdf":
///   {"ttft_ms", "tpot_ms", "e2e_ms",
///    "queue_ms", and with requests.csv's class column "classes": {name: {"ttft_ms",
///    "tpot_ms"}}} or null, "series": {...} or null, "roofline": {...} or null, and with
///    autoscale.csv "autoscale": {"t_s", "live", "paid"}};
/// a sweep directory (summary.json with "kind": "sweep", and points.csv) gives
///   {"kind": "sweep", "name", "slo": {...} or null, "axes": [column, ...] (the swept columns,
///    those points.csv has beyond servesim size's own), "scenario_axes": [key, ...] (summary.json's
///    axes of role scenario) or null (a sweep written before roles), "points": [{column: value,
///    ...}, ...]};
/// a capacity directory (capacity.json, what servesim capacity writes) gives
///   {"kind": "capacity", "name", "slo": {...}, "found", "capacity": {...} or null,
///    "probes": [{"offered_rate_per_s", "meets_slo", "ttft_p99_ms", ...}, ...]}.
/// "name" is the directory's last component; report_data() makes the names distinct.
/// Throws InputError naming the file (and line) when a file is missing or malformed.
[[nodiscard]] nlohmann::json read_result_dir(const std::string& dir, const RunCost& run_cost = {});

/// The names the page shows for `dirs`: each directory's shortest path suffix (whole
/// components) that no other directory of the list shares ("A/run", "B/run" for A/run and
/// B/run; "run" alone when it is the only one); a directory given twice gets " (2)", " (3)"...
[[nodiscard]] std::vector<std::string> display_names(const std::vector<std::string>& dirs);

/// Every directory in order, as {"version", "results": [...]}, each named by `labels[i]`
/// (--label) or, without labels, by display_names(). Throws InputError unless `labels` is
/// empty or has one label per directory.
[[nodiscard]] nlohmann::json report_data(const std::vector<std::string>& dirs,
                                         const volatile std::sig_atomic_t* interrupt = nullptr,
                                         const std::vector<std::string>& labels = {},
                                         const RunCost& run_cost = {});

}  // namespace servesim
