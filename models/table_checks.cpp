#include "models/table_checks.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

namespace servesim {

void LatencyDrops::add(std::vector<CurvePoint> points) {
  std::sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) {
    return a.work != b.work ? a.work < b.work : a.latency < b.latency;
  });
  const CurvePoint* prev = nullptr;
  for (const CurvePoint& p : points) {
    if (prev != nullptr && p.work == prev->work) continue;  // the fastest of equal works is kept
    if (prev != nullptr && p.latency * k_latency_drop_factor < prev->latency)
      m_lines.push_back(p.line);
    prev = &p;
  }
}

std::vector<size_t> LatencyDrops::lines() const {
  std::vector<size_t> out = m_lines;
  std::sort(out.begin(), out.end());
  return out;
}

std::string LatencyDrops::message() const {
  if (m_lines.empty()) return {};
  const std::vector<size_t> all = lines();
  constexpr size_t k_shown = 5;
  const std::vector<size_t> shown(
      all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), k_shown)));
  return fmt::format(
      "{}: {} falls to less than 1/{:g} of the time at the next smaller {} on {} row{} (line{} "
      "{}{}): measurement noise or rows of another table? They are used as given",
      m_file, m_column, k_latency_drop_factor, m_work, all.size(), all.size() == 1 ? "" : "s",
      all.size() == 1 ? "" : "s", fmt::join(shown, ", "), all.size() > k_shown ? ", ..." : "");
}

void LatencyDrops::warn() const {
  const std::string m = message();
  if (m.empty()) return;
  // Once per process for each file and column: a sweep builds the same tables for every point.
  // Diagnostics only; no simulated figure depends on it.
  static std::mutex mutex;
  static std::set<std::pair<std::string, std::string>> warned;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!warned.emplace(m_file, m_column).second) return;
  }
  spdlog::warn("{}", m);
}

}  // namespace servesim
