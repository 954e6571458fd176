// `servesim trace stats` (a trace's figures) and `servesim trace gen` (a workload as a trace).
// Every figure is defined in docs/workloads.md, "Inspecting and generating traces".
#include "cli/trace_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/cli_options.h"
#include "cli/sim_options.h"
#include "core/config.h"
#include "core/csv_columns.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/output_file.h"
#include "metrics/trace_stats.h"
#include "traces/trace_reader.h"
#include "traces/trace_rows.h"
#include "traces/workload_source.h"

namespace po = boost::program_options;

namespace servesim {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t k_ns_per_s = 1'000'000'000;

double seconds(int64_t ns) { return static_cast<double>(ns) / static_cast<double>(k_ns_per_s); }

TraceOptions trace_options(const po::variables_map& vm, const std::string& path) {
  const std::string name = vm["input-format"].as<std::string>();
  const std::vector<std::string> names = trace_format_choices();
  const std::optional<TraceFormat> named = trace_format_named(name);
  if (!named && name != "auto")
    throw InputError(fmt::format("--input-format {}: unknown{} (valid: {})", quote_input(name),
                                 did_you_mean(name, names), join_names(names)));
  TraceOptions o;
  o.format = named ? *named : detect_trace_format(path);
  o.sort = vm["sort"].as<bool>();
  o.sort_hint = "--sort";
  o.skip_zero_tokens = vm["skip-zero-tokens"].as<bool>();
  if (vm.count("hash-block-tokens")) {
    const std::string why = trace_option_mismatch(o.format, "hash_block_tokens");
    if (!why.empty()) throw InputError("--hash-block-tokens: " + why);
    o.hash_block_tokens = static_cast<int32_t>(vm["hash-block-tokens"].as<int64_t>());
  }
  if (vm.count("source-model")) {
    const std::string why = trace_option_mismatch(o.format, "model");
    if (!why.empty()) throw InputError("--source-model: " + why);
    o.model = vm["source-model"].as<std::string>();
    if (o.model.empty())
      throw InputError("--source-model: must name a model (the Model column's value)");
  }
  return o;
}

std::string num(const Json& v, const char* spec = "{:.3f}") {
  return v.is_null() ? "-" : fmt::format(fmt::runtime(spec), v.get<double>());
}
std::string pct(const Json& v) {
  return v.is_null() ? "-" : fmt::format("{:.2f}%", 100 * v.get<double>());
}

std::string stats_table(const Json& j) {
  std::string s;
  auto row = [&s](const char* label, const std::string& text) {
    s += fmt::format("{:<12}{}\n", label, text);
  };
  auto count = [](const Json& v) { return v.get<int64_t>(); };
  row("trace",
      fmt::format("{} ({})", j["trace"].get<std::string>(), j["format"].get<std::string>()));
  row("requests",
      fmt::format("{}, arrivals {} to {} s ({} s)", count(j["requests"]), num(j["first_arrival_s"]),
                  num(j["last_arrival_s"]), num(j["duration_s"])));
  row("rate", num(j["mean_rate_per_s"], "{:.4f}") + " requests/s");
  row("gaps", fmt::format("mean {} s, CV {}", num(j["gap_mean_s"], "{:.4f}"), num(j["gap_cv"])));
  const std::string window = num(j["window_s"], "{:g}") + " s";
  if (count(j["windows"]) == 0) {
    row("windows", fmt::format("the trace spans less than one {} window", window));
  } else {
    const int64_t left_out = count(j["window_requests_left_out"]);
    row("windows", fmt::format("{} whole windows of {} (the {} request{} after them left out)",
                               count(j["windows"]), window, left_out, left_out == 1 ? "" : "s"));
    row("", fmt::format("requests a window: mean {}, max {}, peak/mean {}, index of dispersion {}",
                        num(j["window_requests_mean"], "{:.2f}"),
                        num(j["window_requests_max"], "{:.0f}"), num(j["window_peak_to_mean"]),
                        num(j["window_index_of_dispersion"])));
  }
  s += fmt::format("\n{:<12}{:>11}{:>11}{:>11}{:>11}{:>11}{:>14}\n", "tokens", "mean", "p50", "p90",
                   "p99", "max", "total");
  for (const char* col : {"prompt", "output"}) {
    const Json& t = j[std::string(col) + "_tokens"];
    s += fmt::format("{:<12}", col);
    for (const char* k : {"mean", "p50", "p90", "p99"})
      s += fmt::format("{:>11.1f}", t[k].get<double>());
    s += fmt::format("{:>11}{:>14}\n", count(t["max"]), count(t["total"]));
  }
  s += fmt::format("{:<12}{:>69}\n", "both", count(j["total_tokens"]));
  if (const Json& p = j["prefix_reuse"]; !p.is_null()) {
    s += fmt::format(
        "\nprefix reuse (ideal, with an infinite cache): {} requests with hash ids, {} "
        "distinct prefixes\n",
        count(p["requests_with_hashes"]), count(p["distinct_prefixes"]));
    row("blocks", fmt::format("{} of {} seen before ({})", count(p["hit_blocks"]),
                              count(p["blocks"]), pct(p["block_hit_rate"])));
    row("tokens", fmt::format("{} of {} hashed ({}; {} of all prompt tokens)",
                              count(p["hit_tokens"]), count(p["hashed_tokens"]),
                              pct(p["token_hit_rate"]), pct(p["hit_fraction_of_prompt_tokens"])));
  }
  if (const Json& ss = j["sessions"]; !ss.is_null())
    row("sessions",
        fmt::format("{} sessions hold {} requests: {} turns each on average, at most {}",
                    count(ss["sessions"]), count(ss["requests_in_sessions"]),
                    num(ss["turns_mean"], "{:.2f}"), count(ss["turns_max"])));
  for (const auto& [name, n] : j["counters"].items())
    row("skipped", fmt::format("{} {}", count(n), name));
  if (!j["percentiles_exact"].get<bool>())
    s += "\n(past 2^21 requests, percentiles are within 0.05% of exact: sim/quantiles.h)\n";
  return s;
}

/// Whether a servesim CSV's header names a column that makes rows depend on earlier replies.
bool has_dependency_columns(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string header;
  if (!std::getline(in, header)) return false;
  for (const std::string& cell : csv_fields(header, path, 1))
    if (cell == "parent_id" || cell == "session_id") return true;
  return false;
}

}  // namespace

