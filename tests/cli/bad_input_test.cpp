// The catalogue of bad input (docs/errors.md): each kind, run through the command line as a user
// would, gets exactly the message the catalogue shows, exit status 2 and no output written.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <sstream>

#include "cli/cli.h"
#include "core/errors.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "tests/text.h"
#include "traces/workload_source.h"

namespace t_cli_bad_input_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string out, err;
  bool wrote_output;
};

/// Writes `files` into a fresh folder and runs `servesim args...`, where "{dir}" in an argument
/// stands for the folder. The folder's path is cut out of what servesim prints, so messages read
/// as they do when servesim runs inside the folder, as docs/errors.md shows them.
Run run_servesim(const std::map<std::string, std::string>& files,
                 std::vector<std::string> args = {"run", "{dir}/c.yaml", "--out", "{dir}/o",
                                                  "-q"}) {
  const fs::path dir = temp_dir();
  for (const auto& [name, text] : files) std::ofstream(dir / name, std::ios::binary) << text;
  for (auto& a : args) a = replace_all(a, "{dir}", dir.string());
  const CliResult r = cli(args);
  const std::string prefix = dir.string() + "/";
  return {r.code, replace_all(r.out, prefix, ""), replace_all(r.err, prefix, ""),
          fs::exists(dir / "o" / "summary.json")};
}

/// The message for bad input; checks the exit status and that nothing was written.
std::string error_of(const std::map<std::string, std::string>& files,
                     const std::vector<std::string>& extra_args = {}) {
  std::vector<std::string> args{"run", "{dir}/c.yaml", "--out", "{dir}/o", "-q"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  const Run r = run_servesim(files, args);
  CHECK(r.code == 2);
  CHECK_FALSE(r.wrote_output);
  return r.err;
}

const std::string k_header = "arrival_s,prompt_tokens,output_tokens\n";
const std::string k_trace_config =
    "workload: {trace: {path: t.csv}}\nstep_time: {kind: linear, base_ms: 1}\n"
    "scheduler: {kind: static, max_batch_size: 1}\nkv: {policy: paged, capacity_tokens: 1000}\n";
const std::string k_synthetic_config = R"(workload:
  synthetic:
    requests: 10
    arrival: {kind: poisson, rate_per_s: 2}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: uniform, min: 1, max: 5}
step_time: {kind: linear, base_ms: 1}
scheduler:
  kind: continuous
  max_num_seqs: 8
kv: {policy: paged, capacity_tokens: 1000}
)";

/// The message for the trace `csv` (replayed by k_trace_config).
std::string trace_error(const std::string& csv) {
  return error_of({{"c.yaml", k_trace_config}, {"t.csv", csv}});
}

/// The message for k_synthetic_config with `from` replaced by `to`.
std::string config_error(const std::string& from, const std::string& to,
                         const std::vector<std::string>& extra_args = {}) {
  std::string yaml = k_synthetic_config;
  const size_t pos = yaml.find(from);
  REQUIRE(pos != std::string::npos);
  return error_of({{"c.yaml", yaml.replace(pos, from.size(), to)}}, extra_args);
}

std::string err(const std::string& message) { return "servesim: error: " + message + "\n"; }

}  // namespace

TEST_CASE("catalog: malformed rows, missing and extra columns", "[cli][catalog]") {
  CHECK(trace_error(k_header + "0,1,1\n0.5,abc,3\n") ==
        err("t.csv:3: column prompt_tokens = \"abc\": must be an integer from 1 to 1000000000"));
  CHECK(trace_error("arrival,prompt_tokens,output_tokens\n0,1,1\n") ==
        err("t.csv:1: the header lacks column arrival_s (needs arrival_s, prompt_tokens, "
            "output_tokens; found: arrival,prompt_tokens,output_tokens)"));
  CHECK(trace_error("arrival_s,prompt_tokens,output_tokens,prompt_tokens\n0,1,1,2\n") ==
        err("t.csv:1: the header names column prompt_tokens twice (fields 2 and 4)"));
  CHECK(trace_error(k_header + "0,1\n") == err("t.csv:2: 2 fields, but the header has 3 columns"));
  CHECK(trace_error(k_header + "0,1,2,3\n") ==
        err("t.csv:2: 4 fields, but the header has 3 columns"));
  CHECK(trace_error(k_header + "0,,2\n") ==
        err("t.csv:2: column prompt_tokens = \"\": must be an integer from 1 to 1000000000"));
}

