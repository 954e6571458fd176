#include "core/csv_columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "core/input_file.h"

namespace servesim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

[[noreturn]] void after_closing_quote(const std::string& name, size_t line_no, size_t field) {
  throw InputError(
      fmt::format("{}:{}: field {}: text after the closing quote; a quoted field ends at its "
                  "closing quote (write a '\"' inside one as '\"\"')",
                  name, line_no, field));
}

[[noreturn]] void open_quote(const std::string& name, size_t line_no, size_t field) {
  throw InputError(
      fmt::format("{}:{}: field {}: a quoted field is never closed (a '\"' opens it "
                  "and the file ends before its closing '\"')",
                  name, line_no, field));
}

/// trim(s), looking no further than its ends when they hold no space (the usual field).
std::string_view trimmed(std::string_view s) {
  if (s.empty() || ((s.front() != ' ' && s.front() != '\t') &&
                    (s.back() != ' ' && s.back() != '\t' && s.back() != '\r')))
    return s;
  return trim(s);
}

/// trim(s).empty(), without trimming a line that starts with something else.
bool blank(std::string_view s) {
  return s.empty() ||
         ((s.front() == ' ' || s.front() == '\t' || s.front() == '\r') && trim(s).empty());
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

constexpr size_t k_npos = std::string_view::npos;

/// A stream buffer's get area (the bytes it holds, not yet read), through pointers to its
/// protected members: a pointer to a member named through a derived class may be applied to any
/// std::streambuf.
struct GetArea : std::streambuf {
  static const char* begin(std::streambuf& b) { return (b.*&GetArea::gptr)(); }
  static const char* end(std::streambuf& b) { return (b.*&GetArea::egptr)(); }
  static void skip(std::streambuf& b, size_t n) {
    // gbump takes an int: a get area may in principle exceed one.
    while (n > 0) {
      const size_t step = std::min<size_t>(n, std::numeric_limits<int>::max());
      (b.*&GetArea::gbump)(static_cast<int>(step));
      n -= step;
    }
  }
};

}  // namespace

CsvColumns::CsvColumns(std::string path, std::vector<std::string> columns)
    : m_path(find_input(path).value_or(std::filesystem::path(path)).string()),  // as stored
      m_name(printable(m_path, 1024)),
      m_columns(std::move(columns)),
      m_file(open_input(path)),
      m_in(m_file.get()),
      m_required(m_columns.size()) {
  read_header();
}

CsvColumns::CsvColumns(std::istream& in, std::string name, std::vector<std::string> columns)
    : m_path(std::move(name)),
      m_name(printable(m_path, 1024)),
      m_columns(std::move(columns)),
      m_in(&in),
      m_required(m_columns.size()) {
  read_header();
}

CsvColumns::CsvColumns(std::istream& in, std::string name, std::vector<std::string> columns,
                       const std::vector<std::string>& optional)
    : m_path(std::move(name)),
      m_name(printable(m_path, 1024)),
      m_columns(std::move(columns)),
      m_in(&in),
      m_required(m_columns.size()) {
  m_columns.insert(m_columns.end(), optional.begin(), optional.end());
  read_header();
}

std::vector<std::string> csv_fields(std::string_view line, const std::string& name,
                                    size_t line_no) {
  std::vector<std::string> out;
  size_t r = 0;
  for (;;) {
    while (r < line.size() && (line[r] == ' ' || line[r] == '\t')) ++r;
    std::string field;
    if (r < line.size() && line[r] == '"') {
      for (++r;; ++r) {
        if (r == line.size()) open_quote(printable(name, 1024), line_no, out.size() + 1);
        if (line[r] != '"') {
          field.push_back(line[r]);
        } else if (r + 1 < line.size() && line[r + 1] == '"') {
          field.push_back('"');
          ++r;
        } else {
          break;
        }
      }
      ++r;
      while (r < line.size() && (line[r] == ' ' || line[r] == '\t' || line[r] == '\r')) ++r;
      if (r < line.size() && line[r] != ',')
        after_closing_quote(printable(name, 1024), line_no, out.size() + 1);
    } else {
      const size_t comma = std::min(line.find(',', r), line.size());
      field = std::string(trim(line.substr(r, comma - r)));
      r = comma;
    }
    out.push_back(std::move(field));
    if (r >= line.size()) return out;
    ++r;  // the comma
  }
}

bool read_bounded_line(std::istream& in, std::string& line, size_t max_bytes,
                       const std::string& name, size_t line_no, const char* what) {
  using traits = std::char_traits<char>;
  line.clear();
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr) return false;
  if (traits::eq_int_type(buf->sgetc(), traits::eof())) return false;
  const auto too_long = [&] {
    throw InputError(
        fmt::format("{}:{}: line longer than {} bytes (it starts \"{}\"): not a "
                    "{}",
                    name, line_no, max_bytes, printable(line), what));
  };
  for (;;) {
    // Whole runs of the buffer's bytes at a time, found with memchr.
    const char* begin = GetArea::begin(*buf);
    const char* end = GetArea::end(*buf);
    if (begin == end) {  // an unbuffered stream: a byte at a time
      const auto c = buf->sbumpc();
      if (traits::eq_int_type(c, traits::eof()) || c == '\n') return true;
      if (line.size() == max_bytes) too_long();
      line.push_back(traits::to_char_type(c));
    } else {
      const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', end - begin));
      const size_t n = static_cast<size_t>((nl == nullptr ? end : nl) - begin);
      if (n > max_bytes - line.size()) {
        line.append(begin, max_bytes - line.size());
        too_long();
      }
      line.append(begin, n);
      GetArea::skip(*buf, n + (nl == nullptr ? 0 : 1));
      if (nl != nullptr) return true;
    }
    if (traits::eq_int_type(buf->sgetc(), traits::eof())) return true;
  }
}

