#pragma once
// Run metrics, with the definitions of vLLM's benchmark_serving (see docs/metrics.md):
//   TTFT  = end of the step that produced the first output token - arrival
//   TPOT  = (last token time - first token time) / (output tokens - 1), requests with > 1 token
//   E2E   = release - arrival
//   queue = first admission - arrival
//   output tokens/s = output tokens of finished requests / (last release - first arrival)
// Percentiles interpolate linearly between order statistics (numpy's default).
// With SLO targets (config `slo`), a request meets a target when its own TTFT / TPOT is <= it
// (one output token: no TPOT, meets the TPOT target; no gap, meets the ITL target, which a
// request meets when its largest gap is <= it); rejected and unfinished requests meet none.
//   ITL   = every gap between consecutive output tokens, pooled (metrics/token_gaps.h) Goodput =
//   requests meeting every target / duration (docs/metrics.md#slos-and-goodput).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/kv/kv_manager.h"
#include "core/quantiles.h"
#include "core/request.h"
#include "metrics/autoscale_summary.h"
#include "metrics/energy.h"
#include "metrics/summary_fields.h"
#include "metrics/tenants.h"
#include "metrics/token_gaps.h"
#include "sim/recorder.h"
#include "sim/sharded_recorder.h"
#include "sim/simulation.h"
#include "sim/slo.h"
#include "sim/step_observer.h"

