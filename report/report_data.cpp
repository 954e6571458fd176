#include "report/report_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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
enum class Want { Number, Object, String, Array, Bool };
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
                                      {"config.scheduler.kind", Want::String},
                                      {"slo.percentile", Want::Number},
                                      {"slo.ttft", Want::Object},
                                      {"slo.ttft.target_ms", Want::Number},
                                      {"slo.tpot", Want::Object},
                                      {"slo.tpot.target_ms", Want::Number},
                                      {"replicas", Want::Array},
                                      {"pools", Want::Array},
                                      {"classes", Want::Object},
                                      {"tenants", Want::Object},
                                      {"fairness", Want::Object},
                                      {"fairness.jain_index", Want::Number}};
// Each value of a run's "classes" (by class name): what the per-class charts read.
constexpr Expected k_class_summary[] = {
    {"requests", Want::Number}, {"finished", Want::Number},
    {"ttft_s", Want::Object},   {"ttft_s.p99", Want::Number},
    {"tpot_s", Want::Object},   {"tpot_s.p99", Want::Number},
    {"slo", Want::Object},      {"slo.attainment", Want::Number},
    {"slo.ttft", Want::Object}, {"slo.ttft.attainment", Want::Number},
    {"slo.tpot", Want::Object}, {"slo.tpot.attainment", Want::Number}};
// Each value of a run's "tenants" (by tenant name): what the per-tenant chart reads.
constexpr Expected k_tenant_summary[] = {{"service_share", Want::Number},
                                         {"window_tokens", Want::Number},
                                         {"fair_share_tokens", Want::Number}};
// Each entry of a run's "replicas" (and "pools"): what the per-replica charts read.
constexpr Expected k_replica_summary[] = {{"pool", Want::String},
                                          {"role", Want::String},
                                          {"routed", Want::Number},
                                          {"finished", Want::Number},
                                          {"busy_share", Want::Number},
                                          {"kv_capacity_tokens", Want::Number},
                                          {"kv_peak_used_tokens", Want::Number},
                                          {"requests", Want::Number},
                                          {"ttft_s", Want::Object},
                                          {"ttft_s.count", Want::Number},
                                          {"ttft_s.p99", Want::Number},
                                          {"tpot_s", Want::Object},
                                          {"tpot_s.count", Want::Number},
                                          {"tpot_s.p99", Want::Number},
                                          {"slo", Want::Object},
                                          {"slo.attainment", Want::Number}};
constexpr Expected k_capacity[] = {{"slo", Want::Object},
                                   {"slo.ttft_ms", Want::Number},
                                   {"slo.tpot_ms", Want::Number},
                                   {"slo.percentile", Want::Number},
                                   {"slo.min_attainment", Want::Number},
                                   {"found", Want::Bool},
                                   {"capacity", Want::Object},
                                   {"capacity.offered_rate_per_s", Want::Number},
                                   {"probes", Want::Array}};
constexpr Expected k_capacity_probe[] = {
    {"offered_rate_per_s", Want::Number}, {"meets_slo", Want::Bool},
    {"requests_per_s", Want::Number},     {"ttft_p99_ms", Want::Number},
    {"tpot_p99_ms", Want::Number},        {"slo_attainment", Want::Number}};
constexpr Expected k_sweep_summary[] = {{"kind", Want::String},
                                        {"slo", Want::Object},
                                        {"slo.ttft_ms", Want::Number},
                                        {"slo.tpot_ms", Want::Number},
                                        {"slo.percentile", Want::Number}};

// Refuses a summary whose keys the page reads have the wrong type, naming the key; a parent
// is checked before its children, so a child's parent is an object or absent.
template <size_t N>
void check_types(const json& summary, const Expected (&expected)[N], const fs::path& file,
                 const std::string& prefix = "") {
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
                    : e.want == Want::Array  ? v->is_array()
                    : e.want == Want::Bool   ? v->is_boolean()
                                             : v->is_string();
    if (!ok)
      throw InputError(fmt::format(
          "{}: key \"{}{}\" = {}: must be {} (or null)", shown(file), prefix, e.path,
          v->is_string() ? quote_input(v->get_ref<const std::string&>())
                         : printable(v->dump(-1, ' ', false, json::error_handler_t::replace), 200),
          e.want == Want::Number   ? "a number"
          : e.want == Want::Object ? "an object"
          : e.want == Want::Array  ? "an array"
          : e.want == Want::Bool   ? "true or false"
                                   : "a string"));
  }
}

