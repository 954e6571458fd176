#pragma once
// vLLM per-layer profiles (LLMServingSim's profiler): attention.csv, dense.csv and
// per_sequence.csv in one folder, times in microseconds for one transformer layer. A step is
//   layers x (attention + 2 x layernorm + qkv_proj + rotary_emb + o_proj + gate_up_proj
//             + act_fn + down_proj)                      at the step's tokens
//   + embedding + final_layernorm                        once, at the step's tokens
//   + lm_head + sampler                                  once, at the step's sequences
// Dense and per-sequence times are interpolated linearly in tokens or sequences (extended along
// the last segment beyond the grid). Attention is interpolated multilinearly on its grid of
// (prefill chunk, prefix KV of the chunk, decodes, KV per decode); where a bracketing grid point
// was not profiled, the present corners' weights are renormalised.
//
// As a step-time model (`kind: layer_profile`): a step's attention is looked up at its total
// prefill chunk, the chunks' stored prefix, its number of decodes and their mean KV length;
// `overhead_ms` adds CPU time per step, which GPU kernel profiles miss; with
// `tensor_parallel` > 1 (the profile then times one shard) two ring all-reduces a layer of
// tokens x `hidden_size` x `activation_bytes` over a link of `link_gb_per_s` and
// `link_latency_us` are added, since per-layer profiles leave out communication.
#include <array>
#include <map>
#include <string>
#include <vector>

namespace servesim {

/// A curve y(x) through measured points: linear between them, flat below the first, along the
/// last segment beyond the last.
class Curve {
 public:
  void add(double x, double y) { m_points.emplace_back(x, y); }
  void finish();
  [[nodiscard]] double at(double x) const;
  [[nodiscard]] bool empty() const { return m_points.empty(); }

 private:
  std::vector<std::pair<double, double>> m_points;
};

struct AttentionRow {
  double prefill_chunk, kv_prefill, n_decode, kv_decode, time_us;
  size_t line;
};

class LayerProfile {
 public:
  /// Reads the three files in `dir`. Throws InputError naming the file, line and column.
  LayerProfile(const std::string& dir, int layers);

  /// Everything but attention, for a step computing `tokens` tokens for `sequences` sequences.
  [[nodiscard]] double non_attention_us(double tokens, double sequences) const;
  /// One layer's attention, interpolated on the profiled grid.
  [[nodiscard]] double attention_us(double prefill_chunk, double kv_prefill, double n_decode,
                                    double kv_decode) const;
  [[nodiscard]] const std::vector<AttentionRow>& attention_rows() const { return m_rows; }
  [[nodiscard]] int layers() const { return m_layers; }

 private:
  int m_layers;
  Curve m_per_layer_dense;  // the per-layer token ops summed
  Curve m_once_tokens;      // embedding + final norm
  Curve m_once_sequences;   // lm_head + sampler
  std::vector<AttentionRow> m_rows;
  std::array<std::vector<double>, 4> m_axes;           // sorted distinct values per dimension
  std::map<std::array<uint32_t, 4>, double> m_grid;    // axis indices -> time_us
};

}  // namespace servesim
