// Sizing sweeps (`servesim size`, sizing/sweep.h, docs/sizing.md): points, costs, infeasible rows,
// the cheapest point, the Pareto front, threads, and the messages for bad sweep files.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "sim/scenario.h"
#include "sizing/sweep.h"
#include "sizing/sweep_output.h"
#include "sizing/sweep_run.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_sizing_size_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

// 40 requests of 200 + 50 tokens at 4 requests/s on Llama 3.1 8B, roofline step times.
const std::string k_base = R"(workload:
  synthetic:
    requests: 40
    arrival: {kind: fixed, rate_per_s: 4}
    prompt_tokens: {kind: fixed, value: 200}
    output_tokens: {kind: fixed, value: 50}
step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16}
scheduler: {kind: continuous, max_num_seqs: 16, max_num_batched_tokens: 2048}
kv:
  policy: paged
  block_size: 16
  memory: {accelerator_gib: 74.5, parameters: 8030261248, weight_dtype: bf16, layers: 32,
           kv_heads: 8, head_dim: 128}
seed: 1
)";

// 2 x 2 x 2 points; Llama-2 13B in bf16 (26 GB) does not fit in an L4's 24 GB. An L4 decodes
// 8B in about 68 ms per token, within the TPOT target.
const std::string k_sweep = R"(base: base.yaml
slo: {ttft_ms: 500, tpot_ms: 100}
axes:
  accelerator: [l4, h100-sxm]
  model: [llama-3.1-8b, llama-2-13b]
  replicas: [1, 2]
)";

struct Files {
  fs::path dir;
  std::string sweep;
};

Files write_sweep(const std::string& sweep, const std::string& base = k_base) {
  Files f{temp_dir(), ""};
  std::ofstream(f.dir / "base.yaml") << base;
  std::ofstream(f.dir / "s.yaml") << sweep;
  f.sweep = (f.dir / "s.yaml").string();
  return f;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The message `servesim size` prints for a bad sweep, with the folder cut out.
std::string sweep_error(const std::string& sweep) {
  const Files f = write_sweep(sweep);
  const CliResult r = cli({"size", f.sweep, "--out", (f.dir / "o").string(), "-q"});
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(f.dir / "o" / "points.csv"));
  std::string err = r.err;
  const std::string prefix = f.dir.string() + "/";
  for (size_t pos; (pos = err.find(prefix)) != std::string::npos;) err.erase(pos, prefix.size());
  return err;
}

}  // namespace

TEST_CASE("size: points are the axes' product, labelled, last axis fastest", "[sizing][size]") {
  const Files f = write_sweep(k_sweep);
  const SweepSpec spec = load_sweep(f.sweep);
  REQUIRE(spec.point_count() == 8);
  CHECK(spec.label(0) == "accelerator=l4;model=llama-3.1-8b;replicas=1");
  CHECK(spec.label(5) == "accelerator=h100-sxm;model=llama-3.1-8b;replicas=2");
  const std::vector<std::string> o = spec.overrides(5);
  CHECK(std::find(o.begin(), o.end(), "step_time.hardware=h100-sxm") != o.end());
  CHECK(std::find(o.begin(), o.end(), "kv.memory.layers=32") != o.end());
  CHECK(std::find(o.begin(), o.end(), "slo={ttft_ms: 500, tpot_ms: 100, percentile: 99}") !=
        o.end());
}