// check_types() on each object of the array at `key` (absent or null: nothing to check).
template <size_t N>
void check_each(const json& parent, const char* key, const Expected (&expected)[N],
                const fs::path& file) {
  if (!parent.is_object() || !parent.contains(key) || !parent[key].is_array()) return;
  const json& list = parent[key];
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}[{}].", key, i);
    if (!list[i].is_object())
      throw InputError(
          fmt::format("{}: key \"{}\" is not an object", shown(file), at.substr(0, at.size() - 1)));
    check_types(list[i], expected, file, at);
  }
}

// check_types() on each value of the object at `key` (absent or null: nothing to check).
template <size_t N>
void check_values(const json& parent, const char* key, const Expected (&expected)[N],
                  const fs::path& file) {
  if (!parent.is_object() || !parent.contains(key) || !parent[key].is_object()) return;
  for (const auto& [name, value] : parent[key].items()) {
    const std::string at = fmt::format("{}.{}.", key, name);
    if (!value.is_object())
      throw InputError(fmt::format("{}: key \"{}\" is not an object", shown(file),
                                   printable(at.substr(0, at.size() - 1), 200)));
    check_types(value, expected, file, at);
  }
}

// A directory's path components, without empty ones and "." ("out/static/" -> out, static).
std::vector<std::string> components_of(const std::string& dir) {
  std::vector<std::string> parts;
  for (const fs::path& c : fs::path(dir)) {
    const std::string s = c.string();
    if (!s.empty() && s != "." && s != "/") parts.push_back(s);
  }
  return parts;
}

// The last `k` components joined by "/" (all of them when there are fewer; `dir` when none).
std::string suffix_of(const std::vector<std::string>& parts, size_t k, const std::string& dir) {
  if (parts.empty()) return dir;
  std::string out;
  for (size_t i = parts.size() - std::min(k, parts.size()); i < parts.size(); ++i)
    out += (out.empty() ? "" : "/") + parts[i];
  return out;
}

// The directory's name as the page shows it: its last component ("out/static/" -> "static").
std::string name_of(const std::string& dir) { return suffix_of(components_of(dir), 1, dir); }

// requests.csv's latency columns over finished requests, as CDFs in milliseconds; with a
// class column naming classes, also "classes": {name: {"ttft_ms", "tpot_ms"}} in order of first
// appearance.
json request_cdfs(const fs::path& path) {
  enum { Ttft, Tpot, E2e, Queue, Status, Class };
  check_input_file(path, std::numeric_limits<uintmax_t>::max());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", shown(path)));
  CsvColumns csv(in, path.string(), {"ttft_s", "tpot_s", "e2e_s", "queue_s", "status"}, {"class"});
  std::vector<double> v[4];
  std::vector<std::string> names;  // the classes, in order of first appearance
  std::vector<std::array<std::vector<double>, 2>> by_class;  // each class's TTFT and TPOT
  while (csv.next_row()) {
    if (csv.field(Status) != "finished") continue;
    for (size_t k : {Ttft, Tpot, E2e, Queue})
      if (!csv.field(k).empty()) v[k].push_back(csv.real(k, 0, 1e12));
    const std::string_view name = csv.field(Class);
    if (name.empty()) continue;
    const size_t c =
        static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    if (c == names.size()) {
      if (names.size() == 1024)
        throw InputError(fmt::format("{}:{}: column class names more than 1024 classes",
                                     shown(path), csv.line()));
      names.emplace_back(name);
      by_class.emplace_back();
    }
    if (!csv.field(Ttft).empty()) by_class[c][0].push_back(v[Ttft].back());
    if (!csv.field(Tpot).empty()) by_class[c][1].push_back(v[Tpot].back());
  }
  json out = {{"ttft_ms", cdf_points(std::move(v[Ttft]), 1e3, k_cdf_points)},
              {"tpot_ms", cdf_points(std::move(v[Tpot]), 1e3, k_cdf_points)},
              {"e2e_ms", cdf_points(std::move(v[E2e]), 1e3, k_cdf_points)},
              {"queue_ms", cdf_points(std::move(v[Queue]), 1e3, k_cdf_points)}};
  if (!names.empty()) {
    json classes = json::object();
    for (size_t c = 0; c < names.size(); ++c)
      classes[names[c]] = {{"ttft_ms", cdf_points(std::move(by_class[c][0]), 1e3, k_cdf_points)},
                           {"tpot_ms", cdf_points(std::move(by_class[c][1]), 1e3, k_cdf_points)}};
    out["classes"] = std::move(classes);
  }
  return out;
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

// autoscale.csv (docs/autoscaling.md#results): {"t_s", "live", "paid"}, a row each.
json autoscale_series(const fs::path& path) {
  check_input_file(path, std::numeric_limits<uintmax_t>::max());
  std::ifstream in(path);
  std::string line;
  const std::string header = "time_s,event,replica,signal,live,provisioning,draining,paid";
  if (!std::getline(in, line) || line != header)
    throw InputError(fmt::format("{}: line 1: expected the header {}", path.string(), header));
  json t = json::array(), live = json::array(), paid = json::array();
  for (int n = 2; std::getline(in, line); ++n) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (line.ends_with(',')) cells.emplace_back();
    try {
      if (cells.size() != 8) throw std::invalid_argument("cells");
      t.push_back(std::stod(cells[0]));
      live.push_back(std::stoi(cells[4]));
      paid.push_back(std::stoi(cells[7]));
    } catch (const std::exception&) {
      throw InputError(fmt::format("{}: line {}: expected 8 cells ({})", path.string(), n, header));
    }
  }
  return {{"t_s", t}, {"live", live}, {"paid", paid}};
}

