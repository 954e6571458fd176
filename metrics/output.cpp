#include "metrics/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.h"

namespace servesim {
namespace {

nlohmann::ordered_json dist_json(const Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"p50", d.p50},    {"p90", d.p90},
          {"p99", d.p99},     {"max", d.max},   {"exact", d.exact}};
}

nlohmann::ordered_json slo_json(const SloSummary& slo) {
  using J = nlohmann::ordered_json;
  const auto check = [](const std::optional<SloCheck>& c) -> J {
    if (!c) return nullptr;
    return {{"target_ms", c->target_ms},
            {"percentile_ms", c->percentile_ms ? J(*c->percentile_ms) : J(nullptr)},
            {"met", c->met},
            {"requests_met", c->requests_met},
            {"attainment", c->attainment}};
  };
  return {{"percentile", slo.percentile},
          {"ttft", check(slo.ttft)},
          {"tpot", check(slo.tpot)},
          {"requests_met", slo.requests_met},
          {"attainment", slo.attainment},
          {"goodput_requests_per_s", slo.goodput_per_s},
          {"accelerators", slo.accelerators},
          {"goodput_requests_per_s_per_accelerator", slo.goodput_per_s_per_accelerator}};
}

/// A replica's or pool's requests, preemptions, distributions and SLO block (docs/metrics.md).
template <class T>
void add_request_metrics(nlohmann::ordered_json& j, const T& r) {
  j["requests"] = r.requests;
  j["preemptions"] = r.preemptions;
  j["swap_preemptions"] = r.swap_preemptions;
  j["ttft_s"] = dist_json(r.ttft_s);
  j["tpot_s"] = dist_json(r.tpot_s);
  j["e2e_s"] = dist_json(r.e2e_s);
  j["slo"] = r.slo ? slo_json(*r.slo) : nlohmann::ordered_json(nullptr);
}

/// "TTFT p99 812.3 ms <= 2000 ms met"
nlohmann::ordered_json pools_json(const std::vector<PoolSummary>& pools) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const PoolSummary& p : pools) {
    out.push_back({{"pool", p.name},
                   {"role", p.role},
                   {"replicas", p.replicas},
                   {"accelerators", p.accelerators},
                   {"routed", p.routed},
                   {"handed_off", p.handed_off},
                   {"received", p.received},
                   {"finished", p.finished},
                   {"steps", p.steps},
                   {"busy_share", p.busy_share},
                   {"kv_capacity_tokens", p.kv_capacity_tokens},
                   {"kv_peak_used_tokens", p.kv_peak_used_tokens},
                   {"ttft_mean_s", p.ttft_mean_s},
                   {"tpot_mean_s", p.tpot_mean_s},
                   {"e2e_mean_s", p.e2e_mean_s}});
    add_request_metrics(out.back(), p);
  }
  return out;
}

nlohmann::ordered_json kv_transfer_json(const KvTransferSummary& k) {
  const auto dist = [](const Distribution& d) -> nlohmann::ordered_json {
    return {{"count", d.count}, {"mean", d.mean}, {"p50", d.p50}, {"p99", d.p99}, {"max", d.max}};
  };
  return {{"transfers", k.transfers},
          {"bytes", k.bytes},
          {"transfer_s", dist(k.transfer_s)},
          {"admit_wait_s", dist(k.admit_wait_s)}};
}

std::string slo_check_text(const char* name, double percentile, const SloCheck& c) {
  const std::string p = fmt::format("{} p{:g}", name, percentile);
  if (!c.percentile_ms) return fmt::format("{} none ({})", p, c.met ? "met" : "missed");
  return fmt::format("{} {:.1f} ms {} {:g} ms {}", p, *c.percentile_ms, c.met ? "<=" : ">",
                     c.target_ms, c.met ? "met" : "missed");
}

