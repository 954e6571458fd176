// Azure's LLM inference traces (Azure/AzurePublicDataset, 2023 and 2024 releases):
//   TIMESTAMP,ContextTokens,GeneratedTokens
//   2023-11-16 18:15:46.6805900,374,44
// TIMESTAMP is a wall-clock date and time with any number of fraction digits (7 in the 2023
// files) and, in the 2024 release, possibly a UTC offset (+00:00) or Z. It is parsed to integer
// nanoseconds without going through a double. ContextTokens is the prompt, GeneratedTokens the
// output. Arrivals are relative to the first row.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
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

/// Eight bytes from `p`, the first in the lowest byte (the order the digit tricks below assume).
inline uint64_t load8(const char* p) {
  uint64_t w = 0;
  std::memcpy(&w, p, sizeof w);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}

constexpr uint64_t k_zeros8 = 0x3030303030303030;  // "00000000"

/// Whether all eight bytes of `w` are '0' to '9': each byte's high nibble is 3, and still is
/// with 6 added (a carry out of a byte only comes from one that fails the first test).
inline bool eight_digits(uint64_t w) {
  constexpr uint64_t high = 0xF0F0F0F0F0F0F0F0;
  return ((w & high) | (((w + 0x0606060606060606) & high) >> 4)) == 0x3333333333333333;
}

