#pragma once
// servesim report: one self-contained HTML page from result directories (docs/report.md).
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace servesim {

/// The page for `data` (report_data()): report/template.html with the CSS, uPlot, report.js
/// and the data inlined, so that it opens offline. `</` in the data is written `<\/` so that no
/// text from a result file can close the script element holding it.
void write_report_html(const nlohmann::json& data, std::ostream& out);

/// Reads `dirs` (report_data()) and writes the page to `out_path`, all or nothing. Throws
/// InputError naming the directory or file at fault; nothing is written then.
void write_report(const std::vector<std::string>& dirs, const std::string& out_path);

}  // namespace servesim