CommandLine trace_stats_command_line() {
  CommandLine cl("trace stats", "FILE [options]",
                 "Prints a trace's rate, burstiness, token lengths and prefix reuse.");
  cl.positional("file", 1, "FILE", "the trace");
  cl.out_option(nullptr, "trace_stats.json (every figure)");
  // clang-format off
  cl.options()
      ("input-format", po::value<std::string>()->default_value("auto"), "the trace's format")
      ("sort", po::bool_switch(), "load and sort by arrival instead of streaming")
      ("skip-zero-tokens", po::bool_switch(), "drop and count rows with 0 tokens")
      ("source-model", po::value<std::string>(), k_source_model_help);
  // clang-format on
  cl.int_option("hash-block-tokens", 1, 1 << 20, "mooncake: tokens per hash id (512)");
  cl.real_option("window-s", 1e-9, 9e9, "seconds", "burstiness window", 60.0);
  cl.require("file", "give a trace file");
  // --format and --model select within the source data here; elsewhere --model is a catalogue
  // model, and an input's format is --input-format on every command.
  cl.renamed("format", "input-format").renamed("model", "source-model");
  return cl;
}

CommandLine trace_gen_command_line() {
  CommandLine cl("trace gen", "CONFIG.yaml [options]",
                 "Writes a config's workload as a servesim CSV trace: DIR/trace.csv.");
  cl.positional("config", 1, "CONFIG.yaml", "scenario YAML (only workload and seed are read)");
  cl.out_option("servesim-trace", "trace.csv (the servesim CSV trace)");
  add_scenario_options(cl);
  cl.require("config", "give a scenario config");
  return cl;
}

