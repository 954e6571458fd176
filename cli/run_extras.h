#pragma once
// The optional outputs of `servesim run` beside its results: timeline.json (--timeline),
// report.html (--report) and progress on stderr (docs/report.md).
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "cli/progress.h"
#include "cli/run_progress.h"
#include "metrics/output.h"
#include "metrics/run_scenario.h"
#include "metrics/timeline.h"

namespace servesim {

struct RunExtrasOptions {
  bool timeline = false;              ///< --timeline
  uint64_t timeline_requests = 1000;  ///< --timeline-requests: ids below this get a track
  bool report = false;                ///< --report (turns on steps.csv too)
  bool progress = true;               ///< false with --quiet or --no-progress
};

/// One run's extras. Use: construct once the scenario is built and `files` open (it opens
/// timeline.json there and hooks its observers into `options`, and has the commit remove an
/// earlier run's timeline.json and report.html, which would not match these results), run, call
/// before_commit(), then commit the files and call after_commit().
class RunExtras {
 public:
  /// `requests_hint`: the workload's request count when known up front (0: unknown), the
  /// progress's total. Progress goes to `err` (stderr: a bar on a terminal, else a line every
  /// 10 s; nothing for a run under a second).
  RunExtras(const RunExtrasOptions& o, ResultFiles& files, RunOptions& options,
            size_t requests_hint, std::ostream& err);
  /// Ends the progress line and closes timeline.json.
  void before_commit();
  /// Writes report.html into `dir` when asked. Returns the names written, for the "wrote ..."
  /// line (", DIR/timeline.json, DIR/report.html"). Throws (WriteError, ...) if report.html
  /// cannot be written: the caller then retracts the committed files.
  [[nodiscard]] std::string after_commit(const std::string& dir);

 private:
  RunExtrasOptions m_o;
  Progress m_progress;
  RunProgress m_run_progress;
  std::optional<TimelineWriter> m_timeline;
};

}  // namespace servesim
