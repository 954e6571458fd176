// servesim report's data extraction (report/report_data.cpp, report/step_series.cpp) and page
// assembly (report/report.cpp). The page itself is checked in a browser by browser_test.sh.
#include "report/report.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <fstream>
#include <sstream>

#include "report/report_data.h"
#include "report/step_series.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_report_report_test {

using namespace servesim;
using namespace servesim::test;
using nlohmann::json;

namespace {

const std::string k_fixture = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/report/sweep-fixture";

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::vector<std::string>& dirs) {
  try {
    (void)report_data(dirs);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A small run: 2 requests, 10 ms steps (the case worked by hand in steps_csv_test.cpp).
const std::string k_small_run =
    "workload: {synthetic: {requests: 2, arrival: {kind: fixed, rate_per_s: 200},\n"
    "  prompt_tokens: {kind: fixed, value: 32}, output_tokens: {kind: fixed, value: 3}}}\n"
    "step_time: {kind: linear, base_ms: 10}\n"
    "scheduler: {kind: continuous, max_num_seqs: 8}\n"
    "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n";

int run_cli_quiet(std::vector<std::string> args) {
  std::ostringstream out, err;
  return run_cli(args, out, err);
}

}  // namespace

TEST_CASE("report: a CDF keeps evenly spaced ranks and merges ties", "[report]") {
  // {1, 2, 2, 3} s in ms: the tie at 2 s is one point holding 3 of 4 requests.
  const json c = cdf_points({3, 1, 2, 2}, 1000, 10);
  CHECK(c["x"] == json({1000.0, 2000.0, 3000.0}));
  CHECK(c["p"] == json({0.25, 0.75, 1.0}));
  // 0..99 down to 5 points: ranks k x 99/4 rounded = 0, 25 (24.75), 50 (49.5), 74 (74.25), 99.
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(i);
  const json d = cdf_points(v, 1, 5);
  CHECK(d["x"] == json({0.0, 25.0, 50.0, 74.0, 99.0}));
  CHECK(d["p"] == json({0.01, 0.26, 0.51, 0.75, 1.0}));
  CHECK(cdf_points({}, 1, 5)["x"].empty());
}

TEST_CASE("report: step buckets double in width to stay under the cap", "[report]") {
  StepSeries s(4, 2);
  auto step = [&](double start_ms, int64_t running, int64_t preemptions, int bound = -1) {
    StepRow r;
    r.start_ns = static_cast<int64_t>(start_ms * 1e6);
    r.duration_ns = 1'000'000;
    r.running = running;
    r.sequences = running;
    r.tokens = 10 * running;
    r.kv_used_tokens = 25 * running;
    r.kv_capacity_tokens = 100;
    r.preemptions = preemptions;
    r.bound = bound;
    r.bytes = bound < 0 ? 0 : 100;
    r.flops = bound < 0 ? 0 : 1000 * (start_ms + 1);
    s.add(r);
  };
  // 1 ms buckets: [0,1) holds the steps at 0 and 0.5 ms, [1,2) the one at 1.5, [3,4) 3.2.
  step(0, 1, 0);
  step(0.5, 3, 1);
  step(1.5, 2, 1);
  step(3.2, 4, 3);
  json j = s.series_json();
  CHECK(j["bucket_s"] == 0.001);
  CHECK(j["running_mean"] == json({2.0, 2.0, nullptr, 4.0}));
  CHECK(j["preemptions"] == json({1, 0, 0, 2}));  // rises of the cumulative count
  // A step at 5 ms is past 4 buckets: pairs merge into 2 ms buckets [0,2) and [2,4).
  step(5, 1, 3);
  j = s.series_json();
  CHECK(j["bucket_s"] == 0.002);
  CHECK(j["t_s"] == json({0.0, 0.002, 0.004}));
  CHECK(j["running_mean"] == json({2.0, 4.0, 1.0}));  // (1 + 3 + 2) / 3, then 4, then 1
  CHECK(j["running_max"] == json({3, 4, 1}));
  CHECK(j["kv_use_max"] == json({0.75, 1.0, 0.25}));
  CHECK(j["preemptions"] == json({1, 2, 0}));
  CHECK(j["steps"] == 5);
  CHECK(s.roofline_json().is_null());  // no step had a cost

  // The roofline sample keeps every k-th costed step, k doubling past 2 points: after steps
  // 0..4 (k = 1, 2, then 4) it holds steps 0 and 4; the totals cover all five.
  StepSeries r(4, 2);
  for (int i = 0; i < 5; ++i) {
    StepRow row;
    row.start_ns = i * 1'000'000;
    row.duration_ns = 1'000'000;
    row.bound = 0;
    row.bytes = 100;
    row.flops = 1000.0 * (i + 1);
    r.add(row);
  }
  const json rf = r.roofline_json();
  CHECK(rf["intensity"] == json({10.0, 50.0}));
  CHECK(rf["flops_per_s"] == json({1e6, 5e6}));
  CHECK(rf["steps"] == 5);
  CHECK(rf["flops"] == 15000.0);
  CHECK(rf["bytes"] == 500.0);
  CHECK(rf["busy_s"] == Approx(0.005));
}

TEST_CASE("report: a run directory gives its summary, CDFs and step series", "[report]") {
  const auto dir = temp_dir() / "small";
  const std::string config = write_temp("small.yaml", k_small_run);
  REQUIRE(run_cli_quiet({"run", config, "--out", dir.string(), "--steps", "--quiet"}) == 0);
  const json r = read_result_dir(dir.string());
  CHECK(r["kind"] == "run");
  CHECK(r["name"] == "small");
  CHECK(r["summary"]["finished"] == 2);
  CHECK(r["summary"]["scheduler"] == "continuous");
  CHECK_FALSE(r["summary"].contains("config"));
  // TTFT: A's first token at 10 ms (arrived at 0), B's at 20 ms (arrived at 5): 10 and 15 ms.
  CHECK(r["cdf"]["ttft_ms"]["x"] == json({10.0, 15.0}));
  CHECK(r["cdf"]["ttft_ms"]["p"] == json({0.5, 1.0}));
  // Queue: A admitted at once, B at 10 ms: 0 and 5 ms.
  CHECK(r["cdf"]["queue_ms"]["x"] == json({0.0, 5.0}));
  CHECK(r["series"]["steps"] == 4);
  CHECK(r["roofline"].is_null());  // a linear model reports no cost
}

TEST_CASE("report: a sweep directory gives its points and SLO", "[report]") {
  const json r = read_result_dir(k_fixture);
  CHECK(r["kind"] == "sweep");
  CHECK(r["slo"]["ttft_ms"] == 500);
  REQUIRE(r["points"].size() == 8);
  CHECK(r["points"][1]["pareto"] == true);
  CHECK(r["points"][1]["cost_per_hour_usd"] == 7.56);
  CHECK(r["points"][1]["label"] == "h100 tp1 x2");
  CHECK(r["points"][7]["feasible"] == false);
  CHECK(r["points"][7]["cost_per_hour_usd"].is_null());
  CHECK(r["points"][7]["hardware"] == "a100-80gb");  // axis columns are kept
  CHECK(r["axes"] == json({"hardware", "tensor_parallel"}));
}

TEST_CASE("report: points.csv fields may be quoted", "[report]") {
  // servesim size quotes a field holding a comma, a quote or a line break (RFC 4180).
  const std::string cols =
      "label,feasible,meets_slo,pareto,cost_per_hour_usd,output_tokens_per_s,ttft_p99_ms,"
      "tpot_p99_ms,e2e_p99_ms,reason\r\n";
  const auto dir = temp_dir();
  std::ofstream(dir / "summary.json") << "{\"kind\": \"sweep\"}";
  std::ofstream(dir / "points.csv", std::ios::binary)
      << cols << "\"tp=2, x4\",true,true,true,7.5,400,120,30,5000,\r\n"
      << "\"say \"\"hi\"\"\",false,false,false,,,,,,\"needs 8 GPUs,\nnot 4\"\r\n";
  const json r = read_result_dir(dir.string());
  REQUIRE(r["points"].size() == 2);
  CHECK(r["points"][0]["label"] == "tp=2, x4");
  CHECK(r["points"][0]["cost_per_hour_usd"] == 7.5);
  CHECK(r["points"][0]["reason"].is_null());
  CHECK(r["points"][1]["label"] == "say \"hi\"");
  CHECK(r["points"][1]["reason"] == "needs 8 GPUs,\nnot 4");
  CHECK(r["slo"].is_null());

  std::ofstream(dir / "points.csv", std::ios::trunc) << cols << "a,true\n";
  CHECK_THAT(error_of({dir.string()}),
             Catch::Contains("points.csv:2: 2 fields, but the header has 10 columns"));
  std::ofstream(dir / "points.csv", std::ios::trunc) << cols << "\"a,true\n";
  CHECK_THAT(error_of({dir.string()}),
             Catch::Contains("points.csv:2: a quoted field is never closed"));
  std::ofstream(dir / "points.csv", std::ios::trunc) << "label,feasible\n";
  CHECK_THAT(error_of({dir.string()}),
             Catch::Contains("points.csv:1: the header lacks column meets_slo"));
}

TEST_CASE("report: bad directories are named with what is wrong", "[report]") {
  const auto dir = temp_dir();
  CHECK_THAT(error_of({(dir / "missing").string()}), Catch::Contains("missing: not a directory"));
  CHECK_THAT(error_of({dir.string()}), Catch::Contains("summary.json: cannot open file"));
  std::ofstream(dir / "summary.json") << "{\"finished\": ";
  CHECK_THAT(error_of({dir.string()}), Catch::Contains("summary.json: not valid JSON"));
  std::ofstream(dir / "summary.json") << "{\"finished\": 1}";
  std::ofstream(dir / "steps.csv") << "replica,start_s\n0,0.1\n";
  CHECK_THAT(error_of({dir.string()}), Catch::Contains("steps.csv"));
  std::ofstream(dir / "steps.csv", std::ios::trunc)
      << "replica,start_s,duration_s,sequences,prefill_tokens,decode_tokens,kv_used_tokens,"
         "kv_capacity_tokens,waiting,running,preemptions,bound\n0,0,0.01,1,1,0,1,10,0,1,x,\n";
  CHECK_THAT(error_of({dir.string()}), Catch::Contains("steps.csv:2"));
  std::filesystem::remove(dir / "steps.csv");
  std::ofstream(dir / "summary.json", std::ios::trunc) << "{\"kind\": \"sweep\"}";
  CHECK_THAT(error_of({dir.string()}), Catch::Contains("points.csv: cannot open file"));
}

TEST_CASE("report: the page inlines everything and escapes the data", "[report]") {
  const auto dir = temp_dir() / "sweep";
  std::filesystem::copy(k_fixture, dir);
  {
    std::ofstream csv(dir / "points.csv", std::ios::app);
    csv << "8,</script><script>alert(1)</script>,false,x,false,false,1,1,,,,,,,,,,,,h100-sxm,1\n";
  }
  std::ostringstream html;
  write_report_html(report_data({dir.string()}), html);
  const std::string page = html.str();
  CHECK(page.rfind("<!doctype html>", 0) == 0);
  CHECK(page.find("@DATA@") == std::string::npos);
  CHECK(page.find("/*@") == std::string::npos);
  CHECK(page.find("Leon Sorokin") != std::string::npos);  // uPlot's licence
  CHECK(page.find("http://") == std::string::npos);       // nothing fetched from a network
  CHECK(page.find("src=") == std::string::npos);
  // Four script elements (error hooks, uPlot, data, report.js) and no more: the label's
  // "</script>" is written \u003c/script>.
  size_t closes = 0;
  for (size_t p = 0; (p = page.find("</script>", p)) != std::string::npos; ++p) ++closes;
  CHECK(closes == 4);
  CHECK(page.find("\\u003c/script>\\u003cscript>alert(1)") != std::string::npos);
}

TEST_CASE("report: servesim run --report and servesim report write the page", "[report]") {
  const auto dir = temp_dir() / "run";
  const std::string config = write_temp("small.yaml", k_small_run);
  REQUIRE(run_cli_quiet({"run", config, "--out", dir.string(), "--report", "--quiet"}) == 0);
  CHECK(std::filesystem::exists(dir / "steps.csv"));  // --report turns the steps on
  const std::string page = read_text(dir / "report.html");
  CHECK(page.find("\"kind\":\"run\"") != std::string::npos);
  // A later run without --report removes the page, which would describe the earlier results.
  REQUIRE(run_cli_quiet({"run", config, "--out", dir.string(), "--quiet"}) == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "report.html"));
  CHECK_FALSE(std::filesystem::exists(dir / "steps.csv"));

  const auto out = temp_dir() / "both" / "report.html";  // --out is the folder
  std::ostringstream text, err;
  REQUIRE(run_cli({"report", dir.string(), k_fixture, "--out", out.parent_path().string()}, text,
                  err) == 0);
  CHECK_THAT(text.str(), Catch::StartsWith("wrote " + out.string() + " (2 results, "));
  const std::string both = read_text(out);
  CHECK(both.find("\"kind\":\"sweep\"") != std::string::npos);
  std::ostringstream err2;
  CHECK(run_cli({"report", k_fixture, "--out", "/proc/no/such"}, text, err2) == 2);
  CHECK_THAT(err2.str(),
             Catch::Contains("--out /proc/no/such/report.html: cannot create the folder"));
  CHECK(run_cli({"report"}, text, err) == 2);
  CHECK_THAT(err.str(), Catch::Contains("give at least one result directory"));
}