TEST_CASE("catalog: negative, zero, NaN, infinite and out-of-range numbers in a trace",
          "[cli][catalog]") {
  const auto arrival = [](const std::string& v) {
    return err("t.csv:2: column arrival_s = \"" + v +
               "\": must be a finite number from 0 to 9000000000");
  };
  const auto prompt = [](const std::string& v) {
    return err("t.csv:2: column prompt_tokens = \"" + v +
               "\": must be an integer from 1 to 1000000000");
  };
  CHECK(trace_error(k_header + "-1,1,2\n") == arrival("-1"));
  CHECK(trace_error(k_header + "nan,1,2\n") == arrival("nan"));
  CHECK(trace_error(k_header + "inf,1,2\n") == arrival("inf"));
  CHECK(trace_error(k_header + "1e10,1,2\n") == arrival("1e10"));
  CHECK(trace_error(k_header + "1e999,1,2\n") == arrival("1e999"));
  CHECK(trace_error(k_header + "0,1,0\n") ==
        err("t.csv:2: column output_tokens = \"0\": must be an integer from 1 to 1000000000 "
            "(workload.trace.zero_tokens: skip drops rows with a 0, and counts them)"));
  CHECK(trace_error(k_header + "0,1000000001,2\n") == prompt("1000000001"));
  CHECK(trace_error(k_header + "0,99999999999999999999,2\n") == prompt("99999999999999999999"));
  CHECK(trace_error(k_header + "0,1.5,2\n") == prompt("1.5"));
}

TEST_CASE("catalog: an empty trace, blank lines only, a header only", "[cli][catalog]") {
  const std::string empty =
      err("t.csv: empty file (expected a header with arrival_s, prompt_tokens, output_tokens)");
  CHECK(trace_error("") == empty);
  CHECK(trace_error("\n  \n\r\n") == empty);
  CHECK(trace_error(k_header) == err("t.csv: the trace has a header but no requests"));
}

TEST_CASE("catalog: non-UTF-8 bytes and control characters are escaped, never echoed raw",
          "[cli][catalog]") {
  CHECK(trace_error(k_header + "0,\xFF\xFE"
                               "12,2\n") ==
        err("t.csv:2: column prompt_tokens = \"\\xFF\\xFE12\": must be an integer from 1 to "
            "1000000000"));
  CHECK(trace_error(k_header + "0,12\x1B[2J\x07,2\n") ==
        err("t.csv:2: column prompt_tokens = \"12\\x1B[2J\\x07\": must be an integer from 1 to "
            "1000000000"));
  // Characters that reorder the terminal's text (Trojan Source) are named, not obeyed.
  CHECK(trace_error("arrival_s,prompt_tokens,out\u202Eput_tokens\n0,1,1\n") ==
        err("t.csv:1: the header lacks column output_tokens (needs arrival_s, prompt_tokens, "
            "output_tokens; found: arrival_s,prompt_tokens,out\\u{202E}put_tokens)"));
}

TEST_CASE("catalog: a huge value is cut to 40 characters, a huge line stops the reader",
          "[cli][catalog]") {
  CHECK(trace_error(k_header + "0," + std::string(5000, '9') + ",2\n") ==
        err("t.csv:2: column prompt_tokens = \"" + std::string(40, '9') +
            "\"... (5000 bytes): must be an integer from 1 to 1000000000"));
  // One line of 2 MiB: refused at 1 MiB, without reading the rest of it into memory.
  CHECK(trace_error(k_header + "0,1," + std::string(2 << 20, '7') + "\n") ==
        err("t.csv:2: line longer than 1048576 bytes (it starts \"0,1," + std::string(36, '7') +
            "...\"): not a CSV row"));
}

TEST_CASE("catalog: a UTF-8 byte-order mark is skipped, UTF-16 is named", "[cli][catalog]") {
  const Run ok =
      run_servesim({{"c.yaml", k_trace_config}, {"t.csv", "\xEF\xBB\xBF" + k_header + "0,1,1\n"}});
  CHECK(ok.err == "");
  CHECK(ok.code == 0);
  std::string utf16 = "\xFF\xFE";
  for (char c : k_header + "0,1,1\n") utf16 += std::string{c, '\0'};
  CHECK(trace_error(utf16) == err("t.csv:1: the file is UTF-16 text (it starts with a UTF-16 "
                                  "byte-order mark); save it as UTF-8 or ASCII"));
}

