#pragma once
// Trace files as workload sources, in every format servesim reads (docs/workloads.md).
//
// A trace is read lazily, one line per request: memory does not grow with its length. Rows must
// come in non-decreasing arrival order; a row that goes back in time is an InputError (naming
// the file, the line, its arrival and the previous row's) unless `sort` is set, which loads the
// whole trace and stable-sorts it by arrival. Request ids are 0, 1, 2, ... in file order over
// the rows kept. Arrivals are taken relative to the first request (after sorting, the earliest),
// except in servesim's own CSV, whose arrival_s is used as it is.
//
// A servesim CSV with dependency columns (session_id, parent_id, think_s) is the exception to
// streaming: it is loaded whole, and a request that depends on others arrives only once they
// have left the engine (traces/dependent_trace.cpp; docs/workloads.md, "Sessions").
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "traces/workload_source.h"

namespace servesim {

/// A trace format is its name, the key of its row in trace_format_specs() (traces/trace_rows.h):
/// "azure", "burstgpt", "mooncake", "servesim_csv", "sharegpt", "vidur", "vllm_jsonl". A new
/// format is its reader file and one row of that table; nothing else names it.
using TraceFormat = std::string;

struct TraceOptions {
  TraceFormat format = "servesim_csv";
  /// Load everything and stable-sort by arrival, instead of streaming and refusing rows that go
  /// back in time.
  bool sort = false;
  /// How the reader asks for `sort` where it is set: the message about a row that goes back in
  /// time suggests it ("trace stats --sort" for the command line).
  std::string sort_hint = "workload.trace.sort: true";
  /// Drop (and count) rows with 0 prompt or output tokens, instead of stopping at them.
  bool skip_zero_tokens = false;
  /// Mooncake: tokens per hash id (the trace's prompt block size).
  int32_t hash_block_tokens = 512;
  /// BurstGPT: keep only rows whose Model is this (empty keeps all); the others are counted.
  std::string model;
  /// servesim CSV with session_id / parent_id / think_s: replay the dependencies (a request
  /// arrives after its parents' replies). false streams every row as an independent request
  /// (trace stats), keeping RequestSpec::session.
  bool dependencies = true;
};

/// The name used in configs and messages ("azure", "servesim_csv", ...).
[[nodiscard]] const char* trace_format_name(const TraceFormat& f);

/// What `workload.trace.format` and `trace stats --input-format` take, sorted: "auto", "csv" (the
/// same as servesim_csv) and every format's name.
[[nodiscard]] std::vector<std::string> trace_format_choices();
/// The format a name stands for; nullopt for "auto" and for a name not in the choices.
[[nodiscard]] std::optional<TraceFormat> trace_format_named(const std::string& name);
/// Why an option that only some formats take ("hash_block_tokens", "model") does not apply to a
/// trace read as `f` ("only mooncake traces (hash_ids) and ... have block hashes; this trace is
/// read as azure"), or "" when it applies.
[[nodiscard]] std::string trace_option_mismatch(const TraceFormat& f, const std::string& option);

/// Tells the format from the file's first non-blank line: a CSV header's column names, or the
/// keys of a JSON object. An empty file counts as servesim_csv (vllm_jsonl when it ends in
/// .jsonl), so that its reader names what was expected. Throws InputError listing the known
/// formats when the line matches none.
[[nodiscard]] TraceFormat detect_trace_format(const std::string& path);

/// Opens `path` in the given format. Header errors and an empty trace throw here; errors in
/// later rows throw from next(), when the row is reached.
[[nodiscard]] std::unique_ptr<WorkloadSource> open_trace(const std::string& path,
                                                         const TraceOptions& options);
/// The same over a stream; `name` stands for the file in messages. REQUIRES: `in` outlives the
/// source.
[[nodiscard]] std::unique_ptr<WorkloadSource> open_trace(std::istream& in, const std::string& name,
                                                         const TraceOptions& options);

/// Every request of a trace, sorted by arrival (options.sort is taken as true).
[[nodiscard]] std::vector<RequestSpec> read_trace(std::istream& in, const std::string& name,
                                                  TraceOptions options);

}  // namespace servesim
