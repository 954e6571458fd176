#pragma once
// Fitting step-time models to measured steps, and measuring how well they fit.
//
// A measurement is a step's shape and its measured duration. Two model forms are fitted:
//   linear: base + per_seq x sequences + per_context_token x decode_context_tokens
//           + per_prefill_token x prefill_tokens + per_prefill_token_sq x sum(chunk^2),
//           by least squares on relative error with every coefficient >= 0;
//   hinge:  linear plus per_token_above_knee x max(0, tokens - knee): matrix multiplies cost
//           about the same until a step computes `knee` tokens (reading the weights dominates),
//           then grow with every token;
//   table:  decode time by batch size (the mean of the decode-only measurements at each batch
//           size, interpolated), plus a per-prefilled-token cost fitted to the rest; this follows
//           step functions (CUDA-graph batch buckets) that one linear form cannot.
// Errors are absolute percentage errors |predicted - measured| / measured.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/step_time_model.h"

namespace servesim {

struct StepSample {
  StepShape shape;
  double ms = 0;      ///< measured duration, > 0
  std::string label;  ///< where it came from, for the worst-points table
};

/// A fitted model: predicts, and writes itself as a `step_time` YAML section.
class FittedModel {
 public:
  virtual ~FittedModel() = default;
  [[nodiscard]] virtual double predict_ms(const StepShape& s) const = 0;
  [[nodiscard]] virtual std::string yaml() const = 0;
  [[nodiscard]] virtual std::string kind() const = 0;
};

/// Fits one model form; throws InputError when the samples cannot determine it.
using Fitter = std::function<std::unique_ptr<FittedModel>(const std::vector<StepSample>&)>;

[[nodiscard]] std::unique_ptr<FittedModel> fit_linear(const std::vector<StepSample>& samples);
/// linear plus a hinge term, per_token_above_knee_ms x max(0, tokens - knee_tokens), the knee
/// picked from a fixed ladder (0 to 2,048 tokens).
[[nodiscard]] std::unique_ptr<FittedModel> fit_hinge(const std::vector<StepSample>& samples);
[[nodiscard]] std::unique_ptr<FittedModel> fit_table(const std::vector<StepSample>& samples);

/// The roofline model (models/roofline.cpp) with its efficiencies and overhead fitted:
/// `roofline_yaml` is a step_time section naming the catalogue model and accelerator (and
/// optionally tensor_parallel and dtypes). Each step's ideal memory and compute times come from
/// the roofline at 100% efficiency; bandwidth and compute efficiency are searched on a 1% grid
/// from 5% to 100%, and the per-step overhead is then solved in closed form, >= 0.
[[nodiscard]] Fitter make_roofline_fitter(const std::string& roofline_yaml);

/// A per-step CPU overhead (models/step_time_model.h) fitted to measured (batch size, ms)
/// points, and how well it fits them.
struct OverheadFit {
  CpuOverhead overhead;
  double mape = 0, max_ape = 0;  ///< in-sample, over the points
  size_t points = 0;
  double min_batch = 0, max_batch = 0;
};

/// ms = per_step_ms + per_sequence_ms x batch by least squares on relative error, both >= 0.
/// Throws InputError with fewer than 2 points or a point whose ms is not > 0.
[[nodiscard]] OverheadFit fit_cpu_overhead(const std::vector<std::pair<double, double>>& batch_ms);

/// Non-negative least squares: minimises |A x - b| subject to x >= 0. Exact for the few
/// columns used here (every subset of free columns is tried). REQUIRES: A.cols() <= 12.
[[nodiscard]] std::vector<double> nnls(const std::vector<std::vector<double>>& rows,
                                       const std::vector<double>& b);

struct PointError {
  size_t index = 0;
  double measured_ms = 0, predicted_ms = 0, ape = 0;
};

struct FitReport {
  double mape_in = 0, max_ape_in = 0;  ///< in-sample
  double mape_cv = 0, max_ape_cv = 0;  ///< k-fold cross-validation (each point predicted by a
                                       ///< model fitted without its fold)
  int folds = 0;
  std::vector<PointError> worst_cv;  ///< largest cross-validated errors, worst first
};

/// In-sample and k-fold errors. Folds are a seeded shuffle, so the report is deterministic.
[[nodiscard]] FitReport evaluate_fit(const Fitter& fitter, const std::vector<StepSample>& samples,
                                     int folds, size_t worst_count, uint64_t seed);

}  // namespace servesim
