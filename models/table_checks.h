#pragma once
// Checks of measured latency tables as they are read (docs/data.md#checks-on-load). Each reader
// refuses a latency that is not a finite number > 0 itself (CsvColumns::positive_real names the
// file, line and column); here is the softer check: latency should not fall as the work grows.
// Real measurements are noisy (a kernel switch, a warm-up outlier), so a fall is only warned
// about, and only a strong one: below 1/k_latency_drop_factor of the time at the next smaller
// size on the same curve. The shipped tables were scanned with this factor (docs/data.md).
#include <cstddef>
#include <string>
#include <vector>

namespace servesim {

/// A time that falls below 1/3 of the time at the next smaller size is flagged.
inline constexpr double k_latency_drop_factor = 3.0;

/// One measured point of a latency curve: the work (tokens, sequences, bytes, batch), its
/// latency in any unit, and the line of the file it was read from.
struct CurvePoint {
  double work = 0;
  double latency = 0;
  size_t line = 0;
};

/// Collects the lines where a curve's latency drops strongly, over any number of curves of one
/// file, and warns once (spdlog, one line) when finished, naming the file, the column, the
/// number of such rows and the first few lines. Use: add() each curve, then warn().
class LatencyDrops {
 public:
  LatencyDrops(std::string file, std::string column, std::string work)
      : m_file(std::move(file)), m_column(std::move(column)), m_work(std::move(work)) {}
  /// One curve's points, in any order; points of equal work keep the fastest, as the readers
  /// interpolate them.
  void add(std::vector<CurvePoint> points);
  /// A line found flagged earlier (add() of the same points gave it): the table cache keeps
  /// the lines rather than the points.
  void flag(size_t line) { m_lines.push_back(line); }
  /// The flagged lines so far, ascending.
  [[nodiscard]] std::vector<size_t> lines() const;
  /// The warning's text; empty when nothing was flagged.
  [[nodiscard]] std::string message() const;
  /// Logs message() as a warning when it is not empty, once per process for each file and
  /// column (a sweep reads the same tables for every point).
  void warn() const;

 private:
  std::string m_file, m_column, m_work;
  std::vector<size_t> m_lines;
};

}  // namespace servesim
