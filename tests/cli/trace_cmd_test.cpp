// `servesim trace stats` and `servesim trace gen`, end to end through the command line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_cli_trace_cmd_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

const std::string k_data = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// `trace stats` with --out DIR: the figures it wrote to DIR/trace_stats.json, which --json
/// prints on stdout too. REQUIRES the command to succeed.
Json stats_json(std::vector<std::string> args) {
  const fs::path dir = temp_dir() / "stats";
  args.insert(args.begin(), {"trace", "stats"});
  std::vector<std::string> printed = args;
  args.insert(args.end(), {"--out", dir.string()});
  const CliResult r = cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json file = Json::parse(slurp(dir / "trace_stats.json"));
  printed.push_back("--json");
  const CliResult p = cli(printed);
  REQUIRE(p.code == 0);
  CHECK(Json::parse(p.out)["stats"] == file);
  return file;
}

}  // namespace

TEST_CASE("trace stats: every figure of a small CSV trace, worked out by hand", "[cli]") {
  // Arrivals 0, 1, 2, 4, 10, 11 s; prompts 10..60; outputs 1..6.
  const std::string path = write_temp("t.csv",
                                      "arrival_s,prompt_tokens,output_tokens\n"
                                      "0,10,1\n1,20,2\n2,30,3\n4,40,4\n10,50,5\n11,60,6\n");
  const Json j = stats_json({path, "--window-s", "5"});
  CHECK(j["format"] == "servesim_csv");
  CHECK(j["requests"] == 6);
  CHECK(j["duration_s"] == 11.0);
  CHECK(j["mean_rate_per_s"].get<double>() == Approx(5.0 / 11));  // (n - 1) / duration
  // Gaps 1, 1, 2, 6, 1: mean 2.2, population variance (3 * 1.44 + 0.04 + 14.44) / 5 = 3.76.
  CHECK(j["gap_mean_s"].get<double>() == Approx(2.2));
  CHECK(j["gap_cv"].get<double>() == Approx(std::sqrt(3.76) / 2.2));
  // Windows [0, 5): 4 requests; [5, 10): none; [10, 15) holds the last arrival and is left out.
  CHECK(j["windows"] == 2);
  CHECK(j["window_requests_left_out"] == 2);
  CHECK(j["window_requests_mean"] == 2.0);
  CHECK(j["window_requests_max"] == 4);
  CHECK(j["window_index_of_dispersion"] == 2.0);  // variance (16 + 0) / 2 - 4 = 4, over 2
  CHECK(j["window_peak_to_mean"] == 2.0);
  // numpy's linear interpolation: p90 sits at rank 4.5 of 0..5, p99 at 4.95.
  const Json& p = j["prompt_tokens"];
  CHECK(p["mean"] == 35.0);
  CHECK(p["p50"] == 35.0);
  CHECK(p["p90"] == 55.0);
  CHECK(p["p99"].get<double>() == Approx(59.5));
  CHECK(p["max"] == 60);
  CHECK(p["total"] == 210);
  CHECK(j["output_tokens"]["total"] == 21);
  CHECK(j["total_tokens"] == 231);
  CHECK(j["prefix_reuse"].is_null());  // a CSV says nothing about sharing

  const CliResult r = cli({"trace", "stats", path, "--window-s", "5"});
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("requests    6, arrivals 0.000 to 11.000 s (11.000 s)"));
  CHECK_THAT(r.out, Catch::Contains("2 whole windows of 5 s (the 2 requests after them left out)"));
  CHECK_THAT(r.out,
             Catch::Contains("mean 2.00, max 4, peak/mean 2.000, index of dispersion 2.000"));
  CHECK_THAT(r.out, Catch::Contains("prompt             35.0       35.0       55.0       59.5"));
  CHECK(r.out.find("prefix reuse") == std::string::npos);
}

TEST_CASE("trace stats: one request, or a trace shorter than a window, has no rate", "[cli]") {
  const std::string one = write_temp("one.csv", "arrival_s,prompt_tokens,output_tokens\n5,3,4\n");
  const Json j = stats_json({one});
  CHECK(j["requests"] == 1);
  CHECK(j["first_arrival_s"] == 5.0);  // servesim CSV arrivals are used as they are
  CHECK(j["mean_rate_per_s"].is_null());
  CHECK(j["gap_cv"].is_null());
  CHECK(j["windows"] == 0);
  CHECK(j["window_index_of_dispersion"].is_null());
  const CliResult r = cli({"trace", "stats", one});
  CHECK_THAT(r.out, Catch::Contains("rate        - requests/s"));
  CHECK_THAT(r.out, Catch::Contains("the trace spans less than one 60 s window"));
}

