// Azure's LLM inference traces (Azure/AzurePublicDataset, 2023 and 2024 releases):
//   TIMESTAMP,ContextTokens,GeneratedTokens
//   2023-11-16 18:15:46.6805900,374,44
// TIMESTAMP is a wall-clock date and time with any number of fraction digits (7 in the 2023
// files) and, in the 2024 release, possibly a UTC offset (+00:00) or Z. It is parsed to integer
// nanoseconds without going through a double. ContextTokens is the prompt, GeneratedTokens the
// output. Arrivals are relative to the first row.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

/// Reads fixed-width digits and single characters off the front of a string.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : m_s(s) {}
  bool digits(size_t n, int& out) {
    if (m_i + n > m_s.size()) return false;
    int v = 0;
    for (size_t k = 0; k < n; ++k) {
      const char c = m_s[m_i + k];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    m_i += n;
    out = v;
    return true;
  }
  bool literal(char c) {
    if (m_i == m_s.size() || m_s[m_i] != c) return false;
    ++m_i;
    return true;
  }
  /// A digit, consumed, or -1.
  int digit() {
    if (m_i == m_s.size() || m_s[m_i] < '0' || m_s[m_i] > '9') return -1;
    return m_s[m_i++] - '0';
  }
  [[nodiscard]] bool done() const { return m_i == m_s.size(); }

 private:
  std::string_view m_s;
  size_t m_i = 0;
};

/// ".ddd..." to nanoseconds, rounded to the nearest by the tenth digit; nullopt if no digits.
std::optional<int64_t> fraction_ns(Cursor& c) {
  int64_t ns = 0, scale = 100'000'000;
  int n = 0;
  for (int d = c.digit(); d >= 0; d = c.digit(), ++n) {
    if (n < 9) {
      ns += d * scale;
      scale /= 10;
    } else if (n == 9 && d >= 5) {
      ns += 1;
    }
  }
  if (n == 0) return std::nullopt;
  return ns;
}

/// "Z", "+HH:MM", "-HHMM", "+HH" or nothing, to seconds east of UTC; nullopt if malformed.
std::optional<int64_t> utc_offset_s(Cursor& c) {
  if (c.done() || c.literal('Z') || c.literal('z')) return 0;
  int sign = 0;
  if (c.literal('+'))
    sign = 1;
  else if (c.literal('-'))
    sign = -1;
  int hours = 0, minutes = 0;
  if (sign == 0 || !c.digits(2, hours)) return std::nullopt;
  if (c.literal(':') ? !c.digits(2, minutes) : !c.done() && !c.digits(2, minutes))
    return std::nullopt;
  if (hours > 23 || minutes > 59) return std::nullopt;
  return sign * (hours * 3600 + minutes * 60);
}

/// The last date common_timestamp_ns read, and its days since 1970-01-01: consecutive rows of a
/// trace mostly share their date.
struct DateMemo {
  char text[10] = {};  // "YYYY-MM-DD"
  int64_t days = 0;
  bool valid = false;  // false until a date is read
};