json read_run(const fs::path& dir, const json& summary) {
  json r = {{"kind", "run"},
            {"summary", run_summary(summary)},
            {"cdf", nullptr},
            {"series", nullptr},
            {"roofline", nullptr}};
  if (fs::exists(dir / "requests.csv")) r["cdf"] = request_cdfs(dir / "requests.csv");
  if (fs::exists(dir / "autoscale.csv")) r["autoscale"] = autoscale_series(dir / "autoscale.csv");
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
  std::vector<std::string> header;
  json points = read_points_csv((dir / "points.csv").string(), &header);
  // The swept columns: what points.csv holds beyond servesim size's own columns
  // (sizing/sweep_run.h's field list).
  static const char* const k_own[] = {"point",
                                      "label",
                                      "feasible",
                                      "reason",
                                      "meets_slo",
                                      "pareto",
                                      "cheapest",
                                      "replicas",
                                      "accelerators",
                                      "cost_per_hour_usd",
                                      "requests_per_s",
                                      "output_tokens_per_s",
                                      "tokens_per_usd",
                                      "ttft_p50_ms",
                                      "ttft_p99_ms",
                                      "tpot_p50_ms",
                                      "tpot_p99_ms",
                                      "e2e_p99_ms",
                                      "goodput_req_per_s",
                                      "slo_attainment",
                                      "step_source",
                                      "tokens_per_joule",
                                      "rejected",
                                      "shed",
                                      "timed_out",
                                      "cancelled"};
  json axes = json::array();  // in points.csv's order, which is the sweep file's
  for (const std::string& column : header)
    if (std::none_of(std::begin(k_own), std::end(k_own),
                     [&](const char* own) { return column == own; }))
      axes.push_back(column);
  // The scenario axes (docs/sizing.md#axis-roles) as summary.json names them; null for a sweep
  // written before axes had roles (the page then infers them from the keys, as `size` does).
  json scenario_axes = nullptr;
  if (summary.contains("axes") && summary["axes"].is_array()) {
    for (const json& a : summary["axes"]) {
      if (!a.is_object() || !a.contains("role") || !a["role"].is_string() || !a.contains("key") ||
          !a["key"].is_string())
        continue;
      if (scenario_axes.is_null()) scenario_axes = json::array();
      if (a["role"] == "scenario") scenario_axes.push_back(a["key"]);
    }
  }
  return {{"kind", "sweep"},
          {"slo", slo},
          {"axes", axes},
          {"scenario_axes", scenario_axes},
          {"points", std::move(points)}};
}

