#include "sim/csv_columns.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sim/errors.h"

namespace servesim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

void split(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == line.npos ? line.npos : comma - start)));
    if (comma == line.npos) return;
    start = comma + 1;
  }
}

}  // namespace

CsvColumns::CsvColumns(std::string path, std::vector<std::string> columns)
    : m_path(std::move(path)), m_columns(std::move(columns)), m_in(m_path, std::ios::binary) {
  if (!m_in) throw InputError(fmt::format("{}: cannot open file", m_path));
  const std::string wanted = fmt::format("{}", fmt::join(m_columns, ", "));
  while (std::getline(m_in, m_line)) {
    ++m_line_no;
    if (!trim(m_line).empty()) break;
  }
  if (trim(m_line).empty())
    throw InputError(fmt::format("{}: empty file (expected a header with {})", m_path, wanted));
  if (m_line.size() >= 3 && m_line.compare(0, 3, "\xEF\xBB\xBF") == 0) m_line.erase(0, 3);  // BOM
  split(m_line, m_fields);
  m_header_fields = m_fields.size();
  for (const auto& c : m_columns) {
    auto it = std::find(m_fields.begin(), m_fields.end(), c);
    if (it == m_fields.end())
      throw InputError(fmt::format("{}:{}: the header lacks column {} (needs {}; found: {})",
                                   m_path, m_line_no, c, wanted, trim(m_line)));
    m_index.push_back(static_cast<size_t>(it - m_fields.begin()));
  }
}

bool CsvColumns::next_row() {
  while (std::getline(m_in, m_line)) {
    ++m_line_no;
    if (trim(m_line).empty()) continue;
    split(m_line, m_fields);
    if (m_fields.size() != m_header_fields)
      throw InputError(fmt::format("{}:{}: {} fields, but the header has {} columns", m_path,
                                   m_line_no, m_fields.size(), m_header_fields));
    return true;
  }
  return false;
}

void CsvColumns::bad(size_t k, const std::string& allowed) const {
  throw InputError(fmt::format("{}:{}: column {} = \"{}\": must be {}", m_path, m_line_no,
                               m_columns[k], field(k), allowed));
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
  const std::string s(field(k));
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < min || v > max)
    bad(k, fmt::format("a finite number from {} to {}", min, max));
  return v;
}

double CsvColumns::positive_real(size_t k) const {
  const double v = real(k, 0.0, std::numeric_limits<double>::max());
  if (v <= 0.0) bad(k, "a finite number > 0");
  return v;
}

}  // namespace servesim
