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
  }
}

void RunExtras::before_commit() {
  m_run_progress.finish();
  if (m_timeline) m_timeline->finish();
}

std::string RunExtras::after_commit(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  std::string wrote;
  if (m_o.timeline)
    wrote += fmt::format(", {}/timeline.json", dir);
  else
    fs::remove(d / "timeline.json");
  if (m_o.report) {
    write_report({dir}, (d / "report.html").string(), nullptr, {}, &run_cost_json);
    wrote += fmt::format(", {}/report.html", dir);
  } else {
    fs::remove(d / "report.html");
  }
  return wrote;
}

}  // namespace servesim
