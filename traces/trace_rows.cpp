// Helpers shared by the trace readers: exact seconds to nanoseconds, token counts with the
// zero-row option, and JSON Lines reading with file:line messages.
#include "traces/trace_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/errors.h"

namespace servesim {
namespace {

/// Plain digits from 1 to k_max_tokens, the usual token field, read in one pass: true with `v`
/// set. Every other text (a 0, a sign, spaces, too many digits) is left to csv_tokens's checks,
/// which give the same value for these.
inline bool plain_tokens(std::string_view s, int64_t& v) {
  if (s.empty() || s.size() > 10) return false;
  int64_t plain = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    plain = plain * 10 + (c - '0');
  }
  if (plain < 1 || plain > k_max_tokens) return false;
  v = plain;
  return true;
}

}  // namespace

int64_t seconds_to_ns(double seconds) {
  const double whole = std::floor(seconds);
  const double fraction = seconds - whole;  // exact: both lie in the same binade or below
  return static_cast<int64_t>(whole) * 1'000'000'000 + std::llround(fraction * 1e9);
}

bool decimal_seconds_to_ns(std::string_view text, int64_t& ns) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view frac =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  if (whole.empty() && frac.empty()) return false;
  if (whole.size() > 10) return false;  // past 9.2e9 s either way; let the double path say so
  auto digits = [](std::string_view d) {
    return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(whole) || !digits(frac)) return false;
  int64_t secs = 0;
  for (char c : whole) secs = secs * 10 + (c - '0');
  int64_t nanos = 0;
  for (size_t i = 0; i < 9; ++i) nanos = nanos * 10 + (i < frac.size() ? frac[i] - '0' : 0);
  if (frac.size() > 9 && frac[9] >= '5') ++nanos;
  if (secs > (std::numeric_limits<int64_t>::max() - nanos) / 1'000'000'000) return false;
  ns = secs * 1'000'000'000 + nanos;
  return true;
}

int64_t csv_seconds_ns(const CsvColumns& csv, size_t k) {
  // Range-checked as a number, then taken digit by digit when it is a plain decimal, so
  // nanosecond arrivals are exact however late (a double holds 9 decimals only to 2^23 s).
  const int64_t ns = seconds_to_ns(csv.real(k, 0.0, 9.0e9));
  int64_t exact = 0;
  return decimal_seconds_to_ns(csv.field(k), exact) ? exact : ns;
}

void fill_csv_row(TraceRow& row, const CsvColumns& csv, size_t arrival_k, size_t prompt_k,
                  size_t output_k, const std::vector<std::string>& columns,
                  const TraceOptions& options) {
  // Kept raw (quoted only if a message needs it): escaping every row cost ~6% of a replay.
  row.arrival_text.assign(csv.field(arrival_k));
  row.arrival_text_raw = true;
  if (!plain_tokens(csv.field(prompt_k), row.prompt_tokens))
    row.prompt_tokens = csv_tokens(csv, prompt_k, columns[prompt_k], options);
  if (!plain_tokens(csv.field(output_k), row.output_tokens))
    row.output_tokens = csv_tokens(csv, output_k, columns[output_k], options);
  row.skip = row.prompt_tokens == 0 || row.output_tokens == 0 ? k_skipped_zero_tokens : nullptr;
}

std::string tokens_allowed(bool value_is_zero) {
  std::string s = fmt::format("must be an integer from 1 to {}", k_max_tokens);
  if (value_is_zero)
    s += " (workload.trace.zero_tokens: skip drops rows with a 0, and counts them)";
  return s;
}

int64_t csv_tokens(const CsvColumns& csv, size_t k, const std::string& column,
                   const TraceOptions& options) {
  const std::string_view s = csv.field(k);
  int64_t v = -1;
  if (plain_tokens(s, v)) return v;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && ptr == s.data() + s.size() && v == 0) {
    if (options.skip_zero_tokens) return 0;
    throw InputError(fmt::format("{}:{}: column {} = {}: {}", printable(csv.path(), 1024),
                                 csv.line(), column, quote_input(s), tokens_allowed(true)));
  }
  return csv.integer(k, 1, k_max_tokens);
}