bool CsvColumns::read_line() {
  if (!read_bounded_line(*m_in, m_line, k_max_line_bytes, m_name, m_line_no + 1, "CSV row"))
    return false;
  ++m_line_no;
  return true;
}

void CsvColumns::read_header() {
  const std::string wanted =
      fmt::format("{}", fmt::join(m_columns.begin(), m_columns.begin() + m_required, ", "));
  bool more = read_line();
  // Spreadsheets save "Unicode text" as UTF-16; its byte-order mark is FF FE or FE FF.
  if (more && (starts_with(m_line, "\xFF\xFE") || starts_with(m_line, "\xFE\xFF")))
    throw InputError(
        fmt::format("{}:1: the file is UTF-16 text (it starts with a UTF-16 "
                    "byte-order mark); save it as UTF-8 or ASCII",
                    m_name));
  if (more && starts_with(m_line, "\xEF\xBB\xBF")) m_line.erase(0, 3);  // UTF-8 byte-order mark
  while (more && trim(m_line).empty()) more = read_line();
  if (!more)
    throw InputError(fmt::format("{}: empty file (expected a header with {})", m_name, wanted));
  m_index.assign(m_columns.size(), k_npos);
  m_fields.assign(m_columns.size(), {});
  const std::vector<std::string> names = csv_fields(m_line, m_path, m_line_no);
  m_header_fields = names.size();
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t k = 0; k < m_columns.size(); ++k) {
      if (names[i] != m_columns[k]) continue;
      if (m_index[k] != k_npos)
        throw InputError(fmt::format("{}:{}: the header names column {} twice (fields {} and {})",
                                     m_name, m_line_no, m_columns[k], m_index[k] + 1, i + 1));
      m_index[k] = i;
    }
  }
  m_spans.reserve(m_header_fields);
  m_column_of.assign(m_header_fields, k_npos);
  for (size_t k = 0; k < m_columns.size(); ++k) {
    if (m_index[k] == k_npos) continue;
    if (m_column_of[m_index[k]] == k_npos)
      m_column_of[m_index[k]] = k;
    else
      m_repeats.emplace_back(k, m_column_of[m_index[k]]);
  }
  for (size_t k = 0; k < m_required; ++k)
    if (m_index[k] == k_npos)
      throw InputError(fmt::format("{}:{}: the header lacks column {} (needs {}; found: {})",
                                   m_name, m_line_no, m_columns[k], wanted,
                                   printable(trim(m_line), 100)));
}

std::string_view CsvColumns::buffered() const {
  std::streambuf* const buf = m_in->rdbuf();
  if (buf == nullptr) return {};
  const char* const begin = GetArea::begin(*buf);
  return {begin, static_cast<size_t>(GetArea::end(*buf) - begin)};
}

void CsvColumns::skip_buffered(size_t bytes) { GetArea::skip(*m_in->rdbuf(), bytes); }

bool CsvColumns::next_row() { return next_row_starting({}); }

bool CsvColumns::next_row_starting(std::string_view prefix) {
  while (read_line()) {
    const std::string_view line(m_line);
    if (!starts_with(line, prefix) || blank(line)) continue;
    m_row_line = m_line_no;
    if (std::memchr(line.data(), '"', line.size()) != nullptr) {
      const size_t n = split_quoted();
      if (n != m_header_fields)
        throw InputError(fmt::format("{}:{}: {} fields, but the header has {} columns", m_name,
                                     m_row_line, n, m_header_fields));
      const std::string_view record(m_line);
      for (size_t i = 0; i < n; ++i) {
        if (m_column_of[i] == k_npos) continue;
        const std::string_view f = record.substr(m_spans[i].offset, m_spans[i].size);
        m_fields[m_column_of[i]] = m_spans[i].quoted ? f : trim(f);
      }
      for (const auto& [k, j] : m_repeats) m_fields[k] = m_fields[j];
      return true;
    }
    // One pass over the line; only the requested fields are trimmed.
    size_t n = 0;
    const char* const data = line.data();
    const size_t size = line.size();
    for (size_t start = 0;; ++n) {
      const void* const comma = std::memchr(data + start, ',', size - start);
      const size_t end = comma == nullptr ? size : static_cast<const char*>(comma) - data;
      if (n < m_column_of.size() && m_column_of[n] != k_npos)
        m_fields[m_column_of[n]] = trimmed(line.substr(start, end - start));
      if (end == size) break;
      start = end + 1;
    }
    ++n;
    if (n != m_header_fields)
      throw InputError(fmt::format("{}:{}: {} fields, but the header has {} columns", m_name,
                                   m_row_line, n, m_header_fields));
    for (const auto& [k, j] : m_repeats) m_fields[k] = m_fields[j];
    return true;
  }
  return false;
}

