// workload.trace: the config section, and telling a trace's format from its first line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/csv_columns.h"
#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == s.npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

/// The names on a first line: a CSV header's fields, or a JSON object's keys. `json` says which.
std::vector<std::string> names_on(std::string_view line, bool& json) {
  std::vector<std::string> names;
  json = !line.empty() && line.front() == '{';
  if (json) {
    // A line that does not parse goes to a JSON reader, which says where it breaks.
    nlohmann::json obj;
    try {
      obj = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    } catch (const nlohmann::json::exception&) {
      obj = nlohmann::json::value_t::discarded;
    }
    if (obj.is_discarded()) return {"input_toks"};
    if (obj.is_object())
      for (const auto& item : obj.items()) names.push_back(item.key());
    return names;
  }
  // Quoted names ("arrival_s") as RFC 4180 writes them; a header whose quoting is broken is
  // split at its commas, and the reader then names the fault with the file and line.
  try {
    return csv_fields(line, "", 1);
  } catch (const InputError&) {
  }
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    names.emplace_back(trim(line.substr(start, comma == line.npos ? line.npos : comma - start)));
    if (comma == line.npos) return names;
    start = comma + 1;
  }
}

[[noreturn]] void unknown_format(const std::string& name, size_t line_no, std::string_view line) {
  std::string known;
  for (const TraceFormatSpec& s : trace_format_specs())
    known += fmt::format("{}{}", known.empty() ? "" : "; ", s.description);
  throw InputError(
      fmt::format("{}:{}: cannot tell the trace format from this line (\"{}\"); "
                  "known formats: {}. Set workload.trace.format to name one",
                  name, line_no, printable(line, 100), known));
}

}  // namespace

// A first line sharing the most names with one format's signature picks it, so that a header with
// a misspelt column still reaches its reader, whose message says which column is missing.
const std::vector<TraceFormatSpec>& trace_format_specs() {
  static const std::vector<TraceFormatSpec> k{
      {"servesim_csv",
       false,
       {"arrival_s", "prompt_tokens", "output_tokens"},
       "servesim_csv (CSV header arrival_s, prompt_tokens, output_tokens)",
       &make_servesim_csv_rows,
       "servesim CSV",
       "prefix_hash",
       false},
      {"azure",
       false,
       {"TIMESTAMP", "ContextTokens", "GeneratedTokens"},
       "azure (CSV header TIMESTAMP, ContextTokens, GeneratedTokens)",
       &make_azure_rows,
       "azure traces",
       nullptr,
       false},
      {"burstgpt",
       false,
       {"Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type"},
       "burstgpt (CSV header Timestamp, Model, Request tokens, Response tokens, ...)",
       &make_burstgpt_rows,
       "burstgpt traces",
       nullptr,
       true},
      {"vllm_jsonl",
       true,
       {"input_toks", "output_toks", "arrival_time"},
       "vllm_jsonl (JSON lines with input_toks, output_toks, arrival_time)",
       &make_vllm_jsonl_rows,
       "vllm_jsonl traces",
       nullptr,
       false},
      {"mooncake",
       true,
       {"timestamp", "input_length", "output_length", "hash_ids"},
       "mooncake (JSON lines with timestamp, input_length, output_length, hash_ids)",
       &make_mooncake_rows,
       "mooncake traces",
       "hash_ids",
       false},
      // ShareGPT is one JSON array, not lines: never detected, named by format: sharegpt.
      {"sharegpt",
       true,
       {"conversations"},
       "sharegpt (one JSON array of entries with conversations; format: sharegpt)",
       &make_sharegpt_rows,
       "sharegpt datasets",
       nullptr,
       false},
      {"vidur",
       false,
       {"arrived_at", "num_prefill_tokens", "num_decode_tokens"},
       "vidur (CSV header arrived_at, num_prefill_tokens, num_decode_tokens)",
       &make_vidur_rows,
       "vidur traces",
       nullptr,
       false},
  };
  return k;
}