namespace {

// The paths report/report.js reads with reader(' ... ') (key('a.b'), rkey('pool'), ...): a
// reader is a whole name, not the end of a longer one.
std::vector<std::string> js_paths(const std::string& js, const std::vector<std::string>& readers) {
  std::vector<std::string> paths;
  for (const std::string& reader : readers)
    for (size_t at = js.find(reader); at != std::string::npos; at = js.find(reader, at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(js[at - 1])) || js[at - 1] == '_'))
        continue;  // another function whose name ends the same way
      const size_t from = at + reader.size();
      const size_t to = js.find('\'', from);
      const std::string path = js.substr(from, to - from);
      if (path != "path") paths.push_back(path);  // the helper's own definition
    }
  return paths;
}

// The value at `path` ("a.b") in `j`, or nullptr.
const json* at_path(const json& j, const std::string& path) {
  const json* v = &j;
  for (size_t from = 0; v;) {
    const size_t dot = path.find('.', from);
    const std::string part = path.substr(from, dot == std::string::npos ? dot : dot - from);
    v = v->is_object() && v->contains(part) ? &(*v)[part] : nullptr;
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return v;
}

// A cluster of two replicas with an SLO: its summary has "replicas" with SLO blocks.
const std::string k_cluster_run = k_small_run +
                                  "cluster: {replicas: 2, router: {kind: round_robin}}\n" +
                                  "slo: {ttft_ms: 100, tpot_ms: 50, itl_ms: 60, percentile: 99}\n" +
                                  "admission: {queue_cap: 1000}\n";  // by_status

// One prefill and one decode replica, a 1 GB/s link (tests/sim/disagg_test.cpp).
const std::string k_disagg =
    "cluster:\n  router: {kind: round_robin}\n  decode_router: {kind: round_robin}\n"
    "  pools:\n    - {name: p, role: prefill, replicas: 1}\n"
    "    - {name: d, role: decode, replicas: 1}\n"
    "  kv_transfer: {bandwidth_gb_s: 1, latency_us: 20, kv_bytes_per_token: 1000}\n";

// A capacity search that ends in a few probes (tests/sizing/capacity_test.cpp's config).
const std::string k_capacity_config = R"(workload:
  synthetic:
    requests: 40
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 1}
    output_tokens: {kind: fixed, value: 2}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 1}
