#include "models/layer_profile.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>

#include "core/config.h"
#include "core/csv_columns.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "core/units.h"
#include "models/factories.h"
#include "models/table_checks.h"

namespace servesim {
namespace fs = std::filesystem;

void Curve::finish() { std::sort(m_points.begin(), m_points.end()); }

double Curve::at(double x) const {
  if (x <= m_points.front().first || m_points.size() == 1) return m_points.front().second;
  auto hi = std::lower_bound(m_points.begin(), m_points.end(), std::make_pair(x, -1e300));
  if (hi == m_points.end()) hi = m_points.end() - 1;
  const auto lo = hi - 1;
  return lo->second + (x - lo->first) / (hi->first - lo->first) * (hi->second - lo->second);
}

double ExpertRouting::activated_per_gpu(double tokens) const {
  if (experts <= 0 || tokens <= 0) return 0.0;
  const double miss = 1.0 - std::min(1.0, top_k / experts);  // one token misses an expert
  return experts / expert_parallel * (1.0 - std::pow(miss, tokens));
}

namespace {

std::map<std::string, Curve> read_curves(const std::string& path, const std::string& size_col) {
  std::map<std::string, Curve> curves;
  std::map<std::string, std::vector<CurvePoint>> points;  // for the drop check, with lines
  CsvColumns csv(path, {"layer", size_col, "time_us"});
  while (csv.next_row()) {
    const auto size = static_cast<double>(csv.integer(1, 0, 1 << 30));
    const double us = csv.positive_real(2);
    const std::string layer(csv.field(0));
    curves[layer].add(size, us);
    points[layer].push_back({size, us, csv.line()});
  }
  for (auto& [name, c] : curves) c.finish();
  LatencyDrops drops(path, "time_us", size_col + " of the same layer");
  for (auto& [name, p] : points) drops.add(std::move(p));
  drops.warn();
  return curves;
}

const Curve& need(const std::map<std::string, Curve>& curves, const std::string& name,
                  const std::string& file, const char* why = "") {
  auto it = curves.find(name);
  if (it == curves.end())
    throw InputError(fmt::format("{}: no rows for layer {}, which a step needs{}", file,
                                 quote_input(name), why));
  return it->second;
}

/// Sums curves (with multiplicities) on the union of their x values.
Curve sum_curves(const std::vector<std::pair<const Curve*, double>>& parts,
                 const std::vector<double>& xs) {
  Curve out;
  for (double x : xs) {
    double y = 0;
    for (const auto& [c, k] : parts) y += k * c->at(x);
    out.add(x, y);
  }
  out.finish();
  return out;
}

std::vector<double> sizes_of(const std::string& path, const std::string& size_col) {
  std::vector<double> xs;
  CsvColumns csv(path, {size_col});
  while (csv.next_row()) xs.push_back(static_cast<double>(csv.integer(0, 0, 1 << 30)));
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return xs;
}

// dense.csv's layers: how often each runs in a transformer layer (0: once a step). The MLP
// trio is a dense model's; a mixture of experts has moe.csv instead.
const std::map<std::string, double>& dense_calls() {
  static const std::map<std::string, double> calls{
      {"embedding", 0}, {"final_layernorm", 0}, {"layernorm", 2}, {"qkv_proj", 1},
      {"qk_norm", 1},   {"rotary_emb", 1},      {"o_proj", 1},    {"gate_up_proj", 1},
      {"act_fn", 1},    {"down_proj", 1}};
  return calls;
}
const std::vector<std::string> k_mlp{"gate_up_proj", "act_fn", "down_proj"};

/// N for a folder named tpN with N at most 1,024 (tensor_parallel's range), else 0.
int tp_of_folder(const fs::path& dir) {
  constexpr int k_max_tp = 1024;
  const std::string name = dir.filename().string();
  if (name.size() < 3 || name.rfind("tp", 0) != 0) return 0;
  int n = 0;
  for (char ch : name.substr(2)) {
    if (ch < '0' || ch > '9') return 0;
    n = 10 * n + (ch - '0');
    if (n > k_max_tp) return 0;
  }
  return n;
}

}  // namespace

LayerProfile::LayerProfile(const std::string& dir, int layers) : m_layers(layers) {
  const fs::path p(dir);
  read_moe(dir);
  const std::string dense_file = (p / "dense.csv").string();
  const std::string seq_file = (p / "per_sequence.csv").string();
  const auto dense = read_curves(dense_file, "tokens");
  const auto per_seq = read_curves(seq_file, "sequences");
  std::vector<std::pair<const Curve*, double>> per_layer;
  for (const auto& [name, curve] : dense) {
    auto it = dense_calls().find(name);
    if (it == dense_calls().end()) {
      std::vector<std::string> known;
      for (const auto& [k, n] : dense_calls()) known.push_back(k);
      throw InputError(fmt::format("{}: layer {} is not one a step is composed of (known: {})",
                                   dense_file, quote_input(name), join_names(known)));
    }
    const bool mlp = std::find(k_mlp.begin(), k_mlp.end(), name) != k_mlp.end();
    if (mlp && is_moe())
      throw InputError(
          fmt::format("{}: has a dense MLP ({}) beside moe.csv; models mixing "
                      "dense and mixture-of-experts layers are not composed",
                      dense_file, quote_input(name)));
    if (it->second > 0) per_layer.emplace_back(&curve, it->second);
  }
  const char* no_moe = " (a mixture of experts needs moe.csv here or in ../tp1)";
  for (const char* name : {"layernorm", "qkv_proj", "rotary_emb", "o_proj"})
    need(dense, name, dense_file);
  if (!is_moe())
    for (const auto& name : k_mlp) need(dense, name, dense_file, no_moe);
  const auto token_sizes = sizes_of(dense_file, "tokens");
  m_per_layer_dense = sum_curves(per_layer, token_sizes);
  m_once_tokens = sum_curves({{&need(dense, "embedding", dense_file), 1},
                              {&need(dense, "final_layernorm", dense_file), 1}},
                             token_sizes);
  m_once_sequences = sum_curves(
      {{&need(per_seq, "lm_head", seq_file), 1}, {&need(per_seq, "sampler", seq_file), 1}},
      sizes_of(seq_file, "sequences"));

  CsvColumns csv((p / "attention.csv").string(),
                 {"prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "time_us"});
  while (csv.next_row()) {
    AttentionRow r{};
    r.prefill_chunk = static_cast<double>(csv.integer(0, 0, 1 << 24));
    r.kv_prefill = static_cast<double>(csv.integer(1, 0, int64_t{1} << 40));
    r.n_decode = static_cast<double>(csv.integer(2, 0, 1 << 24));
    r.kv_decode = static_cast<double>(csv.integer(3, 0, int64_t{1} << 40));
    r.time_us = csv.positive_real(4);
    r.line = csv.line();
    m_rows.push_back(r);
  }
  if (m_rows.empty()) throw InputError(fmt::format("{}/attention.csv: no rows", dir));
  for (const AttentionRow& r : m_rows) {
    const double v[4] = {r.prefill_chunk, r.kv_prefill, r.n_decode, r.kv_decode};
    for (int d = 0; d < 4; ++d) m_axes[d].push_back(v[d]);
  }
  for (auto& a : m_axes) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  for (const AttentionRow& r : m_rows) {
    const double v[4] = {r.prefill_chunk, r.kv_prefill, r.n_decode, r.kv_decode};
    std::array<uint32_t, 4> key{};
    for (int d = 0; d < 4; ++d)
      key[d] = static_cast<uint32_t>(std::lower_bound(m_axes[d].begin(), m_axes[d].end(), v[d]) -
                                     m_axes[d].begin());
    m_grid[key] = r.time_us;
  }
}

void LayerProfile::read_moe(const std::string& dir) {
  const fs::path p(dir);
  const int folder_tp = tp_of_folder(p);
  fs::path file = p / "moe.csv";
  if (!input_exists(file) && folder_tp > 1) file = p.parent_path() / "tp1" / "moe.csv";
  if (!input_exists(file)) return;
  std::map<double, Curve> by_activated;
  std::map<double, std::vector<CurvePoint>> points;  // for the drop check, with lines
  CsvColumns csv(file.string(), {"tokens", "activated_experts", "time_us"});
  while (csv.next_row()) {
    const auto activated = static_cast<double>(csv.integer(1, 1, 1 << 20));
    const auto tokens = static_cast<double>(csv.integer(0, 1, 1 << 30));
    const double us = csv.positive_real(2);
    by_activated[activated].add(tokens, us);
    points[activated].push_back({tokens, us, csv.line()});
  }
  LatencyDrops drops(file.string(), "time_us", "tokens of the same activated_experts");
  for (auto& [activated, at] : points) drops.add(std::move(at));
  drops.warn();
  if (by_activated.empty()) throw InputError(fmt::format("{}: no rows", file.string()));
  for (auto& [activated, curve] : by_activated) {
    curve.finish();
    m_moe_rows.emplace_back(activated, std::move(curve));
  }
  m_routing.experts = m_moe_rows.back().first;
  m_routing.top_k = m_moe_rows.front().first;
  m_routing.expert_parallel = std::max(1, folder_tp);
}

double LayerProfile::non_attention_us(double tokens, double sequences) const {
  return m_layers * (layer_dense_us(tokens) + moe_us(tokens, m_routing)) +
         once_us(tokens, sequences);
}

double LayerProfile::moe_us(double tokens, const ExpertRouting& r) const {
  if (m_moe_rows.empty() || tokens <= 0) return 0.0;
  const double activated = r.activated_per_gpu(tokens);
  const auto& rows = m_moe_rows;
  if (rows.size() == 1 || activated <= rows.front().first) return rows.front().second.at(tokens);
  // Between the bracketing rows of activated experts; along the last two beyond the last.
  auto hi = std::lower_bound(rows.begin(), rows.end(), activated,
                             [](const auto& row, double a) { return row.first < a; });
  if (hi == rows.end()) hi = rows.end() - 1;
  const auto lo = hi - 1;
  const double y0 = lo->second.at(tokens), y1 = hi->second.at(tokens);
  return y0 + (activated - lo->first) / (hi->first - lo->first) * (y1 - y0);
}

double LayerProfile::attention_us(double pc, double kvp, double n, double kvd) const {
  const double q[4] = {pc, kvp, n, kvd};
  std::array<uint32_t, 4> lo{}, hi{};
  std::array<double, 4> frac{};
  for (int d = 0; d < 4; ++d) {
    const auto& a = m_axes[d];
    if (a.size() == 1 || q[d] <= a.front()) {
      lo[d] = hi[d] = 0;
      continue;
    }
    auto it = std::lower_bound(a.begin(), a.end(), q[d]);
    // Beyond the grid: extend along the last segment (frac > 1).
    if (it == a.end()) it = a.end() - 1;
    hi[d] = static_cast<uint32_t>(it - a.begin());
    lo[d] = hi[d] - 1;
    frac[d] = (q[d] - a[lo[d]]) / (a[hi[d]] - a[lo[d]]);
  }
  double sum = 0, weight = 0;
  for (uint32_t corner = 0; corner < 16; ++corner) {
    std::array<uint32_t, 4> key{};
    double w = 1;
    for (int d = 0; d < 4; ++d) {
      const bool up = corner & (1u << d);
      if (lo[d] == hi[d] && up) {
        w = 0;
        break;
      }
      key[d] = up ? hi[d] : lo[d];
      w *= lo[d] == hi[d] ? 1.0 : (up ? frac[d] : 1.0 - frac[d]);
    }
    if (w == 0) continue;
    auto it = m_grid.find(key);
    if (it == m_grid.end()) continue;
    sum += w * it->second;
    weight += w;
  }
  if (weight > 1e-9) return sum / weight;
  // No bracketing point was profiled: the nearest profiled point, by relative distance.
  double best = std::numeric_limits<double>::max(), value = 0;
  for (const AttentionRow& r : m_rows) {
    const double v[4] = {r.prefill_chunk, r.kv_prefill, r.n_decode, r.kv_decode};
    double dist = 0;
    for (int d = 0; d < 4; ++d) dist += std::pow((v[d] - q[d]) / (1.0 + q[d]), 2);
    if (dist < best) {
      best = dist;
      value = r.time_us;
    }
  }
  return value;
}

std::vector<SkewRow> SkewFit::read(const std::string& path) {
  CsvColumns csv(path, {"pc", "n", "nb", "kvs", "kv_big", "t_mean_us", "t_max_us", "t_skew_us"});
  std::vector<SkewRow> rows;
  while (csv.next_row()) {
    SkewRow r{};
    r.prefill_chunk = static_cast<double>(csv.integer(0, 0, 1 << 24));
    r.n = static_cast<double>(csv.integer(1, 1, 1 << 24));
    r.nb = static_cast<double>(csv.integer(2, 1, static_cast<int64_t>(r.n)));
    const auto kvs = csv.integer(3, 0, int64_t{1} << 40);
    r.kv_big = static_cast<double>(csv.integer(4, kvs + 1, int64_t{1} << 40));
    r.t_mean_us = csv.positive_real(5);
    r.t_max_us = csv.positive_real(6);
    r.t_skew_us = csv.real(7, 0.0, 1e12);  // no skew is a skew of 0
    r.line = csv.line();
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no rows", path));
  return rows;
}

namespace {

std::array<double, 4> skew_point(const SkewRow& r) {
  return {r.prefill_chunk, r.n, r.nb / r.n, r.kv_big};
}

}  // namespace

SkewFit::SkewFit(const std::vector<SkewRow>& rows) {
  for (const SkewRow& r : rows)
    for (int d = 0; d < 4; ++d) m_axes[d].push_back(skew_point(r)[d]);
  for (auto& a : m_axes) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  std::map<std::array<uint32_t, 4>, std::pair<double, double>> sums;  // sum(g e), sum(g^2)
  std::vector<std::pair<double, double>> by_chunk(m_axes[0].size());
  double ge = 0, gg = 0;
  for (const SkewRow& r : rows) {
    const auto v = skew_point(r);
    std::array<uint32_t, 4> key{};
    for (int d = 0; d < 4; ++d)
      key[d] = static_cast<uint32_t>(std::lower_bound(m_axes[d].begin(), m_axes[d].end(), v[d]) -
                                     m_axes[d].begin());
    const double g = r.t_max_us - r.t_mean_us, e = r.t_skew_us - r.t_mean_us;
    sums[key].first += g * e;
    sums[key].second += g * g;
    by_chunk[key[0]].first += g * e;
    by_chunk[key[0]].second += g * g;
    ge += g * e;
    gg += g * g;
  }
  for (const auto& [key, sum] : sums)
    if (sum.second > 0) m_alpha[key] = sum.first / sum.second;
  m_by_chunk.assign(by_chunk.size(), std::numeric_limits<double>::quiet_NaN());
  for (size_t i = 0; i < by_chunk.size(); ++i)
    if (by_chunk[i].second > 0) m_by_chunk[i] = by_chunk[i].first / by_chunk[i].second;
  m_pooled = gg > 0 ? std::max(0.0, ge / gg) : 0.0;
}

double SkewFit::alpha(double prefill_chunk, double n, double share, double kv_big) const {
  const double q[4] = {prefill_chunk, n, share, kv_big};
  const bool log_axis[4] = {true, true, false, true};
  std::array<uint32_t, 4> lo{}, hi{};
  std::array<double, 4> frac{};
  for (int d = 0; d < 4; ++d) {
    const auto& a = m_axes[d];
    // The prefill chunk's 0 (a pure decode batch) is a point of its own: a chunk is interpolated
    // among the profiled chunks above 0 only.
    size_t first = 0;
    if (d == 0 && a.front() == 0.0) {
      if (q[d] <= 0 || a.size() < 2) continue;  // lo = hi = 0: no chunk above 0 was profiled
      first = 1;
    }
    const auto begin = a.begin() + static_cast<std::ptrdiff_t>(first);
    if (q[d] <= *begin) {
      lo[d] = hi[d] = static_cast<uint32_t>(first);
    } else if (q[d] >= a.back()) {
      lo[d] = hi[d] = static_cast<uint32_t>(a.size() - 1);
    } else {
      hi[d] = static_cast<uint32_t>(std::lower_bound(begin, a.end(), q[d]) - a.begin());
      lo[d] = hi[d] - 1;
      const auto f = [&](double x) { return log_axis[d] ? std::log(x) : x; };
      frac[d] = (f(q[d]) - f(a[lo[d]])) / (f(a[hi[d]]) - f(a[lo[d]]));
    }
  }
  double sum = 0, weight = 0;
  for (uint32_t corner = 0; corner < 16; ++corner) {
    std::array<uint32_t, 4> key{};
    double w = 1;
    for (int d = 0; d < 4 && w > 0; ++d) {
      const bool up = corner & (1u << d);
      if (lo[d] == hi[d] && up) w = 0;
      key[d] = up ? hi[d] : lo[d];
      if (lo[d] != hi[d]) w *= up ? frac[d] : 1.0 - frac[d];
    }
    if (w <= 0) continue;
    auto it = m_alpha.find(key);
    if (it == m_alpha.end()) continue;
    sum += w * it->second;
    weight += w;
  }
  // No profiled corner: the pooled alpha of the bracketing chunks, else of every row.
  if (weight <= 1e-9) {
    const auto add = [&](uint32_t i, double w) {
      if (w > 0 && !std::isnan(m_by_chunk[i])) {
        sum += w * m_by_chunk[i];
        weight += w;
      }
    };
    add(lo[0], lo[0] == hi[0] ? 1.0 : 1.0 - frac[0]);
    if (lo[0] != hi[0]) add(hi[0], frac[0]);
  }
  return std::max(0.0, weight > 1e-9 ? sum / weight : m_pooled);
}

namespace {

class LayerProfileModel final : public StepTimeModel {
 public:
  struct Parallel {
    double tp = 1;           ///< tensor-parallel degree
    double dp = 1;           ///< data-parallel ranks the replica stands for
    double hidden_size = 0;  ///< elements exchanged per token
    double activation_bytes = 2;
    double bytes_per_ms = 0;  ///< link bandwidth
    double latency_ms = 0;    ///< per collective
  };
  LayerProfileModel(LayerProfile p, double overhead_ms, Parallel par, ExpertRouting routing,
                    double skew_alpha, std::optional<SkewFit> skew_fit)
      : m_p(std::move(p)),
        m_overhead_ms(overhead_ms),
        m_par(par),
        m_routing(routing),
        m_skew_alpha(skew_alpha),
        m_skew_fit(std::move(skew_fit)) {}
  double step_ms(const StepShape& s) const override {
    // dp ranks in lockstep: each computes attention and the dense layers for its share of the
    // step, rounded up (the busiest rank sets the pace); the experts see all the step's tokens.
    // A prefill chunk belongs to one request, which vLLM commits to one rank: the busiest rank
    // computes at least the step's largest chunk, estimated as sum(chunk^2) / sum(chunk) (exact
    // for one chunk, never above the largest).
    const double dp = m_par.dp;
    const auto share = [dp](double x) { return dp > 1 ? std::ceil(x / dp) : x; };
    const auto prefill = static_cast<double>(s.prefill_tokens);
    const double chunk = dp > 1 && prefill > 0 ? std::floor(s.prefill_tokens_sq / prefill) : 0.0;
    const double rank_prefill = std::max(share(prefill), chunk);
    const double n = s.decode_sequences;
    const double kvd = n > 0 ? static_cast<double>(s.decode_context_tokens) / n : 0.0;
    const double tokens = prefill + n;
    const double rank_tokens = std::max(share(tokens), chunk);
    const double kvp = static_cast<double>(s.prefill_context_tokens);
    const double rank_kvp =
        dp > 1 && prefill > 0 ? std::ceil(kvp * rank_prefill / prefill) : share(kvp);
    double attn = m_p.attention_us(rank_prefill, rank_kvp, share(n), kvd);
    // Uneven decode lengths: FlashAttention's variable-length kernel is slower than the profiled
    // uniform batch at the mean; alpha moves the time that far towards a uniform batch at the
    // longest length (a constant, or fitted to skew.csv at the step's decodes, share at the
    // longest and longest length).
    const auto kv_max = static_cast<double>(s.decode_context_max);
    if ((m_skew_alpha > 0 || m_skew_fit) && n > 1 && kv_max > kvd) {
      const double longest = m_p.attention_us(rank_prefill, rank_kvp, share(n), kv_max);
      const auto kv_min = static_cast<double>(s.decode_context_min);
      const double alpha = m_skew_fit
                               ? m_skew_fit->alpha(rank_prefill, share(n),
                                                   (kvd - kv_min) / (kv_max - kv_min), kv_max)
                               : m_skew_alpha;
      if (longest > attn) attn += alpha * (longest - attn);
    }
    const double layer = attn + m_p.layer_dense_us(rank_tokens) + m_p.moe_us(tokens, m_routing);
    return (m_p.layers() * layer + m_p.once_us(rank_tokens, share(s.sequences))) / 1000.0 +
           m_overhead_ms + communication_ms(rank_tokens, tokens);
  }

 private:
  // Per layer: with tensor parallelism a ring all-reduce of a rank's activations after
  // attention, 2(tp-1)/tp of the data over the link plus its latency; after the MLP the same
  // over the GPUs sharing it (tp x dp) of all the step's tokens, which with data parallelism is
  // an all-gather before the experts and a reduce-scatter after them (two latencies).
  [[nodiscard]] double communication_ms(double rank_tokens, double tokens) const {
    const double per_token = m_par.hidden_size * m_par.activation_bytes / m_par.bytes_per_ms;
    const auto ring = [&](double gpus, double toks) {
      return 2.0 * (gpus - 1) / gpus * toks * per_token;
    };
    double ms = 0;
    if (m_par.tp > 1) ms += m_par.latency_ms + ring(m_par.tp, rank_tokens);
    const double group = m_par.tp * m_par.dp;
    if (group > 1) ms += (m_par.dp > 1 ? 2 : 1) * m_par.latency_ms + ring(group, tokens);
    return m_p.layers() * ms;
  }

  LayerProfile m_p;
  double m_overhead_ms;
  Parallel m_par;
  ExpertRouting m_routing;
  double m_skew_alpha;
  std::optional<SkewFit> m_skew_fit;
};

/// The routing a mixture-of-experts step model uses: the profile's unless configured.
ExpertRouting read_routing(const Cfg& c, const LayerProfile& p,
                           const LayerProfileModel::Parallel& par) {
  if (!p.is_moe()) {
    if (par.dp > 1)
      c.fail("data_parallel",
             "ranks in lockstep are modelled for a mixture of experts only (the "
             "folder has no moe.csv); a dense model's ranks run independently: "
             "simulate one");
    for (const char* key : {"experts", "experts_per_token", "expert_parallel"})
      if (c.has(key))
        c.fail(key, "only for a mixture-of-experts profile (the folder has no moe.csv)");
    return {};
  }
  ExpertRouting r = p.default_routing();
  r.experts =
      static_cast<double>(c.get_int("experts", static_cast<int64_t>(r.experts), {1, 1 << 20}));
  r.top_k = static_cast<double>(
      c.get_int("experts_per_token", static_cast<int64_t>(r.top_k), {1, 1 << 20}));
  if (r.top_k > r.experts)
    c.fail("experts_per_token", fmt::format("must be <= experts ({})", r.experts));
  r.expert_parallel =
      static_cast<double>(c.get_int("expert_parallel", static_cast<int64_t>(par.tp * par.dp),
                                    {1, static_cast<int64_t>(r.experts)}));
  return r;
}

/// `skew_alpha`: a number in [0, 1], or `profile`: the pooled fit the profiler wrote to the
/// variant's meta.yaml (the folder above `tpN`), skew_fit.per_tp.<N>.alpha_default.
double read_skew_alpha(const Cfg& c, std::filesystem::path folder, double tp) {
  if (!c.has("skew_alpha")) return 0.0;
  if (folder.filename().empty()) folder = folder.parent_path();  // a path ending in '/'
  const auto refuse = [&] { c.fail("skew_alpha", "must be a number from 0 to 1, or `profile`"); };
  if (!c.is_scalar("skew_alpha")) refuse();
  const std::string value = c.get_string("skew_alpha");
  if (value != "profile") {
    char* end = nullptr;
    std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') refuse();
    return c.get_real("skew_alpha", {0.0, 1.0});
  }
  const std::filesystem::path meta = folder.parent_path() / "meta.yaml";
  const std::string name = folder.filename().string();
  int64_t degree = static_cast<int64_t>(tp);
  if (name.size() > 2 && name.size() <= 6 && name.rfind("tp", 0) == 0 &&
      name.find_first_not_of("0123456789", 2) == std::string::npos)
    degree = std::stoll(name.substr(2));  // at most 4 digits: cannot overflow
  YAML::Node fit;
  try {
    fit = YAML::LoadFile(meta.string())["skew_fit"];
  } catch (const YAML::Exception& e) {
    c.fail("skew_alpha",
           fmt::format("`profile` reads {}, which cannot be read: {}", meta.string(), e.what()));
  }
  const auto fail_no_fit = [&] {
    c.fail("skew_alpha",
           fmt::format("`profile` needs skew_fit.per_tp.{}.alpha_default with skew_fit.enabled: "
                       "true in {}; give a number in [0, 1] instead, or leave the key out",
                       degree, meta.string()));
  };
  try {
    if (!fit || !fit["enabled"] || !fit["enabled"].as<bool>()) fail_no_fit();
    const YAML::Node entry = fit["per_tp"][degree];
    if (!entry || !entry["alpha_default"]) fail_no_fit();
    const double alpha = entry["alpha_default"].as<double>();
    if (!(alpha >= 0.0 && alpha <= 1.0)) fail_no_fit();
    return alpha;
  } catch (const YAML::Exception&) {
    fail_no_fit();
  }
  return 0.0;
}

}  // namespace

std::unique_ptr<StepTimeModel> make_layer_profile_model(const Cfg& c) {
  const std::string dir = c.get_string("path");
  std::filesystem::path p(dir);
  if (p.is_relative()) p = std::filesystem::path(c.doc().base_dir()) / p;
  std::error_code ec;
  if (!std::filesystem::is_directory(p, ec))
    c.fail("path", fmt::format("no such profile folder ({}; relative paths are resolved against "
                               "the config file's folder; the measured profiles ship in the "
                               "repository's data/timings/llmservingsim folder)",
                               std::filesystem::absolute(p, ec).lexically_normal().string()));
  const auto layers = static_cast<int>(c.get_int("layers", {1, 100000}));
  const double overhead_ms = plausible_real(c, "overhead_ms", 0.0, units::k_cost_ms);
  LayerProfileModel::Parallel par;
  par.tp = static_cast<double>(c.get_int("tensor_parallel", 1, {1, 1024}));
  par.dp = static_cast<double>(c.get_int("data_parallel", 1, {1, 1024}));
  if (par.tp > 1 || par.dp > 1) {
    par.hidden_size = static_cast<double>(c.get_int("hidden_size", {1, 1 << 24}));
    par.bytes_per_ms = plausible_real(c, "link_gb_per_s", units::k_gb_per_s) * 1e6;
    par.latency_ms = plausible_real(c, "link_latency_us", 0.0, units::k_latency_us) / 1000.0;
    par.activation_bytes = plausible_real(c, "activation_bytes", 2.0, units::k_bytes_per_element);
  }
  const double skew_alpha = read_skew_alpha(c, p.lexically_normal(), par.tp);
  // `skew: fit`: alpha per step from the folder's skew.csv, fitted here (see SkewFit).
  std::optional<SkewFit> skew_fit;
  if (c.get_choice("skew", "none", {"none", "fit"}) == "fit") {
    if (c.has("skew_alpha"))
      c.fail("skew", "`fit` and skew_alpha are two ways to set the same alpha: give one");
    const std::string file = (p.lexically_normal() / "skew.csv").string();
    if (!input_exists(file))
      c.fail("skew", fmt::format("`fit` reads {} (or {}.gz), which does not exist; use `none`",
                                 file, file));
    skew_fit.emplace(SkewFit::read(file));
  }
  LayerProfile profile(p.lexically_normal().string(), layers);
  const ExpertRouting routing = read_routing(c, profile, par);
  return std::make_unique<LayerProfileModel>(std::move(profile), overhead_ms, par, routing,
                                             skew_alpha, std::move(skew_fit));
}

}  // namespace servesim