/// The shape of every row of the Azure files, "YYYY-MM-DD HH:MM:SS" with an optional fraction
/// and nothing after, read by position: true with `ns` set when `text` has that shape and a day
/// of the month up to 28 (valid in every month); false sends it to the general parser, which
/// gives the same value for every text this accepts. With the date memo it takes about a third
/// of the general parser's instructions.
bool common_timestamp_ns(std::string_view text, int64_t& ns, DateMemo& memo) {
  static constexpr int64_t k_fraction_scale[] = {
      0, 100'000'000, 10'000'000, 1'000'000, 100'000, 10'000, 1'000, 100, 10, 1};
  if (text.size() < 19 || (text.size() > 19 && text[19] != '.') || text.size() == 20) return false;
  const char* const s = text.data();
  unsigned bad = 0;  // non-zero when a position that must hold a digit does not
  const auto digit = [&](size_t i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - unsigned{'0'};
    bad |= d > 9 ? 1u : 0u;
    return static_cast<int>(d);
  };
  const auto two = [&](size_t i) { return digit(i) * 10 + digit(i + 1); };
  int64_t days = memo.days;
  if (!memo.valid || std::memcmp(s, memo.text, sizeof memo.text) != 0) {
    const int year = two(0) * 100 + two(2), month = two(5), day = two(8);
    if (bad != 0 || s[4] != '-' || s[7] != '-' || year < 1970 || year > 2200 || month < 1 ||
        month > 12 || day < 1 || day > 28)
      return false;
    using namespace std::chrono;
    days = sys_days{year_month_day{std::chrono::year{year}, std::chrono::month{unsigned(month)},
                                   std::chrono::day{unsigned(day)}}}
               .time_since_epoch()
               .count();
    std::memcpy(memo.text, s, sizeof memo.text);
    memo.days = days;
    memo.valid = true;
  }
  const int hour = two(11), minute = two(14), second = two(17);
  if (bad != 0 || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' || hour > 23 ||
      minute > 59 || second > 59)
    return false;
  int64_t fraction = 0;
  if (text.size() > 19) {  // ".ddd...": the first nine digits, rounded by the tenth
    const size_t n = std::min<size_t>(text.size() - 20, 9);
    for (size_t i = 20; i < 20 + n; ++i) fraction = fraction * 10 + digit(i);
    fraction *= k_fraction_scale[n];
    if (text.size() > 29 && digit(29) >= 5) fraction += 1;
    for (size_t i = 30; i < text.size(); ++i) (void)digit(i);  // later digits: checked only
    if (bad != 0) return false;
  }
  ns = (days * 86'400 + hour * 3'600 + minute * 60 + second) * 1'000'000'000 + fraction;
  return true;
}

/// parse_utc_timestamp_ns with the last date's days remembered in `memo`.
std::optional<int64_t> parse_utc_timestamp_ns(std::string_view text, DateMemo& memo) {
  if (int64_t ns = 0; common_timestamp_ns(text, ns, memo)) return ns;
  Cursor c(text);
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!(c.digits(4, year) && c.literal('-') && c.digits(2, month) && c.literal('-') &&
        c.digits(2, day) && (c.literal(' ') || c.literal('T')) && c.digits(2, hour) &&
        c.literal(':') && c.digits(2, minute) && c.literal(':') && c.digits(2, second)))
    return std::nullopt;
  using namespace std::chrono;
  const year_month_day date{std::chrono::year{year}, std::chrono::month{unsigned(month)},
                            std::chrono::day{unsigned(day)}};
  if (!date.ok() || year < 1970 || year > 2200 || hour > 23 || minute > 59 || second > 59)
    return std::nullopt;
  int64_t fraction = 0;
  if (c.literal('.')) {
    const auto f = fraction_ns(c);
    if (!f) return std::nullopt;
    fraction = *f;
  }
  const auto offset = utc_offset_s(c);
  if (!offset || !c.done()) return std::nullopt;
  const int64_t days = sys_days{date}.time_since_epoch().count();
  const int64_t seconds = days * 86'400 + hour * 3'600 + minute * 60 + second - *offset;
  return seconds * 1'000'000'000 + fraction;
}

}  // namespace

std::optional<int64_t> parse_utc_timestamp_ns(std::string_view text) {
  DateMemo memo;
  return parse_utc_timestamp_ns(text, memo);
}

namespace {

const std::vector<std::string> k_columns{"TIMESTAMP", "ContextTokens", "GeneratedTokens"};

class AzureRows final : public TraceRowReader {
 public:
  AzureRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_csv(in, name, k_columns), m_options(options) {}

  bool next(TraceRow& row) override {
    if (!m_csv.next_row()) return false;
    row.line = m_csv.line();
    const auto t = parse_utc_timestamp_ns(m_csv.field(0), m_date);
    if (!t)
      throw InputError(fmt::format(
          "{}:{}: column TIMESTAMP = {}: must be a date and time from 1970 to 2200 like "
          "2023-11-16 18:15:46.6805900, optionally followed by a UTC offset (+00:00) or Z",
          printable(m_csv.path(), 1024), m_csv.line(), quote_input(m_csv.field(0))));
    row.arrival_ns = *t;
    fill_csv_row(row, m_csv, 0, 1, 2, k_columns, m_options);
    return true;
  }
  std::string arrival_label() const override { return "column TIMESTAMP"; }
  const char* empty_trace() const override { return "the trace has a header but no requests"; }

 private:
  CsvColumns m_csv;
  TraceOptions m_options;
  DateMemo m_date;
};

}  // namespace

std::unique_ptr<TraceRowReader> make_azure_rows(std::istream& in, const std::string& name,
                                                const TraceOptions& options) {
  return std::make_unique<AzureRows>(in, name, options);
}

}  // namespace servesim
