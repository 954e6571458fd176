#pragma once
// vLLM per-layer profiles (LLMServingSim's profiler): attention.csv, dense.csv and
// per_sequence.csv in one folder, plus moe.csv for a mixture of experts; times in microseconds
// for one transformer layer. A step is
//   layers x (attention + 2 x layernorm + qkv_proj [+ qk_norm] + rotary_emb + o_proj + MLP)
//   + embedding + final_layernorm                        once, at the step's tokens
//   + lm_head + sampler                                  once, at the step's sequences
// where the MLP is gate_up_proj + act_fn + down_proj at the step's tokens for a dense model,
// and for a mixture of experts the MoE block (router and experts, moe.csv) at the step's tokens
// and the number of distinct experts they activate. A dense.csv layer outside these names is
// refused rather than left out.
// Dense and per-sequence times are interpolated linearly in tokens or sequences (extended along
// the last segment beyond the grid). Attention is interpolated multilinearly on its grid of
// (prefill chunk, prefix KV of the chunk, decodes, KV per decode); where a bracketing grid point
// was not profiled, the present corners' weights are renormalised. The MoE table is
// interpolated linearly in activated experts between rows, each row linearly in tokens.
//
// moe.csv is profiled once, on one GPU holding every expert (LLMServingSim does not profile it
// per tensor-parallel degree): a `tpN` folder without one takes its sibling `tp1/moe.csv`.
//
// As a step-time model (`kind: layer_profile`): a step's attention is looked up at its total
// prefill chunk, the chunks' stored prefix, its number of decodes and their mean KV length;
// `overhead_ms` adds CPU time per step, which GPU kernel profiles miss; with
// `tensor_parallel` > 1 (the profile then times one shard) two ring all-reduces a layer of
// tokens x `hidden_size` x `activation_bytes` over a link of `link_gb_per_s` and
// `link_latency_us` are added, since per-layer profiles leave out communication.
// For a mixture of experts, `experts` and `experts_per_token` default to what moe.csv shows and
// `expert_parallel` (default tensor_parallel x data_parallel) GPUs share the experts' weights.
// `data_parallel` > 1 makes the replica stand for that many ranks that vLLM runs in lockstep for
// data-parallel expert parallelism (the scheduler's limits and the KV capacity are then their
// sums): each rank computes attention and the dense layers for 1/dp of the step, rounded up (the
// busiest rank sets the pace), but at least the step's largest prefill chunk, which belongs to
// one request and so to one rank (estimated as sum(chunk^2) / sum(chunk): exact for a single
// chunk, never above the largest); the experts see all the step's tokens, gathered before and
// scattered after them over the link.
//
// Uneven decode lengths (`skew: fit`, SkewFit below): the profiler's skew.csv times decode
// batches of n sequences where nb of them hold kv_big KV tokens and the rest kvs, alone or beside
// a prefill chunk pc, and uniform batches at their mean (t_mean_us) and at kv_big (t_max_us).
// servesim fits, when the model is built, alpha = how far the uneven batch's time (t_skew_us)
// lies from t(mean) towards t(longest), by least squares in each (pc, n, nb / n, kv_big) cell of
// the profiled grid; a step's alpha is interpolated in that cell grid with the step's (rank's)
// prefill chunk, decodes, (mean - shortest) / (longest - shortest) as the share at the longest,
// and its longest read.
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

/// How a mixture of experts routes tokens: each picks `top_k` distinct experts of `experts`,
/// whose weights are spread evenly over `expert_parallel` GPUs.
struct ExpertRouting {
  double experts = 0;
  double top_k = 0;
  double expert_parallel = 1;
  /// Expected number of distinct experts one GPU runs for `tokens` tokens when a trained,
  /// load-balanced gate routes them like uniform draws (an expert is missed by one token with
  /// probability 1 - top_k / experts, by all of them with that to the power `tokens`):
  /// experts / expert_parallel x (1 - (1 - top_k / experts)^tokens).
  [[nodiscard]] double activated_per_gpu(double tokens) const;
};

/// One usable row of skew.csv: a decode batch of `n` sequences, `nb` of them at `kv_big` KV
/// tokens and the others at fewer, beside a prefill chunk of `prefill_chunk` tokens (0: none),
/// timed uneven (t_skew_us) and uniform at its mean (t_mean_us) and at kv_big (t_max_us).
struct SkewRow {
  double prefill_chunk, n, nb, kv_big, t_mean_us, t_max_us, t_skew_us;
  size_t line;
};

