// vLLM benchmark / LLMServingSim request logs (`requests.jsonl`): one JSON object a line with
// `input_toks`, `output_toks` and `arrival_time` (seconds, any origin); other fields are
// ignored. Arrivals are taken relative to the earliest one, so a trace logged with wall-clock
// timestamps replays from time 0.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/csv_columns.h"
#include "traces/workload_source.h"

namespace servesim {
namespace {

int32_t token_field(const nlohmann::json& row, const char* key, const std::string& path,
                    size_t line) {
  auto it = row.find(key);
  if (it == row.end())
    throw InputError(fmt::format("{}:{}: missing field \"{}\"", path, line, key));
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 1'000'000'000)
    throw InputError(fmt::format("{}:{}: field \"{}\" = {}: must be an integer from 1 to "
                                 "1000000000", path, line, key, printable(it->dump())));
  return static_cast<int32_t>(it->get<int64_t>());
}

}  // namespace

std::vector<RequestSpec> read_vllm_jsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open trace file", printable(path, 1024)));
  return read_vllm_jsonl(in, path);
}

std::vector<RequestSpec> read_vllm_jsonl(std::istream& in, const std::string& file) {
  const std::string path = printable(file, 1024);
  std::vector<RequestSpec> rows;
  std::vector<double> arrivals;
  std::vector<size_t> lines;
  std::string line;
  size_t line_no = 0;
  while (read_bounded_line(in, line, CsvColumns::k_max_line_bytes, path, line_no + 1, "JSON line")) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(fmt::format("{}:{}: not a JSON object (column {})", path, line_no,
                                   e.byte));
    } catch (const nlohmann::json::exception&) {  // e.g. a number too large for a double
      throw InputError(fmt::format("{}:{}: not a JSON object servesim can read (a number out of "
                                   "range)", path, line_no));
    }
    if (!row.is_object()) throw InputError(fmt::format("{}:{}: not a JSON object", path, line_no));
    RequestSpec r;
    r.id = rows.size();
    r.prompt_tokens = token_field(row, "input_toks", path, line_no);
    r.output_tokens = token_field(row, "output_toks", path, line_no);
    auto it = row.find("arrival_time");
    if (it == row.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
        it->get<double>() < 0)
      throw InputError(fmt::format("{}:{}: field \"arrival_time\" must be a finite number of "
                                   "seconds >= 0", path, line_no));
    arrivals.push_back(it->get<double>());
    lines.push_back(line_no);
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no requests", path));
  const double origin = *std::min_element(arrivals.begin(), arrivals.end());
  for (size_t i = 0; i < rows.size(); ++i) {
    // Simulated time is int64 nanoseconds: arrivals must lie within 9e9 s of the first.
    if (arrivals[i] - origin > 9.0e9)
      throw InputError(fmt::format("{}:{}: field \"arrival_time\" = {}: more than 9e9 s after the "
                                   "earliest arrival ({})", path, lines[i], arrivals[i], origin));
    rows[i].arrival = Time::from_seconds(arrivals[i] - origin);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const RequestSpec& a, const RequestSpec& b) { return a.arrival < b.arrival; });
  return rows;
}

}  // namespace servesim