TEST_CASE("trace stats: prefix reuse of a hand-made Mooncake trace", "[cli]") {
  // Blocks of 4 tokens. Request 1 shares [1, 2] with request 0; request 2's [2] is not a
  // prefix seen before ([1, 2] is); request 3 repeats request 0; request 4 has 20 tokens but
  // only one id, so only its first 4 tokens are hashed.
  const std::string path =
      write_temp("m.jsonl",
                 R"({"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1, 2, 3]}
{"timestamp": 1000, "input_length": 9, "output_length": 1, "hash_ids": [1, 2, 7]}
{"timestamp": 2000, "input_length": 6, "output_length": 1, "hash_ids": [2, 3]}
{"timestamp": 3000, "input_length": 12, "output_length": 1, "hash_ids": [1, 2, 3]}
{"timestamp": 4000, "input_length": 20, "output_length": 1, "hash_ids": [1]}
)");
  const Json p = stats_json({path, "--hash-block-tokens", "4"})["prefix_reuse"];
  CHECK(p["requests_with_hashes"] == 5);
  CHECK(p["blocks"] == 3 + 3 + 2 + 3 + 1);
  CHECK(p["hit_blocks"] == 0 + 2 + 0 + 3 + 1);
  CHECK(p["hashed_tokens"] == (4 + 4 + 2) + (4 + 4 + 1) + (4 + 2) + 12 + 4);
  CHECK(p["hit_tokens"] == 8 + 12 + 4);
  CHECK(p["token_hit_rate"].get<double>() == Approx(24.0 / 41));
  CHECK(p["hit_fraction_of_prompt_tokens"].get<double>() == Approx(24.0 / 57));
  CHECK(p["distinct_prefixes"] == 6);  // [1] [1 2] [1 2 3] [1 2 7] [2] [2 3]
  const CliResult r = cli({"trace", "stats", path, "--hash-block-tokens", "4"});
  CHECK_THAT(r.out, Catch::Contains("blocks      6 of 12 seen before (50.00%)"));
}

TEST_CASE("trace stats: the Mooncake excerpt's ideal prefix hit rate, counted independently",
          "[cli]") {
  const std::string path = k_data + "mooncake_conversation_excerpt.jsonl";
  // A plain count over the file: every prefix of hash ids as a vector, in a set.
  std::set<std::vector<uint64_t>> seen;
  int64_t blocks = 0, hits = 0, tokens = 0, hit_tokens = 0, prompt_tokens = 0;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const Json row = Json::parse(line);
    const auto ids = row["hash_ids"].get<std::vector<uint64_t>>();
    const int64_t prompt = row["input_length"];
    prompt_tokens += prompt;
    bool missed = false;
    for (size_t k = 0; k < ids.size(); ++k) {
      const int64_t t = std::min<int64_t>(512, prompt - int64_t(k) * 512);
      const std::vector<uint64_t> prefix(ids.begin(), ids.begin() + long(k) + 1);
      missed = missed || !seen.count(prefix);
      blocks += 1, tokens += t;
      if (!missed) hits += 1, hit_tokens += t;
    }
    for (size_t k = 0; k < ids.size(); ++k) seen.emplace(ids.begin(), ids.begin() + long(k) + 1);
  }
  REQUIRE(blocks > 800);
  REQUIRE(hits > 0);
  const Json j = stats_json({path});
  const Json& p = j["prefix_reuse"];
  CHECK(j["format"] == "mooncake");
  CHECK(j["requests"] == 30);
  CHECK(p["blocks"] == blocks);
  CHECK(p["hit_blocks"] == hits);
  CHECK(p["hashed_tokens"] == tokens);
  CHECK(p["hit_tokens"] == hit_tokens);
  CHECK(p["block_hit_rate"].get<double>() == Approx(double(hits) / double(blocks)));
  CHECK(p["distinct_prefixes"] == int64_t(seen.size()));
  CHECK(j["prompt_tokens"]["total"] == prompt_tokens);
}

