#include "sizing/capacity_json.h"

#include "metrics/metrics.h"

namespace servesim {

nlohmann::ordered_json capacity_probe_json(const CapacityProbe& p) {
  const Summary& s = p.run.summary;
  nlohmann::ordered_json j;
  j["rate_scale"] = p.rate_scale;
  j["offered_rate_per_s"] = p.run.offered_rate_per_s;
  j["meets_slo"] = p.meets_slo;
  j["requests_per_s"] = s.requests_per_s;
  j["output_tokens_per_s"] = s.output_tokens_per_s;
  j["ttft_p99_ms"] = s.ttft_s.p99 * 1e3;
  j["tpot_p99_ms"] = s.tpot_s.p99 * 1e3;
  j["slo_attainment"] = s.slo ? s.slo->attainment : 0.0;
  j["goodput_req_per_s"] = s.slo ? s.slo->goodput_per_s : 0.0;
  j["rejected"] = s.rejected;
  return j;
}

nlohmann::ordered_json capacity_json(const std::string& config, const CapacityResult& r,
                                     const CapacityOptions& o) {
  const SloSummary& slo = *r.probes.front().run.summary.slo;
  nlohmann::ordered_json j;
  j["kind"] = "capacity";
  j["config"] = config;
  j["slo"] = {
      {"ttft_ms", slo.ttft ? nlohmann::json(slo.ttft->target_ms) : nlohmann::json()},
      {"tpot_ms", slo.tpot ? nlohmann::json(slo.tpot->target_ms) : nlohmann::json()},
      {"e2e_ms", slo.e2e ? nlohmann::json(slo.e2e->target_ms) : nlohmann::json()},
      {"itl_ms", slo.itl ? nlohmann::json(slo.itl->target_ms) : nlohmann::json()},
      {"percentile", slo.percentile},
      {"min_attainment", o.min_attainment ? nlohmann::json(*o.min_attainment) : nlohmann::json()}};
  if (o.mlperf)  // only with --mlperf, so that other searches' files keep their keys
    j["mlperf"] = {{"benchmark", std::string(o.mlperf->benchmark)},
                   {"scenario", "Server"},
                   {"ttft_limit_ms", o.mlperf->ttft_limit_ms},
                   {"tpot_limit_ms", o.mlperf->tpot_limit_ms},
                   {"percentile", k_loadgen_percentile},
                   {"min_duration_s", o.mlperf_min_duration_s},
                   {"min_query_count", k_loadgen_min_query_count}};
  j["tolerance"] = o.tolerance;
  j["found"] = r.meeting.has_value() && r.failing.has_value();
  j["capacity"] = r.meeting ? capacity_probe_json(r.probes[*r.meeting]) : nlohmann::ordered_json();
  j["first_failing"] =
      r.failing ? capacity_probe_json(r.probes[*r.failing]) : nlohmann::ordered_json();
  j["probes"] = nlohmann::ordered_json::array();
  for (const auto& p : r.probes) j["probes"].push_back(capacity_probe_json(p));
  return j;
}

}  // namespace servesim
