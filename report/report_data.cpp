#include "report/report_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/csv_columns.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "report/numbers.h"
#include "report/step_series.h"
#include "report/sweep_points.h"

namespace servesim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t k_cdf_points = 500;

std::string shown(const fs::path& p) { return printable(p.string(), 1024); }

json read_json_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", shown(path)));
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", shown(path), e.what()));
  }
}

// The directory's name as the page shows it: its last component ("out/static/" -> "static").
std::string name_of(const std::string& dir) {
  fs::path p(dir);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();
  const std::string name = p.filename().string();
  return name.empty() || name == "." ? dir : name;
}

// requests.csv's latency columns over finished requests, as CDFs in milliseconds.
json request_cdfs(const fs::path& path) {
  enum { Ttft, Tpot, E2e, Queue, Status };
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", shown(path)));
  CsvColumns csv(in, path.string(), {"ttft_s", "tpot_s", "e2e_s", "queue_s", "status"});
  std::vector<double> v[4];
  while (csv.next_row()) {
    if (csv.field(Status) != "finished") continue;
    for (size_t k : {Ttft, Tpot, E2e, Queue})
      if (!csv.field(k).empty()) v[k].push_back(csv.real(k, 0, 1e12));
  }
  return {{"ttft_ms", cdf_points(std::move(v[Ttft]), 1e3, k_cdf_points)},
          {"tpot_ms", cdf_points(std::move(v[Tpot]), 1e3, k_cdf_points)},
          {"e2e_ms", cdf_points(std::move(v[E2e]), 1e3, k_cdf_points)},
          {"queue_ms", cdf_points(std::move(v[Queue]), 1e3, k_cdf_points)}};
}

// summary.json without the resolved config (the page shows a few of its keys only).
json run_summary(const json& s) {
  json out = json::object();
  for (const auto& [key, value] : s.items())
    if (key != "config") out[key] = value;
  const json* cfg = s.contains("config") ? &s["config"] : nullptr;
  if (cfg && cfg->is_object() && cfg->contains("scheduler") && (*cfg)["scheduler"].is_object() &&
      (*cfg)["scheduler"].contains("kind"))
    out["scheduler"] = (*cfg)["scheduler"]["kind"];
  return out;
}

json read_run(const fs::path& dir, const json& summary) {
  json r = {{"kind", "run"},
            {"summary", run_summary(summary)},
            {"cdf", nullptr},
            {"series", nullptr},
            {"roofline", nullptr}};
  if (fs::exists(dir / "requests.csv")) r["cdf"] = request_cdfs(dir / "requests.csv");
  if (fs::exists(dir / "steps.csv")) {
    const StepSeries s = StepSeries::read_file((dir / "steps.csv").string());
    r["series"] = s.series_json();
    r["roofline"] = s.roofline_json();
  }
  return r;
}

json read_sweep(const fs::path& dir, const json& summary) {
  json slo = summary.contains("slo") ? summary["slo"] : json(nullptr);
  return {
      {"kind", "sweep"}, {"slo", slo}, {"points", read_points_csv((dir / "points.csv").string())}};
}

}  // namespace

json cdf_points(std::vector<double> values, double scale, size_t max_points) {
  json x = json::array(), p = json::array();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const size_t m = std::min(n, std::max<size_t>(max_points, 2));
  for (size_t k = 0; k < m; ++k) {
    // Rank k of m spread over 0..n-1; m == n takes every value.
    const size_t i =
        m == n
            ? k
            : static_cast<size_t>(std::llround(static_cast<double>(k) * static_cast<double>(n - 1) /
                                               static_cast<double>(m - 1)));
    const double xi = round_sig(values[i] * scale, 6);
    const double pi = round_sig(static_cast<double>(i + 1) / static_cast<double>(n), 6);
    if (!x.empty() && x.back().get<double>() == xi) {  // ties: one point, the highest share
      p.back() = pi;
      continue;
    }
    x.push_back(xi);
    p.push_back(pi);
  }
  return {{"x", x}, {"p", p}};
}

json read_result_dir(const std::string& dir) {
  const fs::path d(dir);
  if (!fs::is_directory(d))
    throw InputError(
        fmt::format("{}: not a directory (give the --out folder of servesim run, or "
                    "a sweep's)",
                    shown(d)));
  const json summary = read_json_file(d / "summary.json");
  if (!summary.is_object())
    throw InputError(fmt::format("{}: not a JSON object", shown(d / "summary.json")));
  const bool sweep = summary.contains("kind") && summary["kind"] == "sweep";
  json r = sweep ? read_sweep(d, summary) : read_run(d, summary);
  r["name"] = name_of(dir);
  r["path"] = dir;
  return r;
}

json report_data(const std::vector<std::string>& dirs,
                 const volatile std::sig_atomic_t* interrupt) {
  json results = json::array();
  for (const std::string& d : dirs) {
    check_interrupt(interrupt);
    results.push_back(read_result_dir(d));
  }
  return {{"version", 1}, {"results", results}};
}

}  // namespace servesim
