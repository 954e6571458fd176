// summary.json and the printed summary, both written by walking the summaries' field lists
// (metrics/summary_fields.h, the lists beside the structs in metrics/metrics.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <string>

#include "metrics/output.h"
#include "metrics/summary_fields.h"

namespace servesim {
namespace {

double stat_of(const Distribution& d, Stat s) {
  switch (s) {
    case Stat::mean:
      return d.mean;
    case Stat::p50:
      return d.p50;
    case Stat::p90:
      return d.p90;
    case Stat::p99:
      return d.p99;
    case Stat::max:
      return d.max;
    case Stat::none:
      break;
  }
  return 0;
}

/// How many latency targets the run's SLO has (TTFT, TPOT, E2E, ITL).
int targets_of(const SloSummary& s) {
  return int{s.ttft.has_value()} + s.tpot.has_value() + s.e2e.has_value() + s.itl.has_value();
}

/// Whether the k-th printed column of a value of type T shows in a run with `run_slo`: a
/// replica's or pool's SLO columns (TTFT met, TPOT met, all met) follow the run's checks.
template <class T>
bool column_shown(size_t k, const SloSummary* run_slo) {
  if constexpr (std::is_same_v<T, std::optional<SloSummary>>) {
    if (!run_slo) return false;
    if (k == 0) return run_slo->ttft.has_value();
    if (k == 1) return run_slo->tpot.has_value();
    return targets_of(*run_slo) > 1;
  } else {
    return true;
  }
}

/// The text of the k-th printed column of a value; "-" where a replica has no such value (a
/// decode replica has no TTFT of its own: docs/metrics.md).
template <class T>
std::string cell(const Shown& c, size_t k, const T& v, int64_t requests) {
  if constexpr (std::is_base_of_v<Distribution, T>) {
    return v.count ? fmt::format("{:.{}f}", stat_of(v, c.stat) * c.scale, c.digits)
                   : std::string("-");
  } else if constexpr (std::is_same_v<T, std::optional<SloSummary>>) {
    const auto share = [](const std::optional<SloCheck>& check) {
      return check ? fmt::format("{:.1f}%", 100.0 * check->attainment) : std::string("-");
    };
    if (!v) return "-";
    if (k == 0) return share(v->ttft);
    if (k == 1) return share(v->tpot);
    return requests ? fmt::format("{:.1f}%", 100.0 * v->attainment) : std::string("-");
  } else if constexpr (fmt::is_formattable<T>::value) {
    return fmt::format("{}", v);
  } else {  // a nested block (a replica's classes) has no column
    return "-";
  }
}

/// The printed per-replica (and per-pool) table: a name, then the columns of the fields with
/// Field::col, in field order.
std::string replica_table(const Summary& s) {
  constexpr size_t k_max_rows = 32;  // beyond that summary.json has them
  std::string out;
  auto it = std::back_inserter(out);
  const SloSummary* slo = s.slo ? &*s.slo : nullptr;
  fmt::format_to(it, "\n{:<16}", "replica");
  for_each_field(ReplicaSummary{}, [&](const Field& f, const auto& v) {
    for (size_t k = 0; k < f.shown_count; ++k)
      if (column_shown<std::decay_t<decltype(v)>>(k, slo))
        fmt::format_to(it, "{:>{}}", f.shown[k].header, f.shown[k].width);
  });
  fmt::format_to(it, "\n");
  const auto row = [&](const std::string& name, const auto& r) {
    fmt::format_to(it, "{:<16}", name);
    for_each_field(r, [&](const Field& f, const auto& v) {
      for (size_t k = 0; k < f.shown_count; ++k)
        if (column_shown<std::decay_t<decltype(v)>>(k, slo))
          fmt::format_to(it, "{:>{}}", cell(f.shown[k], k, v, r.requests), f.shown[k].width);
    });
    fmt::format_to(it, "\n");
  };
  // Replicas are named as in cluster.links: pool[i], i counted within the pool.
  size_t first = 0;  // the index of the first replica of r's pool (a pool's replicas are adjacent)
  // With classes, each replica's row is followed by a row per class (its figures there) when
  // every replica's fit in 64 rows.
  constexpr size_t k_max_class_rows = 64;
  for (size_t i = 0; i < s.replicas.size() && i < k_max_rows; ++i) {
    const ReplicaSummary& r = s.replicas[i];
    if (r.pool.empty()) {
      row(std::to_string(i), r);
    } else {
      if (i == 0 || s.replicas[i - 1].pool != r.pool) first = i;
      row(fmt::format("{}[{}]", r.pool, i - first), r);
    }
    if (s.replicas.size() * (1 + r.classes.size()) > k_max_class_rows) continue;
    for (const auto& [name, c] : r.classes) {
      ReplicaSummary part;  // the class's figures in the replica's columns
      part.routed = c.routed;
      part.requests = c.requests;
      part.finished = c.finished;
      part.preemptions = c.preemptions;
      part.ttft_s = c.ttft_s;
      part.tpot_s = c.tpot_s;
      part.e2e_s = c.e2e_s;
      part.slo = c.slo;
      row("  " + name.substr(0, 14), part);
    }
  }
  if (s.replicas.size() > k_max_rows)
    fmt::format_to(it, "... {} more replicas (summary.json lists every one)\n",
                   s.replicas.size() - k_max_rows);
  for (const PoolSummary& p : s.pools) row("pool " + p.name, p);
  return out;
}

/// The run's latency table: a row per Distribution field with Field::row (GapDistribution's
/// too: ITL).
std::string latency_table(const Summary& s) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "\n{:<12}{:>12}{:>12}{:>12}{:>12}{:>12}\n", "metric", "mean", "p50", "p90",
                 "p99", "max");
  const auto row = [&](const Field& f, const Distribution& v) {
    for (size_t k = 0; k < f.shown_count; ++k) {
      const Shown& r = f.shown[k];
      fmt::format_to(it, "{:<12}", r.header);
      for (Stat st : {Stat::mean, Stat::p50, Stat::p90, Stat::p99, Stat::max})
        fmt::format_to(it, "{:>12.{}f}", stat_of(v, st) * r.scale, r.digits);
      fmt::format_to(it, "  {}\n", r.unit);
    }
  };
  for_each_field(s, [&](const Field& f, const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_base_of_v<Distribution, T>) {
      row(f, v);
    } else if constexpr (std::is_same_v<T, std::optional<Distribution>>) {
      if (v) row(f, *v);  // server TTFT: only with time outside the engine
    }
  });
  return out;
}

