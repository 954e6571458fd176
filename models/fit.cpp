#include "models/fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "core/config.h"
#include "core/errors.h"
#include "core/random.h"

namespace servesim {
namespace {

constexpr size_t k_features = 7;
constexpr std::array<const char*, k_features> k_linear_keys{"base_ms",
                                                            "per_seq_ms",
                                                            "per_context_token_ms",
                                                            "per_prefill_token_ms",
                                                            "per_prefill_token_sq_ms",
                                                            "per_mixed_context_token_ms",
                                                            "per_token_above_knee_ms"};

/// The linear model's terms; the last, the hinge, is max(0, tokens - knee).
std::array<double, k_features> features(const StepShape& s, int64_t knee) {
  const int64_t tokens = s.prefill_tokens + s.decode_sequences;
  const auto ctx = static_cast<double>(s.decode_context_tokens);
  return {1.0,
          static_cast<double>(s.sequences),
          ctx,
          static_cast<double>(s.prefill_tokens),
          s.prefill_tokens_sq,
          s.prefill_tokens > 0 ? ctx : 0.0,
          static_cast<double>(std::max<int64_t>(0, tokens - knee))};
}

class LinearFitted final : public FittedModel {
 public:
  LinearFitted(std::array<double, k_features> c, int64_t knee, bool hinge)
      : m_c(c), m_knee(knee), m_hinge(hinge) {}
  double predict_ms(const StepShape& s) const override {
    const auto f = features(s, m_knee);
    double ms = 0;
    for (size_t i = 0; i < f.size(); ++i) ms += m_c[i] * f[i];
    return ms;
  }
  std::string yaml() const override {
    std::string out = "kind: linear\n";
    for (size_t i = 0; i < (m_hinge ? k_features : k_features - 1); ++i)
      out += fmt::format("{}: {:.9g}\n", k_linear_keys[i], m_c[i]);
    if (m_hinge) out += fmt::format("knee_tokens: {}\n", m_knee);
    return out;
  }
  std::string kind() const override { return m_hinge ? "hinge" : "linear"; }

 private:
  std::array<double, k_features> m_c;
  int64_t m_knee;
  bool m_hinge;
};

// Relative least squares with non-negative coefficients; returns the coefficients and the sum
// of squared relative errors.
std::pair<std::array<double, k_features>, double> fit_terms(const std::vector<StepSample>& samples,
                                                            int64_t knee, bool hinge) {
  const size_t n = hinge ? k_features : k_features - 1;
  std::vector<std::vector<double>> rows;
  std::vector<double> b;
  for (const StepSample& s : samples) {
    const auto f = features(s.shape, knee);
    std::vector<double> row(f.begin(), f.begin() + long(n));
    for (double& v : row) v /= s.ms;
    rows.push_back(std::move(row));
    b.push_back(1.0);
  }
  const auto x = nnls(rows, b);
  std::array<double, k_features> c{};
  std::copy(x.begin(), x.end(), c.begin());
  if (c[0] + c[1] <= 0) c[0] = 1e-6;  // a step must take time (the linear model's own rule)
  double sse = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    double pred = 0;
    for (size_t j = 0; j < n; ++j) pred += c[j] * rows[i][j];
    sse += (pred - 1.0) * (pred - 1.0);
  }
  return {c, sse};
}

class TableFitted final : public FittedModel {
 public:
  TableFitted(std::vector<std::pair<double, double>> points, double per_token)
      : m_points(std::move(points)), m_per_token(per_token) {}
  double predict_ms(const StepShape& s) const override {
    return interp(static_cast<double>(s.sequences)) +
           m_per_token * static_cast<double>(s.prefill_tokens);
  }
  std::string yaml() const override {
    std::string out = "kind: table\npoints:\n";
    for (const auto& [b, ms] : m_points)
      out += fmt::format("  - {{batch: {}, ms: {:.6g}}}\n", b, ms);
    out += fmt::format("prefill_ms_per_token: {:.9g}\n", m_per_token);
    return out;
  }
  std::string kind() const override { return "table"; }
  [[nodiscard]] double interp(double b) const {
    if (b <= m_points.front().first) return m_points.front().second;
    if (b >= m_points.back().first) return m_points.back().second;
    auto hi = std::upper_bound(m_points.begin(), m_points.end(), b,
                               [](double x, const auto& p) { return x < p.first; });
    auto lo = hi - 1;
    return lo->second + (b - lo->first) / (hi->first - lo->first) * (hi->second - lo->second);
  }

 private:
  std::vector<std::pair<double, double>> m_points;
  double m_per_token;
};

}  // namespace