TEST_CASE("trace stats: the Azure excerpt's duration, rate and token totals", "[cli]") {
  const std::string path = k_data + "azure_conv_2023_excerpt.csv";
  int64_t prompt = 0, output = 0, max_prompt = 0;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  for (int p, o; std::getline(in, line);) {
    std::istringstream fields(line.substr(line.find(',') + 1));
    char comma;
    fields >> p >> comma >> o;
    prompt += p, output += o, max_prompt = std::max<int64_t>(max_prompt, p);
  }
  const Json j = stats_json({path, "--input-format", "azure"});
  CHECK(j["requests"] == 30);
  // 18:15:46.6805900 to 18:16:06.5945170.
  CHECK(j["duration_s"].get<double>() == Approx(19.913927).epsilon(1e-12));
  CHECK(j["mean_rate_per_s"].get<double>() == Approx(29 / 19.913927));
  CHECK(j["gap_mean_s"].get<double>() == Approx(19.913927 / 29));
  CHECK(j["prompt_tokens"]["total"] == prompt);
  CHECK(j["prompt_tokens"]["max"] == max_prompt);
  CHECK(j["output_tokens"]["total"] == output);
}

TEST_CASE("trace stats: --sort, --skip-zero-tokens and --source-model reach the reader", "[cli]") {
  const std::string tiny = std::string(SERVESIM_SOURCE_DIR) + "/traces/data/tiny.csv";
  const CliResult unsorted = cli({"trace", "stats", tiny});
  CHECK(unsorted.code == 2);
  CHECK_THAT(unsorted.err, Catch::Contains("tiny.csv:4: column arrival_s = \"0.100\" is before "
                                           "the previous row's \"0.250\" (line 3)"));
  CHECK(stats_json({tiny, "--sort"})["requests"] == 6);

  const std::string burst = k_data + "burstgpt_excerpt.csv";
  CHECK(cli({"trace", "stats", burst}).code == 2);  // a 0-token row
  const Json skipped = stats_json({burst, "--skip-zero-tokens"});
  CHECK(skipped["requests"] == 6);
  CHECK(skipped["counters"]["trace_rows_skipped_zero_tokens"] == 2);
  const Json chatgpt = stats_json({burst, "--skip-zero-tokens", "--source-model", "ChatGPT"});
  CHECK(chatgpt["requests"] == 4);
  CHECK(chatgpt["counters"]["trace_rows_skipped_other_model"] == 3);
}

TEST_CASE("trace stats: bad arguments and bad traces exit 2 with a message", "[cli]") {
  const std::string good = k_data + "azure_conv_2023_excerpt.csv";
  const fs::path dir = temp_dir() / "never";
  auto err_of = [](const std::vector<std::string>& args) {
    const CliResult r = cli(args);
    CHECK(r.code == 2);
    CHECK(r.out == "");
    return r.err;
  };
  CHECK_THAT(err_of({"trace"}), Catch::Contains("trace: give a subcommand (valid: gen, stats)"));
  CHECK_THAT(err_of({"trace", "stat"}),
             Catch::Contains("unknown subcommand \"stat\" (did you mean stats?)"));
  CHECK_THAT(err_of({"trace", "stats"}), Catch::Contains("trace stats: give a trace file"));
  CHECK_THAT(err_of({"trace", "stats", good, good}), Catch::Contains("trace stats: too many"));
  CHECK_THAT(err_of({"trace", "stats", "/nonexistent.csv"}),
             Catch::Contains("/nonexistent.csv: cannot open trace file"));
  CHECK_THAT(err_of({"trace", "stats", temp_dir().string()}),
             Catch::Contains(": is a directory, not a trace file"));
  CHECK_THAT(err_of({"trace", "stats", good, "--input-format", "azur"}),
             Catch::Contains(
                 "--input-format \"azur\": unknown (did you mean azure?) (valid: auto, "
                 "azure, burstgpt, csv, mooncake, servesim_csv, sharegpt, vidur, vllm_jsonl)"));
  CHECK_THAT(err_of({"trace", "stats", good, "--window-s", "0"}),
             Catch::Contains("--window-s 0: must be a number from 1e-9 to 9e9 (seconds)"));
  CHECK_THAT(err_of({"trace", "stats", good, "--hash-block-tokens", "16"}),
             Catch::Contains("have block hashes; this trace is read as azure"));
  CHECK_THAT(err_of({"trace", "stats", good, "--input-format", "csv"}),
             Catch::Contains("excerpt.csv:1: the header lacks column arrival_s"));
  // A bad row late in the file names its line; no JSON is written.
  const std::string bad = write_temp("bad.csv",
                                     "arrival_s,prompt_tokens,output_tokens\n"
                                     "0,1,1\n1,x,1\n");
  CHECK_THAT(err_of({"trace", "stats", bad, "--out", dir.string()}),
             Catch::Contains("bad.csv:3: column prompt_tokens = \"x\""));
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("trace gen: a synthetic workload replays as its CSV to byte-identical results", "[cli]") {
  const std::string engine = R"(
step_time: {kind: table, points: [{batch: 1, ms: 6.3}, {batch: 8, ms: 9.3}],
            prefill_ms_per_token: 0.25}
scheduler: {kind: continuous, max_num_seqs: 8, max_num_batched_tokens: 2048, chunked_prefill: true}
kv: {policy: paged, capacity_tokens: 20000, block_size: 16}
)";
  const std::string synthetic = R"(workload:
  synthetic:
    requests: 400
    start_s: 3.5
    arrival: {kind: gamma, rate_per_s: 6, cv: 2.5}
    prompt_tokens: {kind: lognormal, median: 300, sigma: 0.8, max: 4000}
    output_tokens: {kind: zipf, s: 1.1, max: 600}
  transform: {sample_fraction: 0.7, rate_scale: 1.3}
seed: 11
)" + engine;
  const fs::path dir = temp_dir();
  const std::string config = write_temp("synthetic.yaml", synthetic);
  const fs::path csv = dir / "sub" / "trace.csv";
  const CliResult r = cli({"trace", "gen", config, "--out", (dir / "sub").string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("wrote "));
  CHECK_THAT(r.out, Catch::Contains("transform_dropped_sample"));
  CHECK_THAT(slurp(csv), Catch::StartsWith("arrival_s,prompt_tokens,output_tokens\n"));
  CHECK(fs::directory_iterator(dir / "sub")->path() == csv);  // no temporary left beside it

  const std::string replay = "workload: {trace: {path: " + csv.string() + "}}\n" + engine;
  const RunOutput direct = run_scenario(doc_of(synthetic), /*check=*/true);
  const RunOutput replayed = run_scenario(doc_of(replay), /*check=*/true);
  CHECK(direct.summary.finished > 200);
  CHECK(replayed.requests_csv == direct.requests_csv);

  // --requests and --seed override the config; the same seed gives the same file.
  const fs::path small = dir / "small" / "trace.csv", again = dir / "again" / "trace.csv";
  REQUIRE(cli({"trace", "gen", config, "--out", (dir / "small").string(), "--requests", "50",
               "--seed", "3"})
              .code == 0);
  REQUIRE(cli({"trace", "gen", config, "-o", (dir / "again").string(), "--requests=50", "--seed=3"})
              .code == 0);
  CHECK(slurp(small) == slurp(again));
  const Json j = stats_json({small.string()});
  CHECK(j["requests"].get<int>() < 50);  // sample_fraction keeps about 70% of them
  CHECK(j["requests"].get<int>() > 20);
}

