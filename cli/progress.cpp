#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace servesim {
namespace {

constexpr double k_tty_interval_s = 0.1;
constexpr double k_line_interval_s = 10.0;
constexpr double k_line_min_interval_s = 1.0;
constexpr int k_bar_width = 24;

// The file descriptor behind a standard stream, or -1 for any other stream.
int fd_of(const std::ostream& out) {
  if (&out == &std::cerr || &out == &std::clog) return STDERR_FILENO;
  if (&out == &std::cout) return STDOUT_FILENO;
  return -1;
}

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.0f}s", s);
  const auto total = static_cast<int64_t>(s);
  if (s < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, (total / 60) % 60);
}

std::string amount_text(double v) {
  if (v >= 100 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f}", v);
}

}  // namespace

Progress::Progress(std::string label, double total, std::string unit, std::ostream& out,
                   bool enabled)
    : m_label(std::move(label)),
      m_total(total),
      m_unit(std::move(unit)),
      m_out(out),
      m_enabled(enabled),
      m_start(Clock::now()),
      m_last_draw(m_start) {
  const int fd = fd_of(out);
  m_tty = fd >= 0 && isatty(fd) == 1;
}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {  // a destructor must not throw; a failed write to stderr is not worth it
  }
}

std::string Progress::format_line(const std::string& label, double done, double total,
                                  const std::string& unit, double elapsed_s, bool bar) {
  const double rate = elapsed_s > 0 ? done / elapsed_s : 0;
  std::string line = label.empty() ? "" : label + " ";
  if (!(total > 0))
    return line + fmt::format("{} {}, {} {}/s, {} elapsed", amount_text(done), unit,
                              amount_text(rate), unit, duration_text(elapsed_s));
  const double frac = std::clamp(done / total, 0.0, 1.0);
  if (bar) {
    const int filled = static_cast<int>(std::lround(frac * k_bar_width));
    line += "[" + std::string(filled, '#') + std::string(k_bar_width - filled, '.') + "] ";
  }
  line += fmt::format("{:3.0f}% {}/{} {}, {} {}/s", 100 * frac, amount_text(done),
                      amount_text(total), unit, amount_text(rate), unit);
  if (frac >= 1.0) return line + fmt::format(", {} elapsed", duration_text(elapsed_s));
  const double eta = rate > 0 ? (total - done) / rate : -1;
  return line + fmt::format(", ETA {}", duration_text(eta));
}

void Progress::update(double done) {
  if (!m_enabled) return;
  const std::lock_guard<std::mutex> lock(m_mutex);
  if (m_finished) return;
  m_done = m_total > 0 ? std::min(done, m_total) : done;
  const Clock::time_point now = Clock::now();
  // Nothing for the first second: a short computation shows no progress at all.
  if (now - m_start < std::chrono::seconds(1)) return;
  const double since = std::chrono::duration<double>(now - m_last_draw).count();
  if (m_tty) {
    if (since >= k_tty_interval_s) draw(m_done, now, false);
    return;
  }
  const bool tenth = m_total > 0 && m_done - m_last_done_drawn >= 0.1 * m_total;
  if (since >= k_line_interval_s || (tenth && since >= k_line_min_interval_s))
    draw(m_done, now, false);
}

void Progress::finish() {
  if (!m_enabled) return;
  const std::lock_guard<std::mutex> lock(m_mutex);
  if (m_finished) return;
  m_finished = true;
  // A run too short to have drawn anything stays silent: no bar flashes for 50 ms runs.
  if (!m_drawn) return;
  draw(m_done, Clock::now(), true);
}

void Progress::draw(double done, Clock::time_point now, bool final_line) {
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  const std::string line = format_line(m_label, done, m_total, m_unit, elapsed, m_tty);
  if (m_tty)  // \r and clear to the end of the line, so a shorter line leaves no tail
    m_out << '\r' << line << "\x1b[K" << (final_line ? "\n" : "");
  else
    m_out << line << '\n';
  m_out.flush();
  m_last_draw = now;
  m_last_done_drawn = done;
  m_drawn = true;
}

}  // namespace servesim
