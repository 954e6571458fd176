#pragma once
// Running sweep points and capacity probes: one scenario built from text plus overrides, run
// without requests.csv, summarised. Everything here is safe to call from several threads at once:
// each call builds its own Document, components and random generator, and shares nothing.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/config.h"
#include "metrics/exports.h"
#include "metrics/metrics.h"
#include "sim/simulation.h"
#include "sizing/sweep.h"

namespace servesim {

/// One run of a scenario with overrides.
struct Probe {
  bool built = false;  ///< false: the config was refused (`error` says why); nothing ran
  std::string error;   ///< the InputError's message when !built, or a streaming error
  /// The refusal is for want of capacity (a CapacityError: the weights do not fit, no memory is
  /// left for the KV cache), not a mistake in the input.
  bool capacity = false;
  Summary summary;
  std::string summary_json;     ///< summary.json of the run (with the resolved config)
  std::string first_rejection;  ///< "request 3: needs ..." or ""
  int64_t replicas = 1;
  int64_t accelerators = 1;  ///< slo.accelerators: tensor x data parallel x replicas
  /// Arrival rate the engine saw: (requests - 1) / (last arrival - first arrival); 0 when the
  /// requests arrived at one instant.
  double offered_rate_per_s = 0;
  std::optional<double> price_per_accelerator_hour;  ///< sweeps: from the catalogue
  std::shared_ptr<Document> doc;  ///< the scenario with its overrides (when built)
};

/// Builds `text` (named `file`) with `overrides` applied in order and runs it. A config that is
/// refused, or input that fails while streaming, gives built = false or a non-empty error, never
/// an exception (other than internal errors). `limits` bound the run (a run stopped by a limit
/// is summarised as partial); one stopped by `limits.interrupt` throws Interrupted.
[[nodiscard]] Probe run_probe(const std::string& text, const std::string& file,
                              const std::vector<std::string>& overrides,
                              const RunLimits& limits = {});

/// What a probe keeps beyond its summary, for --percentiles and --export
/// (metrics/token_outputs.h). The default keeps nothing more and costs nothing.
struct ProbeOptions {
  RunLimits limits;
  /// Further percentiles of summary.json's ITL distributions, as `servesim run --percentiles`.
  std::vector<double> percentiles;
  /// Where to record every token's time; null: not recorded. Used by one probe at a time.
  TokenTimes* tokens = nullptr;
};
[[nodiscard]] Probe run_probe(const std::string& text, const std::string& file,
                              const std::vector<std::string>& overrides,
                              const ProbeOptions& options);

/// One row of points.csv (docs/sizing.md defines each column).
struct PointResult {
  size_t point = 0;
  bool feasible = false;
  std::string reason;  ///< why infeasible, or why no replica count met the SLOs; "" otherwise
  bool meets_slo = false;
  bool pareto = false;    ///< filled in by mark_pareto
  bool cheapest = false;  ///< the cheapest meeting the SLOs in its scenario (mark_pareto)
  int64_t replicas = 0;
  int64_t accelerators = 0;
  std::optional<double> cost_per_hour_usd;
  double requests_per_s = 0, output_tokens_per_s = 0;
  std::optional<double> tokens_per_usd;
  /// Output tokens per joule of the accelerators (metrics/energy.h); none without their power.
  std::optional<double> tokens_per_joule;
  double ttft_p50_ms = 0, ttft_p99_ms = 0, tpot_p50_ms = 0, tpot_p99_ms = 0, e2e_p99_ms = 0;
  double goodput_req_per_s = 0, slo_attainment = 0;
  /// How the point's requests ended other than finished (Summary::by_status; without it the
  /// run's `rejected`): rejected (never fits, or refused by admission), shed (rate limit), timed
  /// out and cancelled (abandonment).
  int64_t rejected = 0, shed = 0, timed_out = 0, cancelled = 0;
  /// With SweepSpec::percentiles: TTFT's value at each percentile in its order, then TPOT's,
  /// ITL's and E2E's (metric-major: 4 x percentiles values), in ms (numpy's definition, as
  /// `servesim run --percentiles`); empty when infeasible. Columns pP_ttft_ms, ..., pP_e2e_ms
  /// (vLLM's names) after cancelled (sizing/sweep_output.h).
  std::vector<double> latency_ms;
  /// min_replicas mode: the cluster.replicas the row ran with (0: fixed mode), for rerun_row.
  int64_t run_replicas = 0;
};

/// A sweep point's fields (metrics/summary_fields.h), in points.csv's column order: the columns
/// of points.csv and the keys of the sweep's summary.json rows (k_lead: before the label, axis
/// and step_source columns; k_measured: empty when infeasible), and what MPI ranks send rank 0
/// (k_wire; `pareto` and `cheapest` are marked after the gather). R: PointResult, const to write,
/// not to read.
template <class R, class F>
requires std::same_as<std::remove_const_t<R>, PointResult>
void for_each_field(R& r, F&& f) {
  constexpr unsigned row = k_csv | k_json | k_wire;
  constexpr unsigned metric = row | k_measured;
  f(Field("point", row | k_lead), r.point);
  f(Field("feasible", row), r.feasible);
  f(Field("reason", row), r.reason);
  f(Field("meets_slo", row), r.meets_slo);
  f(Field("pareto", k_csv | k_json), r.pareto);
  f(Field("cheapest", k_csv | k_json), r.cheapest);
  f(Field("replicas", metric), r.replicas);
  f(Field("accelerators", metric), r.accelerators);
  f(Field("cost_per_hour_usd", metric), r.cost_per_hour_usd);
  f(Field("requests_per_s", metric), r.requests_per_s);
  f(Field("output_tokens_per_s", metric), r.output_tokens_per_s);
  f(Field("tokens_per_usd", metric), r.tokens_per_usd);
  f(Field("tokens_per_joule", metric), r.tokens_per_joule);
  f(Field("ttft_p50_ms", metric), r.ttft_p50_ms);
  f(Field("ttft_p99_ms", metric), r.ttft_p99_ms);
  f(Field("tpot_p50_ms", metric), r.tpot_p50_ms);
  f(Field("tpot_p99_ms", metric), r.tpot_p99_ms);
  f(Field("e2e_p99_ms", metric), r.e2e_p99_ms);
  f(Field("goodput_req_per_s", metric), r.goodput_req_per_s);
  f(Field("slo_attainment", metric), r.slo_attainment);
  f(Field("rejected", metric), r.rejected);
  f(Field("shed", metric), r.shed);
  f(Field("timed_out", metric), r.timed_out);
  f(Field("cancelled", metric), r.cancelled);
  // Written by points_csv and sweep_summary_json as one column per metric and percentile.
  f(Field("latency_ms", k_wire), r.latency_ms);
  f(Field("run_replicas", k_wire), r.run_replicas);
}

/// Simulates point `i` of `spec`: once (mode fixed), or at the fewest replicas from 1 to
/// spec.max_replicas that meet the SLOs (mode min_replicas: doubling, then bisection, which
/// assumes more replicas never do worse). A point is infeasible only for capacity (refused for
/// want of memory, requests rejected, no replica count meeting the SLOs); a point that cannot be
/// evaluated for any other reason (a missing table, a value refused, no price in the tier, bad
/// input while streaming) throws InputError naming the point, its label and the reason.
/// `limits` as for run_probe, for every run of the point.
[[nodiscard]] PointResult evaluate_point(const SweepSpec& spec, size_t i,
                                         const RunLimits& limits = {});

/// Point `i`'s overrides for a run at `replicas` replicas (min_replicas mode): spec.overrides(i)
/// and the replica count (with a round-robin router when the base has no cluster section).
[[nodiscard]] std::vector<std::string> replica_overrides(const SweepSpec& spec, size_t i,
                                                         int64_t replicas);

/// Runs the row `row` again (its point, at its replica count in min_replicas mode) recording
/// every token's time into `tokens`, for --export. The same config and seed give the same run,
/// so its summary is the row's (unless --max-wall-time cut either short).
[[nodiscard]] Probe rerun_row(const SweepSpec& spec, const PointResult& row, TokenTimes& tokens,
                              const RunLimits& limits = {});

/// Rows as JSON and back, exactly: the k_wire fields (MPI ranks send rows to rank 0 this way).
[[nodiscard]] nlohmann::json point_to_json(const PointResult& r);
[[nodiscard]] PointResult point_from_json(const nlohmann::json& j);

}  // namespace servesim