/// The printed per-replica (and per-pool) table: requests, TTFT and TPOT percentiles in ms,
/// and with SLOs the share of requests meeting each target and all of them. "-" where a
/// replica has no such value (a decode replica has no TTFT of its own: docs/metrics.md).
std::string replica_table(const Summary& s) {
  constexpr size_t k_max_rows = 32;  // beyond that summary.json has them
  std::string out;
  auto it = std::back_inserter(out);
  const SloSummary* slo = s.slo ? &*s.slo : nullptr;
  const bool all = slo && slo->ttft && slo->tpot;
  fmt::format_to(it, "\n{:<16}{:>8}{:>10}{:>12}{:>12}{:>12}", "replica", "routed", "finished",
                 "TTFT p50 ms", "TTFT p99 ms", "TPOT p99 ms");
  if (slo && slo->ttft) fmt::format_to(it, "{:>10}", "TTFT met");
  if (slo && slo->tpot) fmt::format_to(it, "{:>10}", "TPOT met");
  if (all) fmt::format_to(it, "{:>10}", "all met");
  fmt::format_to(it, "\n");
  const auto ms = [](const Distribution& d, double v, int digits) {
    return d.count ? fmt::format("{:.{}f}", v * 1e3, digits) : std::string("-");
  };
  const auto share = [](const std::optional<SloCheck>& c) {
    return c ? fmt::format("{:.1f}%", 100.0 * c->attainment) : std::string("-");
  };
  const auto row = [&](const std::string& name, const auto& r) {
    fmt::format_to(it, "{:<16}{:>8}{:>10}{:>12}{:>12}{:>12}", name, r.routed, r.finished,
                   ms(r.ttft_s, r.ttft_s.p50, 1), ms(r.ttft_s, r.ttft_s.p99, 1),
                   ms(r.tpot_s, r.tpot_s.p99, 2));
    if (slo && slo->ttft) fmt::format_to(it, "{:>10}", r.slo ? share(r.slo->ttft) : "-");
    if (slo && slo->tpot) fmt::format_to(it, "{:>10}", r.slo ? share(r.slo->tpot) : "-");
    if (all)
      fmt::format_to(it, "{:>10}",
                     r.slo && r.requests ? fmt::format("{:.1f}%", 100.0 * r.slo->attainment) : "-");
    fmt::format_to(it, "\n");
  };
  // Replicas are named as in cluster.links: pool[i], i counted within the pool.
  for (size_t i = 0; i < s.replicas.size() && i < k_max_rows; ++i) {
    const ReplicaSummary& r = s.replicas[i];
    if (r.pool.empty()) {
      row(std::to_string(i), r);
      continue;
    }
    size_t k = i;
    while (k > 0 && s.replicas[k - 1].pool == r.pool) --k;
    row(fmt::format("{}[{}]", r.pool, i - k), r);
  }
  if (s.replicas.size() > k_max_rows)
    fmt::format_to(it, "... {} more replicas (summary.json lists every one)\n",
                   s.replicas.size() - k_max_rows);
  for (const PoolSummary& p : s.pools) row("pool " + p.name, p);
  return out;
}

}  // namespace

nlohmann::ordered_json yaml_to_json(const YAML::Node& n) {
  using J = nlohmann::ordered_json;
  if (!n.IsDefined() || n.IsNull()) return nullptr;
  if (n.IsSequence()) {
    J a = J::array();
    for (const auto& e : n) a.push_back(yaml_to_json(e));
    return a;
  }
  if (n.IsMap()) {
    J o = J::object();
    for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return o;
  }
  const std::string& s = n.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  int64_t i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size()) return i;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d)) return d;
  return s;
}

