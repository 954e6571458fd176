// fit_cpu_overhead's in-sample error figures (models/fit.cpp): mape is the mean of the points'
// absolute percentage errors under the fitted line, max_ape the largest of them.
#include <catch2/catch.hpp>
#include <cmath>

#include "models/fit.h"

namespace t_models_fit_overhead_error_test {

using namespace servesim;

TEST_CASE("cpu overhead fit: mape is the mean and max_ape the largest error of the points",
          "[models]") {
  // Three points off any one line: the fit cannot be exact, so every figure is > 0.
  const std::vector<std::pair<double, double>> pts{{1, 10}, {2, 10}, {3, 14}};
  const OverheadFit f = fit_cpu_overhead(pts);
  double sum = 0, worst = 0;
  for (const auto& [batch, ms] : pts) {
    const double ape =
        std::fabs(f.overhead.per_step_ms + f.overhead.per_sequence_ms * batch - ms) / ms;
    sum += ape;
    worst = std::max(worst, ape);
  }
  CHECK(f.points == 3);
  CHECK(f.mape > 0);
  CHECK(f.mape == Approx(sum / 3).epsilon(1e-12));
  CHECK(f.max_ape == Approx(worst).epsilon(1e-12));
  CHECK(f.mape <= f.max_ape);
  CHECK(f.min_batch == 1);
  CHECK(f.max_batch == 3);
}

}  // namespace t_models_fit_overhead_error_test