/// "TTFT p99 812.3 ms <= 2000 ms met"
std::string slo_check_text(const char* name, double percentile, const SloCheck& c) {
  const std::string p = fmt::format("{} p{:g}", name, percentile);
  if (!c.percentile_ms) return fmt::format("{} none ({})", p, c.met ? "met" : "missed");
  return fmt::format("{} {:.1f} ms {} {:g} ms {}", p, *c.percentile_ms, c.met ? "<=" : ">",
                     c.target_ms, c.met ? "met" : "missed");
}

}  // namespace

nlohmann::ordered_json summary_json(const Summary& s, const YAML::Node& config, uint64_t seed) {
  nlohmann::ordered_json j;
  j["servesim_version"] = SERVESIM_VERSION;
  j["seed"] = seed;
  add_fields_json(j, s);
  j["config"] = yaml_to_json(config);
  return j;
}

std::string summary_table(const Summary& s) {
  std::string out;
  auto it = std::back_inserter(out);
  if (!s.stopped_by.empty())
    fmt::format_to(it, "PARTIAL    stopped early ({}): {} requests arrived and were not served\n",
                   s.stopped_by, s.unfinished);
  fmt::format_to(it, "requests   {} finished, {} rejected, {} preempted ({} preemptions{})\n",
                 s.finished, s.rejected, s.preempted_requests, s.preemptions,
                 s.swap_preemptions ? fmt::format(", {} by swapping", s.swap_preemptions) : "");
  if (const std::optional<StatusCounts>& b = s.by_status)
    fmt::format_to(it,
                   "ended      {} refused by admission, {} shed, {} timed out, {} cancelled{}\n",
                   b->rejected - s.rejected, b->shed, b->timed_out, b->cancelled,
                   b->failed > 0 ? fmt::format(", {} failed", b->failed) : std::string());
  if (const std::optional<FailureSummary>& f = s.failures)
    fmt::format_to(it,
                   "failures   {} replica failures, availability {:.2f}%, {} retries, {} failed, "
                   "{} KV tokens lost{}\n",
                   f->failures, 100.0 * f->availability, f->retries, f->failed_requests,
                   f->lost_tokens,
                   f->slo_attainment_without_failures
                       ? fmt::format(", SLO attainment {:.2f}% (without failures {:.2f}%)",
                                     100.0 * f->slo_attainment.value_or(0),
                                     100.0 * *f->slo_attainment_without_failures)
                       : std::string());
  fmt::format_to(it, "throughput {:.1f} output tokens/s, {:.3f} requests/s over {:.3f} s\n",
                 s.output_tokens_per_s, s.requests_per_s, s.duration_s);
  fmt::format_to(it,
                 "engine     {} steps, {:.2f} sequences/step, busy {:.1f}% of the time, "
                 "KV peak {} of {} tokens\n",
                 s.steps, s.mean_batch_sequences, 100.0 * s.busy_share, s.kv_peak_used_tokens,
                 s.kv_capacity_tokens);
  if (!s.replicas.empty()) {
    const auto [lo, hi] = std::minmax_element(s.replicas.begin(), s.replicas.end(),
                                              [](const ReplicaSummary& a, const ReplicaSummary& b) {
                                                return a.busy_share < b.busy_share;
                                              });
    fmt::format_to(
        it, "cluster    {} replicas, busy {:.1f}% to {:.1f}%, routed {} to {} requests each\n",
        s.replicas.size(), 100.0 * lo->busy_share, 100.0 * hi->busy_share,
        std::min_element(
            s.replicas.begin(), s.replicas.end(),
            [](const ReplicaSummary& a, const ReplicaSummary& b) { return a.routed < b.routed; })
            ->routed,
        std::max_element(
            s.replicas.begin(), s.replicas.end(),
            [](const ReplicaSummary& a, const ReplicaSummary& b) { return a.routed < b.routed; })
            ->routed);
  }
  for (const PoolSummary& p : s.pools) {
    fmt::format_to(it, "pool       {} ({}, {} replicas, {} accelerators): busy {:.1f}%, ", p.name,
                   p.role, p.replicas, p.accelerators, 100.0 * p.busy_share);
    if (p.role == "prefill")
      fmt::format_to(it, "routed {}, handed off {}, finished {}", p.routed, p.handed_off,
                     p.finished);
    else if (p.role == "decode")
      fmt::format_to(it, "received {}, finished {}", p.received, p.finished);
    else
      fmt::format_to(it, "routed {}, finished {}", p.routed, p.finished);
    // TTFT of the requests routed here, TPOT of those that left from here (a prefill pool has
    // the first, a decode pool the second).
    if (p.ttft_s.count > 0) fmt::format_to(it, "; TTFT mean {:.1f} ms", p.ttft_mean_s * 1e3);
    if (p.tpot_s.count > 0)
      fmt::format_to(it, "{} TPOT mean {:.2f} ms", p.ttft_s.count > 0 ? "," : ";",
                     p.tpot_mean_s * 1e3);
    fmt::format_to(it, "\n");
  }
  if (s.kv_transfer)
    fmt::format_to(it,
                   "kv move    {} transfers, {:.3f} GB; transfer mean {:.3f} ms, p99 {:.3f} ms; "
                   "wait for decode KV mean {:.3f} ms, p99 {:.3f} ms\n",
                   s.kv_transfer->transfers, s.kv_transfer->bytes / 1e9,
                   s.kv_transfer->transfer_s.mean * 1e3, s.kv_transfer->transfer_s.p99 * 1e3,
                   s.kv_transfer->admit_wait_s.mean * 1e3, s.kv_transfer->admit_wait_s.p99 * 1e3);
  if (s.mbu && s.mfu && s.bandwidth_bound_step_share)
    fmt::format_to(it,
                   "roofline   MBU {:.1f}%, MFU {:.1f}% of the busy time, {:.1f}% of steps "
                   "bandwidth-bound\n",
                   100.0 * *s.mbu, 100.0 * *s.mfu, 100.0 * *s.bandwidth_bound_step_share);
  if (s.energy)
    fmt::format_to(it,
                   "energy     {:.4g} kJ on {} accelerator{}, mean {:.0f} W; {:.3g} J per output "
                   "token, {:.3g} output tokens/J\n",
                   s.energy->joules / 1e3, s.energy->accelerators,
                   s.energy->accelerators == 1 ? "" : "s", s.energy->mean_power_w,
                   s.energy->joules_per_output_token, s.energy->output_tokens_per_joule);
  if (s.autoscale) {
    const AutoscaleSummary& a = *s.autoscale;
    fmt::format_to(it,
                   "autoscale  {} {:g}: {} to {} replicas paid (mean {:.2f}), {:.2f} replica-hours"
                   "{}; {} up, {} down\n",
                   a.signal, a.target, a.min_replicas, a.max_replicas, a.mean_replicas,
                   a.replica_hours, a.usd ? fmt::format(", ${:.2f}", *a.usd) : std::string(),
                   a.scale_ups, a.scale_downs);
  }
  for (const auto& [name, n] : s.workload_counters)
    if (n > 0) fmt::format_to(it, "workload   {}: {}\n", name, n);
  if (s.speculative)
    fmt::format_to(it,
                   "speculate  {} k={}: {:.1f}% of drafts accepted, {:.2f} tokens per verify, "
                   "{} verify steps, {} with speculation off; proposer {:.1f}% of busy time\n",
                   s.speculative->method, s.speculative->k, 100.0 * s.speculative->acceptance_rate,
                   s.speculative->tokens_per_verify, s.speculative->verify_steps,
                   s.speculative->off_steps, 100.0 * s.speculative->proposer_share);
  if (s.lora)
    fmt::format_to(it,
                   "lora       {} adapters, {} of {} requests: GPU slots {} hits, {} misses ({} "
                   "from disk), loads {:.3g} s, GEMMs {:.3g} s, {} skipped at max_loras {}\n",
                   s.lora->adapters, s.lora->requests_with_adapter, s.requests,
                   s.lora->gpu_slot_hits, s.lora->gpu_slot_misses, s.lora->host_misses,
                   s.lora->load_s, s.lora->compute_s, s.lora->skipped_for_slots, s.lora->max_loras);
  if (s.prefix)
    fmt::format_to(it,
                   "prefix     {:.1f}% of prefill tokens found cached ({} of {}), {} cached "
                   "blocks evicted\n",
                   s.prefix->queried_tokens ? 100.0 * static_cast<double>(s.prefix->hit_tokens) /
                                                  static_cast<double>(s.prefix->queried_tokens)
                                            : 0.0,
                   s.prefix->hit_tokens, s.prefix->queried_tokens, s.prefix->evicted_blocks);
  if (s.pipeline) {
    const PipelineSummary& p = *s.pipeline;
    std::string busy;
    for (const PipelineStageSummary& k : p.stage_busy)
      busy += fmt::format("{}{:.1f}%", busy.empty() ? "" : " ", 100.0 * k.busy_share);
    fmt::format_to(it,
                   "pipeline   {} stages ({}): bubble {:.1f}%, {:.2f} micro-batches in flight on "
                   "average, stages busy {}\n",
                   p.stages, p.schedule, 100.0 * p.bubble, p.micro_batches_in_flight, busy);
  }
  if (s.offload) {
    const OffloadStats& o = *s.offload;
    for (const TierStats& t : o.tiers)
      fmt::format_to(it,
                     "offload    {}: {:.1f}% of the prefill tokens that missed above found here "
                     "({} of {}), {:.3g} GB reloaded in {:.3g} s; {} blocks held, {} moved "
                     "down\n",
                     t.name,
                     t.queried_tokens ? 100.0 * static_cast<double>(t.hit_tokens) /
                                            static_cast<double>(t.queried_tokens)
                                      : 0.0,
                     t.hit_tokens, t.queried_tokens, t.reload_bytes / 1e9, t.reload_s,
                     t.resident_blocks, t.moved_down_blocks);
    fmt::format_to(it,
                   "offload    {} prefill tokens reloaded instead of computed; reloads of {:.4g} s "
                   "added {:.4g} s to {} steps (overlap {}, reload {})\n",
                   o.prefill_tokens_saved, o.reload_s, o.stall_s, o.reload_steps, o.overlap,
                   o.reload);
  }
  if (s.slo) {
    const SloSummary& slo = *s.slo;
    std::string checks;
    if (slo.ttft) checks += slo_check_text("TTFT", slo.percentile, *slo.ttft) + "; ";
    if (slo.tpot) checks += slo_check_text("TPOT", slo.percentile, *slo.tpot) + "; ";
    if (slo.e2e) checks += slo_check_text("E2E", slo.percentile, *slo.e2e) + "; ";
    if (slo.itl) checks += slo_check_text("ITL", slo.percentile, *slo.itl) + "; ";
    fmt::format_to(it,
                   "slo        {}{:.1f}% of requests meet {}; goodput {:.2f} req/s ({:.2f} per "
                   "accelerator of {})\n",
                   checks, 100.0 * slo.attainment,
                   std::array<const char*, 5>{"", "it", "both", "all three",
                                              "all four"}[static_cast<size_t>(targets_of(slo))],
                   slo.goodput_per_s, slo.goodput_per_s_per_accelerator, slo.accelerators);
  }
  constexpr size_t k_max_class_lines = 32;  // beyond that summary.json has them
  for (size_t k = 0; k < s.classes.size() && k < k_max_class_lines; ++k) {
    const auto& [name, c] = s.classes[k];
    fmt::format_to(it, "class      {}: {} finished, {} rejected; TTFT p50 {:.1f} ms, p99 {:.1f} ms",
                   name, c.finished, c.rejected, c.ttft_s.p50 * 1e3, c.ttft_s.p99 * 1e3);
    if (c.itl_s.count > 0) fmt::format_to(it, "; ITL p99 {:.2f} ms", c.itl_s.p99 * 1e3);
    if (c.slo) fmt::format_to(it, "; {:.1f}% meet the SLO", 100.0 * c.slo->attainment);
    fmt::format_to(it, "\n");
  }
  if (s.classes.size() > k_max_class_lines)
    fmt::format_to(it, "class      ... {} more classes (summary.json lists every one)\n",
                   s.classes.size() - k_max_class_lines);
  out += tenant_lines(s);
  out += latency_table(s);
  if (!s.replicas.empty()) out += replica_table(s);
  return out;
}

}  // namespace servesim
