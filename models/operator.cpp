// operator: a step's time composed from the times of the operators it runs, one GPU of a
// tensor-parallel group (docs/config.md, "kind: operator"). T = prefill_tokens +
// decode_sequences tokens:
//   layers x (QKV, output and MLP GEMMs at m = T [or router GEMM + MoE block at T tokens]
//             + 2 all-reduces of T x hidden when tp > 1
//             + elementwise passes: 2 residual-add + RMSNorm, rotary, KV-cache write, activation)
//   + embedding gather and final norm at T, LM head GEMM at m = sequences
//   + layers x context attention: k = sequences - decode_sequences chunks at the length L with
//       k L^2 / 2 = query-key pairs = sum(chunk^2) / 2 + prefill_tokens x prefill_context / k
//   + layers x generation attention: max(t(decodes, mean KV), t(1, longest KV))
//   + overhead_ms
// Everything but the attention terms depends on T or on sequences alone, so it is precomputed
// at construction as curves over T and over sequences; attention as grids over (batch, length).
// The curves are sampled at the source's own measured sizes (breakpoints) and powers of two and
// interpolated log-log (models/log_interp.h). For speed a step reads them from tables: the T
// and sequences curves at every integer below k_dense_tokens and k_dense_sequences (an entry
// computed on its first read, models/operator_dense_curve.h), the attention grids on 8 (batch)
// by 16 (length) sub-bins per octave (models/binned_grid.h, within 0.5% of the grids; a row
// filled on its first read), and the generation table at one sequence (the longest context's
// bound) at every integer length below k_dense_lengths, filled at construction; larger steps go
// to the curves and grids themselves.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>

#include "core/registry.h"
#include "core/units.h"
#include "core/zeroed_pages.h"
#include "models/binned_grid.h"
#include "models/catalog.h"
#include "models/decode_stretch.h"
#include "models/expert_parallel.h"
#include "models/factories.h"
#include "models/log_interp.h"
#include "models/mla.h"
#include "models/operator_dense_curve.h"
#include "models/operator_source.h"
#include "models/operator_tables.h"
#include "models/shape_roofline.h"
#include "models/step_work.h"