TEST_CASE("catalog: unknown and misspelt config keys get a did-you-mean", "[cli][catalog]") {
  CHECK(config_error("max_num_seqs: 8", "max_num_seqs: 8\n  max_num_seq: 4") ==
        err("scheduler.max_num_seq at c.yaml:11:3: unknown key (did you mean max_num_seqs?) "
            "(valid here: chunked_prefill, fair, kind, kv_bytes_per_token, "
            "max_num_batched_tokens, max_num_seqs, policy, preemption_mode, sjf, "
            "swap_bandwidth_gb_s, swap_space_gb)"));
  CHECK(config_error("scheduler:", "schedular:") ==
        err("schedular at c.yaml:8:1: unknown key (did you mean scheduler?); scheduler (a map) "
            "is required"));
  CHECK(config_error("synthetic:", "synthetc:") ==
        err("workload at c.yaml:2:3: needs exactly one of closed_loop, mix, servegen, synthetic, "
            "trace: "
            "found synthetc (did "
            "you mean synthetic?)"));
  CHECK(config_error("kind: continuous", "kind: contiuous") ==
        err("scheduler.kind = \"contiuous\" at c.yaml:9:9: unknown \"contiuous\" (did you mean "
            "continuous?) (valid: continuous, dynamic, orca, sarathi, sglang, static, trtllm, "
            "vllm)"));
  CHECK(config_error("capacity_tokens: 1000", "capacity_tokens: 1000, max_output_token: 10") ==
        err("kv.max_output_token at c.yaml:11:44: unknown key (did you mean max_output_tokens?) "
            "(valid here: block_size, capacity_tokens, max_output_tokens, memory, offload, "
            "policy, prefix_caching)"));
  CHECK(config_error("    requests: 10\n", "") ==
        err("workload.synthetic.requests: required key missing in workload.synthetic at "
            "c.yaml:3:5 (an integer)"));
}

TEST_CASE("catalog: wrong types in a config", "[cli][catalog]") {
  CHECK(config_error("max_num_seqs: 8", "max_num_seqs: eight") ==
        err("scheduler.max_num_seqs = \"eight\" at c.yaml:10:17: must be an integer"));
  CHECK(config_error("max_num_seqs: 8", "max_num_seqs: 2.5") ==
        err("scheduler.max_num_seqs = \"2.5\" at c.yaml:10:17: must be an integer"));
  CHECK(config_error("requests: 10", "requests: [10]") ==
        err("workload.synthetic.requests = a list at c.yaml:3:15: must be an integer"));
  CHECK(config_error("kv: {policy: paged, capacity_tokens: 1000}", "kv: paged") ==
        err("kv = \"paged\" at c.yaml:11:5: must be a map"));
  CHECK(config_error("max_num_seqs: 8", "max_num_seqs: 8\n  chunked_prefill: yes") ==
        err("scheduler.chunked_prefill = \"yes\" at c.yaml:11:20: must be true or false"));
  // A list or a map as a key used to escape as yaml-cpp's "bad conversion" (exit 1).
  CHECK(config_error("kv: {", "[seed, 1]: 2\nkv: {") ==
        err("config at c.yaml:11:1: a key is a list; keys are plain names"));
}

TEST_CASE("catalog: negative, zero, NaN, infinite and out-of-range numbers in a config",
          "[cli][catalog]") {
  CHECK(config_error("max_num_seqs: 8", "max_num_seqs: -1") ==
        err("scheduler.max_num_seqs = \"-1\" at c.yaml:10:17: must be an integer from 1 to "
            "1048576"));
  const std::string rate = "workload.synthetic.arrival.rate_per_s = ";
  CHECK(config_error("rate_per_s: 2", "rate_per_s: 0") ==
        err(rate + "\"0\" at c.yaml:4:42: must be > 0 and <= 1000000000"));
  CHECK(config_error("rate_per_s: 2", "rate_per_s: .nan") ==
        err(rate + "\".nan\" at c.yaml:4:42: must be a number"));
  CHECK(config_error("rate_per_s: 2", "rate_per_s: nan") ==
        err(rate + "\"nan\" at c.yaml:4:42: must be a finite number"));
  CHECK(config_error("rate_per_s: 2", "rate_per_s: 1e999") ==
        err(rate + "\"1e999\" at c.yaml:4:42: must be a finite number"));
  CHECK(config_error("capacity_tokens: 1000",
                     "memory: {accelerator_gib: 80, utilization: 1.5, parameters: 7e9, "
                     "layers: 32, kv_heads: 8, head_dim: 128}") ==
        err("kv.memory.utilization = \"1.5\" at c.yaml:11:64: must be > 0 and <= 1"));
}