kv: {policy: paged, capacity_tokens: 1000, block_size: 1}
slo: {ttft_ms: 30}
)";

// A sweep of the offered rate and the seats: 2 x 2 points.
const std::string k_rate_sweep = R"(base: base.yaml
slo: {ttft_ms: 100, tpot_ms: 50}
axes:
  workload.synthetic.arrival.rate_per_s: [20, 400]
  scheduler.max_num_seqs: [1, 8]
)";

}  // namespace

TEST_CASE("report: every summary key the page reads exists in a run's summary", "[report]") {
  // The page reads keys by path (key/ms/pct('a.b') in report/report.js); a path the summary
  // lacks shows an empty row, as the goodput row once did (the page read slo.goodput_per_s,
  // the summary writes slo.goodput_requests_per_s). A cluster run with an SLO, so that the slo
  // block and the replicas are written, must hold every path the page names; each replica
  // every path rkey() names.
  const auto dir = temp_dir() / "slo";
  const std::string config = write_temp("slo.yaml", k_cluster_run);
  REQUIRE(run_cli_quiet({"run", config, "--out", dir.string(), "--quiet"}) == 0);
  const json summary = read_result_dir(dir.string())["summary"];
  const std::string js = read_text(std::string(SERVESIM_SOURCE_DIR) + "/report/report.js");
  const std::vector<std::string> paths = js_paths(js, {"key('", "ms('", "pct('"});
  REQUIRE(paths.size() >= 22);  // the table's rows and the SLO targets, found
  for (const std::string& path : paths) {
    INFO(path);
    CHECK(at_path(summary, path) != nullptr);
  }
  const std::vector<std::string> replica_paths = js_paths(js, {"rkey('"});
  REQUIRE(replica_paths.size() >= 8);
  REQUIRE(summary["replicas"].size() == 2);
  for (const std::string& path : replica_paths) {
    INFO("replicas[0]." << path);
    if (path == "pool" || path == "role") continue;  // only with cluster.pools (below)
    CHECK(at_path(summary["replicas"][0], path) != nullptr);
  }

  // A disaggregated run's replicas name their pool.
  const auto pools = temp_dir() / "pools";
  REQUIRE(run_cli_quiet({"run",
                         write_temp("pools.yaml", k_small_run + k_disagg + "slo: {ttft_ms: 100}\n"),
                         "--out", pools.string(), "--quiet"}) == 0);
  const json p = read_result_dir(pools.string())["summary"];
  REQUIRE(p["replicas"].size() == 2);
  CHECK(p["replicas"][0]["pool"] == "p");
  CHECK(p["replicas"][1]["pool"] == "d");
  // The per-pool chart reads rkey() names from "pools": each must be there.
  REQUIRE(p["pools"].size() == 2);
  CHECK(p["pools"][1]["role"] == "decode");
  for (const char* path : {"pool", "role", "busy_share", "requests", "slo.attainment"})
    CHECK(at_path(p["pools"][0], path) != nullptr);
}