namespace servesim {
namespace {

using SourceFactory = std::unique_ptr<OperatorSource> (*)(const Cfg& operators,
                                                          const HardwareSpec& hw);

std::unique_ptr<OperatorSource> make_tables(const Cfg& operators, const HardwareSpec& hw) {
  return make_operator_tables(operators, hw);
}

// `operators.source`, sorted by name: the shape-aware roofline (a datasheet and fitted
// efficiency curves, models/shape_roofline.cpp) and measured tables (models/operator_tables.cpp).
constexpr Registry<SourceFactory, 2> k_sources{{{
    {"roofline", &make_shape_roofline_source},
    {"tables", &make_tables},
}}};

struct DtypeName {
  const char* servesim;  ///< as configs spell it
  const char* table;     ///< as the tables spell it
  Dtype storage;         ///< bytes per weight, for the memory check and cost()
};
// GEMM weights (and the LM head): the tables' gemm variants.
const std::vector<DtypeName> k_gemm_dtypes{{"bf16", "bfloat16", Dtype::Bf16},
                                           {"fp8", "fp8", Dtype::Fp8},
                                           {"fp8_block", "fp8_block", Dtype::Fp8},
                                           {"nvfp4", "nvfp4", Dtype::Int4},
                                           {"int8_wo", "int8_wo", Dtype::Int8},
                                           {"int4_wo", "int4_wo", Dtype::Int4},
                                           {"sq", "sq", Dtype::Int8}};
const std::vector<DtypeName> k_moe_dtypes{
    {"bf16", "bfloat16", Dtype::Bf16},      {"fp8", "fp8", Dtype::Fp8},
    {"fp8_block", "fp8_block", Dtype::Fp8}, {"nvfp4", "nvfp4", Dtype::Int4},
    {"int4_wo", "int4_wo", Dtype::Int4},    {"w4a16_mxfp4", "w4a16_mxfp4", Dtype::Int4}};
const std::vector<DtypeName> k_attention_dtypes{{"bf16", "bfloat16", Dtype::Bf16},
                                                {"fp8", "fp8", Dtype::Fp8}};

const DtypeName& read_dtype_name(const Cfg& c, const std::string& key, const std::string& def,
                                 const std::vector<DtypeName>& valid) {
  std::vector<std::string> names;
  for (const auto& d : valid) names.emplace_back(d.servesim);
  const std::string v = c.get_choice(key, def, names);
  for (const auto& d : valid)
    if (v == d.servesim) return d;
  return valid.front();
}

/// What a step runs, per GPU.
struct Layout {
  double layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, inter = 0, vocab = 0;
  double tp = 1;
  bool moe = false;
  MoeShape moe_shape;
  std::string gemm, attention, kv, lm_head, moe_dtype, distribution;
  double kv_bytes = 2;    ///< per KV element stored
  bool gated_mlp = true;  ///< gate, up and down projections; else up and down (GPT-2, OPT)
  WideEp wide;            ///< data-parallel attention ranks and their all-to-alls (ranks > 1)
  MoeRoofs moe_roofs;     ///< for an expert parallelism wider than the tables measured
  // DeepSeek-style layers (docs/mla.md): the first dense_layers have a dense MLP of dense_inter,
  // the others a MoE block plus shared experts of shared_inter in all; MLA attention.
  double dense_layers = 0, dense_inter = 0, shared_inter = 0;
  bool mla = false;
  MlaLayer mla_layer;
  std::shared_ptr<const OperatorSource> mla_roof;  ///< times MLA attention (no table has it)
  double bf16_flops_per_ms = 1;
};

/// Sizes to sample an axis at: the source's breakpoints and the powers of two up to `max`.
std::vector<double> samples(const OperatorSource& src, std::initializer_list<OperatorAxis> axes,
                            double max, double scale = 1.0) {
  std::vector<double> s;
  for (double x = 1; x <= max; x *= 2) s.push_back(x);
  for (OperatorAxis a : axes)
    for (double b : src.breakpoints(a))
      if (b / scale >= 1) s.push_back(b / scale);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

constexpr double k_activation_bytes = 2;  // bf16 activations

/// An MLP of width `inter` (split tp ways) at t tokens. Gated: gate and up in one GEMM, down,
/// and SiLU x up (reads two, writes one); plain: up, down, and the activation (reads one,
/// writes one).
double mlp_ms(const OperatorSource& src, const Layout& l, double t, double inter) {
  const double in = l.gated_mlp ? 2 : 1;
  return src.gemm_ms(t, in * inter / l.tp, l.hidden, l.gemm) +
         src.gemm_ms(t, l.hidden, inter / l.tp, l.gemm) +
         src.elementwise_ms((in + 1) * t * inter / l.tp * k_activation_bytes);
}

/// The whole step's work outside attention and the LM head at T tokens: every layer's GEMMs
/// (or MoE block), all-reduces and elementwise passes, plus the embedding gather and final norm.
double token_ms(const OperatorSource& src, const Layout& l, double t) {
  const double a = k_activation_bytes;
  const double q = l.heads * l.head_dim;
  double kv = l.kv_heads * l.head_dim, rotary = q + kv;
  double layer = 0;
  if (l.mla) {
    // The rotary parts of the queries and the key; the latent and key into the cache.
    layer = mla_projection_ms(src, l.mla_layer, t, l.gemm);
    rotary = mla_rotary_elements(l.mla_layer);
    kv = static_cast<double>(l.mla_layer.spec.latent()) / 2;
  } else {
    layer = src.gemm_ms(t, q + 2 * kv, l.hidden, l.gemm) + src.gemm_ms(t, l.hidden, q, l.gemm);
  }
  double moe_part = 0;  // what a MoE layer has that a dense one does not
  if (l.moe && l.wide.ranks > 1) {
    // t is one rank's tokens: its router, and its share of the dispatch and combine; the
    // experts themselves see every rank's tokens (moe_ms below).
    const AllToAll& a2a = *l.wide.all_to_all;
    const double gpus = l.moe_shape.moe_ep, each = t / l.tp;
    moe_part = src.gemm_ms(t, l.moe_shape.experts, l.hidden, "bfloat16") +
               a2a.ms(dispatch_bytes(each, l.moe_shape, l.wide.dispatch_bytes, l.wide.skew), gpus) +
               a2a.ms(dispatch_bytes(each, l.moe_shape, 2, l.wide.skew), gpus);
  } else if (l.moe) {
    moe_part = src.gemm_ms(t, l.moe_shape.experts, l.hidden, "bfloat16") +
               src.moe_ms(t, l.moe_shape, l.moe_dtype, l.distribution);
  } else {
    moe_part = mlp_ms(src, l, t, l.inter);
  }
  // Shared experts run on every rank for its own tokens, as a dense MLP.
  if (l.shared_inter > 0) moe_part += mlp_ms(src, l, t, l.shared_inter);
  layer += moe_part;
  if (l.tp > 1) layer += 2 * src.allreduce_ms(t * l.hidden, l.tp);
  layer += 2 * src.elementwise_ms(4 * t * l.hidden * a)          // residual add + RMSNorm
           + src.elementwise_ms(2 * t * rotary * a)              // rotary on q and k
           + src.elementwise_ms(2 * t * kv * (a + l.kv_bytes));  // K and V into the cache
  double total =
      l.layers * layer + 2 * src.elementwise_ms(2 * t * l.hidden * a);  // embedding, norm
  if (l.dense_layers > 0) total += l.dense_layers * (mlp_ms(src, l, t, l.dense_inter) - moe_part);
  return total;
}

/// Every MoE layer's dispatch and combine at a rank's t tokens (data-parallel ranks only): the
/// part of token_ms that two-batch overlap hides.
double all_to_all_ms(const Layout& l, double t) {
  const AllToAll& a2a = *l.wide.all_to_all;
  const double gpus = l.moe_shape.moe_ep, each = t / l.tp;
  return (l.layers - l.dense_layers) *
         (a2a.ms(dispatch_bytes(each, l.moe_shape, l.wide.dispatch_bytes, l.wide.skew), gpus) +
          a2a.ms(dispatch_bytes(each, l.moe_shape, 2, l.wide.skew), gpus));
}

class OperatorModel final : public StepTimeModel {
 public:
  OperatorModel(LogCurve tokens, LogCurve sequences, LogGrid generation, LogGrid context,
                double overhead_ms, StepWork work, double peak_bytes, double peak_flops)
      : m_tokens(std::move(tokens)),
        m_sequences(std::move(sequences)),
        m_tokens_ms(m_tokens, static_cast<size_t>(k_dense_tokens)),
        m_sequences_ms(m_sequences, static_cast<size_t>(k_dense_sequences)),
        m_generation(std::move(generation), k_batch_octaves, k_length_octaves),
        m_context(std::move(context), k_batch_octaves, k_length_octaves),
        m_generation_one_ms(m_generation.at_one_counts(k_dense_lengths)),
        m_overhead_ms(overhead_ms),
        m_work(work),
        m_peak_bytes(peak_bytes),
        m_peak_flops(peak_flops) {
    if (m_work.flops_per_prefill_pair == m_work.flops_per_pair)
      m_stretch_batches = static_cast<uint32_t>(
          std::min<size_t>(static_cast<size_t>(k_dense_sequences), m_generation.batches()) - 1);
  }

  /// Data-parallel attention: a step is its busiest rank plus the experts at all its tokens.
  void set_ranks(int32_t ranks, LogCurve moe_ms) {
    m_ranks = ranks;
    m_moe.emplace(std::move(moe_ms));
  }
  /// Two-batch overlap (expert_parallel.h): `comm` is all_to_all_ms over a rank's tokens.
  void set_overlap(LogCurve comm, double moe_layers) {
    m_comm.emplace(std::move(comm));
    m_moe_layers = moe_layers;
  }

  double step_ms(const StepShape& s) const override {
    if (m_ranks == 1) return rank_ms(s);
    const double tokens = std::max<double>(
        1, static_cast<double>(s.prefill_tokens) + static_cast<double>(s.decode_sequences));
    if (!m_comm) return rank_ms(busiest_rank(s, m_ranks)) + m_moe->at(tokens);
    // Two micro-batches, each half of every rank's share: one's compute (its rank's share, the
    // all-to-alls taken out, and its experts) against its all-to-alls.
    const StepShape half = busiest_rank(s, 2 * m_ranks);
    const double comm = m_comm->at(
        std::max<double>(1, static_cast<double>(half.prefill_tokens + half.decode_sequences)));
    const double compute =
        std::max(0.0, rank_ms(half) - m_overhead_ms - comm) + m_moe->at(std::max(1.0, tokens / 2));
    return m_overhead_ms + two_batch_overlap_ms(compute, comm, m_moe_layers);
  }

  // Inlined into cost(), which calls it every step (the call's register saves were a tenth of
  // its instructions).
  [[gnu::always_inline]] double rank_ms(const StepShape& s) const {
    const int64_t tokens = std::max<int64_t>(1, s.prefill_tokens + s.decode_sequences);
    const int64_t seqs = std::max<int64_t>(1, s.sequences);
    const auto prefill = static_cast<double>(s.prefill_tokens);
    const auto decodes = static_cast<double>(s.decode_sequences);
    double ms = m_overhead_ms +
                (tokens < k_dense_tokens ? m_tokens_ms.at(static_cast<size_t>(tokens))
                                         : m_tokens.at(static_cast<double>(tokens))) +
                (seqs < k_dense_sequences ? m_sequences_ms.at(static_cast<size_t>(seqs))
                                          : m_sequences.at(static_cast<double>(seqs)));
    if (decodes > 0) {
      const double mean = std::max(1.0, static_cast<double>(s.decode_context_tokens) / decodes);
      double g = m_generation.at_batch(s.decode_sequences, mean);
      // A sequence is never faster than alone: the longest bounds a step of uneven lengths.
      const auto longest = static_cast<double>(s.decode_context_max);
      if (longest > mean)
        g = std::max(g, static_cast<uint64_t>(s.decode_context_max) < k_dense_lengths
                            ? m_generation_one_ms[static_cast<size_t>(s.decode_context_max)]
                            : m_generation.at_one(longest));
      ms += g;
    }
    if (prefill > 0) {
      const double chunks = std::max(1.0, static_cast<double>(s.sequences) - decodes);
      const double pairs = s.prefill_tokens_sq / 2 +
                           prefill * static_cast<double>(s.prefill_context_tokens) / chunks;
      ms += m_context.at(chunks, std::max(1.0, std::sqrt(2 * pairs / chunks)));
    }
    return ms;
  }

  std::optional<StepCost> cost(const StepShape& s) const override {
    StepCost c;
    c.bytes = m_work.bytes(s);
    c.flops = m_work.flops(s);
    c.peak_bytes_per_s = m_peak_bytes;
    c.peak_flops_per_s = m_peak_flops;
    c.ideal_ms_bandwidth = c.bytes / m_peak_bytes * 1e3;
    c.ideal_ms_compute = c.flops / m_peak_flops * 1e3;
    c.bandwidth_bound = c.ideal_ms_bandwidth >= c.ideal_ms_compute;
    c.step_ms = m_ranks == 1 ? rank_ms(s) : step_ms(s);
    return c;
  }

  // rank_ms's and StepWork's terms at a decode-only batch; not for data-parallel ranks or MLA
  // (whose flops have a prefill term of their own).
  bool decode_stretch(int32_t batch, DecodeStretch& out) const override {
    if (m_ranks != 1 || !(static_cast<uint32_t>(batch) - 1 < m_stretch_batches)) return false;
    // Each batch's answer is made on its first call (its table rows and curve entries filled
    // then) and copied after: a call that finds it not made yet makes it (a tail call, so that
    // the usual path calls nothing).
    const auto n = static_cast<size_t>(batch);
    if (m_stretches.ready[n].load(std::memory_order_acquire) == 0) [[unlikely]]
      return make_then_decode_stretch(batch, out);
    out = *m_stretches.at(n);
    return true;
  }
  [[gnu::noinline]] bool make_then_decode_stretch(int32_t batch, DecodeStretch& out) const {
    const auto n = static_cast<size_t>(batch);
    {
      const std::lock_guard<std::mutex> lock(m_stretches.fill);
      if (m_stretches.ready[n].load(std::memory_order_relaxed) == 0) {
        m_generation.fill_batch_row(n);
        DecodeStretch made;
        put_stretch(batch, made);
        std::construct_at(m_stretches.slot(n), made);
        // Published after the answer: a call that reads it (acquire) reads the answer made.
        m_stretches.ready[n].store(1, std::memory_order_release);
      }
    }
    out = *m_stretches.at(n);
    return true;
  }
  /// decode_stretch's answer at the batch (REQUIRES: its table rows filled).
  void put_stretch(int32_t batch, DecodeStretch& out) const {
    const auto n = static_cast<size_t>(batch);
    const double tokens_ms = m_tokens_ms.at(n), sequences_ms = m_sequences_ms.at(n);
    out.batch = batch;
    out.batch_count = static_cast<double>(batch);
    out.base_ms = m_overhead_ms + tokens_ms + sequences_ms;  // rank_ms's order
    out.weight_bytes = m_work.weight_bytes;
    out.kv_bytes_per_token = m_work.kv_bytes_per_token;
    out.token_flops = m_work.flops_per_token * out.batch_count;
    out.flops_per_pair = m_work.flops_per_pair;
    out.peak_bytes_per_s = m_peak_bytes;
    out.peak_flops_per_s = m_peak_flops;
    out.generation = m_generation.filled_batch_row(n);
    out.length_end = m_generation.y_end();
    out.one_ms = m_generation_one_ms.data();
    out.one_lengths = m_generation_one_ms.size();
  }

 private:
  // Table sizes: 16384 + 4096 doubles for the curves (160 KiB), two grids of
  // (12 x 8 + 1) x (20 x 16 + 1) doubles (2 x 243 KiB): batches and chunks below 4096, lengths
  // below 2^20 tokens, with their batches' bins (2 x 64 KiB), and the generation grid at one
  // sequence for lengths below 16384 (128 KiB); 902 KiB in all, plus 4096 decode stretches
  // (512 KiB). All but the one-sequence table are filled where a step first reads them (the
  // pages of the rest never touched).
  static constexpr int64_t k_dense_tokens = int64_t{1} << 14, k_dense_sequences = int64_t{1} << 12;
  static constexpr int k_batch_octaves = 12, k_length_octaves = 20;
  /// A decode step's longest context reads m_generation_one_ms below this (the trace's longest
  /// requests fit: Azure's conversations reach 14,089 tokens).
  static constexpr size_t k_dense_lengths = size_t{1} << 14;

  LogCurve m_tokens;     // layers x (GEMMs, MoE, all-reduce, elementwise) + once-per-step at T
  LogCurve m_sequences;  // LM head at m = sequences
  DenseCurve m_tokens_ms, m_sequences_ms;  // m_tokens, m_sequences at 0, 1, 2, ...
  BinnedGrid m_generation;  // layers x decode attention over (batch, KV per sequence)
  BinnedGrid m_context;     // layers x prefill attention over (chunks, equivalent length)
  std::vector<double> m_generation_one_ms;  // m_generation.at_one at 0, 1, 2, ...
  double m_overhead_ms;
  StepWork m_work;
  double m_peak_bytes, m_peak_flops;
  int32_t m_ranks = 1;
  std::optional<LogCurve> m_moe;   // layers x the busiest GPU's MoE block, over the step's tokens
  std::optional<LogCurve> m_comm;  // two-batch overlap: the all-to-alls over a rank's tokens
  double m_moe_layers = 1;
  /// decode_stretch's batches are 1 .. m_stretch_batches: below both tables' batches, none
  /// where a prefill pair's flops differ from a decode's (MLA).
  uint32_t m_stretch_batches = 0;
  /// decode_stretch's answers, [n] made on batch n's first call and published by ready[n]. The
  /// slots are zeroed pages (core/zeroed_pages.h) and an answer constructed in its slot when made,
  /// so that the pages of batches never asked for are never touched.
  struct Stretches {
    explicit Stretches(size_t n)
        : ready(std::make_unique<std::atomic<uint8_t>[]>(n)),  // all 0
          slots(static_cast<DecodeStretch*>(allocate_zeroed(n * sizeof(DecodeStretch))), Free{n}) {}
    [[nodiscard]] DecodeStretch* slot(size_t n) const { return slots.get() + n; }
    /// REQUIRES: ready[n] read as 1 (acquire).
    [[nodiscard]] const DecodeStretch* at(size_t n) const { return std::launder(slot(n)); }
    struct Free {
      size_t n = 0;
      void operator()(DecodeStretch* p) const { release_zeroed(p, n * sizeof(DecodeStretch)); }
    };
    std::mutex fill;  // held while an answer is made
    std::unique_ptr<std::atomic<uint8_t>[]> ready;
    std::unique_ptr<DecodeStretch[], Free> slots;
  };
  mutable Stretches m_stretches{static_cast<size_t>(k_dense_sequences)};
};

std::unique_ptr<StepTimeModel> build(const OperatorSource& src, const Layout& l, double overhead_ms,
                                     StepWork work, double peak_bytes, double peak_flops) {
  const AttentionHeads h{l.heads, l.kv_heads, l.head_dim};
  // One query of each operator first, so that the tables it reads report their sizes.
  (void)token_ms(src, l, 1);
  (void)src.gemm_ms(1, l.vocab / l.tp, l.hidden, l.lm_head);
  // MLA attention from the shape-aware roofline (mla.h), the rest from `src`.
  const auto generation = [&](double b, double kv) {
    return l.mla ? mla_generation_ms(*l.mla_roof, b, kv, l.mla_layer, l.kv, l.bf16_flops_per_ms)
                 : src.generation_attention_ms(b, kv, h, "bfloat16", l.kv);
  };
  const auto context = [&](double k, double len) {
    return l.mla ? mla_context_ms(*l.mla_roof, k, len, l.mla_layer, l.attention, l.kv)
                 : src.context_attention_ms(k, len, h, l.attention, l.kv);
  };
  (void)generation(1, 1);
  (void)context(1, 1);

  const auto curve = [&](const std::vector<double>& xs, auto&& f) {
    std::vector<double> ys;
    for (double x : xs) ys.push_back(f(x));
    return LogCurve(xs, ys, 1.0);
  };
  const auto tokens = samples(src, {OperatorAxis::GemmTokens, OperatorAxis::MoeTokens}, 1 << 20);
  const auto seqs = samples(src, {OperatorAxis::GemmTokens}, 1 << 16);
  LogCurve token_curve = curve(tokens, [&](double t) { return token_ms(src, l, t); });
  LogCurve seq_curve =
      curve(seqs, [&](double s) { return src.gemm_ms(s, l.vocab / l.tp, l.hidden, l.lm_head); });
  const auto grid = [&](const std::vector<double>& xs, const std::vector<double>& ys, auto&& f) {
    std::vector<double> z;
    for (double x : xs)
      for (double y : ys) z.push_back(l.layers * f(x, y));
    return LogGrid(xs, ys, z, 1.0);
  };
  LogGrid gen = grid(samples(src, {OperatorAxis::GenerationBatch}, 1 << 14),
                     samples(src, {OperatorAxis::GenerationKv}, 1 << 21), generation);
  LogGrid ctx = grid(samples(src, {OperatorAxis::ContextBatch}, 1 << 12),
                     samples(src, {OperatorAxis::ContextLength}, 1 << 21), context);
  auto model =
      std::make_unique<OperatorModel>(std::move(token_curve), std::move(seq_curve), std::move(gen),
                                      std::move(ctx), overhead_ms, work, peak_bytes, peak_flops);
  if (l.wide.ranks > 1) {
    double measured_ep = 0;
    const auto moe = [&](double t) {
      return (l.layers - l.dense_layers) * wide_moe_ms(src, t * l.wide.skew, l.moe_shape,
                                                       l.moe_dtype, l.distribution, l.moe_roofs,
                                                       measured_ep);
    };
    (void)moe(1);
    model->set_ranks(l.wide.ranks, curve(samples(src, {OperatorAxis::MoeTokens}, 1 << 22), moe));
    if (l.wide.two_batch_overlap)
      model->set_overlap(curve(tokens, [&](double t) { return all_to_all_ms(l, t); }),
                         l.layers - l.dense_layers);
  }
  return model;
}

}  // namespace

std::unique_ptr<StepTimeModel> make_operator_model(const Cfg& c) {
  return make_operator_stage_model(c, 0);
}

std::unique_ptr<StepTimeModel> make_operator_stage_model(const Cfg& c, int64_t layers) {
  const ModelSpec model = read_model(c, "model");
  const HardwareSpec hw = read_hardware(c, "hardware");
  const int64_t tp = c.get_int("tensor_parallel", 1, {1, 1024});
  const int64_t dp = c.get_int("data_parallel", 1, {1, 1024});
  Layout l;
  l.tp = static_cast<double>(tp);
  l.layers = static_cast<double>(layers > 0 ? layers : model.layers);
  l.hidden = static_cast<double>(model.hidden_size);
  l.head_dim = static_cast<double>(model.head_dim);
  l.inter = static_cast<double>(model.intermediate_size);
  l.gated_mlp = model.gated_mlp;
  l.vocab = static_cast<double>(model.vocab_size);
  if (model.attention_heads % tp != 0)
    c.fail("tensor_parallel",
           fmt::format("must divide {}'s {} attention heads", model.name, model.attention_heads));
  if (model.kv_heads >= tp ? model.kv_heads % tp != 0 : tp % model.kv_heads != 0)
    c.fail("tensor_parallel", fmt::format("must divide {}'s {} KV heads, or be a multiple of them",
                                          model.name, model.kv_heads));
  l.heads = static_cast<double>(model.attention_heads / tp);
  l.mla = model.is_mla();
  l.mla_layer = {model.mla, l.hidden, l.heads};
  l.dense_layers =
      static_cast<double>(std::min(model.dense_layers, static_cast<int64_t>(l.layers)));
  l.dense_inter = static_cast<double>(model.dense_intermediate_size);
  l.shared_inter = static_cast<double>(model.shared_experts * model.intermediate_size);
  // Fewer KV heads than GPUs: each GPU keeps a copy of one (as vLLM replicates them).
  l.kv_heads = static_cast<double>(std::max<int64_t>(1, model.kv_heads / tp));

  const DtypeName& weight = read_dtype_name(c, "weight_dtype", "bf16", k_gemm_dtypes);
  const DtypeName& attention = read_dtype_name(c, "attention_dtype", "bf16", k_attention_dtypes);
  const DtypeName& kv = read_dtype_name(c, "kv_dtype", "bf16", k_attention_dtypes);
  const DtypeName& lm_head = read_dtype_name(c, "lm_head_dtype", "bf16", k_gemm_dtypes);
  l.gemm = weight.table;
  l.attention = attention.table;
  l.kv = kv.table;
  l.kv_bytes = dtype_bytes(kv.storage);
  l.lm_head = lm_head.table;
  l.moe = model.is_moe();
  Dtype moe_storage = weight.storage;
  if (l.moe) {
    const int64_t group = tp * dp;  // dp > 1: every GPU of the group holds whole experts
    const int64_t ep = c.get_int("expert_parallel", dp > 1 ? group : 1, {1, group});
    if (dp > 1 && ep != group)
      c.fail("expert_parallel",
             fmt::format("with data_parallel {} must be tensor_parallel x data_parallel ({}): "
                         "the experts are spread over the whole group",
                         dp, group));
    // With data-parallel ranks the experts need not divide the group: EPLB's redundant copies
    // fill it (SGLang's 256 + 32 over 72 GPUs); a GPU then holds experts / ep on average.
    if (group % ep != 0 || (dp == 1 && model.experts % ep != 0))
      c.fail("expert_parallel",
             fmt::format("must divide tensor_parallel ({}) and the {} experts", tp, model.experts));
    l.moe_shape = {l.hidden,
                   l.inter,
                   static_cast<double>(model.experts),
                   static_cast<double>(model.experts_per_token),
                   static_cast<double>(group / ep),
                   static_cast<double>(ep)};
    const bool same = std::any_of(k_moe_dtypes.begin(), k_moe_dtypes.end(), [&](const auto& d) {
      return std::string(d.servesim) == weight.servesim;
    });
    if (!same && !c.has("moe_dtype"))
      c.fail("weight_dtype", fmt::format("{} has no MoE variant: give moe_dtype", weight.servesim));
    const DtypeName& moe_dtype = read_dtype_name(c, "moe_dtype", weight.servesim, k_moe_dtypes);
    l.moe_dtype = moe_dtype.table;
    moe_storage = moe_dtype.storage;
    // The roofline's MoE curve assumes balanced routing; the tables default to AIConfigurator's
    // own default, the skewed power_law_1.2 (the one column every GPU has).
    const bool roofline = c.child("operators").get_string("source", "tables") == "roofline";
    l.distribution = c.get_string("moe_distribution", roofline ? "balanced" : "power_law_1.2");
  } else {
    for (const char* key : {"expert_parallel", "moe_dtype", "moe_distribution", "data_parallel"})
      if (c.has(key) && (key != std::string("data_parallel") || dp > 1))
        c.fail(key, fmt::format("only for a mixture of experts ({} is dense)", model.name));
  }
  l.wide = read_wide_ep(c, hw, l.moe ? dp : 1);
  const double overhead_ms = plausible_real(c, "overhead_ms", 0.0, units::k_cost_ms);

  // The embedding and LM head are stored in lm_head_dtype, the rest in weight_dtype.
  const double table_params = 2.0 * l.vocab * l.hidden;
  const double weight_bytes =
      (static_cast<double>(model.parameters) - table_params) * dtype_bytes(weight.storage) +
      table_params * dtype_bytes(lm_head.storage);
  // With data-parallel ranks each rank keeps its own copy of everything but the experts, which
  // are spread over the whole group; pipeline stages (models/pipeline.h) each hold their share
  // of the layers.
  const auto pp = static_cast<double>(c.get_int("pipeline_parallel", 1, {1, 1024}));
  const double expert_bytes = l.wide.ranks > 1
                                  ? (l.layers - l.dense_layers) * l.moe_shape.experts * 3 *
                                        l.hidden * l.inter * dtype_bytes(weight.storage)
                                  : 0;
  const double per_gpu = ((weight_bytes - expert_bytes) / l.tp +
                          expert_bytes / (l.tp * static_cast<double>(l.wide.ranks))) /
                         pp;
  if (per_gpu > hw.memory_bytes())
    c.fail("model",
           fmt::format("{} takes {:.1f} GB of weights per accelerator at tensor_parallel {}{}{}, "
                       "more than {}'s {} GB",
                       model.name, per_gpu / 1e9, tp,
                       l.wide.ranks > 1 ? fmt::format(" x data_parallel {}", dp) : "",
                       pp > 1 ? fmt::format(" x pipeline_parallel {}", pp) : "", hw.name,
                       hw.memory_gb));
  const Cfg ops = c.child("operators");
  const std::unique_ptr<OperatorSource> src = k_sources.pick(ops, "source")(ops, hw);
  // With data-parallel attention a step's shape is the whole group's batch: each rank computes
  // and reads the KV of its share (cost() per accelerator, docs/expert-parallelism.md), while
  // every rank still reads its copy of the active weights (an upper bound for the experts).
  const StepWork work = StepWork::of(model, weight.storage, kv.storage, l.tp)
                            .shared_by_ranks(static_cast<double>(l.wide.ranks));
  // AIConfigurator's tables have no MLA attention: the shape-aware roofline times it, with the
  // fit `operators.fit` names (default fit-all) whatever the GEMMs' source.
  if (l.mla) l.mla_roof = make_shape_roofline_source(ops, hw);
  const double peak_flops =
      hw.peak_flops_per_s(weight.storage == Dtype::Bf16 ? Dtype::Bf16 : Dtype::Fp8)
          .value_or(hw.peak_flops_per_s(Dtype::Bf16).value_or(1e15));
  l.bf16_flops_per_ms = hw.peak_flops_per_s(Dtype::Bf16).value_or(peak_flops) / 1e3;
  l.moe_roofs = {l.moe ? dtype_bytes(moe_storage) : 1, hw.bandwidth_bytes_per_s() / 1e3,
                 peak_flops / 1e3};
  try {
    return build(*src, l, overhead_ms, work, hw.bandwidth_bytes_per_s(), peak_flops);
  } catch (const InputError& e) {
    ops.fail("", fmt::format("{} cannot time {}: {}", src->describe(), model.name, e.what()));
  }
}

}  // namespace servesim
