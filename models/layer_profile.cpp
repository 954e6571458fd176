#include "models/layer_profile.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "models/step_time_model.h"
#include "sim/csv_columns.h"
#include "sim/errors.h"

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

namespace {

std::map<std::string, Curve> read_curves(const std::string& path, const std::string& size_col) {
  std::map<std::string, Curve> curves;
  CsvColumns csv(path, {"layer", size_col, "time_us"});
  while (csv.next_row())
    curves[std::string(csv.field(0))].add(static_cast<double>(csv.integer(1, 0, 1 << 30)),
                                          csv.real(2, 0.0, 1e12));
  for (auto& [name, c] : curves) c.finish();
  return curves;
}

const Curve& need(const std::map<std::string, Curve>& curves, const std::string& name,
                  const std::string& file) {
  auto it = curves.find(name);
  if (it == curves.end())
    throw InputError(fmt::format("{}: no rows for layer \"{}\", which a step needs", file, name));
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

}  // namespace

LayerProfile::LayerProfile(const std::string& dir, int layers) : m_layers(layers) {
  const fs::path p(dir);
  if (fs::exists(p / "moe.csv"))
    throw InputError(fmt::format("{}: mixture-of-experts profiles (moe.csv) are not composed yet; "
                                 "dense models only", dir));
  const std::string dense_file = (p / "dense.csv").string();
  const std::string seq_file = (p / "per_sequence.csv").string();
  const auto dense = read_curves(dense_file, "tokens");
  const auto per_seq = read_curves(seq_file, "sequences");
  std::vector<std::pair<const Curve*, double>> per_layer;
  for (const auto& [name, calls] : std::vector<std::pair<std::string, double>>{
           {"layernorm", 2}, {"qkv_proj", 1}, {"rotary_emb", 1}, {"o_proj", 1},
           {"gate_up_proj", 1}, {"act_fn", 1}, {"down_proj", 1}})
    per_layer.emplace_back(&need(dense, name, dense_file), calls);
  const auto token_sizes = sizes_of(dense_file, "tokens");
  m_per_layer_dense = sum_curves(per_layer, token_sizes);
  m_once_tokens = sum_curves({{&need(dense, "embedding", dense_file), 1},
                              {&need(dense, "final_layernorm", dense_file), 1}},
                             token_sizes);
  m_once_sequences = sum_curves({{&need(per_seq, "lm_head", seq_file), 1},
                                 {&need(per_seq, "sampler", seq_file), 1}},
                                sizes_of(seq_file, "sequences"));

  CsvColumns csv((p / "attention.csv").string(),
                 {"prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "time_us"});
  while (csv.next_row()) {
    AttentionRow r{};
    r.prefill_chunk = static_cast<double>(csv.integer(0, 0, 1 << 24));
    r.kv_prefill = static_cast<double>(csv.integer(1, 0, int64_t{1} << 40));
    r.n_decode = static_cast<double>(csv.integer(2, 0, 1 << 24));
    r.kv_decode = static_cast<double>(csv.integer(3, 0, int64_t{1} << 40));
    r.time_us = csv.real(4, 0.0, 1e12);
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

double LayerProfile::non_attention_us(double tokens, double sequences) const {
  return m_layers * m_per_layer_dense.at(tokens) + m_once_tokens.at(tokens) +
         m_once_sequences.at(sequences);
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

namespace {

class LayerProfileModel final : public StepTimeModel {
 public:
  struct Link {
    double tp = 1;              ///< tensor-parallel degree
    double hidden_size = 0;     ///< elements all-reduced per token
    double activation_bytes = 2;
    double bytes_per_ms = 0;    ///< link bandwidth
    double latency_ms = 0;      ///< per all-reduce
  };
  LayerProfileModel(LayerProfile p, double overhead_ms, Link link)
      : m_p(std::move(p)), m_overhead_ms(overhead_ms), m_link(link) {}
  double step_ms(const StepShape& s) const override {
    const double n = s.decode_sequences;
    const double kvd = n > 0 ? static_cast<double>(s.decode_context_tokens) / n : 0.0;
    const double tokens = static_cast<double>(s.prefill_tokens) + n;
    const double attn = m_p.attention_us(static_cast<double>(s.prefill_tokens),
                                         static_cast<double>(s.prefill_context_tokens), n, kvd);
    return (m_p.layers() * attn + m_p.non_attention_us(tokens, s.sequences)) / 1000.0 +
           m_overhead_ms + allreduce_ms(tokens);
  }

 private:
  // Tensor parallelism: two all-reduces a layer (after attention and after the MLP) of the
  // step's activations, each 2(tp-1)/tp of the data over the link plus its latency (ring).
  [[nodiscard]] double allreduce_ms(double tokens) const {
    if (m_link.tp <= 1) return 0.0;
    const double bytes = tokens * m_link.hidden_size * m_link.activation_bytes;
    const double one = m_link.latency_ms +
                       2.0 * (m_link.tp - 1) / m_link.tp * bytes / m_link.bytes_per_ms;
    return 2.0 * m_p.layers() * one;
  }

  LayerProfile m_p;
  double m_overhead_ms;
  Link m_link;
};

}  // namespace

std::unique_ptr<StepTimeModel> make_layer_profile_model(const Cfg& c) {
  const std::string dir = c.get_string("path");
  std::filesystem::path p(dir);
  if (p.is_relative()) p = std::filesystem::path(c.doc().base_dir()) / p;
  std::error_code ec;
  if (!std::filesystem::is_directory(p, ec))
    c.fail("path", fmt::format("no such profile folder ({}; relative paths are resolved against "
                               "the config file's folder)", p.lexically_normal().string()));
  const auto layers = static_cast<int>(c.get_int("layers", {1, 100000}));
  const double overhead_ms = c.get_real("overhead_ms", 0.0, k_non_negative);
  LayerProfileModel::Link link;
  link.tp = static_cast<double>(c.get_int("tensor_parallel", 1, {1, 1024}));
  if (link.tp > 1) {
    link.hidden_size = static_cast<double>(c.get_int("hidden_size", {1, 1 << 24}));
    link.bytes_per_ms = c.get_real("link_gb_per_s", k_positive) * 1e6;
    link.latency_ms = c.get_real("link_latency_us", 0.0, k_non_negative) / 1000.0;
    link.activation_bytes = c.get_real("activation_bytes", 2.0, k_positive);
  }
  return std::make_unique<LayerProfileModel>(LayerProfile(p.lexically_normal().string(), layers),
                                             overhead_ms, link);
}

}  // namespace servesim
