// table: measured (batch size, step ms) points, linearly interpolated in the number of sequences
// and held flat beyond the first and last point, plus an optional cost per prefilled token:
//   step_ms = interp(sequences) + prefill_ms_per_token * prefill_tokens
// The points come inline (`points: [{batch: 1, ms: 6.3}, ...]`) or from a CSV file
// (`points_file: decode.csv` with a header holding `batch` and `ms`; other columns ignored).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/csv_columns.h"
#include "core/units.h"
#include "models/factories.h"
#include "models/table_checks.h"

namespace servesim {
namespace {

struct Point {
  double batch;
  double ms;
};

class TableModel final : public StepTimeModel {
 public:
  TableModel(std::vector<Point> points, double prefill_ms_per_token)
      : m_points(std::move(points)), m_prefill_ms_per_token(prefill_ms_per_token) {}

  double step_ms(const StepShape& s) const override {
    return interpolate(static_cast<double>(s.sequences)) +
           m_prefill_ms_per_token * static_cast<double>(s.prefill_tokens);
  }

 private:
  [[nodiscard]] double interpolate(double b) const {
    if (b <= m_points.front().batch) return m_points.front().ms;
    if (b >= m_points.back().batch) return m_points.back().ms;
    auto hi = std::upper_bound(m_points.begin(), m_points.end(), b,
                               [](double x, const Point& p) { return x < p.batch; });
    auto lo = hi - 1;
    const double f = (b - lo->batch) / (hi->batch - lo->batch);
    return lo->ms + f * (hi->ms - lo->ms);
  }

  std::vector<Point> m_points;
  double m_prefill_ms_per_token;
};

std::vector<Point> read_points_file(const Cfg& c) {
  const std::string path = c.existing_file("points_file", "points file");
  std::vector<Point> points;
  std::vector<CurvePoint> checked;  // for the drop check, with lines
  CsvColumns csv(path, {"batch", "ms"});
  while (csv.next_row()) {
    const auto batch = static_cast<double>(csv.integer(0, 1, 1 << 24));
    if (!points.empty() && batch <= points.back().batch)
      throw InputError(
          fmt::format("{}:{}: batch {} after batch {}: rows must be in increasing "
                      "batch order",
                      path, csv.line(), batch, points.back().batch));
    points.push_back({batch, csv.positive_real(1)});
    checked.push_back({batch, points.back().ms, csv.line()});
  }
  LatencyDrops drops(path, "ms", "batch");
  drops.add(std::move(checked));
  drops.warn();
  return points;
}

}  // namespace

std::unique_ptr<StepTimeModel> make_table_model(const Cfg& c) {
  std::vector<Point> points;
  if (c.one_of({"points", "points_file"}) == "points_file") {
    points = read_points_file(c);
  } else {
    for (const Cfg& p : c.list_of_maps("points")) {
      const auto batch = static_cast<double>(p.get_int("batch", {1, 1 << 24}));
      if (!points.empty() && batch <= points.back().batch)
        p.fail("batch", fmt::format("points must be in increasing batch order (previous batch {})",
                                    points.back().batch));
      points.push_back({batch, plausible_real(p, "ms", units::k_positive_cost_ms)});
    }
  }
  const double per_token = plausible_real(c, "prefill_ms_per_token", 0.0, units::k_cost_ms);
  return std::make_unique<TableModel>(std::move(points), per_token);
}

}  // namespace servesim