TEST_CASE("report: every class key the page reads exists in a run's classes", "[report]") {
  // A mix of two classes with an SLO: summary.json's classes hold every path ckey() names, and
  // the run's CDFs are split by requests.csv's class column.
  const auto dir = temp_dir() / "classes";
  const std::string config = write_temp(
      "classes.yaml",
      "workload: {mix: {components: [\n"
      "  {name: chat, synthetic: {requests: 3, arrival: {kind: fixed, rate_per_s: 100},\n"
      "   prompt_tokens: {kind: fixed, value: 8}, output_tokens: {kind: fixed, value: 3}}},\n"
      "  {name: batch, priority: 1, synthetic: {requests: 2, arrival: {kind: burst},\n"
      "   prompt_tokens: {kind: fixed, value: 64}, output_tokens: {kind: fixed, value: 2}}}]}}\n"
      "step_time: {kind: linear, base_ms: 10}\n"
      "scheduler: {kind: continuous, max_num_seqs: 8}\n"
      "kv: {policy: paged, block_size: 16, capacity_tokens: 4096}\n"
      "slo: {ttft_ms: 100, tpot_ms: 50, itl_ms: 60}\n");
  REQUIRE(run_cli_quiet({"run", config, "--out", dir.string(), "--quiet"}) == 0);
  const json run = read_result_dir(dir.string());
  const json& classes = run["summary"]["classes"];
  REQUIRE(classes.size() == 2);
  CHECK(classes.contains("chat"));  // the page's JSON keeps names sorted
  const std::string js = read_text(std::string(SERVESIM_SOURCE_DIR) + "/report/report.js");
  const std::vector<std::string> paths = js_paths(js, {"ckey('"});
  REQUIRE(paths.size() >= 4);
  for (const std::string& path : paths) {
    INFO("classes.chat." << path);
    CHECK(at_path(classes["chat"], path) != nullptr);
  }
  const json& cdf = run["cdf"]["classes"];
  REQUIRE(cdf.size() == 2);
  CHECK(!cdf["chat"]["ttft_ms"]["x"].empty());
  CHECK(cdf["batch"]["tpot_ms"]["p"].back() == 1.0);
}