size_t CsvColumns::split_quoted() {
  m_spans.clear();
  size_t r = 0, w = 0;  // where m_line is read and where the undone quoting is written (w <= r)
  for (;;) {
    while (r < m_line.size() && (m_line[r] == ' ' || m_line[r] == '\t')) ++r;
    const size_t start = w;
    if (r < m_line.size() && m_line[r] == '"') {
      for (++r;;) {
        if (r == m_line.size()) {  // the field runs over the line end: the '\n' is its own
          if (!read_bounded_line(*m_in, m_more, k_max_line_bytes, m_name, m_line_no + 1, "CSV row"))
            open_quote(m_name, m_row_line, m_spans.size() + 1);
          ++m_line_no;
          if (m_more.size() + 1 > k_max_line_bytes - std::min(k_max_line_bytes, m_line.size()))
            throw InputError(
                fmt::format("{}:{}: a row longer than {} bytes (a quoted field "
                            "runs over {} lines): not a CSV row",
                            m_name, m_row_line, k_max_line_bytes, m_line_no - m_row_line + 1));
          m_line.push_back('\n');
          m_line += m_more;
          continue;
        }
        const char c = m_line[r];
        if (c != '"') {
          m_line[w++] = c;
          ++r;
        } else if (r + 1 < m_line.size() && m_line[r + 1] == '"') {
          m_line[w++] = '"';
          r += 2;
        } else {
          ++r;
          break;
        }
      }
      m_spans.push_back({start, w - start, true});
      while (r < m_line.size() && (m_line[r] == ' ' || m_line[r] == '\t' || m_line[r] == '\r')) ++r;
      if (r < m_line.size() && m_line[r] != ',')
        after_closing_quote(m_name, m_row_line, m_spans.size());
    } else {
      while (r < m_line.size() && m_line[r] != ',') m_line[w++] = m_line[r++];
      m_spans.push_back({start, w - start, false});
    }
    if (r >= m_line.size()) return m_spans.size();
    ++r;  // the comma
  }
}

void CsvColumns::bad(size_t k, const std::string& allowed) const {
  throw InputError(fmt::format("{}:{}: column {} = {}: must be {}", m_name, m_row_line,
                               m_columns[k], quote_input(field(k)), allowed));
}

int64_t CsvColumns::integer(size_t k, int64_t min, int64_t max) const {
  const std::string_view s = field(k);
  int64_t v = 0;
  // Up to 18 plain digits cannot overflow: read them directly, the rest with from_chars.
  if (!s.empty() && s.size() <= 18) {
    bool digits = true;
    for (const char c : s) {
      if (c < '0' || c > '9') {  // before the multiply: other bytes must not reach it
        digits = false;
        break;
      }
      v = v * 10 + (c - '0');
    }
    if (digits) {
      if (v < min || v > max) bad(k, fmt::format("an integer from {} to {}", min, max));
      return v;
    }
    v = 0;
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < min || v > max)
    bad(k, fmt::format("an integer from {} to {}", min, max));
  return v;
}

namespace {

/// A plain decimal ("12", "0.0025733") of at most 15 digits, read exactly as from_chars would:
/// the digits as an integer (exact below 2^53) divided by a power of ten (exact up to 1e22) is
/// the correctly rounded value. False for anything else (signs, exponents, more digits).
bool plain_decimal(std::string_view s, double& v) {
  static constexpr double k_pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  if (s.empty() || s.size() > 16) return false;
  int64_t digits = 0;
  int count = 0, decimals = -1;
  for (const char c : s) {
    if (c == '.' && decimals < 0) {
      decimals = 0;
      continue;
    }
    if (c < '0' || c > '9') return false;
    digits = digits * 10 + (c - '0');
    ++count;
    if (decimals >= 0) ++decimals;
  }
  if (count == 0 || count > 15 || decimals == 0) return false;
  v = static_cast<double>(digits) / k_pow10[decimals < 0 ? 0 : decimals];
  return true;
}

}  // namespace

double CsvColumns::real(size_t k, double min, double max) const {
  const std::string_view s = field(k);
  double v = 0;
  if (plain_decimal(s, v)) {
    if (v < min || v > max) bad(k, fmt::format("a finite number from {} to {}", min, max));
    return v;
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < min || v > max)
    bad(k, fmt::format("a finite number from {} to {}", min, max));
  return v;
}

double CsvColumns::positive_real(size_t k) const {
  // Any number is read first, so that a negative one gets this message too, not a range's.
  const std::string_view s = field(k);
  double v = 0;
  if (!plain_decimal(s, v)) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size()) bad(k, "a finite number > 0");
  }
  if (!std::isfinite(v) || v <= 0.0) bad(k, "a finite number > 0");
  return v;
}

}  // namespace servesim