TEST_CASE("catalog: numbers too large for the simulator are refused, not wrapped",
          "[cli][catalog]") {
  // 1e300 GiB of memory overflowed to infinity and then to an undefined integer conversion;
  // no accelerator has more than 1,024 GiB, so it is refused as the unit slip it is.
  CHECK(config_error("capacity_tokens: 1000",
                     "memory: {accelerator_gib: 1e300, parameters: 13e9, layers: 40, "
                     "kv_heads: 40, head_dim: 128}") ==
        err("kv.memory.accelerator_gib = \"1e300\" at c.yaml:11:47: not a plausible size in GiB "
            "(a number > 0 and <= 1024); did you give bytes?"));
  // Arrivals past int64 nanoseconds (9.2e9 s) used to wrap to negative times.
  CHECK(config_error("rate_per_s: 2", "rate_per_s: 1e-9") ==
        err("workload.synthetic.arrival.rate_per_s = \"1e-9\" at c.yaml:4:42: 10 requests from "
            "start_s 0 at this rate arrive until 1e+10 s, past the simulator's limit of 9e+09 "
            "s"));
}

TEST_CASE("catalog: a Poisson workload that drifts past the time limit stops with a message",
          "[cli][catalog]") {
  // The expected arrival is exactly at the limit, so the config check passes, and a long
  // exponential gap carries some seeds past it (seed 2 among them).
  const std::string workload =
      "workload:\n  synthetic:\n    requests: 1\n    start_s: 1e9\n"
      "    arrival: {kind: poisson, rate_per_s: 1.25e-10}\n"
      "    prompt_tokens: {kind: fixed, value: 1}\n    output_tokens: {kind: fixed, value: 1}\n"
      "step_time: {kind: linear, base_ms: 1}\nscheduler: {kind: static, max_batch_size: 1}\n"
      "kv: {policy: paged, capacity_tokens: 1000}\n";
  CHECK(error_of({{"c.yaml", workload + "seed: 2\n"}}) ==
        err("workload.synthetic in c.yaml: request 0 would arrive at 1.971e+10 s, past the "
            "simulator's limit of 9e+09 s; raise the arrival rate or lower requests"));
  for (int seed = 3; seed <= 20; ++seed) {
    Scenario sc = build_scenario(doc_of(workload + "seed: " + std::to_string(seed) + "\n"));
    RequestSpec r;
    try {
      while (sc.components.source->next(r)) CHECK(r.arrival.seconds() <= 9.0e9);
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains("past the simulator's limit of 9e+09 s"));
    }
  }
}

TEST_CASE("catalog: control characters, non-UTF-8 and huge values in a config", "[cli][catalog]") {
  CHECK(config_error("kind: continuous", "kind: \"cont\\x1b[2Jinuous\"") ==
        err("scheduler.kind = \"cont\\x1B[2Jinuous\" at c.yaml:9:9: unknown "
            "\"cont\\x1B[2Jinuous\" (did you mean continuous?) (valid: continuous, dynamic, orca, "
            "sarathi, sglang, static, trtllm, vllm)"));
  CHECK(config_error("kind: continuous", "kind: cont\xE9") ==
        err("scheduler.kind = \"cont\\xE9\" at c.yaml:9:9: unknown \"cont\\xE9\" (valid: "
            "continuous, dynamic, orca, sarathi, sglang, static, trtllm, vllm)"));
  const std::string x40 = std::string(1, '"').append(40, 'x').append("\"... (3000 bytes)");
  CHECK(config_error("kind: continuous", "kind: " + std::string(3000, 'x')) ==
        err("scheduler.kind = " + x40 + " at c.yaml:9:9: unknown " + x40 +
            " (valid: continuous, dynamic, orca, sarathi, sglang, static, trtllm, vllm)"));
  // Found by fuzz_config: a file name's bytes were echoed raw.
  CHECK(config_error("step_time: {kind: linear, base_ms: 1}",
                     "step_time: {kind: table, points_file: p\x97.csv}") ==
        err("step_time.points_file = \"p\\x97.csv\" at c.yaml:7:39: no such points file "
            "(p\\x97.csv; relative paths are resolved against the config file's folder)"));
}

