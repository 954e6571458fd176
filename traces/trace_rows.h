#pragma once
// Inside the trace readers: one TraceRowReader per format turns lines into rows on the file's
// own clock; trace_source.cpp turns rows into requests (time origin, order check, ids, sorting,
// counts of skipped rows). The helpers here are shared by every format, so a message reads the
// same whichever file it is about.
#include <cstdint>
#include <istream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/csv_columns.h"
#include "traces/trace_reader.h"

namespace servesim {

/// Counter names for rows a reader skips (reported by WorkloadSource::counters()).
inline constexpr const char* k_skipped_zero_tokens = "trace_rows_skipped_zero_tokens";
inline constexpr const char* k_skipped_other_model = "trace_rows_skipped_other_model";

/// Token counts are integers from 1 to this.
inline constexpr int64_t k_max_tokens = 1'000'000'000;
/// Simulated time is int64 nanoseconds; no arrival may lie further than this from time 0.
inline constexpr int64_t k_max_arrival_ns = 9'000'000'000'000'000'000;

struct TraceRow {
  int64_t arrival_ns = 0;  ///< on the file's own clock (epoch, trace start, ...)
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  std::vector<uint64_t> block_hashes;
  int32_t hash_block_tokens = 0;
  size_t line = 0;
  std::string arrival_text;       ///< the arrival as the file writes it, for messages
  bool arrival_text_raw = false;  ///< arrival_text still needs quote_input() to be shown
  const char* skip = nullptr;     ///< non-null: the row is dropped and counted under this name
  // Dependencies (servesim CSV's optional columns; see traces/dependent_trace.cpp).
  uint64_t key = 0;               ///< request_id, when the file has that column
  uint64_t session = 0;           ///< hash of session_id (never 0), 0 when empty or absent
  std::vector<uint64_t> parents;  ///< parent_id: request_id values (row numbers without it)
  int64_t think_ns = 0;           ///< think_s: delay after the parents' replies
  int64_t max_output_tokens = 0;  ///< max_output_tokens column (servesim CSV); 0: absent
  uint16_t class_id = 0;          ///< class column: index in TraceRowReader::class_names()
  uint16_t tenant_id = 0;         ///< tenant column: index in TraceRowReader::tenant_names()
  int32_t priority = 0;           ///< priority column (servesim CSV), field (vLLM JSONL); 0: absent
  int64_t cancel_after_tokens = 0;  ///< cancel_after_tokens column (servesim CSV); 0: absent
  int64_t cancel_after_ns = 0;      ///< cancel_after_s column (servesim CSV); 0: absent
  int64_t adapter = -1;             ///< adapter column (servesim CSV): 0 base model; -1: absent
};

class TraceRowReader {
 public:
  virtual ~TraceRowReader() = default;
  /// The next row; false at the end of the file. Throws InputError naming file:line.
  [[nodiscard]] virtual bool next(TraceRow& row) = 0;
  /// True when arrivals are already relative to time 0 (servesim CSV), not to the first row.
  [[nodiscard]] virtual bool absolute_time() const { return false; }
  /// How messages name the arrival: "column arrival_s", "field \"timestamp\"".
  [[nodiscard]] virtual std::string arrival_label() const = 0;
  /// What the message says when no row is left: CSV formats have a header.
  [[nodiscard]] virtual const char* empty_trace() const { return "the trace has no requests"; }
  /// True when rows carry dependencies (servesim CSV with session_id, parent_id or think_s):
  /// the trace is then loaded whole and replayed by DependentTrace.
  [[nodiscard]] virtual bool has_dependencies() const { return false; }
  /// Whether rows carry request_id (TraceRow::key); otherwise a row's key is its row number.
  [[nodiscard]] virtual bool has_request_ids() const { return false; }
  /// The class names the rows read so far have named (TraceRow::class_id indexes it); empty
  /// when the file has no class column.
  [[nodiscard]] virtual const std::vector<std::string>& class_names() const;
  /// The tenant names the rows read so far have named (TraceRow::tenant_id indexes it); empty
  /// when the file has no tenant column.
  [[nodiscard]] virtual const std::vector<std::string>& tenant_names() const;
};

/// A class name as a trace or config gives it: 1 to 64 characters from A-Z, a-z, 0-9, '_', '-'
/// and '.', so that it needs no quoting in requests.csv or summary.json.
[[nodiscard]] bool valid_class_name(std::string_view name);
/// What valid_class_name allows, for messages.
inline constexpr const char* k_class_name_allowed =
    "1 to 64 characters from A-Z, a-z, 0-9, '_', '-' and '.'";
/// A request's priority (vLLM's: lower is served first) is an integer in this range.
inline constexpr int64_t k_min_priority = -1'000'000'000;
inline constexpr int64_t k_max_priority = 1'000'000'000;

/// One per format. `name` stands for the file in messages, as given (readers pass it through
/// printable()). REQUIRES: `in` outlives the reader.
using RowReaderFactory = std::unique_ptr<TraceRowReader> (*)(std::istream& in,
                                                             const std::string& name,
                                                             const TraceOptions& options);
// Each format's reader factory is declared in traces/factories.h, for the format table only.

/// One trace format, everything about it in one row of one table (traces/trace_format.cpp): the
/// config's `workload.trace.format`, detection from a first line, `trace stats` and `trace gen`
/// all read it. A new format is its reader file plus one row there.
struct TraceFormatSpec {
  const char* name;  ///< the format's name (TraceFormat): configs, --input-format, messages
  bool json;         ///< JSON lines; otherwise CSV with a header
  std::vector<std::string> signature;  ///< the header's columns or the JSON keys it detects by
  const char* description;             ///< for "known formats" messages
  RowReaderFactory reader;
  const char* label;        ///< how messages name its files: "mooncake traces", "servesim CSV"
  const char* hash_column;  ///< the column giving block hashes (hash_block_tokens), or nullptr
  bool model_column;        ///< has a Model column to filter on (the `model` option)
};
/// Every format, in detection-message order.
[[nodiscard]] const std::vector<TraceFormatSpec>& trace_format_specs();
/// The row named `f`. Throws InputError for a name that is not a row (a caller's bug: names from
/// input go through trace_format_named first).
[[nodiscard]] const TraceFormatSpec& trace_format_spec(const TraceFormat& f);

/// Seconds (finite, 0 to 9.2e9) to nanoseconds, exact to the double's own value: the whole
/// seconds and the fraction are converted apart, so an epoch timestamp loses nothing more.
[[nodiscard]] int64_t seconds_to_ns(double seconds);
/// A plain decimal ("123", "8400000.123456789": digits, at most one point, no sign or
/// exponent) in seconds, straight to nanoseconds: exact to 9 decimals, later digits rounded
/// half up. Returns false for any other form (the caller falls back to seconds_to_ns of the
/// parsed double) or a value past int64 nanoseconds.
[[nodiscard]] bool decimal_seconds_to_ns(std::string_view text, int64_t& ns);

/// "YYYY-MM-DD HH:MM:SS[.fraction][Z | +HH:MM | -HHMM | +HH]" (or a T between date and time),
/// years 1970 to 2200, to nanoseconds since 1970-01-01 UTC: exact, with fraction digits past the
/// ninth rounding to the nearest nanosecond. nullopt when malformed. (Azure traces.)
[[nodiscard]] std::optional<int64_t> parse_utc_timestamp_ns(std::string_view text);

/// A token-count column of a CSV row: an integer from 1 to 10^9; a 0 is returned as 0 when
/// zero rows may be skipped, and otherwise stops with a message naming the option.
/// `column` is the header name of requested column `k`.
[[nodiscard]] int64_t csv_tokens(const CsvColumns& csv, size_t k, const std::string& column,
                                 const TraceOptions& options);

/// The arrival column `k` of a CSV row in seconds (a finite number from 0 to 9e9), to
/// nanoseconds: exact when written as a plain decimal (decimal_seconds_to_ns).
[[nodiscard]] int64_t csv_seconds_ns(const CsvColumns& csv, size_t k);

/// The rest of a CSV row every reader fills the same way: the arrival column `arrival_k` kept
/// as raw text for messages, the token columns `prompt_k` and `output_k` (named in `columns`),
/// and the zero-token skip.
void fill_csv_row(TraceRow& row, const CsvColumns& csv, size_t arrival_k, size_t prompt_k,
                  size_t output_k, const std::vector<std::string>& columns,
                  const TraceOptions& options);

/// nlohmann::json::parse(text), refusing a key given twice in one object (nlohmann keeps the
/// last silently): InputError "<where>: field "k" is given twice in one object; ...". `keys` and
/// `key_starts` are scratch space, kept by the caller to reuse their memory. Parse errors
/// propagate as nlohmann::json exceptions.
[[nodiscard]] nlohmann::json parse_json_unique_keys(std::string_view text, const std::string& where,
                                                    std::vector<std::string>& keys,
                                                    std::vector<size_t>& key_starts);

/// Reads a JSON Lines file one object at a time (blank lines skipped, a UTF-8 byte-order mark
/// ignored, lines capped at CsvColumns::k_max_line_bytes, a key given twice in one object
/// refused), with messages naming file:line.
class JsonLines {
 public:
  /// `name` as given; messages carry printable(name).
  JsonLines(std::istream& in, const std::string& name);
  /// The next non-blank line as a JSON object; false at the end.
  [[nodiscard]] bool next(nlohmann::json& row);
  [[nodiscard]] size_t line() const { return m_line_no; }
  [[nodiscard]] const std::string& name() const { return m_name; }  ///< printable

  /// `key` of the current row, which must be there; the message names file:line and the key.
  [[nodiscard]] const nlohmann::json& field(const nlohmann::json& row, const char* key) const;
  /// A token-count field, as csv_tokens().
  [[nodiscard]] int64_t tokens(const nlohmann::json& row, const char* key,
                               const TraceOptions& options) const;
  /// Throws "file:line: field "key" = value: must be <allowed>".
  [[noreturn]] void bad(const char* key, const nlohmann::json& value,
                        std::string_view allowed) const;

 private:
  std::istream* m_in;
  std::string m_name;
  std::string m_line;
  size_t m_line_no = 0;
  // The keys of the objects being parsed, innermost last, to refuse a key given twice
  // (nlohmann::json keeps the last silently); kept between lines to reuse their memory.
  std::vector<std::string> m_keys;
  std::vector<size_t> m_key_starts;
};

/// Throws the message for a UTF-16 byte-order mark at the start of `first_line`, if there is one;
/// removes a UTF-8 byte-order mark.
void check_byte_order_mark(std::string& first_line, const std::string& name);

/// "must be an integer from 1 to 1000000000", plus how to skip a 0 when the value is one.
[[nodiscard]] std::string tokens_allowed(bool value_is_zero);

}  // namespace servesim