TEST_CASE(
    "size: rows carry costs, infeasible points their reasons, the cheapest meets its SLOs "
    "when run alone",
    "[sizing][size]") {
  const Files f = write_sweep(k_sweep);
  const fs::path out = f.dir / "o";
  const CliResult r = cli({"size", f.sweep, "--out", out.string(), "--jobs", "2", "-q"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string csv = slurp(out / "points.csv");
  CHECK(csv.rfind(
            "point,label,accelerator,model,step_source,feasible,reason,meets_slo,pareto,cheapest,"
            "replicas,accelerators,cost_per_hour_usd,requests_per_s,output_tokens_per_s,"
            "tokens_per_usd,tokens_per_joule,ttft_p50_ms,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,"
            "e2e_p99_ms,goodput_req_per_s,slo_attainment,rejected,shed,timed_out,cancelled\n",
            0) == 0);
  // Point 2 (L4, 13B, 1 replica): the weights do not fit.
  CHECK_THAT(csv, Catch::Contains("\n2,accelerator=l4;model=llama-2-13b;replicas=1,l4,"
                                  "llama-2-13b,roofline,false,\"config: kv.memory.parameters"));
  const auto j = nlohmann::json::parse(slurp(out / "summary.json"));
  CHECK(j["kind"] == "sweep");
  CHECK(j["points"] == 8);
  CHECK(j["feasible"] == 6);
  REQUIRE(j["cheapest"].is_object());
  // The L4 (cheapest accelerator) serving 8B on one replica: 1 x L4's price per hour.
  CHECK(j["cheapest"]["label"] == "accelerator=l4;model=llama-3.1-8b;replicas=1");
  CHECK(j["cheapest"]["accelerators"] == 1);
  CHECK(j["pareto_front"].size() >= 1);
  CHECK(j["pareto_front"][0]["point"] == j["cheapest"]["point"]);
  // Re-simulate the cheapest point alone with `servesim run` and the same overrides.
  const SweepSpec spec = load_sweep(f.sweep);
  std::vector<std::string> args{"run",   (f.dir / "base.yaml").string(),
                                "--out", (f.dir / "alone").string(),
                                "-q",    "--no-requests-csv"};
  for (const auto& o : spec.overrides(j["cheapest"]["point"].get<size_t>())) {
    args.push_back("--set");
    args.push_back(o);
  }
  REQUIRE(cli(args).code == 0);
  const auto alone = nlohmann::json::parse(slurp(f.dir / "alone" / "summary.json"));
  CHECK(alone["slo"]["ttft"]["met"] == true);
  CHECK(alone["slo"]["tpot"]["met"] == true);
}

TEST_CASE(
    "size: a base naming its model and chip in kv.memory gets names from the shorthands, a chip "
    "without the sweep's price tier is refused",
    "[sim][size]") {
  std::string base = k_base;
  const std::string explicit_memory =
      "memory: {accelerator_gib: 74.5, parameters: 8030261248, weight_dtype: bf16, layers: 32,\n"
      "           kv_heads: 8, head_dim: 128}";
  REQUIRE(base.find(explicit_memory) != std::string::npos);
  base.replace(base.find(explicit_memory), explicit_memory.size(),
               "memory: {hardware: h100-sxm, model: llama-3.1-8b, weight_dtype: bf16}");
  const std::string axes =
      "slo: {ttft_ms: 500}\naxes:\n  accelerator: [l4, h100-sxm]\n"
      "  model: [llama-3.1-8b, qwen3-8b]\n";
  const Files f = write_sweep("base: base.yaml\n" + axes, base);
  const SweepSpec spec = load_sweep(f.sweep);
  CHECK(spec.price_tier == "on_demand");
  const std::vector<std::string> o = spec.overrides(1);  // l4, qwen3-8b
  CHECK(std::find(o.begin(), o.end(), "kv.memory.hardware=l4") != o.end());
  CHECK(std::find(o.begin(), o.end(), "kv.memory.model=qwen3-8b") != o.end());
  CHECK(std::none_of(o.begin(), o.end(), [](const std::string& s) {
    return s.rfind("kv.memory.accelerator_gib", 0) == 0 || s.rfind("kv.memory.layers", 0) == 0;
  }));
  // The one-source on_demand tier does not list the MI300X: refused when the file is read.
  CHECK_THAT(sweep_error("base: base.yaml\nslo: {ttft_ms: 500}\naxes:\n  accelerator: [mi300x]\n"),
             Catch::Contains("value mi300x: hardware \"mi300x\" has no on_demand price, the tier "
                             "this sweep compares costs in"));
  CHECK_THAT(sweep_error("base: base.yaml\nslo: {ttft_ms: 500}\naccelerator: a100-40gb\n"),
             Catch::Contains("hardware \"a100-40gb\" has no on_demand price (its tiers: mixed"));
  const Files mixed = write_sweep(
      "base: base.yaml\nprice_tier: mixed\nslo: {ttft_ms: 500}\naxes:\n  accelerator: [mi300x]\n");
  CHECK(load_sweep(mixed.sweep).price_tier == "mixed");
  CHECK_THAT(sweep_error("base: base.yaml\nprice_tier: spot\nslo: {ttft_ms: 500}\n"),
             Catch::Contains("(valid: mixed, on_demand)"));
}

TEST_CASE("size: threaded runs write byte-identical files to a single-threaded one",
          "[sizing][size]") {
  const Files f = write_sweep(k_sweep);
  REQUIRE(cli({"size", f.sweep, "--out", (f.dir / "j1").string(), "-j", "1", "-q"}).code == 0);
  REQUIRE(cli({"size", f.sweep, "--out", (f.dir / "j3").string(), "-j", "3", "-q"}).code == 0);
  CHECK(slurp(f.dir / "j1" / "points.csv") == slurp(f.dir / "j3" / "points.csv"));
  CHECK(slurp(f.dir / "j1" / "summary.json") == slurp(f.dir / "j3" / "summary.json"));
}

TEST_CASE("size: min_replicas finds the fewest replicas meeting the SLOs", "[sizing][size]") {
  // 12 requests/s on one L4 overloads it (p99 TTFT of seconds); more replicas share the load.
  const Files f = write_sweep(R"(base: base.yaml
slo: {ttft_ms: 300, tpot_ms: 100}
mode: min_replicas
max_replicas: 8
axes:
  accelerator: [l4]
)",
                              k_base.substr(0, k_base.find("rate_per_s: 4")) + "rate_per_s: 12" +
                                  k_base.substr(k_base.find("rate_per_s: 4") + 13));
  const SweepSpec spec = load_sweep(f.sweep);
  const PointResult r = evaluate_point(spec, 0);
  REQUIRE(r.feasible);
  CHECK(r.meets_slo);
  REQUIRE(r.replicas >= 2);
  // One fewer replica misses.
  const Probe fewer = run_probe(spec.base_text, spec.base_file, [&] {
    auto o = spec.overrides(0);
    o.push_back(
        fmt::format("cluster={{replicas: {}, router: {{kind: round_robin}}}}", r.replicas - 1));
    return o;
  }());
  REQUIRE(fewer.built);
  CHECK_FALSE(meets_slo(fewer.summary, std::nullopt));
}

TEST_CASE("size: the Pareto front keeps rows no other beats on both cost and p99 TTFT",
          "[sizing][size]") {
  std::vector<PointResult> rows(4);
  const double cost[] = {1, 2, 2, 3}, ttft[] = {50, 40, 45, 40};
  for (size_t i = 0; i < 4; ++i) {
    rows[i].point = i;
    rows[i].feasible = true;
    rows[i].cost_per_hour_usd = cost[i];
    rows[i].ttft_p99_ms = ttft[i];
  }
  mark_pareto(rows, SweepSpec{});  // no axes: one scenario
  CHECK(rows[0].pareto);
  CHECK(rows[1].pareto);
  CHECK_FALSE(rows[2].pareto);  // same cost as 1, slower
  CHECK_FALSE(rows[3].pareto);  // dearer than 1, no faster
  rows[3].meets_slo = rows[1].meets_slo = true;
  CHECK(cheapest(rows) == std::optional<size_t>(1));
}

TEST_CASE("size: bad sweep files name the file, line and key", "[sizing][size]") {
  CHECK_THAT(sweep_error("base: base.yaml\nslo: {ttft_ms: 5}\naxes:\n  acelerator: [l4]\n"),
             Catch::Contains("axes.acelerator") && Catch::Contains("s.yaml:4:") &&
                 Catch::Contains("did you mean accelerator"));
  CHECK_THAT(sweep_error("base: base.yaml\nslo: {ttft_ms: 5}\naxes:\n  accelerator: []\n"),
             Catch::Contains("axes.accelerator") && Catch::Contains("non-empty list"));
  CHECK_THAT(sweep_error("base: base.yaml\nslo: {ttft_ms: 5}\naxes:\n  accelerator: [h1000]\n"),
             Catch::Contains("axes.accelerator") && Catch::Contains("h1000"));
  CHECK_THAT(
      sweep_error("base: base.yaml\nslo: {ttft_ms: 5}\naxes:\n  scheduler.max_num_seqs: [8, 0]\n"),
      Catch::Contains("axes.scheduler.max_num_seqs") && Catch::Contains("s.yaml:4:") &&
          Catch::Contains("value 0") && Catch::Contains("must be"));
  CHECK_THAT(
      sweep_error("base: base.yaml\nslo: {ttft_ms: 5}\naxes:\n  scheduler.max_num_seq: [8]\n"),
      Catch::Contains("axes.scheduler.max_num_seq") && Catch::Contains("unknown key"));
  CHECK_THAT(
      sweep_error("base: base.yaml\nslo: {ttft_ms: 5}\nmode: fast\n"),
      Catch::Contains("mode") && Catch::Contains("s.yaml:3:") && Catch::Contains("min_replicas"));
  CHECK_THAT(sweep_error("base: base.yaml\nslo: {ttft_ms: 5}\naxis: {}\n"),
             Catch::Contains("axis at s.yaml:3:") && Catch::Contains("did you mean axes"));
  CHECK_THAT(sweep_error("base: nothere.yaml\nslo: {ttft_ms: 5}\n"), Catch::Contains("base"));
  CHECK_THAT(sweep_error("base: base.yaml\nslo: {min_attainment: 0.9}\n"),
             Catch::Contains("needs ttft_ms, tpot_ms, e2e_ms, itl_ms or several"));
  CHECK_THAT(sweep_error("base: base.yaml\nslo: {ttft_ms: 5}\naxes:\n  weight_dtype: [fp5]\n"),
             Catch::Contains("axes.weight_dtype") && Catch::Contains("nvfp4"));
}

TEST_CASE("size: the weight_dtype axis takes nvfp4 to the step time and kv.memory alike",
          "[sizing][size]") {
  const Files f = write_sweep(
      "base: base.yaml\nslo: {ttft_ms: 500}\naxes:\n"
      "  weight_dtype: [fp8, nvfp4]\n");
  const SweepSpec spec = load_sweep(f.sweep);
  REQUIRE(spec.point_count() == 2);
  const std::vector<std::string> o = spec.overrides(1);
  CHECK(std::find(o.begin(), o.end(), "step_time.weight_dtype=nvfp4") != o.end());
  CHECK(std::find(o.begin(), o.end(), "kv.memory.weight_dtype=nvfp4") != o.end());
}

TEST_CASE("size: every sweep in configs/sweeps loads and lists its points", "[sizing][size]") {
  int n = 0;
  for (const auto& e :
       fs::directory_iterator(fs::path(SERVESIM_SOURCE_DIR) / "configs" / "sweeps")) {
    if (e.path().extension() != ".yaml") continue;
    ++n;
    INFO(e.path());
    const CliResult r = cli({"size", e.path().string(), "--dry-run"});
    CHECK(r.err == "");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("points"));
  }
  CHECK(n >= 2);
}

