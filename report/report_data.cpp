#include "report/report_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

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

// Limits on what a result directory may hold: summary.json is a few kilobytes and a dozen
// levels deep, points.csv a row per sweep point. Past them the input is not servesim's output,
// and must not exhaust memory or the stack (nlohmann::json copies and dumps recursively).
constexpr uintmax_t k_max_summary_bytes = uintmax_t{64} << 20;
constexpr uintmax_t k_max_points_bytes = uintmax_t{256} << 20;
constexpr int k_max_json_depth = 64;

// `path` must be a regular file (not a device, FIFO or folder) of at most `max_bytes`.
void check_input_file(const fs::path& path, uintmax_t max_bytes) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw InputError(fmt::format("{}: cannot open file", shown(path)));
  if (!fs::is_regular_file(st))
    throw InputError(fmt::format("{}: not a regular file", shown(path)));
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > max_bytes)
    throw InputError(
        fmt::format("{}: larger than {} MiB; not servesim's output", shown(path), max_bytes >> 20));
}

json read_json_file(const fs::path& path) {
  check_input_file(path, k_max_summary_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", shown(path)));
  const auto shallow = [&](int depth, json::parse_event_t, json&) {
    if (depth > k_max_json_depth)
      throw InputError(fmt::format("{}: nested deeper than {} levels; not servesim's output",
                                   shown(path), k_max_json_depth));
    return true;
  };
  try {
    return json::parse(in, shallow);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", shown(path), printable(e.what(), 200)));
  }
}

// What the page reads from a summary and the JSON type it needs; null is always allowed
// (servesim writes it for a figure without data).
enum class Want { Number, Object, String };
struct Expected {
  const char* path;
  Want want;
};
constexpr Expected k_run_summary[] = {{"kind", Want::String},
                                      {"finished", Want::Number},
                                      {"rejected", Want::Number},
                                      {"unfinished", Want::Number},
                                      {"preemptions", Want::Number},
                                      {"output_tokens_per_s", Want::Number},
                                      {"requests_per_s", Want::Number},
                                      {"duration_s", Want::Number},
                                      {"ttft_s", Want::Object},
                                      {"ttft_s.p50", Want::Number},
                                      {"ttft_s.p99", Want::Number},
                                      {"tpot_s", Want::Object},
                                      {"tpot_s.p50", Want::Number},
                                      {"tpot_s.p99", Want::Number},
                                      {"e2e_s", Want::Object},
                                      {"e2e_s.p50", Want::Number},
                                      {"e2e_s.p99", Want::Number},
                                      {"queue_s", Want::Object},
                                      {"queue_s.p50", Want::Number},
                                      {"queue_s.p99", Want::Number},
                                      {"steps", Want::Number},
                                      {"mean_batch_sequences", Want::Number},
                                      {"busy_share", Want::Number},
                                      {"kv_peak_used_tokens", Want::Number},
                                      {"kv_capacity_tokens", Want::Number},
                                      {"mbu", Want::Number},
                                      {"mfu", Want::Number},
                                      {"slo", Want::Object},
                                      {"slo.attainment", Want::Number},
                                      {"slo.goodput_requests_per_s", Want::Number},
                                      {"config", Want::Object},
                                      {"config.scheduler", Want::Object},
                                      {"config.scheduler.kind", Want::String}};
constexpr Expected k_sweep_summary[] = {{"kind", Want::String},
                                        {"slo", Want::Object},
                                        {"slo.ttft_ms", Want::Number},
                                        {"slo.tpot_ms", Want::Number},
                                        {"slo.percentile", Want::Number}};

// Refuses a summary whose keys the page reads have the wrong type, naming the key; a parent
// is checked before its children, so a child's parent is an object or absent.
template <size_t N>
void check_types(const json& summary, const Expected (&expected)[N], const fs::path& file) {
  for (const Expected& e : expected) {
    const json* v = &summary;
    for (std::string_view rest = e.path; v;) {
      const size_t dot = rest.find('.');
      const std::string part(rest.substr(0, dot));
      v = v->is_object() && v->contains(part) ? &(*v)[part] : nullptr;
      if (dot == std::string_view::npos) break;
      rest.remove_prefix(dot + 1);
    }
    if (!v || v->is_null()) continue;
    const bool ok = e.want == Want::Number   ? v->is_number()
                    : e.want == Want::Object ? v->is_object()
                                             : v->is_string();
    if (!ok)
      throw InputError(fmt::format(
          "{}: key \"{}\" = {}: must be {} (or null)", shown(file), e.path,
          v->is_string() ? quote_input(v->get_ref<const std::string&>())
                         : printable(v->dump(-1, ' ', false, json::error_handler_t::replace)),
          e.want == Want::Number   ? "a number"
          : e.want == Want::Object ? "an object"
                                   : "a string"));
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
  check_input_file(path, std::numeric_limits<uintmax_t>::max());
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
    check_input_file(dir / "steps.csv", std::numeric_limits<uintmax_t>::max());
    const StepSeries s = StepSeries::read_file((dir / "steps.csv").string());
    r["series"] = s.series_json();
    r["roofline"] = s.roofline_json();
  }
  return r;
}

json read_sweep(const fs::path& dir, const json& summary) {
  check_input_file(dir / "points.csv", k_max_points_bytes);
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
  if (sweep)
    check_types(summary, k_sweep_summary, d / "summary.json");
  else
    check_types(summary, k_run_summary, d / "summary.json");
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