/// alpha(prefill chunk, n, share at the longest, longest KV), fitted to skew.csv rows: in each
/// cell of the grid the rows lie on, sum(g e) / sum(g^2) with g = t_max - t_mean and
/// e = t_skew - t_mean (the least-squares alpha of t_skew = t_mean + alpha g, pooled over the
/// chunks' prefixes); between cells, multilinear in (log chunk, log n, share, log kv_big), a
/// chunk of 0 (pure decode: another kernel launch than a mixed batch, and a much smaller alpha)
/// a point of its own, clamped to the grid's edges and missing cells left out with the rest
/// renormalised; where no cell brackets the point, the least-squares alpha of the bracketing
/// chunks' rows, else of all rows. Never below 0.
class SkewFit {
 public:
  /// Reads `path` (columns pc, n, nb, kvs, kv_big, t_mean_us, t_max_us, t_skew_us; others
  /// ignored). Throws InputError naming the file, line and column of a malformed value, and a
  /// row whose nb is not in [1, n] or whose kv_big is not above kvs.
  static std::vector<SkewRow> read(const std::string& path);
  /// Fits the rows. REQUIRES: rows not empty.
  explicit SkewFit(const std::vector<SkewRow>& rows);
  [[nodiscard]] double alpha(double prefill_chunk, double n, double share, double kv_big) const;
  [[nodiscard]] double pooled() const { return m_pooled; }
  [[nodiscard]] size_t cells() const { return m_alpha.size(); }

 private:
  std::array<std::vector<double>, 4> m_axes;  // chunk, n, share, kv_big: sorted distinct values
  std::map<std::array<uint32_t, 4>, double> m_alpha;
  std::vector<double> m_by_chunk;  // per chunk: its rows' pooled alpha (NaN: none usable)
  double m_pooled = 0;
};

class LayerProfile {
 public:
  /// Reads the files in `dir`. Throws InputError naming the file, line and column.
  LayerProfile(const std::string& dir, int layers);

  /// Everything but attention for a step computing `tokens` tokens for `sequences` sequences on
  /// the profiled GPU alone (a mixture of experts routed as default_routing() says).
  [[nodiscard]] double non_attention_us(double tokens, double sequences) const;
  /// One layer's attention, interpolated on the profiled grid.
  [[nodiscard]] double attention_us(double prefill_chunk, double kv_prefill, double n_decode,
                                    double kv_decode) const;
  /// One layer's work outside attention and the MoE block, at `tokens`.
  [[nodiscard]] double layer_dense_us(double tokens) const { return m_per_layer_dense.at(tokens); }
  /// The work done once a step: embedding and final norm at `tokens`, lm_head and sampler at
  /// `sequences`.
  [[nodiscard]] double once_us(double tokens, double sequences) const {
    return m_once_tokens.at(tokens) + m_once_sequences.at(sequences);
  }
  /// One layer's MoE block on one GPU when `tokens` tokens are routed as `r` says: moe.csv at
  /// all `tokens` (each GPU's expert kernel runs over every token, as vLLM's all-gather expert
  /// parallelism and tensor-parallel experts do; pairs routed to another GPU's experts are
  /// masked, not removed) and the GPU's expected distinct experts. 0 for a dense model.
  [[nodiscard]] double moe_us(double tokens, const ExpertRouting& r) const;
  [[nodiscard]] bool is_moe() const { return !m_moe_rows.empty(); }
  /// experts: the most activated experts of any moe.csv row; top_k: the fewest (one token's);
  /// expert_parallel: N for a `tpN` folder (each GPU holds 1/N of the expert weights), else 1.
  [[nodiscard]] const ExpertRouting& default_routing() const { return m_routing; }
  [[nodiscard]] const std::vector<AttentionRow>& attention_rows() const { return m_rows; }
  [[nodiscard]] int layers() const { return m_layers; }

 private:
  void read_moe(const std::string& dir);

  int m_layers;
  Curve m_per_layer_dense;  // the per-layer token ops summed
  Curve m_once_tokens;      // embedding + final norm
  Curve m_once_sequences;   // lm_head + sampler
  std::vector<AttentionRow> m_rows;
  std::array<std::vector<double>, 4> m_axes;         // sorted distinct values per dimension
  std::map<std::array<uint32_t, 4>, double> m_grid;  // axis indices -> time_us
  std::vector<std::pair<double, Curve>> m_moe_rows;  // activated experts -> time by tokens
  ExpertRouting m_routing;
};

}  // namespace servesim
