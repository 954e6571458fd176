#include "report/sweep_points.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/errors.h"

namespace servesim {

namespace {

constexpr size_t k_max_bytes = size_t{64} << 20;

struct Row {
  std::vector<std::string> fields;
  size_t line = 0;  ///< where the row starts (1-based)
};

// Splits the whole text into rows of fields (RFC 4180), skipping blank lines.
std::vector<Row> parse_csv(const std::string& text, const std::string& name) {
  std::vector<Row> rows;
  Row row;
  std::string field;
  bool quoted = false, any = false;
  size_t line = 1;
  row.line = 1;
  auto end_field = [&] {
    row.fields.push_back(std::move(field));
    field.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && field.empty()) {
      quoted = any = true;
    } else if (c == ',') {
      end_field();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        end_field();
        rows.push_back(std::move(row));
      }
      row = Row{};
      row.line = ++line;
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted)
    throw InputError(fmt::format("{}:{}: a quoted field is never closed", name, row.line));
  if (any || !field.empty()) {
    end_field();
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json cell_json(const std::string& text) {
  if (text.empty()) return nullptr;
  if (text == "true") return true;
  if (text == "false") return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() + text.size() && std::isfinite(v)) return v;
  return text;
}

}  // namespace

nlohmann::json read_points_csv(const std::string& path, std::vector<std::string>* header_out) {
  const std::string name = printable(path, 1024);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(fmt::format(
        "{}: cannot open file (a sweep's summary.json says \"kind\": \"sweep\")", name));
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  if (text.size() > k_max_bytes)
    throw InputError(fmt::format("{}: {} bytes: more than a sweep's points.csv can be ({} MiB)",
                                 name, text.size(), k_max_bytes >> 20));
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  const std::vector<Row> rows = parse_csv(text, name);
  if (rows.empty()) throw InputError(fmt::format("{}: empty file (expected a header)", name));
  const std::vector<std::string>& header = rows[0].fields;
  for (const char* need : {"label", "feasible", "meets_slo", "pareto", "cost_per_hour_usd",
                           "output_tokens_per_s", "ttft_p99_ms", "tpot_p99_ms", "e2e_p99_ms"})
    if (std::find(header.begin(), header.end(), need) == header.end())
      throw InputError(fmt::format("{}:1: the header lacks column {} (found: {})", name, need,
                                   printable(fmt::format("{}", fmt::join(header, ",")), 200)));
  if (header_out) *header_out = header;
  nlohmann::json points = nlohmann::json::array();
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].fields.size() != header.size())
      throw InputError(fmt::format("{}:{}: {} fields, but the header has {} columns", name,
                                   rows[r].line, rows[r].fields.size(), header.size()));
    nlohmann::json p = nlohmann::json::object();
    for (size_t k = 0; k < header.size(); ++k) p[header[k]] = cell_json(rows[r].fields[k]);
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace servesim