/// The number eight digit bytes write, the first the most significant: pairs, then fours,
/// then the whole, each step a multiply (no product overflows into the value's bits).
inline uint32_t eight_digits_value(uint64_t w) {
  w -= k_zeros8;
  w = w * 10 + (w >> 8);  // byte 2k: the pair 2k, 2k+1 (at most 99)
  w = ((w & 0x000000FF000000FF) * (100 + (uint64_t{1'000'000} << 32)) +
       ((w >> 16) & 0x000000FF000000FF) * (1 + (uint64_t{10'000} << 32))) >>
      32;
  return static_cast<uint32_t>(w);
}

/// The shape of every row of the Azure files, "YYYY-MM-DD HH:MM:SS" with an optional fraction
/// and nothing after, read by position: true with `ns` set when `text` has that shape and a day
/// of the month up to 28 (valid in every month); false sends it to the general parser, which
/// gives the same value for every text this accepts. With the date memo, and the time and a
/// fraction of up to nine digits read eight bytes at a time, it takes a small part of the
/// general parser's instructions.
bool common_timestamp_ns(std::string_view text, int64_t& ns, DateMemo& memo) {
  static constexpr int64_t k_fraction_scale[] = {
      0, 100'000'000, 10'000'000, 1'000'000, 100'000, 10'000, 1'000, 100, 10, 1};
  if (text.size() < 19 || (text.size() > 19 && text[19] != '.') || text.size() == 20) return false;
  const char* const s = text.data();
  int64_t days = memo.days;
  if (!memo.valid || std::memcmp(s, memo.text, sizeof memo.text) != 0) {
    unsigned bad = 0;  // non-zero when a position that must hold a digit does not
    const auto two = [&](size_t i) {
      const unsigned d0 = static_cast<unsigned char>(s[i]) - unsigned{'0'};
      const unsigned d1 = static_cast<unsigned char>(s[i + 1]) - unsigned{'0'};
      bad |= (d0 > 9 || d1 > 9) ? 1u : 0u;
      return static_cast<int>(d0 * 10 + d1);
    };
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
  // "HH:MM:SS" as eight bytes: the colons checked and made '0', then each pair's value lands in
  // bytes 0, 3 and 6 of one multiply.
  constexpr uint64_t k_colons = 0x00003A00003A0000, k_colon_bytes = 0x0000FF0000FF0000;
  uint64_t hms = load8(s + 11);
  if ((s[10] != ' ' && s[10] != 'T') || (hms & k_colon_bytes) != k_colons) return false;
  hms ^= k_colons ^ (k_zeros8 & k_colon_bytes);  // ':' to '0'
  if (!eight_digits(hms)) return false;
  hms -= k_zeros8;
  hms = hms * 10 + (hms >> 8);
  const int64_t hour = static_cast<int64_t>(hms & 0xFF),
                minute = static_cast<int64_t>((hms >> 24) & 0xFF),
                second = static_cast<int64_t>((hms >> 48) & 0xFF);
  if (hour > 23 || minute > 59 || second > 59) return false;
  int64_t fraction = 0;
  const size_t n = text.size() - 20;  // fraction digits (text.size() > 20 here when used)
  if (text.size() == 19) {
  } else if (n <= 8) {  // the last eight bytes, those before the fraction made '0'
    const uint64_t keep = ~uint64_t{0} << (8 * (8 - n));
    const uint64_t w = (load8(s + text.size() - 8) & keep) | (k_zeros8 & ~keep);
    if (!eight_digits(w)) return false;
    fraction = int64_t{eight_digits_value(w)} * k_fraction_scale[n];
  } else if (n == 9) {
    const unsigned first = static_cast<unsigned char>(s[20]) - unsigned{'0'};
    const uint64_t w = load8(s + 21);
    if (first > 9 || !eight_digits(w)) return false;
    fraction = int64_t{first} * 100'000'000 + eight_digits_value(w);
  } else {  // the first nine digits, rounded by the tenth; later digits only checked
    bool bad = false;
    for (size_t i = 20; i < text.size(); ++i) {
      const unsigned d = static_cast<unsigned char>(s[i]) - unsigned{'0'};
      bad |= d > 9;
      if (i < 29) fraction = fraction * 10 + d;
      if (i == 29 && d >= 5) fraction += 1;
    }
    if (bad) return false;
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

/// Plain digits from `s[i]` on making a token count from 1 to k_max_tokens: the count, with `i`
/// moved past them; 0 for anything else (the general reader's to judge).
inline int64_t plain_count(std::string_view s, size_t& i) {
  const size_t first = i;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - unsigned{'0'};
    if (d > 9) break;
    if (i - first == 10) return 0;  // an 11th digit: past k_max_tokens whatever it is
    v = v * 10 + d;
  }
  return v > k_max_tokens ? 0 : v;
}

class AzureRows final : public TraceRowReader {
 public:
  AzureRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_csv(in, name, k_columns),
        m_options(options),
        m_in_place(m_csv.header_fields() == 3 && m_csv.position(0) == 0 && m_csv.position(1) == 1 &&
                   m_csv.position(2) == 2) {}

  bool next(TraceRow& row) override {
    if (m_in_place && take_in_place(row)) return true;
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
  /// The files' own rows, "2023-11-16 18:15:46.6805900,374,44" and a '\n' (or "\r\n"), read
  /// where the stream buffers them (no copy, no split): true with `row` filled as next_row()
  /// and fill_csv_row would (the same values; no trimming or quoting can apply to such a line).
  /// Any other line (a blank one, spaces, quotes, a 0, a timestamp common_timestamp_ns leaves
  /// to the general parser, a line running past the buffer) is left to the general path, which
  /// reads it or names what is wrong with it.
  bool take_in_place(TraceRow& row) {
    const std::string_view s = m_csv.buffered();
    // The timestamp ends at the first ','; the files' own is 27 characters.
    size_t comma = 27;
    if (s.size() <= comma || s[comma] != ',') {
      const size_t limit = std::min<size_t>(s.size(), 64);
      comma = 19;
      while (comma < limit && s[comma] != ',') ++comma;
      if (comma >= limit) return false;
    }
    const std::string_view text = s.substr(0, comma);
    int64_t ns = 0;
    if (!common_timestamp_ns(text, ns, m_date)) return false;
    size_t i = comma + 1;
    const int64_t prompt = plain_count(s, i);
    if (prompt == 0 || i == s.size() || s[i] != ',') return false;
    ++i;
    const int64_t output = plain_count(s, i);
    if (output == 0) return false;
    if (i < s.size() && s[i] == '\r') ++i;
    if (i == s.size() || s[i] != '\n') return false;
    ++i;
    m_csv.take_buffered(i);
    row.line = m_csv.line();
    row.arrival_ns = ns;
    if (row.arrival_text.size() == text.size())  // the usual: as long as the last row's
      std::memcpy(row.arrival_text.data(), text.data(), text.size());
    else
      row.arrival_text.assign(text);
    row.arrival_text_raw = true;
    row.prompt_tokens = prompt;
    row.output_tokens = output;
    row.skip = nullptr;
    return true;
  }

  CsvColumns m_csv;
  TraceOptions m_options;
  DateMemo m_date;
  bool m_in_place;  // the header is exactly TIMESTAMP,ContextTokens,GeneratedTokens
};

}  // namespace

std::unique_ptr<TraceRowReader> make_azure_rows(std::istream& in, const std::string& name,
                                                const TraceOptions& options) {
  return std::make_unique<AzureRows>(in, name, options);
}

}  // namespace servesim