std::vector<double> nnls(const std::vector<std::vector<double>>& rows,
                         const std::vector<double>& b) {
  const size_t n = rows.empty() ? 0 : rows.front().size();
  Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(n));
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < n; ++j) a(Eigen::Index(i), Eigen::Index(j)) = rows[i][j];
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(b.data(), Eigen::Index(b.size()));
  std::vector<double> best(n, 0.0);
  double best_res = y.squaredNorm();
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    std::vector<Eigen::Index> cols;
    for (size_t j = 0; j < n; ++j)
      if (mask & (1u << j)) cols.push_back(Eigen::Index(j));
    Eigen::MatrixXd sub(a.rows(), Eigen::Index(cols.size()));
    for (size_t k = 0; k < cols.size(); ++k) sub.col(Eigen::Index(k)) = a.col(cols[k]);
    const Eigen::VectorXd x = sub.colPivHouseholderQr().solve(y);
    if ((x.array() < 0).any() || !x.allFinite()) continue;
    const double res = (sub * x - y).squaredNorm();
    if (res < best_res * (1 - 1e-12)) {
      best_res = res;
      std::fill(best.begin(), best.end(), 0.0);
      for (size_t k = 0; k < cols.size(); ++k) best[size_t(cols[k])] = x(Eigen::Index(k));
    }
  }
  return best;
}

std::unique_ptr<FittedModel> fit_linear(const std::vector<StepSample>& samples) {
  if (samples.size() < 2) throw InputError("calibrate: need at least 2 measurements to fit");
  return std::make_unique<LinearFitted>(fit_terms(samples, 0, false).first, 0, false);
}

std::unique_ptr<FittedModel> fit_hinge(const std::vector<StepSample>& samples) {
  if (samples.size() < 3) throw InputError("calibrate: need at least 3 measurements to fit");
  // The knee is chosen from a fixed ladder by the smallest squared relative error.
  int64_t best_knee = 0;
  std::pair<std::array<double, k_features>, double> best{{}, std::numeric_limits<double>::max()};
  for (int64_t knee : {0, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048}) {
    auto r = fit_terms(samples, knee, true);
    if (r.second < best.second) {
      best = r;
      best_knee = knee;
    }
  }
  return std::make_unique<LinearFitted>(best.first, best_knee, true);
}

std::unique_ptr<FittedModel> fit_table(const std::vector<StepSample>& samples) {
  std::map<int32_t, std::pair<double, int>> by_batch;  // decode-only: sum, count
  for (const StepSample& s : samples)
    if (s.shape.prefill_tokens == 0) {
      auto& [sum, count] = by_batch[s.shape.sequences];
      sum += s.ms;
      ++count;
    }
  if (by_batch.empty())
    throw InputError("calibrate: the table form needs decode-only measurements (prefill_tokens 0)");
  std::vector<std::pair<double, double>> points;
  for (const auto& [batch, sc] : by_batch) points.emplace_back(batch, sc.first / sc.second);
  TableFitted decode_only(points, 0.0);
  // Per-token prefill cost: relative least squares of the remainder on prefill tokens, >= 0.
  double num = 0, den = 0;
  for (const StepSample& s : samples) {
    if (s.shape.prefill_tokens == 0) continue;
    const double x = static_cast<double>(s.shape.prefill_tokens) / s.ms;
    const double r = (s.ms - decode_only.interp(s.shape.sequences)) / s.ms;
    num += x * r;
    den += x * x;
  }
  const double per_token = den > 0 ? std::max(0.0, num / den) : 0.0;
  return std::make_unique<TableFitted>(std::move(points), per_token);
}

namespace {

struct RooflineTerms {
  double memory_ms, compute_ms, fixed_ms;  // at 100% efficiency; fixed: all-reduces
};

class RooflineFitted final : public FittedModel {
 public:
  RooflineFitted(std::shared_ptr<const StepTimeModel> ideal, std::string base_yaml, double eb,
                 double ec, double overhead)
      : m_ideal(std::move(ideal)),
        m_base(std::move(base_yaml)),
        m_eb(eb),
        m_ec(ec),
        m_o(overhead) {}
  double predict_ms(const StepShape& s) const override {
    const RooflineTerms t = terms(*m_ideal, s);
    return std::max(t.memory_ms / m_eb, t.compute_ms / m_ec) + t.fixed_ms + m_o;
  }
  std::string yaml() const override {
    return fmt::format(
        "{}bandwidth_efficiency: {:.4g}\ncompute_efficiency: {:.4g}\noverhead_ms: {:.6g}\n", m_base,
        m_eb, m_ec, m_o);
  }
  std::string kind() const override { return "roofline"; }

  static RooflineTerms terms(const StepTimeModel& ideal, const StepShape& s) {
    const auto c = ideal.cost(s);
    const double ms = ideal.step_ms(s);
    return {c->ideal_ms_bandwidth, c->ideal_ms_compute,
            std::max(0.0, ms - std::max(c->ideal_ms_bandwidth, c->ideal_ms_compute))};
  }

 private:
  std::shared_ptr<const StepTimeModel> m_ideal;
  std::string m_base;
  double m_eb, m_ec, m_o;
};

}  // namespace

