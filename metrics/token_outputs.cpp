#include "metrics/token_outputs.h"

#include <algorithm>

namespace servesim {

std::vector<const ExportFormat*> export_list(const std::vector<std::string>& names,
                                             const std::string& option) {
  std::vector<const ExportFormat*> out;
  for (const std::string& name : names) {
    const ExportFormat* f = &export_format(name, option);
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

namespace {

nlohmann::ordered_json stats_json(const LatencyStats& st) {
  nlohmann::ordered_json p = nlohmann::ordered_json::object();
  for (const auto& [at, v] : st.percentiles) p["p" + percentile_word(at)] = v;
  return {{"count", st.count}, {"mean", st.mean}, {"median", st.median},
          {"std", st.std},     {"max", st.max},   {"percentiles", p}};
}

}  // namespace

nlohmann::ordered_json latency_json(const LatencyReport& r) {
  return {{"ttft", stats_json(r.ttft)},
          {"tpot", stats_json(r.tpot)},
          {"itl", stats_json(r.itl)},
          {"e2e", stats_json(r.e2e)}};
}

}  // namespace servesim