TEST_CASE("report: every capacity and sweep column the page reads exists", "[report]") {
  const std::string js = read_text(std::string(SERVESIM_SOURCE_DIR) + "/report/report.js");
  // servesim capacity's folder: capacity.json's probes.
  const auto cap = temp_dir() / "cap";
  REQUIRE(run_cli_quiet({"capacity", write_temp("cap.yaml", k_capacity_config), "--out",
                         cap.string(), "-q"}) == 0);
  const json c = read_result_dir(cap.string());
  CHECK(c["kind"] == "capacity");
  REQUIRE(c["probes"].size() >= 2);
  CHECK(c["slo"]["ttft_ms"] == 30);
  // servesim size's folder: points.csv.
  const auto sweep_dir = temp_dir();
  std::ofstream(sweep_dir / "base.yaml") << k_small_run;
  std::ofstream(sweep_dir / "s.yaml") << k_rate_sweep;
  REQUIRE(run_cli_quiet({"size", (sweep_dir / "s.yaml").string(), "--out",
                         (sweep_dir / "o").string(), "-q"}) == 0);
  const json sw = read_result_dir((sweep_dir / "o").string());
  CHECK(sw["kind"] == "sweep");
  CHECK(sw["axes"] == json({"workload.synthetic.arrival.rate_per_s", "scheduler.max_num_seqs"}));
  REQUIRE(sw["points"].size() == 4);

  const std::vector<std::string> probe_paths = js_paths(js, {"probeKey('"});
  REQUIRE(probe_paths.size() >= 1);
  for (const std::string& path : probe_paths) {
    INFO("probes[0]." << path);
    CHECK(at_path(c["probes"][0], path) != nullptr);
  }
  CHECK(at_path(c, "capacity.offered_rate_per_s") != nullptr);
  const std::vector<std::string> point_paths = js_paths(js, {"pointKey('"});
  REQUIRE(point_paths.size() >= 3);
  for (const std::string& path : point_paths) {
    INFO("points[0]." << path);
    CHECK(at_path(sw["points"][0], path) != nullptr);
  }
  // The charts against offered rate read the same columns from both.
  const std::vector<std::string> rate_paths = js_paths(js, {"rateKey('"});
  REQUIRE(rate_paths.size() >= 4);
  for (const std::string& path : rate_paths) {
    INFO(path);
    CHECK(at_path(c["probes"][0], path) != nullptr);
    CHECK(at_path(sw["points"][0], path) != nullptr);
  }
}