nlohmann::ordered_json summary_json(const Summary& s, const YAML::Node& config, uint64_t seed) {
  nlohmann::ordered_json j;
  j["servesim_version"] = SERVESIM_VERSION;
  j["seed"] = seed;
  j["requests"] = s.requests;
  j["finished"] = s.finished;
  j["rejected"] = s.rejected;
  j["unfinished"] = s.unfinished;
  j["partial"] = !s.stopped_by.empty();
  if (!s.stopped_by.empty()) j["stopped_by"] = s.stopped_by;
  j["prompt_tokens"] = s.prompt_tokens;
  j["output_tokens"] = s.output_tokens;
  j["first_arrival_s"] = s.first_arrival_s;
  j["last_release_s"] = s.last_release_s;
  j["duration_s"] = s.duration_s;
  j["output_tokens_per_s"] = s.output_tokens_per_s;
  j["requests_per_s"] = s.requests_per_s;
  j["ttft_s"] = dist_json(s.ttft_s);
  j["tpot_s"] = dist_json(s.tpot_s);
  j["e2e_s"] = dist_json(s.e2e_s);
  j["queue_s"] = dist_json(s.queue_s);
  j["preemptions"] = s.preemptions;
  j["swap_preemptions"] = s.swap_preemptions;
  j["preempted_requests"] = s.preempted_requests;
  j["steps"] = s.steps;
  j["mean_batch_sequences"] = s.mean_batch_sequences;
  j["busy_share"] = s.busy_share;
  j["prefill_tokens_computed"] = s.prefill_tokens_computed;
  j["kv_capacity_tokens"] = s.kv_capacity_tokens;
  j["kv_peak_used_tokens"] = s.kv_peak_used_tokens;
  j["peak_in_flight_requests"] = s.peak_in_flight;
  if (s.prefix) {
    const auto& p = *s.prefix;
    j["prefix_cache"] = {
        {"hit_rate", p.queried_tokens
                         ? static_cast<double>(p.hit_tokens) / static_cast<double>(p.queried_tokens)
                         : 0.0},
        {"hit_tokens", p.hit_tokens},
        {"queried_tokens", p.queried_tokens},
        {"block_hit_rate", p.queried_blocks ? static_cast<double>(p.hit_blocks) /
                                                  static_cast<double>(p.queried_blocks)
                                            : 0.0},
        {"hit_blocks", p.hit_blocks},
        {"queried_blocks", p.queried_blocks},
        {"evicted_blocks", p.evicted_blocks}};
  } else {
    j["prefix_cache"] = nullptr;
  }
  auto optional = [](const std::optional<double>& v) -> nlohmann::ordered_json {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json counters = nlohmann::ordered_json::object();
  for (const auto& [name, n] : s.workload_counters) counters[name] = n;
  j["workload_counters"] = counters;
  j["mbu"] = optional(s.mbu);
  j["mfu"] = optional(s.mfu);
  j["bandwidth_bound_step_share"] = optional(s.bandwidth_bound_step_share);
  j["slo"] = s.slo ? slo_json(*s.slo) : nlohmann::ordered_json(nullptr);
  if (!s.replicas.empty()) {
    nlohmann::ordered_json reps = nlohmann::ordered_json::array();
    for (size_t i = 0; i < s.replicas.size(); ++i) {
      const ReplicaSummary& r = s.replicas[i];
      reps.push_back({{"replica", i},
                      {"routed", r.routed},
                      {"finished", r.finished},
                      {"steps", r.steps},
                      {"busy_share", r.busy_share},
                      {"mean_batch_sequences", r.mean_batch_sequences},
                      {"kv_capacity_tokens", r.kv_capacity_tokens},
                      {"kv_peak_used_tokens", r.kv_peak_used_tokens},
                      {"ttft_mean_s", r.ttft_mean_s},
                      {"tpot_mean_s", r.tpot_mean_s},
                      {"e2e_mean_s", r.e2e_mean_s}});
      add_request_metrics(reps.back(), r);
      if (!r.pool.empty()) {  // cluster.pools only: keeps `cluster.replicas` output as it was
        reps.back()["pool"] = r.pool;
        reps.back()["handed_off"] = r.handed_off;
        reps.back()["received"] = r.received;
      }
    }
    j["replicas"] = reps;
  }
  if (!s.pools.empty()) j["pools"] = pools_json(s.pools);
  if (s.kv_transfer) j["kv_transfer"] = kv_transfer_json(*s.kv_transfer);
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
  for (const auto& [name, n] : s.workload_counters)
    if (n > 0) fmt::format_to(it, "workload   {}: {}\n", name, n);
  if (s.prefix)
    fmt::format_to(it,
                   "prefix     {:.1f}% of prefill tokens found cached ({} of {}), {} cached "
                   "blocks evicted\n",
                   s.prefix->queried_tokens ? 100.0 * static_cast<double>(s.prefix->hit_tokens) /
                                                  static_cast<double>(s.prefix->queried_tokens)
                                            : 0.0,
                   s.prefix->hit_tokens, s.prefix->queried_tokens, s.prefix->evicted_blocks);
  if (s.slo) {
    const SloSummary& slo = *s.slo;
    std::string checks;
    if (slo.ttft) checks += slo_check_text("TTFT", slo.percentile, *slo.ttft) + "; ";
    if (slo.tpot) checks += slo_check_text("TPOT", slo.percentile, *slo.tpot) + "; ";
    fmt::format_to(it,
                   "slo        {}{:.1f}% of requests meet {}; goodput {:.2f} req/s ({:.2f} per "
                   "accelerator of {})\n",
                   checks, 100.0 * slo.attainment, slo.ttft && slo.tpot ? "both" : "it",
                   slo.goodput_per_s, slo.goodput_per_s_per_accelerator, slo.accelerators);
  }
  fmt::format_to(it, "\n{:<12}{:>12}{:>12}{:>12}{:>12}{:>12}\n", "metric", "mean", "p50", "p90",
                 "p99", "max");
  auto row = [&](const char* name, const Distribution& d, double scale, const char* unit) {
    fmt::format_to(it, "{:<12}{:>12.3f}{:>12.3f}{:>12.3f}{:>12.3f}{:>12.3f}  {}\n", name,
                   d.mean * scale, d.p50 * scale, d.p90 * scale, d.p99 * scale, d.max * scale,
                   unit);
  };
  row("TTFT", s.ttft_s, 1e3, "ms");
  row("TPOT", s.tpot_s, 1e3, "ms");
  row("E2E", s.e2e_s, 1.0, "s");
  row("queue", s.queue_s, 1e3, "ms");
  if (!s.replicas.empty()) out += replica_table(s);
  return out;
}

}  // namespace servesim