TEST_CASE(
    "size: requests longer than the KV cache make infeasible rows with reasons and settings "
    "refused at a point stop the sweep naming the point",
    "[sizing][size]") {
  // 900,000-token prompts cannot fit in the H100's KV cache (426,736 tokens for Llama 3.1 8B):
  // a capacity reason, so an infeasible row. A static scheduler needs max_batch_size, which the
  // base's continuous section lacks (the value is refused only with the base's other keys, so
  // the sweep file passes): a mistake in the input, never a property of the deployment, so the
  // point stops the sweep (status 2) rather than passing for infeasible.
  const Files f = write_sweep(R"(base: base.yaml
slo: {ttft_ms: 500, tpot_ms: 100}
axes:
  workload.synthetic.prompt_tokens: [{kind: fixed, value: 200}, {kind: fixed, value: 900000}]
  scheduler.kind: [continuous, static]
)");
  const SweepSpec spec = load_sweep(f.sweep);
  REQUIRE(spec.point_count() == 4);
  const PointResult ok = evaluate_point(spec, 0);
  CHECK(ok.feasible);
  CHECK(ok.reason.empty());
  CHECK_THROWS_WITH(
      evaluate_point(spec, 1),
      Catch::StartsWith("point 1 (") &&
          Catch::Contains("cannot be evaluated: scheduler.max_batch_size: required key"));
  const PointResult rejected = evaluate_point(spec, 2);
  CHECK_FALSE(rejected.feasible);
  CHECK_THAT(rejected.reason,
             Catch::StartsWith("40 requests rejected (first: request 0: needs 900064 KV tokens"));
  std::vector<PointResult> rows{ok, rejected};
  mark_pareto(rows, spec);
  const std::string csv = points_csv(spec, rows);
  // Infeasible rows keep their place and leave the metrics empty.
  CHECK_THAT(csv, Catch::Contains(",false,false,,,,,,,,,,,,,,,,,,\n"));
  // The command: status 2, the point and the reason named, no points.csv written.
  const fs::path out = f.dir / "o";
  const CliResult r = cli({"size", f.sweep, "--out", out.string(), "--jobs", "1", "-q"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot be evaluated: scheduler.max_batch_size"));
  CHECK_FALSE(fs::exists(out / "points.csv"));
}

namespace {

// The step time of a small decode and a prefill under `step_time` (a flow map), on k_base.
std::pair<double, double> steps_of(const std::string& base,
                                   const std::vector<std::string>& overrides) {
  auto doc = std::make_shared<Document>(base, "base.yaml");
  for (const auto& s : overrides) doc->apply_override(s);
  const Scenario sc = build_scenario(doc);
  StepShape decode;
  decode.sequences = decode.decode_sequences = 8;
  decode.decode_context_tokens = decode.decode_context_max = decode.decode_context_min = 8 * 1024;
  StepShape prefill;
  prefill.sequences = 1;
  prefill.prefill_tokens = 2048;
  prefill.prefill_tokens_sq = 2048.0 * 2048.0;
  return {sc.components.replicas[0].step_time->step_ms(decode),
          sc.components.replicas[0].step_time->step_ms(prefill)};
}

}  // namespace

TEST_CASE(
    "size: on the operator model the accelerator shorthand times a chip with tables from them "
    "and one without from the shape-aware roofline",
    "[sizing][size]") {
  const std::string tables = std::string(SERVESIM_SOURCE_DIR) + "/data/timings/aiconfigurator";
  const std::string roofline =
      "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16}";
  std::string base = k_base;
  REQUIRE(base.find(roofline) != std::string::npos);
  base.replace(base.find(roofline), roofline.size(),
               fmt::format("step_time: {{kind: operator, model: llama-3.1-8b, hardware: h100-sxm, "
                           "operators: {{source: tables, path: {}, gpu: h100_sxm, engine: vllm}}}}",
                           tables));
  const Files f = write_sweep(
      "base: base.yaml\nprice_tier: mixed\nslo: {ttft_ms: 500}\naxes:\n"
      "  accelerator: [h200, mi300x]\n",
      base);
  const SweepSpec spec = load_sweep(f.sweep);
  REQUIRE(spec.point_count() == 2);
  // The H200 (catalogue `tables: h200_sxm`) keeps the base's path and engine, with its own GPU.
  const std::vector<std::string> h200 = spec.overrides(0);
  const std::string h200_ops = fmt::format(
      "step_time.operators={{source: tables, path: {}, gpu: h200_sxm, engine: vllm}}", tables);
  CHECK(std::find(h200.begin(), h200.end(), "step_time.hardware=h200") != h200.end());
  CHECK(std::find(h200.begin(), h200.end(), h200_ops) != h200.end());
  CHECK(spec.step_source(0) == "operator:tables:h200_sxm:vllm");
  // The MI300X (`tables: none`) gets the roofline source.
  const std::vector<std::string> mi300x = spec.overrides(1);
  CHECK(std::find(mi300x.begin(), mi300x.end(), "step_time.operators={source: roofline}") !=
        mi300x.end());
  CHECK(spec.step_source(1) == "operator:roofline");

  // Worked from the config each point produces: its step times are those of a step_time written
  // out by hand for that chip and source, and the two sources differ.
  const auto by_hand = [&](const std::string& hw, const std::string& ops) {
    return steps_of(
        base, {fmt::format(
                  "step_time={{kind: operator, model: llama-3.1-8b, hardware: {}, operators: {}}}",
                  hw, ops)});
  };
  const auto point = [&](size_t i) {
    std::vector<std::string> o = spec.overrides(i);
    o.erase(o.begin());  // the SLO, which step times do not read
    return steps_of(base, o);
  };
  const auto h200_tables = by_hand(
      "h200", fmt::format("{{source: tables, path: {}, gpu: h200_sxm, engine: vllm}}", tables));
  const auto mi300x_roofline = by_hand("mi300x", "{source: roofline, fit: fit-all}");
  CHECK(point(0) == h200_tables);
  CHECK(point(1) == mi300x_roofline);
  CHECK(h200_tables != by_hand("h200", "{source: roofline}"));
  CHECK(h200_tables !=
        by_hand("h100-sxm",
                fmt::format("{{source: tables, path: {}, gpu: h100_sxm, engine: vllm}}", tables)));

  // The column says which: points.csv's step_source after the axis columns.
  const Files run = f;
  REQUIRE(cli({"size", run.sweep, "--out", (run.dir / "o").string(), "-q"}).code == 0);
  const std::string csv = slurp(run.dir / "o" / "points.csv");
  CHECK_THAT(csv, Catch::StartsWith("point,label,accelerator,step_source,feasible,"));
  CHECK_THAT(csv, Catch::Contains("\n0,accelerator=h200,h200,operator:tables:h200_sxm:vllm,"));
  CHECK_THAT(csv, Catch::Contains("\n1,accelerator=mi300x,mi300x,operator:roofline,"));
}

TEST_CASE("size: a base on the roofline source, or another kind, keeps it for every chip",
          "[sizing][size]") {
  const Files f = write_sweep(
      "base: base.yaml\nprice_tier: mixed\nslo: {ttft_ms: 500}\naxes:\n"
      "  accelerator: [h200, mi300x]\n");
  const SweepSpec spec = load_sweep(f.sweep);
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<std::string> o = spec.overrides(i);
    CHECK(std::none_of(o.begin(), o.end(), [](const std::string& s) {
      return s.rfind("step_time.operators", 0) == 0;
    }));
    CHECK(spec.step_source(i) == "roofline");
  }
  const Files op = write_sweep(
      "base: base.yaml\nprice_tier: mixed\nslo: {ttft_ms: 500}\n"
      "set:\n  step_time: {kind: operator, model: llama-3.1-8b, hardware: h100-sxm, "
      "operators: {source: roofline}}\naxes:\n  accelerator: [h200, mi300x]\n");
  const SweepSpec roof = load_sweep(op.sweep);
  CHECK(roof.step_source(0) == "operator:roofline");
  CHECK(roof.step_source(1) == "operator:roofline");
}

TEST_CASE(
    "size: a missing operator table stops the sweep with status 2 naming the point and the "
    "full path, never an infeasible row",
    "[sizing][size]") {
  // The old failure: a tables path that is not there made every measured chip an "infeasible"
  // point and the chip without tables (timed by the roofline) the cheapest, with status 0.
  const std::string roofline =
      "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm, weight_dtype: bf16}";
  std::string base = k_base;
  REQUIRE(base.find(roofline) != std::string::npos);
  base.replace(base.find(roofline), roofline.size(),
               "step_time: {kind: operator, model: llama-3.1-8b, hardware: h100-sxm, operators: "
               "{source: tables, path: no/such/tables-folder-with-a-name-longer-than-forty, "
               "gpu: h100_sxm, engine: vllm}}");
  const Files f = write_sweep(
      "base: base.yaml\nprice_tier: mixed\nslo: {ttft_ms: 500}\naxes:\n"
      "  accelerator: [h200, mi300x]\n",
      base);
  const fs::path out = f.dir / "o";
  const CliResult r = cli({"size", f.sweep, "--out", out.string(), "--jobs", "1", "-q"});
  CHECK(r.code == 2);
  const std::string full =
      (fs::absolute(f.dir) / "no/such/tables-folder-with-a-name-longer-than-forty")
          .lexically_normal()
          .string();
  CHECK_THAT(r.err, Catch::Contains("point 0 (accelerator=h200) cannot be evaluated: "));
  CHECK_THAT(r.err, Catch::Contains(full + ": no such folder (the measured tables ship in the "
                                           "repository's data/timings/aiconfigurator folder"));
  CHECK_FALSE(fs::exists(out / "points.csv"));
}

}  // namespace t_sizing_size_test
