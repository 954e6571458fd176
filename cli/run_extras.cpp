#include "cli/run_extras.h"

#include <fmt/format.h>

#include <filesystem>

#include "report/report.h"
#include "sizing/run_cost.h"

namespace servesim {

RunExtras::RunExtras(const RunExtrasOptions& o, ResultFiles& files, RunOptions& options,
                     size_t requests_hint, std::ostream& err)
    : m_o(o),
      m_progress("run", static_cast<double>(requests_hint), "requests", err, o.progress),
      m_run_progress(m_progress) {
  if (m_o.progress) options.request_recorders.push_back(&m_run_progress);
  if (m_o.timeline) {
    m_timeline.emplace(files.open("timeline.json"), m_o.timeline_requests);
    options.step_observers.push_back(&*m_timeline);
    options.request_recorders.push_back(&*m_timeline);
  } else {
    files.drop("timeline.json");  // an earlier run's would not match these results
  }
  files.drop("report.html");  // written after the commit when asked, from the files in place
}

void RunExtras::before_commit() {
  m_run_progress.finish();
  if (m_timeline) m_timeline->finish();
}

std::string RunExtras::after_commit(const std::string& dir) {
  std::string wrote;
  if (m_o.timeline) wrote += fmt::format(", {}/timeline.json", dir);
  if (m_o.report) {
    write_report({dir}, (std::filesystem::path(dir) / "report.html").string(), nullptr, {},
                 &run_cost_json);
    wrote += fmt::format(", {}/report.html", dir);
  }
  return wrote;
}

}  // namespace servesim