namespace {

int trace_stats(const std::vector<std::string>& args, std::ostream& out_stream,
                const volatile std::sig_atomic_t* interrupt) {
  const std::optional<po::variables_map> parsed =
      trace_stats_command_line().parse(args, out_stream);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const CommonOptions c = common_options(vm);
  std::ostream sink(nullptr);  // the table, unless -q or --json
  std::ostream& out = c.tables() ? out_stream : sink;
  const double window_s = vm["window-s"].as<double>();
  const std::string path = vm["file"].as<std::string>();
  // A folder or a pipe cannot be read twice (the format is told from the first line).
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not a trace file", printable(path, 1024)));
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InputError(fmt::format("{}: not a regular file", printable(path, 1024)));
  // The --out target is checked before the trace is read, not after.
  const std::string dir = out_folder(vm, "trace stats", "trace_stats.json");
  const std::string json_path =
      dir.empty() ? "" : (std::filesystem::path(dir) / "trace_stats.json").string();
  std::optional<OutputFile> json;
  if (!dir.empty()) json.emplace(json_path, "--out");
  TraceOptions options = trace_options(vm, path);
  options.dependencies = false;  // every row counts, as written; sessions are only counted
  // A session or dependency trace's later turns carry an arrival_s that is only a lower bound
  // (often 0): their rows are out of order by design, so they are sorted rather than refused.
  const bool dependent =
      !options.sort && options.format == "servesim_csv" && has_dependency_columns(path);
  if (dependent) options.sort = true;

  auto source = open_trace(path, options);
  TraceStats stats(std::llround(window_s * 1e9));
  for (RequestSpec r; source->next(r);) {
    check_interrupt(interrupt);
    stats.add(r);
  }
  Json j{{"trace", printable(path, 1024)}, {"format", trace_format_name(options.format)}};
  j.update(stats.figures());
  j["counters"] = Json::object();
  for (const auto& [name, count] : source->counters()) j["counters"][name] = count;
  out << stats_table(j);
  if (dependent)
    out << "\nnote        a session or dependency trace (request_id/parent_id/session_id columns): "
           "its rows were sorted by arrival_s as written; a dependent turn arrives only after its "
           "parent's reply, which only `servesim run` knows\n";
  if (json) {
    json->stream() << j.dump(2) << "\n";
    json->commit();
    out << "\nwrote " << json_path << "\n";
  }
  if (c.json) {
    Json doc{{"command", "trace stats"}};
    if (!dir.empty()) doc["out"] = dir;
    doc["files"] = dir.empty() ? Json::array() : Json::array({json_path});
    doc["stats"] = j;
    print_json(out_stream, c, doc);
  }
  return 0;
}

/// The workload and seed of a config; other sections of a full scenario are dropped unread.
std::unique_ptr<WorkloadSource> workload_of(const std::shared_ptr<Document>& doc) {
  YAML::Node root = doc->root();
  if (root.IsMap())
    for (const char* section :
         {"step_time", "scheduler", "kv", "slo", "cluster", "benchmark", "api"})
      root.remove(section);
  const Cfg cfg = Cfg::root(doc);
  const auto seed =
      static_cast<uint64_t>(cfg.get_int("seed", 1, {0, std::numeric_limits<int64_t>::max()}));
  auto source = make_workload(cfg.child("workload"), seed);
  doc->check_all_read();
  return source;
}

struct Written {
  int64_t requests = 0, first_ns = 0, last_ns = 0;
  int64_t streams = 0;            ///< requests with a content stream, which is lost
  int32_t hash_block_tokens = 0;  ///< of the prefix_hash column, when written
};

/// Every request of `source` as a servesim CSV row, arrivals exact to the nanosecond. When the
/// first request has block hashes, a prefix_hash column carries every request's.
Written write_csv(WorkloadSource& source, std::ostream& csv,
                  const volatile std::sig_atomic_t* interrupt) {
  Written w;
  RequestSpec r;
  const bool any = source.next(r);
  const bool hashes = any && !r.block_hashes.empty();
  if (hashes) w.hash_block_tokens = r.hash_block_tokens;
  // The header is servesim_csv's row of the format table: its columns, then its hash column.
  const TraceFormatSpec& spec = trace_format_spec("servesim_csv");
  csv << fmt::format("{}", fmt::join(spec.signature, ","));
  if (hashes) csv << ',' << spec.hash_column;
  csv << '\n';
  for (bool more = any; more; more = source.next(r), ++w.requests) {
    check_interrupt(interrupt);
    const int64_t t = r.arrival.count_ns();
    if (t < 0) throw std::logic_error("trace gen: a workload yielded a negative arrival");
    if (w.requests == 0) w.first_ns = t;
    w.last_ns = t;
    if (r.content_stream != 0) ++w.streams;
    csv << fmt::format("{}.{:09},{},{}", t / k_ns_per_s, t % k_ns_per_s, r.prompt_tokens,
                       r.output_tokens);
    if (hashes) {
      if (!r.block_hashes.empty() && r.hash_block_tokens != w.hash_block_tokens)
        throw InputError(fmt::format(
            "trace gen: request {} has {}-token hash blocks, the first had {}: one prefix_hash "
            "column cannot hold both",
            r.id, r.hash_block_tokens, w.hash_block_tokens));
      csv << fmt::format(",{}", fmt::join(r.block_hashes, ";"));
    }
    csv << '\n';
  }
  return w;
}

int trace_gen(const std::vector<std::string>& args, std::ostream& out_stream,
              const volatile std::sig_atomic_t* interrupt) {
  const std::optional<po::variables_map> parsed = trace_gen_command_line().parse(args, out_stream);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const CommonOptions c = common_options(vm);
  std::ostream sink(nullptr);  // the lines, unless -q or --json
  std::ostream& out = c.tables() ? out_stream : sink;
  const std::string dir = out_folder(vm, "trace gen", "trace.csv");
  const std::string path = (std::filesystem::path(dir) / "trace.csv").string();
  const std::vector<std::string> sets = overrides(vm);
  const auto doc = Document::load_file(vm["config"].as<std::string>());
  for (const auto& a : sets) doc->apply_override(a);
  apply_requests(vm, *doc);
  const auto source = workload_of(doc);  // a bad config stops here, before any output
  if (source->reactive())
    throw InputError(fmt::format(
        "trace gen: {}'s workload makes requests as replies leave the server (sessions, "
        "dependencies or closed-loop users), so its arrivals are not known before a run; "
        "`servesim run` writes the arrivals it had to requests.csv",
        doc->file()));

  OutputFile csv(path, "--out");
  const Written w = write_csv(*source, csv.stream(), interrupt);
  csv.commit();
  out << fmt::format("wrote {} requests, arrivals {:.3f} to {:.3f} s, to {}\n", w.requests,
                     seconds(w.first_ns), seconds(w.last_ns), path);
  Json counters = Json::object();
  for (const auto& [counter, n] : source->counters()) counters[counter] = n;
  for (const auto& [counter, n] : source->counters()) out << fmt::format("  {} {}\n", n, counter);
  if (w.hash_block_tokens != 0 && w.hash_block_tokens != TraceOptions{}.hash_block_tokens)
    out << fmt::format(
        "note: prefix_hash holds one hash per {} tokens; replay it with "
        "workload.trace.hash_block_tokens: {}\n",
        w.hash_block_tokens, w.hash_block_tokens);
  if (w.streams > 0)
    out << fmt::format(
        "note: {} requests shared a conversation's token stream, which servesim CSV has no "
        "column for; it is not written\n",
        w.streams);
  if (c.json)
    print_json(out_stream, c,
               {{"command", "trace gen"},
                {"out", dir},
                {"files", {path}},
                {"requests", w.requests},
                {"first_arrival_s", w.requests ? seconds(w.first_ns) : 0.0},
                {"last_arrival_s", w.requests ? seconds(w.last_ns) : 0.0},
                {"hash_block_tokens", w.hash_block_tokens},
                {"content_streams_dropped", w.streams},
                {"counters", counters}});
  return 0;
}

}  // namespace

int cmd_trace(const std::vector<std::string>& args, std::ostream& out,
              const volatile std::sig_atomic_t* interrupt) {
  const std::vector<std::string> subcommands{"gen", "stats"};
  if (args.empty()) throw InputError("trace: give a subcommand (valid: gen, stats)");
  if (args[0] == "--help" || args[0] == "-h") {
    const CommandLine stats = trace_stats_command_line(), gen = trace_gen_command_line();
    out << fmt::format(
        "usage: servesim {} {}\n       servesim {} {}\n\n  stats  {}\n  gen    {}\n\n"
        "`servesim trace stats --help` and `servesim trace gen --help` list the options.\n",
        stats.command(), stats.synopsis(), gen.command(), gen.synopsis(), stats.summary(),
        gen.summary());
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "stats") return trace_stats(rest, out, interrupt);
  if (args[0] == "gen") return trace_gen(rest, out, interrupt);
  throw InputError(fmt::format("trace: unknown subcommand {}{} (valid: gen, stats)",
                               quote_input(args[0]), did_you_mean(args[0], subcommands)));
}

}  // namespace servesim