namespace servesim {

struct Distribution {
  int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  /// False once more values came than QuantileSketch keeps: percentiles are then within
  /// QuantileSketch::k_relative_error of exact (mean and max stay exact).
  bool exact = true;
};

// Each summary's fields, in output order (metrics/summary_fields.h): its summary.json keys,
// printed columns and rows. A field added to a struct gets its line here too.
template <class F>
void for_each_field(const Distribution& d, F&& f) {
  f(Field("count", k_json | k_short), d.count);
  f(Field("mean", k_json | k_short), d.mean);
  f(Field("p50", k_json | k_short), d.p50);
  f(Field("p90"), d.p90);
  f(Field("p99", k_json | k_short), d.p99);
  f(Field("max", k_json | k_short), d.max);
  f(Field("exact"), d.exact);
}

/// The distribution of inter-token gaps (ITL): a Distribution with vLLM's median and std, and
/// any further percentiles asked for (servesim run --percentiles).
struct GapDistribution : Distribution {
  double median = 0;  ///< p50, under vLLM's name
  double std = 0;     ///< population standard deviation (numpy's std)
  std::vector<std::pair<std::string, double>> percentiles;  ///< "p99.9" -> value
};

template <class F>
void for_each_field(const GapDistribution& d, F&& f) {
  f(Field("count"), d.count);
  f(Field("mean"), d.mean);
  f(Field("median"), d.median);
  f(Field("std"), d.std);
  f(Field("p50"), d.p50);
  f(Field("p90"), d.p90);
  f(Field("p99"), d.p99);
  f(Field("max"), d.max);
  f(Field("exact"), d.exact);
  f(Field("percentiles", k_json | k_omit_empty), d.percentiles);
}

/// One latency target and how the run did against it.
struct SloCheck {
  double target_ms = 0;
  /// The run's percentile (SloSummary::percentile) over the metric's distribution; none when
  /// the distribution is empty.
  std::optional<double> percentile_ms;
  bool met = false;          ///< the percentile <= target_ms (docs/metrics.md)
  int64_t requests_met = 0;  ///< requests whose own value is <= the target
  double attainment = 0;     ///< requests_met / requests
};

template <class F>
void for_each_field(const SloCheck& c, F&& f) {
  f(Field("target_ms"), c.target_ms);
  f(Field("percentile_ms"), c.percentile_ms);
  f(Field("met"), c.met);
  f(Field("requests_met"), c.requests_met);
  f(Field("attainment"), c.attainment);
}

struct SloSummary {
  double percentile = 99;
  std::optional<SloCheck> ttft, tpot, e2e, itl;  ///< those with a target
  int64_t requests_met = 0;                      ///< requests meeting every given target
  double attainment = 0;                         ///< requests_met / requests
  double goodput_per_s = 0;                      ///< requests_met / duration
  int64_t accelerators = 1;
  double goodput_per_s_per_accelerator = 0;
};

template <class F>
void for_each_field(const SloSummary& s, F&& f) {
  f(Field("percentile"), s.percentile);
  f(Field("ttft"), s.ttft);
  f(Field("tpot"), s.tpot);
  f(Field("e2e"), s.e2e);
  f(Field("itl", k_json | k_omit_empty), s.itl);
  f(Field("requests_met"), s.requests_met);
  f(Field("attainment"), s.attainment);
  f(Field("goodput_requests_per_s"), s.goodput_per_s);
  f(Field("accelerators"), s.accelerators);
  f(Field("goodput_requests_per_s_per_accelerator"), s.goodput_per_s_per_accelerator);
}

/// The fields a replica and a pool share: their requests, latencies and SLO attainment. The
/// replica and pool tables print the same columns: the run's SLO checks pick the slo columns.
template <class T, class F>
void for_each_request_field(const T& r, F& f) {
  f(Field("requests"), r.requests);
  f(Field("preemptions"), r.preemptions);
  f(Field("swap_preemptions"), r.swap_preemptions);
  f(Field("ttft_s")
        .col("TTFT p50 ms", 12, Stat::p50, 1e3, 1)
        .col("TTFT p99 ms", 12, Stat::p99, 1e3, 1),
    r.ttft_s);
  f(Field("tpot_s").col("TPOT p99 ms", 12, Stat::p99, 1e3, 2), r.tpot_s);
  f(Field("e2e_s"), r.e2e_s);
  f(Field("itl_s"), r.itl_s);
  f(Field("slo").col("TTFT met", 10).col("TPOT met", 10).col("all met", 10), r.slo);
}

struct ReplicaClassSummary;

/// One replica of a cluster (Summary::replicas). A request's TTFT belongs to the replica the
/// router sent it to (its prefill replica when disaggregated), the rest of it to the replica it
/// left from (docs/metrics.md#per-replica-and-per-pool).
struct ReplicaSummary {
  int64_t routed = 0;    ///< requests the router sent to it
  int64_t requests = 0;  ///< requests that left from it: finished, rejected or unfinished
  int64_t finished = 0;
  /// Preemptions that happened here, of requests that finished (as Summary::preemptions).
  int64_t preemptions = 0, swap_preemptions = 0;
  int64_t steps = 0;
  double busy_share = 0;  ///< its busy time / the run's duration
  double mean_batch_sequences = 0;
  int64_t kv_capacity_tokens = 0;
  int64_t kv_peak_used_tokens = 0;
  double ttft_mean_s = 0, tpot_mean_s = 0, e2e_mean_s = 0;  ///< the distributions' means
  /// TTFT of the requests routed here; TPOT and E2E of those that finished here.
  Distribution ttft_s, tpot_s, e2e_s;
  GapDistribution itl_s;          ///< the gaps of the requests that finished here
  std::optional<SloSummary> slo;  ///< with an `slo` config section
  std::string pool;               ///< with cluster.pools: its pool's name
  int64_t handed_off = 0;         ///< prefill: requests whose KV left for a decode replica
  int64_t received = 0;           ///< decode: transferred requests admitted
  /// When the workload names classes: each one's figures on this replica, by name, in the
  /// workload's order (attributed as above; metrics/replica_classes.cpp).
  std::vector<std::pair<std::string, ReplicaClassSummary>> classes;
};

template <class F>
void for_each_field(const ReplicaSummary& r, F&& f) {
  f(Field("routed").col("routed", 8), r.routed);
  f(Field("finished").col("finished", 10), r.finished);
  f(Field("steps"), r.steps);
  f(Field("busy_share"), r.busy_share);
  f(Field("mean_batch_sequences"), r.mean_batch_sequences);
  f(Field("kv_capacity_tokens"), r.kv_capacity_tokens);
  f(Field("kv_peak_used_tokens"), r.kv_peak_used_tokens);
  f(Field("ttft_mean_s"), r.ttft_mean_s);
  f(Field("tpot_mean_s"), r.tpot_mean_s);
  f(Field("e2e_mean_s"), r.e2e_mean_s);
  for_each_request_field(r, f);
  if (!r.pool.empty()) {  // cluster.pools only: keeps `cluster.replicas` output as it was
    f(Field("pool"), r.pool);
    f(Field("handed_off"), r.handed_off);
    f(Field("received"), r.received);
  }
  f(Field("classes", k_json | k_omit_empty), r.classes);
}

/// One pool of cluster.pools (Summary::pools): its replicas' totals.
struct PoolSummary {
  std::string name, role;
  int64_t replicas = 0;
  int64_t accelerators = 0;  ///< of all its replicas
  int64_t routed = 0, requests = 0, handed_off = 0, received = 0, finished = 0, steps = 0;
  int64_t preemptions = 0, swap_preemptions = 0;
  double busy_share = 0;  ///< its replicas' mean
  int64_t kv_capacity_tokens = 0;
  int64_t kv_peak_used_tokens = 0;                          ///< sum of its replicas' peaks
  double ttft_mean_s = 0, tpot_mean_s = 0, e2e_mean_s = 0;  ///< the distributions' means
  /// Over its replicas' requests, attributed as in ReplicaSummary.
  Distribution ttft_s, tpot_s, e2e_s;
  GapDistribution itl_s;
  std::optional<SloSummary> slo;
};

template <class F>
void for_each_field(const PoolSummary& p, F&& f) {
  f(Field("pool"), p.name);
  f(Field("role"), p.role);
  f(Field("replicas"), p.replicas);
  f(Field("accelerators"), p.accelerators);
  f(Field("routed").col("routed", 8), p.routed);
  f(Field("handed_off"), p.handed_off);
  f(Field("received"), p.received);
  f(Field("finished").col("finished", 10), p.finished);
  f(Field("steps"), p.steps);
  f(Field("busy_share"), p.busy_share);
  f(Field("kv_capacity_tokens"), p.kv_capacity_tokens);
  f(Field("kv_peak_used_tokens"), p.kv_peak_used_tokens);
  f(Field("ttft_mean_s"), p.ttft_mean_s);
  f(Field("tpot_mean_s"), p.tpot_mean_s);
  f(Field("e2e_mean_s"), p.e2e_mean_s);
  for_each_request_field(p, f);
}

/// KV transfers of a disaggregated run (Summary::kv_transfer).
struct KvTransferSummary {
  int64_t transfers = 0;
  double bytes = 0;
  Distribution transfer_s;    ///< end of prefill to delivery at the decode replica
  Distribution admit_wait_s;  ///< delivery to admission there (back-pressure)
};

template <class F>
void for_each_field(const KvTransferSummary& k, F&& f) {
  f(Field("transfers"), k.transfers);
  f(Field("bytes"), k.bytes);
  f(Field("transfer_s", k_json | k_as_short), k.transfer_s);
  f(Field("admit_wait_s", k_json | k_as_short), k.admit_wait_s);
}

/// summary.json's lora block (the `lora` section, docs/lora.md).
struct LoraSummary {
  int64_t adapters = 0;
  int64_t max_loras = 0;
  int64_t max_cpu_loras = 0;
  int64_t requests_with_adapter = 0;
  int64_t gpu_slot_hits = 0;      ///< a step's adapter already in a GPU slot (per step, adapter)
  int64_t gpu_slot_misses = 0;    ///< copied in from host memory
  int64_t host_hits = 0;          ///< of the GPU-slot misses, in host memory
  int64_t host_misses = 0;        ///< of the GPU-slot misses, loaded from disk first
  double load_s = 0;              ///< adapter loading time added to steps
  double compute_s = 0;           ///< LoRA GEMM time added to steps
  int64_t skipped_for_slots = 0;  ///< requests passed over for a step at max_loras (per step)
};

template <class F>
void for_each_field(const LoraSummary& l, F&& f) {
  f(Field("adapters"), l.adapters);
  f(Field("max_loras"), l.max_loras);
  f(Field("max_cpu_loras"), l.max_cpu_loras);
  f(Field("requests_with_adapter"), l.requests_with_adapter);
  f(Field("gpu_slot_hits"), l.gpu_slot_hits);
  f(Field("gpu_slot_misses"), l.gpu_slot_misses);
  f(Field("host_hits"), l.host_hits);
  f(Field("host_misses"), l.host_misses);
  f(Field("load_s"), l.load_s);
  f(Field("compute_s"), l.compute_s);
  f(Field("skipped_for_slots"), l.skipped_for_slots);
}

/// summary.json's speculative block (the `speculative` section, docs/speculative.md).
struct SpeculativeSummary {
  std::string method;
  int64_t k = 0;
  int64_t verify_steps = 0;  ///< steps in which a sequence verified drafts
  int64_t verifies = 0;      ///< sequence verifies, summed over those steps
  int64_t drafted_tokens = 0;
  int64_t accepted_tokens = 0;
  double acceptance_rate = 0;    ///< accepted / drafted drafts
  double tokens_per_verify = 0;  ///< (accepted + verifies) / verifies: output per verify
  int64_t off_steps = 0;         ///< steps run with speculation off (above max_batch)
  double proposer_share = 0;     ///< the proposer's time / the steps' busy time
};

template <class F>
void for_each_field(const SpeculativeSummary& p, F&& f) {
  f(Field("method"), p.method);
  f(Field("k"), p.k);
  f(Field("verify_steps"), p.verify_steps);
  f(Field("verifies"), p.verifies);
  f(Field("drafted_tokens"), p.drafted_tokens);
  f(Field("accepted_tokens"), p.accepted_tokens);
  f(Field("acceptance_rate"), p.acceptance_rate);
  f(Field("tokens_per_verify"), p.tokens_per_verify);
  f(Field("off_steps"), p.off_steps);
  f(Field("proposer_share"), p.proposer_share);
}

/// summary.json's prefix_cache block (kv.prefix_caching).
template <class F>
void for_each_field(const KvManager::PrefixStats& p, F&& f) {
  const auto share = [](int64_t part, int64_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  f(Field("hit_rate"), share(p.hit_tokens, p.queried_tokens));
  f(Field("hit_tokens"), p.hit_tokens);
  f(Field("queried_tokens"), p.queried_tokens);
  f(Field("block_hit_rate"), share(p.hit_blocks, p.queried_blocks));
  f(Field("hit_blocks"), p.hit_blocks);
  f(Field("queried_blocks"), p.queried_blocks);
  f(Field("evicted_blocks"), p.evicted_blocks);
}

/// summary.json's offload.tiers[i] (kv.offload).
template <class F>
void for_each_field(const TierStats& t, F&& f) {
  const auto share = [](int64_t part, int64_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  f(Field("name"), t.name);
  f(Field("shared"), t.shared);
  f(Field("capacity_blocks"), t.capacity_blocks);
  f(Field("hit_rate"), share(t.hit_tokens, t.queried_tokens));
  f(Field("hit_tokens"), t.hit_tokens);
  f(Field("queried_tokens"), t.queried_tokens);
  f(Field("block_hit_rate"), share(t.hit_blocks, t.queried_blocks));
  f(Field("hit_blocks"), t.hit_blocks);
  f(Field("queried_blocks"), t.queried_blocks);
  f(Field("declined_blocks"), t.declined_blocks);
  f(Field("reloads"), t.reloads);
  f(Field("reload_bytes"), t.reload_bytes);
  f(Field("reload_s"), t.reload_s);
  f(Field("stored_blocks"), t.stored_blocks);
  f(Field("moved_down_blocks"), t.moved_down_blocks);
  f(Field("resident_blocks"), t.resident_blocks);
}

/// summary.json's offload block (kv.offload).
template <class F>
void for_each_field(const OffloadStats& o, F&& f) {
  f(Field("overlap"), o.overlap);
  f(Field("reload"), o.reload);
  f(Field("prefill_tokens_saved"), o.prefill_tokens_saved);
  f(Field("reload_s"), o.reload_s);
  f(Field("stall_s"), o.stall_s);
  f(Field("reload_steps"), o.reload_steps);
  f(Field("tiers"), o.tiers);
}

/// summary.json's pipeline block (sim/pipeline_engine.h, docs/metrics.md#pipeline).
template <class F>
void for_each_field(const PipelineStageSummary& p, F&& f) {
  f(Field("busy_share"), p.busy_share);
}

template <class F>
void for_each_field(const PipelineSummary& p, F&& f) {
  f(Field("schedule"), p.schedule);
  f(Field("stages"), p.stages);
  f(Field("micro_batches_in_flight"), p.micro_batches_in_flight);
  f(Field("bubble"), p.bubble);
  f(Field("stage_busy").index("stage"), p.stage_busy);
}

/// How the recorded requests ended (docs/metrics.md#request-status): requests.csv's status
/// column, counted. Summary::by_status and ClassSummary::by_status are this when a request
/// left early (shed, timed out or cancelled) or the run has an admission or abandonment
/// section; the keys sum to `requests`.
struct StatusCounts {
  int64_t finished = 0;
  int64_t rejected = 0;  ///< can never fit, or refused by admission's queue_cap or slo_reject
  int64_t shed = 0;      ///< over its tenant's rate limit
  int64_t timed_out = 0;
  int64_t cancelled = 0;
  int64_t failed = 0;      ///< its replica failed and it was not retried (cluster.failures)
  int64_t unfinished = 0;  ///< a bounded run stopped first
  void add(const Request& r);
  [[nodiscard]] bool any_left_early() const { return shed + timed_out + cancelled + failed > 0; }
};

template <class F>
void for_each_field(const StatusCounts& c, F&& f) {
  f(Field("finished"), c.finished);
  f(Field("rejected"), c.rejected);
  f(Field("shed"), c.shed);
  f(Field("timed_out"), c.timed_out);
  f(Field("cancelled"), c.cancelled);
  f(Field("failed"), c.failed);
  f(Field("unfinished"), c.unfinished);
}

/// One class of requests (Summary::classes): the overall figures restricted to its requests
/// (docs/metrics.md#classes).
struct ClassSummary {
  int64_t requests = 0;  ///< recorded: finished, rejected or unfinished
  int64_t finished = 0;
  int64_t rejected = 0;  ///< can never be served (as Summary::rejected)
  int64_t unfinished = 0;
  int64_t preemptions = 0;  ///< of its finished requests
  Distribution ttft_s, tpot_s, e2e_s, queue_s;
  GapDistribution itl_s;
  /// With an `slo` section: its attainment, and goodput over the run's duration.
  std::optional<SloSummary> slo;
  std::optional<StatusCounts> by_status;  ///< as Summary::by_status, for its requests
};

template <class F>
void for_each_field(const ClassSummary& c, F&& f) {
  f(Field("requests"), c.requests);
  f(Field("finished"), c.finished);
  f(Field("rejected"), c.rejected);
  f(Field("unfinished"), c.unfinished);
  f(Field("preemptions"), c.preemptions);
  f(Field("ttft_s"), c.ttft_s);
  f(Field("tpot_s"), c.tpot_s);
  f(Field("e2e_s"), c.e2e_s);
  f(Field("queue_s"), c.queue_s);
  f(Field("itl_s"), c.itl_s);
  f(Field("slo", k_json | k_omit_empty), c.slo);
  f(Field("by_status", k_json | k_omit_empty), c.by_status);
}

/// One class's figures on one replica (ReplicaSummary::classes): the requests of the class
/// routed there, and its figures as a ClassSummary of the requests attributed to the replica.
struct ReplicaClassSummary : ClassSummary {
  int64_t routed = 0;  ///< requests of the class that entered here (TTFT's replica)
};

template <class F>
void for_each_field(const ReplicaClassSummary& c, F&& f) {
  f(Field("routed"), c.routed);
  for_each_field(static_cast<const ClassSummary&>(c), f);
}

/// One tenant's figures (Summary::tenants): a class's, plus the tokens it was served.
struct TenantSummary : ClassSummary {
  int64_t prompt_tokens = 0;        ///< of its finished requests
  int64_t output_tokens = 0;        ///< of its finished requests
  double output_tokens_per_s = 0;   ///< output_tokens / the run's duration_s
  double service_share = 0;         ///< its prompt + output tokens / every tenant's
  double window_tokens = 0;         ///< tokens served in the fairness window (FairnessSummary)
  double window_demand_tokens = 0;  ///< tokens of its requests arriving in the window
  double fair_share_tokens = 0;     ///< its max-min fair share of the window's service
};

/// A class's fields, then the tenant's own.
template <class F>
void for_each_field(const TenantSummary& c, F&& f) {
  for_each_field(static_cast<const ClassSummary&>(c), f);
  f(Field("prompt_tokens"), c.prompt_tokens);
  f(Field("output_tokens"), c.output_tokens);
  f(Field("output_tokens_per_s"), c.output_tokens_per_s);
  f(Field("service_share"), c.service_share);
  f(Field("window_tokens"), c.window_tokens);
  f(Field("window_demand_tokens"), c.window_demand_tokens);
  f(Field("fair_share_tokens"), c.fair_share_tokens);
}

/// summary.json's `failures` block (cluster.failures, docs/failures.md#summary).
struct FailureSummary {
  int64_t failures = 0;         ///< replicas going down
  double downtime_s = 0;        ///< replica-seconds down within the run
  double availability = 1;      ///< live replica-time / replica-time
  int64_t retries = 0;          ///< requests sent again after their replica failed
  int64_t failed_requests = 0;  ///< ended with status failed
  int64_t lost_tokens = 0;      ///< KV tokens lost with their replica (a retry recomputes them)
  int64_t lost_steps = 0;       ///< steps in flight when their replica failed
  int64_t waited_requests = 0;  ///< waited at the router with every replica down
  std::optional<double> slo_attainment;  ///< with an `slo` section: this run's
  /// The same scenario without cluster.failures (a second run), and what failures cost.
  std::optional<double> slo_attainment_without_failures;
  std::optional<double> slo_attainment_cost;
};

template <class F>
void for_each_field(const FailureSummary& s, F&& f) {
  f(Field("failures"), s.failures);
  f(Field("downtime_s"), s.downtime_s);
  f(Field("availability"), s.availability);
  f(Field("retries"), s.retries);
  f(Field("failed_requests"), s.failed_requests);
  f(Field("lost_tokens"), s.lost_tokens);
  f(Field("lost_steps"), s.lost_steps);
  f(Field("waited_requests"), s.waited_requests);
  f(Field("slo_attainment", k_json | k_omit_empty), s.slo_attainment);
  f(Field("slo_attainment_without_failures", k_json | k_omit_empty),
    s.slo_attainment_without_failures);
  f(Field("slo_attainment_cost", k_json | k_omit_empty), s.slo_attainment_cost);
}

struct Summary {
  int64_t requests = 0;
  int64_t finished = 0;
  /// Requests that can never be served (too long for the KV, ...); those the admission
  /// section refused or shed are only in by_status, so that `rejected` keeps meaning "this
  /// deployment cannot serve this workload" (sizing calls such a point infeasible).
  int64_t rejected = 0;
  int64_t unfinished = 0;     ///< arrived but not served when a bounded run stopped
  std::string stopped_by;     ///< empty for a complete run
  int64_t prompt_tokens = 0;  ///< of finished requests
  int64_t output_tokens = 0;  ///< of finished requests
  double first_arrival_s = 0;
  double last_release_s = 0;
  double duration_s = 0;  ///< last release - first arrival
  double output_tokens_per_s = 0;
  double requests_per_s = 0;  ///< finished requests / duration
  Distribution ttft_s, tpot_s, e2e_s, queue_s;
  /// With time outside the engine (the `api` section): the engine's TTFT, from the request's
  /// arrival at the engine to its first token's production (Request::engine_ttft); ttft_s is
  /// then the client's. Absent when no request spent time outside the engine (they are equal).
  std::optional<Distribution> server_ttft_s;
  GapDistribution itl_s;  ///< inter-token latency: every gap, pooled (metrics/token_gaps.h)
  int64_t preemptions = 0;
  int64_t swap_preemptions = 0;  ///< of preemptions, those by swapping (preemption_mode: swap)
  int64_t preempted_requests = 0;
  int64_t steps = 0;
  double mean_batch_sequences = 0;  ///< sequences per step, averaged over steps
  double busy_share = 0;            ///< time a step was running / duration
  int64_t prefill_tokens_computed = 0;
  int64_t kv_capacity_tokens = 0;
  int64_t kv_peak_used_tokens = 0;
  int64_t peak_in_flight = 0;                    ///< most requests queued or running at once
  std::optional<KvManager::PrefixStats> prefix;  ///< with kv.prefix_caching
  std::optional<OffloadStats> offload;           ///< with kv.offload
  std::optional<PipelineSummary> pipeline;       ///< with step_time.pipeline_parallel > 1
  std::vector<std::pair<std::string, int64_t>> workload_counters;  ///< rows skipped, capped...
  // Only when the step-time model reports what a step moves and computes (roofline):
  std::optional<double> mbu;                         ///< bytes moved / (busy time x peak bandwidth)
  std::optional<double> mfu;                         ///< flops / (busy time x peak FLOP/s)
  std::optional<double> bandwidth_bound_step_share;  ///< bandwidth-bound steps / steps
  std::optional<SloSummary> slo;                     ///< with an `slo` config section
  std::optional<EnergySummary> energy;     ///< when every replica's chip has a `power` (energy.h)
  std::optional<FailureSummary> failures;  ///< with cluster.failures
  /// With a cluster of several replicas: each one's share (busy_share above is then their mean).
  std::vector<ReplicaSummary> replicas;
  std::vector<PoolSummary> pools;                 ///< with cluster.pools
  std::optional<KvTransferSummary> kv_transfer;   ///< with prefill/decode pools
  std::optional<SpeculativeSummary> speculative;  ///< with a `speculative` section
  std::optional<LoraSummary> lora;                ///< with a `lora` section
  std::optional<AutoscaleSummary> autoscale;      ///< with cluster.autoscale
  /// When the workload names classes (WorkloadSource::class_names): each one's figures, by
  /// name, in the workload's order.
  std::vector<std::pair<std::string, ClassSummary>> classes;
  /// When the workload names tenants (WorkloadSource::tenant_names): each one's figures, by
  /// name, and Jain's index over them.
  std::vector<std::pair<std::string, TenantSummary>> tenants;
  std::optional<FairnessSummary> fairness;
  /// Every request's end, by status (StatusCounts): with admission or abandonment.
  std::optional<StatusCounts> by_status;
};

/// summary.json's keys after the version and seed (metrics/summary_output.cpp), and the rows of
/// the printed latency table. The sentences above that table are written by summary_table.
template <class F>
void for_each_field(const Summary& s, F&& f) {
  f(Field("requests"), s.requests);
  f(Field("finished"), s.finished);
  f(Field("rejected"), s.rejected);
  f(Field("unfinished"), s.unfinished);
  f(Field("partial"), !s.stopped_by.empty());
  f(Field("stopped_by", k_json | k_omit_empty), s.stopped_by);
  f(Field("prompt_tokens"), s.prompt_tokens);
  f(Field("output_tokens"), s.output_tokens);
  f(Field("first_arrival_s"), s.first_arrival_s);
  f(Field("last_release_s"), s.last_release_s);
  f(Field("duration_s"), s.duration_s);
  f(Field("output_tokens_per_s"), s.output_tokens_per_s);
  f(Field("requests_per_s"), s.requests_per_s);
  f(Field("ttft_s").row("TTFT", 1e3, "ms"), s.ttft_s);
  f(Field("server_ttft_s", k_json | k_omit_empty).row("server TTFT", 1e3, "ms"), s.server_ttft_s);
  f(Field("tpot_s").row("TPOT", 1e3, "ms"), s.tpot_s);
  f(Field("e2e_s").row("E2E", 1.0, "s"), s.e2e_s);
  f(Field("queue_s").row("queue", 1e3, "ms"), s.queue_s);
  f(Field("itl_s").row("ITL", 1e3, "ms"), s.itl_s);
  f(Field("preemptions"), s.preemptions);
  f(Field("swap_preemptions"), s.swap_preemptions);
  f(Field("preempted_requests"), s.preempted_requests);
  f(Field("steps"), s.steps);
  f(Field("mean_batch_sequences"), s.mean_batch_sequences);
  f(Field("busy_share"), s.busy_share);
  f(Field("prefill_tokens_computed"), s.prefill_tokens_computed);
  f(Field("kv_capacity_tokens"), s.kv_capacity_tokens);
  f(Field("kv_peak_used_tokens"), s.kv_peak_used_tokens);
  f(Field("peak_in_flight_requests"), s.peak_in_flight);
  f(Field("prefix_cache"), s.prefix);
  f(Field("offload", k_json | k_omit_empty), s.offload);
  f(Field("pipeline", k_json | k_omit_empty), s.pipeline);
  f(Field("workload_counters"), s.workload_counters);
  f(Field("mbu"), s.mbu);
  f(Field("mfu"), s.mfu);
  f(Field("bandwidth_bound_step_share"), s.bandwidth_bound_step_share);
  f(Field("slo"), s.slo);
  f(Field("energy", k_json | k_omit_empty), s.energy);
  f(Field("failures", k_json | k_omit_empty), s.failures);
  f(Field("replicas", k_json | k_omit_empty).index("replica"), s.replicas);
  f(Field("pools", k_json | k_omit_empty), s.pools);
  f(Field("kv_transfer", k_json | k_omit_empty), s.kv_transfer);
  f(Field("speculative", k_json | k_omit_empty), s.speculative);
  f(Field("lora", k_json | k_omit_empty), s.lora);
  f(Field("autoscale", k_json | k_omit_empty), s.autoscale);
  f(Field("classes", k_json | k_omit_empty), s.classes);
  f(Field("tenants", k_json | k_omit_empty), s.tenants);
  f(Field("fairness", k_json | k_omit_empty), s.fairness);
  f(Field("by_status", k_json | k_omit_empty), s.by_status);
}

/// REQUIRES: sorted values. p in [0, 100].
[[nodiscard]] double percentile(const std::vector<double>& sorted, double p);
[[nodiscard]] Distribution distribution(std::vector<double> values);

/// Which SLO targets a request met (all false without targets, or when it did not finish).
struct SloVerdict {
  bool ttft = false, tpot = false, e2e = false, itl = false, all = false;
};

/// What the run's own TTFT, TPOT, E2E, queue and server-TTFT distributions take from a finished
/// request (MetricsRecorder::add_figures), as whole nanoseconds: nothing of the run's state.
struct RequestFigures {
  int64_t ttft_ns = 0;         ///< first token - arrival
  int64_t e2e_ns = 0;          ///< release - arrival
  int64_t queue_ns = 0;        ///< first admission - arrival
  int64_t engine_ttft_ns = 0;  ///< Request::engine_ttft
  /// (last token - first token) in seconds / (output_tokens - 1), with more than one token.
  double tpot_s = 0;
  int32_t output_tokens = 0;
};

/// Another thread that adds every finished request's figures, in the order the requests left,
/// by MetricsRecorder::add_figures (RequestsCsvWriter's writer, which is given the same
/// requests: metrics/requests_csv.cpp).
class FiguresSink {
 public:
  virtual ~FiguresSink() = default;
  /// Returns once the figures of every request recorded so far are added; none is added
  /// after. Throws what the adding thread threw (it then added none after that).
  virtual void join() = 0;
};

/// The latency distributions and SLO counts of a set of requests: the run's, a replica's or a
/// pool's. A request's first token and the rest of it may be counted in different tallies
/// (disaggregation: its prefill and decode replicas).
struct RequestTally {
  explicit RequestTally(size_t exact_limit)
      : ttft(exact_limit), tpot(exact_limit), e2e(exact_limit), itl(exact_limit) {}
  /// A request that arrived here (routed here; its prefill replica when disaggregated): its TTFT.
  /// Without `own`, its TTFT is not added to `ttft` (the caller adds it: RequestFigures).
  void add_entry(const Request& r, bool ttft_ok, bool own = true);
  /// A request that left from here (released, rejected or unfinished): everything but its TTFT,
  /// its inter-token gaps included (`gaps`; null: the caller counts them into `itl` itself).
  /// Without `own`, its TPOT and E2E are not added to `tpot` and `e2e` (as add_entry).
  void add_exit(const Request& r, const GapRun* gaps, const SloVerdict& ok, bool own = true);

  int64_t entered = 0, left = 0, finished = 0;
  int64_t ttft_met = 0, tpot_met = 0, e2e_met = 0, itl_met = 0, all_met = 0;  ///< with SLOs
  int64_t preemptions = 0, swap_preemptions = 0;  ///< those that happened here (finished)
  /// Of the requests that finished here: their queue times and engine TTFTs, summed (a
  /// cluster's run-wide means sum these in replica order).
  double queue_sum_s = 0, engine_ttft_sum_s = 0;
  QuantileSketch ttft, tpot, e2e;
  GapSketch itl;
};

/// A class's tally (Summary::classes): the requests' latencies and SLO counts, and what only
/// the run's own figures otherwise count.
struct ClassTally {
  explicit ClassTally(size_t exact_limit) : all(exact_limit), queue(exact_limit) {}
  RequestTally all;
  QuantileSketch queue;
  int64_t rejected = 0, unfinished = 0, preemptions = 0;
  StatusCounts status;
};

/// A tenant's tally: its class-like figures, its tokens, its arrival span and the tokens it was
/// served in each second of the run (for the fairness window, metrics/tenants.cpp).
struct TenantTally {
  explicit TenantTally(size_t exact_limit) : c(exact_limit) {}
  ClassTally c;
  int64_t prompt_tokens = 0, output_tokens = 0;
  Time first_arrival = Time::max();
  Time last_arrival;
  std::vector<double> served_per_s;  ///< [k]: tokens served in [k s, k+1 s)
  std::vector<double> demand_per_s;  ///< [k]: tokens of the requests arriving in [k s, k+1 s)
};

/// Builds the summary as requests leave the engine, in memory that does not grow with the run
/// (past QuantileSketch's exact limit).
///
/// In a cluster (track_replicas), the run's sums (the means, the ITL's std) are summed per
/// replica, each in its requests' order, then over the replicas in replica order: so the
/// parallel engine, which records each shard's requests on its own thread (ShardedRecorder),
/// gives the sequential engine's figures to the bit.
class MetricsRecorder final : public ShardedRecorder {
 public:
  /// Above this many replicas, each replica's tally keeps k_fleet_replica_exact_limit values
  /// exactly (then a histogram: percentiles within QuantileSketch::k_relative_error), so that
  /// a fleet's per-replica figures fit in a few MiB a replica.
  static constexpr size_t k_fleet_replicas = 64;
  static constexpr size_t k_fleet_replica_exact_limit = size_t{1} << 16;
  explicit MetricsRecorder(size_t exact_limit = QuantileSketch::k_default_exact_limit);
  /// Also checks every request against `slo` (when given) as it is recorded.
  explicit MetricsRecorder(std::optional<SloTargets> slo,
                           size_t exact_limit = QuantileSketch::k_default_exact_limit);
  /// Keeps a tally per replica and per pool too (Summary::replicas and pools), for a cluster of
  /// accelerators.size() replicas (accelerators[i]: replica i's, for goodput per accelerator)
  /// and `pools` (may be empty). Does nothing for a single engine (one replica, no pools).
  /// REQUIRES: before the first record(); without it a cluster's replicas and pools have
  /// empty distributions and no SLO summary.
  void track_replicas(std::vector<int64_t> accelerators, const std::vector<PoolSpec>& pools);
  /// Each replica's accelerators and their power (Scenario::replica_power): the summary then
  /// has an `energy` block (metrics/energy.h). Empty `power`: none.
  void set_power(std::vector<PowerSpec> power, std::vector<int64_t> accelerators) {
    m_power = std::move(power);
    m_power_accelerators = std::move(accelerators);
  }
  /// The run's class names (Simulation::class_names): while they are empty no class is
  /// tallied, so a run without classes pays nothing for them. REQUIRES: `names` outlives this.
  void set_class_names(const std::vector<std::string>* names) { m_class_names = names; }
  /// The run's tenant names (Simulation::tenant_names), as set_class_names for classes.
  void set_tenant_names(const std::vector<std::string>* names) { m_tenant_names = names; }
  /// Writes Summary::by_status (and each class's) even when no request left early: the run
  /// has an admission or abandonment section.
  void set_track_status(bool on) { m_track_status = on; }
  void record(const Request& r) override;
  /// From now on the run's own TTFT, TPOT, E2E, queue and server-TTFT distributions are added
  /// to by `sink`'s thread (in the requests' order: the same figures to the bit), not by
  /// record(); summary() joins it first. Null: by record(). REQUIRES: before the first
  /// record(); `sink` is given every request this recorder is, and outlives its summary(); a
  /// sequential run (not split by shard).
  void add_figures_on(FiguresSink* sink) { m_figures_sink = sink; }
  /// Adds a finished request's figures to the run's own distributions: record() does, or the
  /// thread of the FiguresSink given to add_figures_on. Touches nothing else, so that this may
  /// run on another thread than record().
  void add_figures(const RequestFigures& f);
  /// After the last add_figures on the FiguresSink's thread: works out the distributions they
  /// make there, which summary() then takes (the same figures as working them out in it). Not
  /// for a cluster's replicas (track_replicas), whose run-wide sums summary() redoes first.
  void finish_figures() {
    if (m_replicas.empty()) own_distributions();
  }
  /// Keeps the step ends the gaps are derived from (StepEnds, bounded); without steps a
  /// request's gaps are its mean (GapsFrom::mean).
  void on_step(const StepRecord& s) override {
    add_step_end(s.replica, (s.start + s.duration).count_ns(), s.kv_capacity_tokens);
  }
  /// Only the step ends are kept: the engine need not build a StepRecord for this recorder.
  [[nodiscard]] bool ends_only() const override { return true; }
  void on_step_end(uint32_t replica, Time end, int64_t kv_capacity_tokens) override {
    if (!m_step_ends.add_if_room(replica, end.count_ns(), kv_capacity_tokens))
      add_step_end(replica, end.count_ns(), kv_capacity_tokens);
  }
  StepEndSink end_sink(uint32_t replica, int64_t kv_capacity_tokens) override {
    return m_step_ends.sink(replica, kv_capacity_tokens);
  }
  /// Further percentiles of the ITL distributions (GapDistribution::percentiles).
  void set_percentiles(std::vector<double> p) { m_percentiles = std::move(p); }
  /// Whether the parallel engine may split this recorder by shard (ShardedRecorder): a
  /// cluster's, without pools, classes or tenants (whose sums span replicas).
  [[nodiscard]] bool shardable() const;
  std::unique_ptr<ShardedRecorder> make_part(uint32_t first_replica) override;
  void finish_part() override;
  void merge_part(ShardedRecorder& part) override;
  void save_part(std::string& out) const override;
  void load_part(std::string_view in) override;
  /// The summary of everything recorded, with the engine's counters.
  [[nodiscard]] Summary summary(const RunStats& stats);
  /// "request 3: needs ..." for the lowest-id request that can never be served; empty if none.
  [[nodiscard]] std::string first_rejection() const;

 private:
  /// The SLO summary of `t` over the run's `duration_s`.
  [[nodiscard]] SloSummary slo_summary(RequestTally& t, double duration_s, int64_t accelerators);
  /// slo_summary for a replica or pool: a check none of its requests is judged on is absent.
  [[nodiscard]] SloSummary part_slo_summary(RequestTally& t, double duration_s,
                                            int64_t accelerators);
  void replica_summaries(Summary& s, const RunStats& stats);
  /// Works out m_own from the sketches add_figures fills.
  void own_distributions();
  /// Tallies `r` in its class's ClassTally.
  void record_class(const Request& r, const SloVerdict& ok);
  /// A gap sketch's distribution, with the further percentiles.
  [[nodiscard]] GapDistribution gap_distribution(GapSketch& g) const;
  /// Summary::classes, one per name in stats.class_names.
  void class_summaries(Summary& s, const RunStats& stats);
  /// Tallies `r` in `c` (its class's or its tenant's).
  void tally_class(ClassTally& c, const Request& r, const SloVerdict& ok);
  /// tally_class without its TTFT (RequestTally::add_entry): where `r` left from.
  void tally_class_exit(ClassTally& c, const Request& r, const SloVerdict& ok);
  /// Tallies `r` in its class's tally at the replica it entered (`entry`, its TTFT) and at the
  /// one it left from (the rest; metrics/replica_classes.cpp).
  void record_replica_class(const Request& r, uint32_t entry, const SloVerdict& ok);
  /// Each ReplicaSummary's classes (metrics/replica_classes.cpp).
  void replica_class_summaries(Summary& s, const RunStats& stats);
  /// A class's (or tenant's) summary from its tally, over the run's `duration_s`.
  void fill_class(ClassSummary& c, ClassTally& t, double duration_s);
  /// Tallies `r` in its tenant's TenantTally (metrics/tenants.cpp).
  void record_tenant(const Request& r, const SloVerdict& ok);
  /// Summary::tenants and Summary::fairness, one per name in stats.tenant_names.
  void tenant_summaries(Summary& s, const RunStats& stats);
  void pool_summaries(Summary& s, const RunStats& stats);
  /// A cluster's run-wide sums, replica by replica in replica order (metrics/metrics_parts.cpp).
  void replica_order_sums();
  /// Keeps a step end (StepEnds), first counting the gaps of the ends it is about to drop.
  void add_step_end(uint32_t replica, int64_t end_ns, int64_t kv_capacity_tokens);
  /// record() for a finished request when no target, class, tenant or replica is tallied.
  void record_plain(const Request& r);
  /// A finished request's counts, release and run figures (record_plain and record_general).
  void tally_finished(const Request& r);
  /// record() for any other request. Apart from record(), which only picks between the two,
  /// so that the common case pays for none of this one's registers.
  void record_general(const Request& r);
  /// The figures add_figures takes from finished request `r`.
  [[nodiscard]] static RequestFigures figures_of(const Request& r);
  /// take_gaps(r, true) without its result, for record_plain. REQUIRES: no replica is tallied.
  void count_request_gaps(const Request& r);
  /// Finished request `r`'s gaps (request_gap_run), counted a step at a time when `count`
  /// (count_gaps; metrics/gap_counts.cpp, where both are inline).
  GapRun take_gaps(const Request& r, bool count);
  /// Counts finished request `r`'s gaps (`run`, from its replica's steps) a step at a time:
  /// its step gaps as a range of its replica's steps (m_gap_counts), any other gap at once,
  /// into the run's tally and its exit replica's and pool's (metrics/gap_counts.cpp).
  /// `k_run_only`: no replica is tallied (m_replicas is empty), known where it is called.
  template <bool k_run_only>
  void count_gaps(const Request& r, const GapRun& run);
  /// count_gaps for a run of mean gaps (GapsFrom::mean).
  void add_mean_gaps(uint32_t rep, GapRun run);
  /// Adds the counted step gaps of replica `rep`'s ends before `end` (an index into its
  /// StepEnds) to the tallies, as (gap, requests) (metrics/gap_counts.cpp).
  void flush_gap_counts(uint32_t rep, size_t end);
  /// flush_gap_counts over every replica's ends: before the tallies are read.
  void flush_all_gap_counts();
  /// The tallies a gap of local replica `rep` goes into, called as f(GapSketch&).
  template <bool k_run_only, class F>
  void each_gap_tally(uint32_t rep, F&& f);

  Summary m_s;
  size_t m_exact_limit;
  size_t m_replica_limit;       // each replica's (and pool's) tally's exact limit
  uint32_t m_replica_base = 0;  // a part's (make_part): its first replica's number
  RequestTally m_all;           // the whole run; its ttft, tpot and e2e from add_figures
  // From add_figures (on the FiguresSink's thread with one): their figures' order is the
  // requests'.
  QuantileSketch m_queue;
  QuantileSketch m_engine_ttft;           // Request::engine_ttft of finished requests
  bool m_outside_engine = false;          // some request had api_in or api_out (the `api` section)
  FiguresSink* m_figures_sink = nullptr;  // add_figures_on
  // finish_figures: the distributions of m_all.ttft, tpot, e2e, m_queue and m_engine_ttft (with
  // m_outside_engine only).
  struct OwnDistributions {
    Distribution ttft, tpot, e2e, queue, engine_ttft;
  };
  std::optional<OwnDistributions> m_own;
  Time m_first_arrival = Time::max();
  Time m_last_release;
  StatusCounts m_status;
  bool m_track_status = false;
  uint64_t m_first_rejected_id = UINT64_MAX;
  std::string m_first_rejected_reason;
  std::optional<SloTargets> m_slo;
  Time m_ttft_target, m_tpot_target, m_e2e_target, m_itl_target;  // in whole nanoseconds
  StepEnds m_step_ends{true};
  // Per replica, aligned with its StepEnds: requests whose gaps start at minus those whose gaps
  // end at each step (a difference array: its prefix sum is a step gap's count; count_gaps),
  // and how many gaps those counts hold that are not added yet (the prefix sums' sum).
  struct GapCounts {
    GrowArray<int32_t> diff;
    int64_t pending = 0;
  };
  std::vector<GapCounts> m_gap_counts;
  const GapRun* m_current_gaps = nullptr;  // the gaps of the request being recorded
  std::vector<double> m_percentiles;
  // track_replicas: one tally per replica and per pool; each replica's accelerators and pool.
  std::vector<RequestTally> m_replicas, m_pools;
  std::vector<int64_t> m_accelerators;
  std::vector<PowerSpec> m_power;             // set_power
  std::vector<int64_t> m_power_accelerators;  // set_power
  std::vector<uint32_t> m_pool_of;
  std::vector<ClassTally> m_classes;  // by RequestSpec::class_id, grown as classes appear
  // [replica][class]: with track_replicas and classes, grown as classes appear.
  std::vector<std::vector<ClassTally>> m_replica_classes;
  const std::vector<std::string>* m_class_names = nullptr;
  std::vector<TenantTally> m_tenants;  // by RequestSpec::tenant_id, grown as tenants appear
  const std::vector<std::string>* m_tenant_names = nullptr;
};

/// The summary of a finished set of requests (tests).
[[nodiscard]] Summary summarize(const std::vector<Request>& requests, const RunStats& stats);

}  // namespace servesim