Fitter make_roofline_fitter(const std::string& roofline_yaml) {
  const auto doc = std::make_shared<Document>(
      roofline_yaml + "bandwidth_efficiency: 1\ncompute_efficiency: 1\noverhead_ms: 0\n",
      "<calibrate roofline>");
  std::shared_ptr<const StepTimeModel> ideal = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  StepShape probe;
  probe.sequences = probe.decode_sequences = 1;
  probe.decode_context_tokens = 1;
  if (!ideal->cost(probe)) throw InputError("calibrate: the roofline model gave no cost");
  return [ideal,
          roofline_yaml](const std::vector<StepSample>& samples) -> std::unique_ptr<FittedModel> {
    std::vector<RooflineTerms> t;
    t.reserve(samples.size());
    for (const StepSample& s : samples) t.push_back(RooflineFitted::terms(*ideal, s.shape));
    double best = std::numeric_limits<double>::max(), best_eb = 1, best_ec = 1, best_o = 0;
    for (int i = 5; i <= 100; ++i) {
      for (int j = 5; j <= 100; ++j) {
        const double eb = i / 100.0, ec = j / 100.0;
        // Relative residual r = (m - p - o) / m; the o >= 0 minimising sum r^2 is closed-form.
        double num = 0, den = 0;
        for (size_t k = 0; k < samples.size(); ++k) {
          const double m = samples[k].ms;
          const double p = std::max(t[k].memory_ms / eb, t[k].compute_ms / ec) + t[k].fixed_ms;
          num += (m - p) / (m * m);
          den += 1.0 / (m * m);
        }
        const double o = std::max(0.0, num / den);
        double sse = 0;
        for (size_t k = 0; k < samples.size(); ++k) {
          const double m = samples[k].ms;
          const double p = std::max(t[k].memory_ms / eb, t[k].compute_ms / ec) + t[k].fixed_ms + o;
          sse += (p - m) * (p - m) / (m * m);
        }
        if (sse < best) {
          best = sse;
          best_eb = eb;
          best_ec = ec;
          best_o = o;
        }
      }
    }
    return std::make_unique<RooflineFitted>(ideal, roofline_yaml, best_eb, best_ec, best_o);
  };
}

OverheadFit fit_cpu_overhead(const std::vector<std::pair<double, double>>& batch_ms) {
  if (batch_ms.size() < 2)
    throw InputError("cpu overhead: need at least 2 (batch size, ms) points to fit");
  std::vector<std::vector<double>> rows;
  for (const auto& [batch, ms] : batch_ms) {
    if (!(ms > 0))
      throw InputError(fmt::format("cpu overhead: {} ms at batch {}: must be > 0", ms, batch));
    rows.push_back({1.0 / ms, batch / ms});
  }
  const auto x = nnls(rows, std::vector<double>(rows.size(), 1.0));
  OverheadFit fit;
  fit.overhead = {x[0], x[1]};
  fit.points = batch_ms.size();
  fit.min_batch = fit.max_batch = batch_ms.front().first;
  for (const auto& [batch, ms] : batch_ms) {
    const double ape =
        std::fabs(fit.overhead.per_step_ms + fit.overhead.per_sequence_ms * batch - ms) / ms;
    fit.mape += ape / static_cast<double>(batch_ms.size());
    fit.max_ape = std::max(fit.max_ape, ape);
    fit.min_batch = std::min(fit.min_batch, batch);
    fit.max_batch = std::max(fit.max_batch, batch);
  }
  return fit;
}

FitReport evaluate_fit(const Fitter& fitter, const std::vector<StepSample>& samples, int folds,
                       size_t worst_count, uint64_t seed) {
  FitReport rep;
  const auto in = fitter(samples);
  for (const StepSample& s : samples) {
    const double ape = std::fabs(in->predict_ms(s.shape) - s.ms) / s.ms;
    rep.mape_in += ape;
    rep.max_ape_in = std::max(rep.max_ape_in, ape);
  }
  rep.mape_in /= static_cast<double>(samples.size());

  rep.folds = std::min<int>(folds, static_cast<int>(samples.size()));
  if (rep.folds < 2) return rep;
  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed);
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[size_t(rng.uniform_int(0, int64_t(i) - 1))]);
  std::vector<PointError> errors;
  for (int f = 0; f < rep.folds; ++f) {
    std::vector<StepSample> train;
    std::vector<size_t> test;
    for (size_t k = 0; k < order.size(); ++k)
      (static_cast<int>(k % size_t(rep.folds)) == f ? test.push_back(order[k])
                                                    : train.push_back(samples[order[k]]));
    std::unique_ptr<FittedModel> m;
    try {
      m = fitter(train);
    } catch (const InputError&) {
      continue;  // this fold's training part cannot determine the form; skip it
    }
    for (size_t i : test) {
      const double pred = m->predict_ms(samples[i].shape);
      errors.push_back({i, samples[i].ms, pred, std::fabs(pred - samples[i].ms) / samples[i].ms});
    }
  }
  if (errors.empty()) return rep;
  for (const auto& e : errors) {
    rep.mape_cv += e.ape;
    rep.max_ape_cv = std::max(rep.max_ape_cv, e.ape);
  }
  rep.mape_cv /= static_cast<double>(errors.size());
  std::stable_sort(errors.begin(), errors.end(),
                   [](const PointError& a, const PointError& b) { return a.ape > b.ape; });
  errors.resize(std::min(errors.size(), worst_count));
  rep.worst_cv = std::move(errors);
  return rep;
}

}  // namespace servesim