TEST_CASE("catalog: contradictory settings name both keys", "[cli][catalog]") {
  CHECK(config_error("max_num_seqs: 8", "max_num_seqs: 8\n  chunked_prefill: true") ==
        err("scheduler.chunked_prefill = \"true\" at c.yaml:11:20: chunked_prefill: true needs "
            "scheduler.max_num_batched_tokens, the chunk budget of a step"));
  CHECK(config_error("{kind: poisson, rate_per_s: 2}",
                     "{kind: fixed, rate_per_s: 2, interval_s: 0.5}") ==
        err("workload.synthetic.arrival.interval_s = \"0.5\" at c.yaml:4:55: give rate_per_s or "
            "interval_s, not both"));
  CHECK(config_error("capacity_tokens: 1000",
                     "capacity_tokens: 1000, memory: {accelerator_gib: 80, parameters: 7e9, "
                     "layers: 32, kv_heads: 8, head_dim: 128}") ==
        err("kv at c.yaml:11:5: give only one of capacity_tokens, memory (found capacity_tokens, "
            "memory)"));
  CHECK(config_error("min: 1, max: 5", "min: 5, max: 1") ==
        err("workload.synthetic.output_tokens.max = \"1\" at c.yaml:6:49: must be >= min (5)"));
  CHECK(config_error("capacity_tokens: 1000", "capacity_tokens: 1000, block_size: 2000") ==
        err("kv.block_size = \"2000\" at c.yaml:11:56: must not exceed the KV capacity (1000 "
            "tokens)"));
  CHECK(config_error("capacity_tokens: 1000", "capacity_tokens: 0") ==
        err("kv.capacity_tokens = \"0\" at c.yaml:11:38: must be an integer from 1 to "
            "1125899906842624"));
  CHECK(config_error("capacity_tokens: 1000", "capacity_tokens: 1000, block_size: 0") ==
        err("kv.block_size = \"0\" at c.yaml:11:56: must be an integer from 1 to 1048576"));
}

TEST_CASE("catalog: engine versions servesim does not know", "[cli][catalog]") {
  const std::string vllm = "kind: vllm\n  enable_prefix_caching: false\n  version: ";
  CHECK(config_error("kind: continuous\n  max_num_seqs: 8", vllm + "\"0.99.0\"") ==
        err("scheduler.version = \"0.99.0\" at c.yaml:11:12: vLLM 0.99 is not a version "
            "servesim knows (known: 0.5, 0.6, 0.7, 0.8, 0.9, 0.10, 0.11, 0.12, 0.13, 0.14, "
            "0.15, 0.16, 0.17, 0.18, 0.19; a patch release such as 0.19.1 is taken as its "
            "MAJOR.MINOR)"));
  CHECK(config_error("kind: continuous\n  max_num_seqs: 8", vllm + "\"0.19-1\"") ==
        err("scheduler.version = \"0.19-1\" at c.yaml:11:12: give the engine version as "
            "MAJOR.MINOR[.PATCH], e.g. \"0.19.0\" (known vLLM versions: 0.5, 0.6, 0.7, 0.8, "
            "0.9, 0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18, 0.19)"));
  CHECK(config_error("kind: continuous\n  max_num_seqs: 8", "kind: sglang\n  version: \"0.45\"") ==
        err("scheduler.version = \"0.45\" at c.yaml:10:12: SGLang 0.45 is not a version "
            "servesim knows (known: 0.3, 0.4, 0.5; a patch release such as 0.5.1 is taken as "
            "its MAJOR.MINOR)"));
}