TEST_CASE("trace gen: reads only workload and seed, and checks them like run", "[cli]") {
  const std::string workload =
      "workload: {synthetic: {requests: 3, arrival: {kind: fixed, interval_s: 0.5}, "
      "prompt_tokens: {kind: uniform, min: 5, max: 5}, output_tokens: {kind: uniform, min: 2, "
      "max: 2}}}\n";
  const fs::path folder = temp_dir() / "w", out = folder / "trace.csv";
  // Just the workload, or beside other sections which are not read (not even checked).
  for (const std::string& extra : {std::string(), std::string("kv: {bogus: 1}\nscheduler: 7\n")}) {
    const CliResult r =
        cli({"trace", "gen", write_temp("w.yaml", workload + extra), "--out", folder.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(slurp(out) ==
          "arrival_s,prompt_tokens,output_tokens\n0.000000000,5,2\n0.500000000,5,2\n"
          "1.000000000,5,2\n");
  }
  auto err_of = [](const std::vector<std::string>& args) {
    const CliResult r = cli(args);
    CHECK(r.code == 2);
    return r.err;
  };
  CHECK_THAT(err_of({"trace", "gen", write_temp("w.yaml", workload + "schedulr: {}\n"), "--out",
                     folder.string()}),
             Catch::Contains("w.yaml:2:1: unknown key (valid here: seed, workload)"));
  const std::string w = write_temp("w.yaml", workload);
  // --out is a folder, the trace its trace.csv.
  CHECK_THAT(
      err_of({"trace", "gen", w, "--out", (temp_dir() / "w.csv").string()}),
      Catch::Contains("--out is a folder in every subcommand: trace gen writes DIR/trace.csv"));
  CHECK_THAT(err_of({"trace", "gen", w, "--out", out.string()}), Catch::Contains(": is a file; "));
  CHECK_THAT(err_of({"trace", "gen", "--out", folder.string()}),
             Catch::Contains("trace gen: give a scenario config"));
  CHECK_THAT(err_of({"trace", "gen", w, "--out", folder.string(), "--requests", "0"}),
             Catch::Contains("--requests 0: must be an integer from 1 to 1099511627776"));
  CHECK_THAT(err_of({"trace", "gen", w, "--out", folder.string(), "--set",
                     "workload.synthetic.arrival.kind=poison"}),
             Catch::Contains("did you mean poisson?"));
  const std::string trace = write_temp(
      "t.yaml", "workload: {trace: {path: " + k_data + "azure_conv_2023_excerpt.csv}}\n");
  CHECK_THAT(err_of({"trace", "gen", trace, "--out", folder.string(), "--requests", "5"}),
             Catch::Contains("--requests: " + trace + " has no workload.synthetic to override"));
  // trace.csv there is a folder, not a file: refused, nothing written.
  const fs::path taken = temp_dir();
  fs::create_directories(taken / "trace.csv");
  CHECK_THAT(err_of({"trace", "gen", w, "--out", taken.string()}),
             Catch::Contains("trace.csv: is a folder"));
}

TEST_CASE("trace gen: a trace written back keeps every arrival to the nanosecond", "[cli]") {
  // Azure timestamps have 7 decimals; the tenth digit past the second is where a double of
  // epoch seconds would go wrong.
  const std::string config = write_temp(
      "a.yaml", "workload: {trace: {path: " + k_data + "azure_conv_2023_excerpt.csv}}\n");
  const fs::path out = temp_dir() / "a" / "trace.csv";
  REQUIRE(cli({"trace", "gen", config, "--out", out.parent_path().string()}).code == 0);
  const std::string csv = slurp(out);
  CHECK_THAT(csv, Catch::Contains("\n0.000000000,374,44\n4.314579000,396,109\n"));
  CHECK_THAT(csv, Catch::EndsWith("\n19.913927000,91,16\n"));
}

TEST_CASE("trace gen: Mooncake hash_ids come back as prefix_hash, with the same reuse", "[cli]") {
  const std::string trace = k_data + "mooncake_conversation_excerpt.jsonl";
  const std::string config = write_temp("m.yaml", "workload: {trace: {path: " + trace + "}}\n");
  const fs::path out = temp_dir() / "m" / "trace.csv";
  const CliResult r = cli({"trace", "gen", config, "--out", out.parent_path().string()});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, !Catch::Contains("note:"));  // 512-token blocks are the default
  CHECK_THAT(slurp(out), Catch::StartsWith("arrival_s,prompt_tokens,output_tokens,prefix_hash\n"));
  const Json original = stats_json({trace});
  const Json again = stats_json({out.string()});
  CHECK(again["prefix_reuse"] == original["prefix_reuse"]);
  CHECK(again["prompt_tokens"] == original["prompt_tokens"]);
}

TEST_CASE("trace stats: sessions are counted, trace gen refuses a closed loop", "[cli]") {
  const std::string csv = write_temp("s.csv",
                                     "arrival_s,prompt_tokens,output_tokens,session_id,think_s\n"
                                     "0,10,2,a,\n0,5,3,a,1\n0.5,7,1,b,\n0,7,1,a,2\n");
  const Json j = stats_json({csv, "--sort"});
  CHECK(j["requests"] == 4);
  CHECK(j["sessions"]["sessions"] == 2);
  CHECK(j["sessions"]["requests_in_sessions"] == 4);
  CHECK(j["sessions"]["turns_mean"] == 2.0);
  CHECK(j["sessions"]["turns_max"] == 3);
  CHECK(stats_json({k_data + "azure_conv_2023_excerpt.csv"})["sessions"].is_null());
  // Without --sort a session trace is sorted anyway (its later turns' arrival_s is a lower
  // bound, out of order by design), and the table says so; a plain CSV out of order is refused.
  CHECK(stats_json({csv}) == j);
  const CliResult plain = cli({"trace", "stats", csv});
  CHECK(plain.code == 0);
  CHECK_THAT(plain.out, Catch::Contains("a session or dependency trace"));
  const std::string unsorted =
      write_temp("u.csv", "arrival_s,prompt_tokens,output_tokens\n1,4,2\n0,4,2\n");
  const CliResult refused = cli({"trace", "stats", unsorted});
  CHECK(refused.code == 2);
  CHECK_THAT(refused.err, Catch::Contains("before the previous row"));

  const std::string config = write_temp(
      "g.yaml",
      "workload: {closed_loop: {users: 2, requests: 4, think_s: 1,\n"
      "  prompt_tokens: {kind: fixed, value: 4}, output_tokens: {kind: fixed, value: 2}}}\n");
  const fs::path out = temp_dir() / "g";
  const CliResult r = cli({"trace", "gen", config, "--out", out.string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("so its arrivals are not known before a run"));
  CHECK(!fs::exists(out));
}

}  // namespace t_cli_trace_cmd_test