const TraceFormatSpec& trace_format_spec(const TraceFormat& f) {
  for (const TraceFormatSpec& s : trace_format_specs())
    if (f == s.name) return s;
  throw InputError(fmt::format("unknown trace format {} (valid: {})", quote_input(f),
                               fmt::join(trace_format_choices(), ", ")));
}

const char* trace_format_name(const TraceFormat& f) { return trace_format_spec(f).name; }

std::vector<std::string> trace_format_choices() {
  std::vector<std::string> names{"auto", "csv"};
  for (const TraceFormatSpec& s : trace_format_specs()) names.emplace_back(s.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<TraceFormat> trace_format_named(const std::string& name) {
  if (name == "csv") return TraceFormat("servesim_csv");
  for (const TraceFormatSpec& s : trace_format_specs())
    if (name == s.name) return TraceFormat(s.name);
  return std::nullopt;
}

std::string trace_option_mismatch(const TraceFormat& f, const std::string& option) {
  const TraceFormatSpec& spec = trace_format_spec(f);
  if (option == "model") {
    if (spec.model_column) return {};
    std::vector<std::string> with;
    for (const TraceFormatSpec& s : trace_format_specs())
      if (s.model_column) with.emplace_back(s.label);
    return fmt::format("only {} have a Model column; this trace is read as {}",
                       fmt::join(with, " and "), spec.name);
  }
  if (spec.hash_column) return {};
  // Named in the order a reader meets them most: JSON traces first, then servesim's own CSV.
  std::vector<std::string> with;
  for (auto it = trace_format_specs().rbegin(); it != trace_format_specs().rend(); ++it)
    if (it->hash_column) with.push_back(fmt::format("{} ({})", it->label, it->hash_column));
  return fmt::format("only {} have block hashes; this trace is read as {}",
                     fmt::join(with, " and "), spec.name);
}

TraceFormat detect_trace_format(const std::string& path) {
  const std::string name = printable(path, 1024);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open trace file", name));
  std::string line;
  size_t line_no = 0;
  while (
      read_bounded_line(in, line, CsvColumns::k_max_line_bytes, name, line_no + 1, "trace line")) {
    if (++line_no == 1) check_byte_order_mark(line, name);
    const std::string_view first = trim(line);
    if (first.empty()) continue;
    bool json = false;
    const std::vector<std::string> names = names_on(first, json);
    const TraceFormatSpec* best = nullptr;
    long best_score = 0;
    for (const TraceFormatSpec& s : trace_format_specs()) {
      if (s.json != json) continue;
      const long score = std::count_if(names.begin(), names.end(), [&](const std::string& n) {
        return std::find(s.signature.begin(), s.signature.end(), n) != s.signature.end();
      });
      if (score > best_score) best = &s, best_score = score;
    }
    if (!best) unknown_format(name, line_no, first);
    return best->name;
  }
  // Nothing but blank lines: the reader the file's name suggests says what it expected.
  return std::filesystem::path(path).extension() == ".jsonl" ? "vllm_jsonl" : "servesim_csv";
}

std::unique_ptr<WorkloadSource> make_trace(const Cfg& c, uint64_t /*seed*/) {
  const std::string path = c.existing_file("path", "trace file");
  const std::string format = c.get_choice("format", "auto", trace_format_choices());
  TraceOptions o;
  o.format = format == "auto" ? detect_trace_format(path) : *trace_format_named(format);
  o.sort = c.get_bool("sort", false);
  o.skip_zero_tokens = c.get_choice("zero_tokens", "error", {"error", "skip"}) == "skip";
  if (c.has("hash_block_tokens")) {
    const std::string why = trace_option_mismatch(o.format, "hash_block_tokens");
    if (!why.empty()) c.fail("hash_block_tokens", why);
    o.hash_block_tokens = static_cast<int32_t>(c.get_int("hash_block_tokens", {1, 1 << 20}));
  }
  if (c.has("model")) {
    const std::string why = trace_option_mismatch(o.format, "model");
    if (!why.empty()) c.fail("model", why);
    o.model = c.get_string("model");
    if (o.model.empty()) c.fail("model", "must name a model (the Model column's value)");
  }
  return open_trace(path, o);
}

}  // namespace servesim