TEST_CASE("catalog: a step-time table with a negative, zero or missing latency", "[cli][catalog]") {
  const std::string config =
      replace_all(k_synthetic_config, "step_time: {kind: linear, base_ms: 1}",
                  "step_time: {kind: table, points_file: p.csv}");
  const auto table_error = [&](const std::string& csv) {
    return error_of({{"c.yaml", config}, {"p.csv", csv}});
  };
  CHECK(table_error("batch,ms\n1,6.3\n8,-9.3\n") ==
        err("p.csv:3: column ms = \"-9.3\": must be a finite number > 0"));
  CHECK(table_error("batch,ms\n1,0\n") ==
        err("p.csv:2: column ms = \"0\": must be a finite number > 0"));
  CHECK(table_error("batch,ms\n1,nan\n") ==
        err("p.csv:2: column ms = \"nan\": must be a finite number > 0"));
  CHECK(table_error("batch,ms\n1,6.3\n8,\n") ==
        err("p.csv:3: column ms = \"\": must be a finite number > 0"));
  CHECK(table_error("batch,step_ms\n1,6.3\n") ==
        err("p.csv:1: the header lacks column ms (needs batch, ms; found: batch,step_ms)"));
}

TEST_CASE("catalog: requests that can never fit", "[cli][catalog]") {
  CHECK(config_error("capacity_tokens: 1000",
                     "memory: {accelerator_gib: 16, parameters: 13e9, layers: 40, kv_heads: 40, "
                     "head_dim: 128}") ==
        err("kv.memory.parameters = \"13e9\" at c.yaml:11:63: the weights (26.00 GB) do not fit "
            "in 15.46 GB usable accelerator memory (accelerator_gib x utilization 0.9)"));
  // A request larger than the KV cache is rejected, as a server would; the run says why.
  const Run r =
      run_servesim({{"c.yaml", k_trace_config}, {"t.csv", k_header + "0,900,200\n0.5,10,10\n"}},
                   {"run", "{dir}/c.yaml", "--out", "{dir}/o"});
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("requests   1 finished, 1 rejected"));
  CHECK_THAT(r.out, Catch::Contains("\nrejected   request 0: needs 1104 KV tokens at its peak but "
                                    "the KV capacity is 992 tokens (each reason is in "
                                    "o/requests.csv)\n"));
}

TEST_CASE("catalog: an output directory that cannot be written", "[cli][catalog]") {
  const Run file = run_servesim({{"c.yaml", k_synthetic_config}, {"o", "a file"}},
                                {"run", "{dir}/c.yaml", "--out", "{dir}/o"});
  CHECK(file.code == 2);
  CHECK(file.err == err("--out \"o\": is a file; --out is a folder in every subcommand: run writes "
                        "DIR/summary.json (docs/cli.md#conventions)"));
  const Run proc = run_servesim({{"c.yaml", k_synthetic_config}},
                                {"run", "{dir}/c.yaml", "--out", "/proc/servesim-out"});
  CHECK(proc.code == 2);
  CHECK(proc.err == err("--out /proc/servesim-out: cannot create the output directory (No such "
                        "file or directory)"));
}

TEST_CASE("catalog: config files that are missing, empty, not YAML or not a map",
          "[cli][catalog]") {
  CHECK(run_servesim({}, {"run", "{dir}/nope.yaml"}).err ==
        err("nope.yaml: cannot open config file"));
  CHECK(run_servesim({}, {"run", "{dir}/."}).err == err(".: is a directory, not a config file"));
  CHECK(error_of({{"c.yaml", ""}}) ==
        err("kv: required key missing in the top level at c.yaml (a map)"));
  CHECK(error_of({{"c.yaml", "- 1\n- 2\n"}}) ==
        err("c.yaml: the top level must be a map of sections (workload, step_time, scheduler, kv, "
            "seed)"));
  CHECK(error_of({{"c.yaml", "scheduler: {kind: static\n"}}) ==
        err("c.yaml:2:1: not valid YAML: end of map flow not found"));
  // A tab is named on its line, the indenting one before the valid one after `seed:`.
  CHECK(error_of({{"c.yaml", "seed:\t1\n\tkv: 2\n"}}) ==
        err("c.yaml:2:1: not valid YAML: line 2 column 1: a tab character; YAML indents with "
            "spaces (the parser said: illegal tab when looking for indentation)"));
  CHECK(error_of({{"c.yaml", "scheduler:\n\tkind: static\n"}}) ==
        err("c.yaml:2:1: not valid YAML: line 2 column 1: a tab character; YAML indents with "
            "spaces (the parser said: illegal map value)"));
  // A zero-width space (U+200B) that breaks a flow map is named where it is.
  CHECK_THAT(error_of({{"c.yaml", "scheduler: {kind: static,\xE2\x80\x8B max_batch_size 1\n"}}),
             Catch::Contains("line 1 column 26: a zero-width space (U+200B); retype it as a "
                             "plain space or delete it"));
  CHECK(error_of({{"c.yaml", std::string((16 << 20) + 1, '#')}}) ==
        err("c.yaml: larger than 16777216 bytes; not a scenario config"));
}