void check_byte_order_mark(std::string& first_line, const std::string& name) {
  const std::string_view s = first_line;
  if (s.substr(0, 2) == "\xFF\xFE" || s.substr(0, 2) == "\xFE\xFF")
    throw InputError(
        fmt::format("{}:1: the file is UTF-16 text (it starts with a UTF-16 "
                    "byte-order mark); save it as UTF-8 or ASCII",
                    name));
  if (s.substr(0, 3) == "\xEF\xBB\xBF") first_line.erase(0, 3);
}

nlohmann::json parse_json_unique_keys(std::string_view text, const std::string& where,
                                      std::vector<std::string>& keys,
                                      std::vector<size_t>& key_starts) {
  keys.clear();
  key_starts.clear();
  const auto no_duplicates = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) key_starts.push_back(keys.size());
    if (event == E::object_end && !key_starts.empty()) {
      keys.resize(key_starts.back());
      key_starts.pop_back();
    }
    if (event != E::key || key_starts.empty()) return true;
    const std::string& key = parsed.get_ref<const std::string&>();
    for (size_t i = key_starts.back(); i < keys.size(); ++i)
      if (keys[i] == key)
        throw InputError(
            fmt::format("{}: field {} is given twice in one object; give each "
                        "field once",
                        where, quote_input(key)));
    keys.push_back(key);
    return true;
  };
  return nlohmann::json::parse(text, no_duplicates);
}

JsonLines::JsonLines(std::istream& in, const std::string& name)
    : m_in(&in), m_name(printable(name, 1024)) {}

bool JsonLines::next(nlohmann::json& row) {
  while (read_bounded_line(*m_in, m_line, CsvColumns::k_max_line_bytes, m_name, m_line_no + 1,
                           "JSON line")) {
    ++m_line_no;
    if (m_line_no == 1) check_byte_order_mark(m_line, m_name);
    if (m_line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      row = parse_json_unique_keys(m_line, fmt::format("{}:{}", m_name, m_line_no), m_keys,
                                   m_key_starts);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(
          fmt::format("{}:{}: not a JSON object (column {})", m_name, m_line_no, e.byte));
    } catch (const nlohmann::json::exception&) {  // e.g. a number too large for a double
      throw InputError(
          fmt::format("{}:{}: not a JSON object servesim can read (a number out of "
                      "range)",
                      m_name, m_line_no));
    }
    if (!row.is_object())
      throw InputError(fmt::format("{}:{}: not a JSON object", m_name, m_line_no));
    return true;
  }
  return false;
}

const nlohmann::json& JsonLines::field(const nlohmann::json& row, const char* key) const {
  auto it = row.find(key);
  if (it == row.end())
    throw InputError(fmt::format("{}:{}: missing field \"{}\"", m_name, m_line_no, key));
  return *it;
}

void JsonLines::bad(const char* key, const nlohmann::json& value, std::string_view allowed) const {
  throw InputError(fmt::format("{}:{}: field \"{}\" = {}: {}", m_name, m_line_no, key,
                               printable(value.dump()), allowed));
}

int64_t JsonLines::tokens(const nlohmann::json& row, const char* key,
                          const TraceOptions& options) const {
  const nlohmann::json& v = field(row, key);
  if (v.is_number_integer()) {
    // A non-negative integer may be stored unsigned, beyond int64: compare before converting.
    const bool zero = v.is_number_unsigned() ? v.get<uint64_t>() == 0 : v.get<int64_t>() == 0;
    if (zero && options.skip_zero_tokens) return 0;
    if (zero) bad(key, v, tokens_allowed(true));
    const bool in_range = v.is_number_unsigned()
                              ? v.get<uint64_t>() <= static_cast<uint64_t>(k_max_tokens)
                              : v.get<int64_t>() >= 1 && v.get<int64_t>() <= k_max_tokens;
    if (in_range) return v.get<int64_t>();
  }
  bad(key, v, tokens_allowed(false));
}

const std::vector<std::string>& TraceRowReader::class_names() const {
  static const std::vector<std::string> none;
  return none;
}

const std::vector<std::string>& TraceRowReader::tenant_names() const {
  static const std::vector<std::string> none;
  return none;
}

bool valid_class_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.'))
      return false;
  return true;
}

}  // namespace servesim