TEST_CASE("report: names are the shortest path suffix that tells the folders apart", "[report]") {
  CHECK(display_names({"out/static/", "out/dynamic"}) ==
        std::vector<std::string>{"static", "dynamic"});
  // `report A/run B/run` once gave "run, run".
  CHECK(display_names({"A/run", "B/run"}) == std::vector<std::string>{"A/run", "B/run"});
  CHECK(display_names({"x/a/run", "y/a/run", "z/b"}) ==
        std::vector<std::string>{"x/a/run", "y/a/run", "b"});
  CHECK(display_names({"A/run", "run"}) == std::vector<std::string>{"A/run", "run"});
  CHECK(display_names({"./r/", "r"}) == std::vector<std::string>{"r", "r (2)"});
  CHECK(display_names({"/"}) == std::vector<std::string>{"/"});
}

TEST_CASE("report: --label names each result directory, one per directory", "[report]") {
  const auto root = temp_dir();
  const std::string config = write_temp("small.yaml", k_small_run);
  for (const char* d : {"A/run", "B/run"})
    REQUIRE(run_cli_quiet({"run", config, "--out", (root / d).string(), "--quiet"}) == 0);
  const std::string a = (root / "A/run").string(), b = (root / "B/run").string();
  const json plain = report_data({a, b});
  CHECK(plain["results"][0]["name"] == "A/run");
  CHECK(plain["results"][1]["name"] == "B/run");
  const json named = report_data({a, b}, nullptr, {"vllm", "sglang"});
  CHECK(named["results"][0]["name"] == "vllm");
  CHECK(named["results"][1]["name"] == "sglang");
  CHECK(named["results"][1]["path"] == b);

  const auto page = root / "p" / "report.html";  // --out is the folder
  std::ostringstream out, err;
  REQUIRE(run_cli({"report", a, b, "--label", "first", "--label", "second", "--out",
                   page.parent_path().string(), "-q"},
                  out, err) == 0);
  const std::string html = read_text(page);
  CHECK(html.find("\"name\":\"first\"") != std::string::npos);
  CHECK(html.find("\"name\":\"second\"") != std::string::npos);
  std::ostringstream err2;
  CHECK(run_cli({"report", a, b, "--label", "only", "--out", (root / "q").string()}, out, err2) ==
        2);
  CHECK_FALSE(std::filesystem::exists(root / "q" / "report.html"));
  CHECK_THAT(err2.str(), Catch::Contains("--label: 1 label for 2 result directories (give one "
                                         "--label per directory, in order, or none)"));
}

TEST_CASE("report: a capacity folder's bad probe is named", "[report][hostile]") {
  const auto dir = temp_dir();
  std::ofstream(dir / "capacity.json")
      << R"({"kind": "capacity", "probes": [{"offered_rate_per_s": 1}, {"offered_rate_per_s": "x"}]})";
  CHECK_THAT(error_of({dir.string()}),
             Catch::Contains("capacity.json: key \"probes[1].offered_rate_per_s\" = \"x\": must be "
                             "a number (or null)"));
  std::ofstream(dir / "capacity.json", std::ios::trunc) << R"({"probes": 3})";
  CHECK_THAT(error_of({dir.string()}),
             Catch::Contains("key \"probes\" = 3: must be an array (or null)"));
}

}  // namespace t_report_report_test
