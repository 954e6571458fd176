#pragma once
// A sweep's results: the Pareto front, the cheapest deployment meeting the SLOs, points.csv and
// summary.json (docs/sizing.md#output). Pure functions of the spec and the rows, so a threaded,
// a single-threaded and an MPI run write byte-identical files.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sizing/sweep.h"
#include "sizing/sweep_run.h"

namespace servesim {

/// Within each scenario point of `spec` (docs/sizing.md#axis-roles; the whole sweep when it has
/// no scenario axes): sets `pareto` on the feasible, priced rows that no other such row of the
/// same scenario beats on both cost per hour and p99 TTFT (lower is better; a row that ties
/// another on both is on the front too), and `cheapest` on the scenario's cheapest() row.
/// REQUIRES: each row's point is a point of `spec`.
void mark_pareto(std::vector<PointResult>& rows, const SweepSpec& spec);

/// The index in `rows` of the cheapest row meeting the SLOs (ties: lower p99 TTFT, then lower
/// point); nullopt when none meets them or none is priced.
[[nodiscard]] std::optional<size_t> cheapest(const std::vector<PointResult>& rows);

/// For each scenario point of `spec` in order, the indices in `rows` of its rows (point order).
[[nodiscard]] std::vector<std::vector<size_t>> rows_by_scenario(
    const SweepSpec& spec, const std::vector<PointResult>& rows);

/// points.csv: one row per point, in point order. REQUIRES: rows[i].point == i.
[[nodiscard]] std::string points_csv(const SweepSpec& spec, const std::vector<PointResult>& rows);
/// summary.json with "kind": "sweep". REQUIRES: mark_pareto has run.
[[nodiscard]] std::string sweep_summary_json(const SweepSpec& spec,
                                             const std::vector<PointResult>& rows);
/// What `servesim size` prints: counts, the cheapest point and the Pareto front (of each
/// scenario point, when the sweep has scenario axes).
[[nodiscard]] std::string sweep_report(const SweepSpec& spec, const std::vector<PointResult>& rows);

}  // namespace servesim
