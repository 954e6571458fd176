#pragma once
// servesim report: one self-contained HTML page from result directories (docs/report.md).
#include <csignal>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report_data.h"

namespace servesim {

/// The page for `data` (report_data()): report/template.html with the CSS, uPlot, report.js
/// and the data inlined, so that it opens offline. `</` in the data is written `<\/` so that no
/// text from a result file can close the script element holding it.
void write_report_html(const nlohmann::json& data, std::ostream& out);

/// Reads `dirs` (report_data()) and writes the page to `out_path`, all or nothing (through
/// core/output_file.h: `out_path` must be absent or a regular file). `labels`: the names the
/// page gives the directories (--label), none or one per directory; without them, each
/// directory's shortest distinguishing path suffix. Throws InputError naming the directory or
/// file at fault (or the labels' count), or Interrupted once `interrupt` is set (checked
/// between result folders); nothing is written then.
/// `run_cost` as for report_data().
void write_report(const std::vector<std::string>& dirs, const std::string& out_path,
                  const volatile std::sig_atomic_t* interrupt = nullptr,
                  const std::vector<std::string>& labels = {}, const RunCost& run_cost = {});

}  // namespace servesim
