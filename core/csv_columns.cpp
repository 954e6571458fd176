#include "core/csv_columns.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/errors.h"

namespace servesim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// Calls f(index, field) for each trimmed field of `line`; returns how many there are. Nothing
/// is stored per field, so a line of a million commas costs no more memory than the line.
template <typename F>
size_t for_each_field(std::string_view line, F&& f) {
  size_t start = 0;
  for (size_t i = 0;; ++i) {
    const size_t comma = line.find(',', start);
    f(i, trim(line.substr(start, comma == line.npos ? line.npos : comma - start)));
    if (comma == line.npos) return i + 1;
    start = comma + 1;
  }
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

constexpr size_t k_npos = std::string_view::npos;

}  // namespace

CsvColumns::CsvColumns(std::string path, std::vector<std::string> columns)
    : m_path(std::move(path)), m_name(printable(m_path, 1024)), m_columns(std::move(columns)),
      m_file(m_path, std::ios::binary), m_in(&m_file), m_required(m_columns.size()) {
  if (!m_file) throw InputError(fmt::format("{}: cannot open file", m_name));
  read_header();
}

CsvColumns::CsvColumns(std::istream& in, std::string name, std::vector<std::string> columns)
    : m_path(std::move(name)), m_name(printable(m_path, 1024)), m_columns(std::move(columns)),
      m_in(&in), m_required(m_columns.size()) {
  read_header();
}

CsvColumns::CsvColumns(std::istream& in, std::string name, std::vector<std::string> columns,
                       const std::vector<std::string>& optional)
    : m_path(std::move(name)), m_name(printable(m_path, 1024)), m_columns(std::move(columns)),
      m_in(&in), m_required(m_columns.size()) {
  m_columns.insert(m_columns.end(), optional.begin(), optional.end());
  read_header();
}

bool read_bounded_line(std::istream& in, std::string& line, size_t max_bytes,
                       const std::string& name, size_t line_no, const char* what) {
  using traits = std::char_traits<char>;
  line.clear();
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr) return false;
  auto c = buf->sbumpc();
  if (traits::eq_int_type(c, traits::eof())) return false;
  while (!traits::eq_int_type(c, traits::eof()) && c != '\n') {
    if (line.size() == max_bytes)
      throw InputError(fmt::format("{}:{}: line longer than {} bytes (it starts \"{}\"): not a "
                                   "{}", name, line_no, max_bytes, printable(line), what));
    line.push_back(traits::to_char_type(c));
    c = buf->sbumpc();
  }
  return true;
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
    throw InputError(fmt::format("{}:1: the file is UTF-16 text (it starts with a UTF-16 "
                                 "byte-order mark); save it as UTF-8 or ASCII", m_name));
  if (more && starts_with(m_line, "\xEF\xBB\xBF")) m_line.erase(0, 3);  // UTF-8 byte-order mark
  while (more && trim(m_line).empty()) more = read_line();
  if (!more)
    throw InputError(fmt::format("{}: empty file (expected a header with {})", m_name, wanted));
  m_index.assign(m_columns.size(), k_npos);
  m_fields.assign(m_columns.size(), {});
  m_header_fields = for_each_field(m_line, [&](size_t i, std::string_view name) {
    for (size_t k = 0; k < m_columns.size(); ++k) {
      if (name != m_columns[k]) continue;
      if (m_index[k] != k_npos)
        throw InputError(fmt::format("{}:{}: the header names column {} twice (fields {} and {})",
                                     m_name, m_line_no, m_columns[k], m_index[k] + 1, i + 1));
      m_index[k] = i;
    }
  });
  for (size_t k = 0; k < m_required; ++k)
    if (m_index[k] == k_npos)
      throw InputError(fmt::format("{}:{}: the header lacks column {} (needs {}; found: {})",
                                   m_name, m_line_no, m_columns[k], wanted,
                                   printable(trim(m_line), 100)));
}

bool CsvColumns::next_row() {
  while (read_line()) {
    if (trim(m_line).empty()) continue;
    const size_t n = for_each_field(m_line, [&](size_t i, std::string_view field) {
      for (size_t k = 0; k < m_index.size(); ++k)
        if (m_index[k] == i) m_fields[k] = field;
    });
    if (n != m_header_fields)
      throw InputError(fmt::format("{}:{}: {} fields, but the header has {} columns", m_name,
                                   m_line_no, n, m_header_fields));
    return true;
  }
  return false;
}

void CsvColumns::bad(size_t k, const std::string& allowed) const {
  throw InputError(fmt::format("{}:{}: column {} = {}: must be {}", m_name, m_line_no,
                               m_columns[k], quote_input(field(k)), allowed));
}

int64_t CsvColumns::integer(size_t k, int64_t min, int64_t max) const {
  const std::string_view s = field(k);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < min || v > max)
    bad(k, fmt::format("an integer from {} to {}", min, max));
  return v;
}

double CsvColumns::real(size_t k, double min, double max) const {
  const std::string_view s = field(k);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < min || v > max)
    bad(k, fmt::format("a finite number from {} to {}", min, max));
  return v;
}

double CsvColumns::positive_real(size_t k) const {
  const double v = real(k, 0.0, std::numeric_limits<double>::max());
  if (v <= 0.0) bad(k, "a finite number > 0");
  return v;
}

}  // namespace servesim