TEST_CASE("catalog: bad --set overrides", "[cli][catalog]") {
  const auto set_error = [](const std::string& assignment) {
    return error_of({{"c.yaml", k_synthetic_config}}, {"--set", assignment});
  };
  CHECK(set_error("novalue") == err("--set novalue: expected key.path=value"));
  CHECK(set_error("scheduler..kind=static") ==
        err("--set scheduler..kind=static: empty key in path"));
  CHECK(set_error("scheduler={kind: static") ==
        err("--set scheduler={kind: static: value is not valid YAML: end of map flow not found"));
  CHECK(set_error("scheduler.kind.x=1") ==
        err("--set scheduler.kind.x=1: scheduler.kind is \"continuous\", not a map"));
  CHECK(set_error("scheduler.max_num_seq=4") ==
        err("scheduler.max_num_seq at c.yaml (from --set scheduler.max_num_seq): unknown key (did "
            "you mean max_num_seqs?) (valid here: chunked_prefill, fair, kind, "
            "kv_bytes_per_token, max_num_batched_tokens, max_num_seqs, policy, preemption_mode, "
            "sjf, swap_bandwidth_gb_s, swap_space_gb)"));
  CHECK(set_error("scheduler.kind=\x1b]0;pwned\x07") ==
        err("scheduler.kind = \"\\x1B]0;pwned\\x07\" at c.yaml (from --set scheduler.kind): "
            "unknown \"\\x1B]0;pwned\\x07\" (valid: continuous, dynamic, orca, sarathi, sglang, "
            "static, trtllm, vllm)"));
}

TEST_CASE("printable: input echoed into messages is escaped and cut", "[cli][catalog]") {
  CHECK(printable("plain text") == "plain text");
  CHECK(printable("d\xC3\xA9j\xC3\xA0 vu \xE2\x9C\x93") == "d\xC3\xA9j\xC3\xA0 vu \xE2\x9C\x93");
  CHECK(printable("a\tb\nc\x7F") == "a\\x09b\\x0Ac\\x7F");
  CHECK(printable("\xC3(\xE2\x82\xF0\x9F\x98") == "\\xC3(\\xE2\\x82\\xF0\\x9F\\x98");  // cut short
  CHECK(printable("\xC0\xAF\xED\xA0\x80") == "\\xC0\\xAF\\xED\\xA0\\x80");  // overlong, surrogate
  CHECK(printable("\xC2\x85 \xE2\x80\xAE \xEF\xBB\xBF") == "\\u{0085} \\u{202E} \\u{FEFF}");
  CHECK(printable("say \"hi\" \\ bye") == "say \\\"hi\\\" \\\\ bye");
  CHECK(printable("abcdef", 3) == "abc...");
  CHECK(printable("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9\xC3\xA9\xC3\xA9...");
  CHECK(quote_input("abc") == "\"abc\"");
  CHECK(quote_input("abcdef", 3) == "\"abc\"... (6 bytes)");
  CHECK(quote_input("abc", 3) == "\"abc\"");
}

TEST_CASE("csv trace: the stream reader gives what the file reader gives", "[traces]") {
  const std::string path = std::string(SERVESIM_SOURCE_DIR) + "/traces/data/tiny.csv";
  std::ifstream file(path, std::ios::binary);
  const auto from_stream = read_csv_trace(file, "tiny.csv");
  const auto from_path = read_csv_trace(path);
  REQUIRE(from_stream.size() == from_path.size());
  for (size_t i = 0; i < from_path.size(); ++i) {
    CHECK(from_stream[i].id == from_path[i].id);
    CHECK(from_stream[i].arrival == from_path[i].arrival);
  }
  std::istringstream bad(k_header + "0,1,x\n");
  CHECK_THROWS_WITH(read_csv_trace(bad, "<stdin>"),
                    "<stdin>:2: column output_tokens = \"x\": must be an integer from 1 to "
                    "1000000000");
}

}  // namespace t_cli_bad_input_test
