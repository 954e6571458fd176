#pragma once
// Progress of a long computation (a run, a sweep), drawn on a terminal or logged as lines.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>

namespace servesim {

/// Shows how far a computation has got: `label done/total unit, rate, ETA`. Nothing is drawn
/// in the first second, so a short computation stays silent (finish() then writes nothing).
/// On a terminal (the stream is std::cerr or std::clog and stderr is a TTY; or std::cout and
/// stdout is) it redraws one line in place at most every 100 ms and ends it with a newline in
/// finish(). Otherwise it writes a plain line at most every 10 s of wall time, or when another
/// tenth of `total` is done, whichever comes first (never more often than once a second).
/// Disabled: writes nothing and costs one branch per call.
///
/// update() is thread-safe (sweeps call it from worker threads) and cheap when nothing is
/// drawn: one clock read and a mutex. Callers that call it per simulated step should call it
/// only every few hundred steps. REQUIRES: `out` outlives this object; total > 0 (a total <= 0
/// shows `done unit` with no bar or ETA).
class Progress {
 public:
  Progress(std::string label, double total, std::string unit, std::ostream& out, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// `done` so far, in the unit given (not an increment). Values above total are clamped.
  void update(double done);
  /// Draws the final state once (with the total elapsed time) and stops drawing. Idempotent;
  /// called by the destructor if not called before.
  void finish();

  [[nodiscard]] bool is_tty() const { return m_tty; }

  /// The line drawn for a state, without the carriage return or newline (tests use this).
  [[nodiscard]] static std::string format_line(const std::string& label, double done, double total,
                                               const std::string& unit, double elapsed_s, bool bar);

 private:
  using Clock = std::chrono::steady_clock;
  void draw(double done, Clock::time_point now, bool final_line);

  std::string m_label;
  double m_total;
  std::string m_unit;
  std::ostream& m_out;
  bool m_enabled;
  bool m_tty = false;
  bool m_finished = false;
  std::mutex m_mutex;
  Clock::time_point m_start;
  Clock::time_point m_last_draw;
  double m_last_done_drawn = 0;
  double m_done = 0;
  bool m_drawn = false;  ///< anything drawn yet (a TTY line to end with a newline)
};

}  // namespace servesim
