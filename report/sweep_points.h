#pragma once
// A sweep's points.csv (what `servesim size` writes) for the report.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace servesim {

/// Reads points.csv into [{column: value, ...}, ...], one object per row: "true"/"false" as
/// booleans, numbers as numbers, empty fields as null, other text as strings. RFC 4180 CSV:
/// fields may be double-quoted (holding commas, newlines and "" for a quote); CRLF and a UTF-8
/// byte-order mark are accepted. The header must name label, feasible, meets_slo, pareto,
/// cost_per_hour_usd, output_tokens_per_s, ttft_p99_ms, tpot_p99_ms and e2e_p99_ms; other
/// columns (the sweep's axes) are kept as they are. Throws InputError naming the file and line
/// (a missing column, a row with another number of fields, an unterminated quote, a file over
/// 64 MiB).
/// `header`, when given, receives the header's columns in the file's order.
[[nodiscard]] nlohmann::json read_points_csv(const std::string& path,
                                             std::vector<std::string>* header = nullptr);

}  // namespace servesim