// capacity.json (servesim capacity): the SLO, the rate found and every probe, in the order run.
json read_capacity(const fs::path& dir) {
  const fs::path file = dir / "capacity.json";
  const json c = read_json_file(file);
  if (!c.is_object()) throw InputError(fmt::format("{}: not a JSON object", shown(file)));
  check_types(c, k_capacity, file);
  check_each(c, "probes", k_capacity_probe, file);
  const auto field = [&](const char* key) { return c.contains(key) ? c[key] : json(nullptr); };
  return {{"kind", "capacity"},
          {"slo", field("slo")},
          {"found", field("found")},
          {"capacity", field("capacity")},
          {"probes", c.contains("probes") && c["probes"].is_array() ? c["probes"] : json::array()}};
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

json read_result_dir(const std::string& dir, const RunCost& run_cost) {
  const fs::path d(dir);
  if (!fs::is_directory(d))
    throw InputError(
        fmt::format("{}: not a directory (give the --out folder of servesim run, or "
                    "a sweep's)",
                    shown(d)));
  if (fs::exists(d / "capacity.json")) {  // servesim capacity's folder
    json r = read_capacity(d);
    r["name"] = name_of(dir);
    r["path"] = dir;
    return r;
  }
  const json summary = read_json_file(d / "summary.json");
  if (!summary.is_object())
    throw InputError(fmt::format("{}: not a JSON object", shown(d / "summary.json")));
  const bool sweep = summary.contains("kind") && summary["kind"] == "sweep";
  if (sweep)
    check_types(summary, k_sweep_summary, d / "summary.json");
  else {
    check_types(summary, k_run_summary, d / "summary.json");
    check_each(summary, "replicas", k_replica_summary, d / "summary.json");
    check_each(summary, "pools", k_replica_summary, d / "summary.json");
    check_values(summary, "classes", k_class_summary, d / "summary.json");
    check_values(summary, "tenants", k_tenant_summary, d / "summary.json");
  }
  json r = sweep ? read_sweep(d, summary) : read_run(d, summary);
  if (!sweep) r["cost"] = run_cost ? run_cost(summary) : json(nullptr);
  r["name"] = name_of(dir);
  r["path"] = dir;
  return r;
}

std::vector<std::string> display_names(const std::vector<std::string>& dirs) {
  std::vector<std::vector<std::string>> parts;
  for (const std::string& d : dirs) parts.push_back(components_of(d));
  std::vector<size_t> depth(dirs.size(), 1);
  std::vector<std::string> names(dirs.size());
  // Lengthen the suffixes of the names that collide until none does or they are whole.
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < dirs.size(); ++i) names[i] = suffix_of(parts[i], depth[i], dirs[i]);
    for (size_t i = 0; i < dirs.size(); ++i)
      for (size_t j = 0; j < dirs.size(); ++j)
        if (i != j && names[i] == names[j] && depth[i] < parts[i].size()) {
          ++depth[i];
          grew = true;
          break;
        }
  }
  // The same folder given twice (or names that stay equal): number the later ones.
  for (size_t i = 0; i < names.size(); ++i) {
    int seen = 1;
    for (size_t j = 0; j < i; ++j) seen += suffix_of(parts[j], depth[j], dirs[j]) == names[i];
    if (seen > 1) names[i] += fmt::format(" ({})", seen);
  }
  return names;
}

json report_data(const std::vector<std::string>& dirs, const volatile std::sig_atomic_t* interrupt,
                 const std::vector<std::string>& labels, const RunCost& run_cost) {
  if (!labels.empty() && labels.size() != dirs.size())
    throw InputError(fmt::format(
        "--label: {} label{} for {} result director{} (give one --label per directory, in "
        "order, or none)",
        labels.size(), labels.size() == 1 ? "" : "s", dirs.size(), dirs.size() == 1 ? "y" : "ies"));
  const std::vector<std::string> names = labels.empty() ? display_names(dirs) : labels;
  json results = json::array();
  for (size_t i = 0; i < dirs.size(); ++i) {
    check_interrupt(interrupt);
    json r = read_result_dir(dirs[i], run_cost);
    r["name"] = names[i];
    results.push_back(std::move(r));
  }
  return {{"version", 1}, {"results", results}};
}

}  // namespace servesim
