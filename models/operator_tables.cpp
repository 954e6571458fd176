// Measured operator tables (AIConfigurator's CSVs) as an OperatorSource; models/operator_tables.h
// states what is read and how it is interpolated.
#include "models/operator_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/errors.h"
#include "core/input_file.h"
#include "core/units.h"
#include "models/link_allreduce.h"
#include "models/log_interp.h"
#include "models/operator_table_readers.h"
#include "models/table_cache.h"

namespace servesim {
namespace {
namespace fs = std::filesystem;

/// Version strings such as 0.19.0, 1.3.0rc20: numbers compare as numbers, the rest as text.
bool version_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    size_t ei = i, ej = j;
    while (ei < a.size() && (std::isdigit(static_cast<unsigned char>(a[ei])) != 0) == da) ++ei;
    while (ej < b.size() && (std::isdigit(static_cast<unsigned char>(b[ej])) != 0) == db) ++ej;
    const std::string ta = a.substr(i, ei - i), tb = b.substr(j, ej - j);
    if (da && db && ta.size() < 10 && tb.size() < 10) {
      if (std::stoll(ta) != std::stoll(tb)) return std::stoll(ta) < std::stoll(tb);
    } else if (ta != tb) {
      return ta < tb;
    }
    i = ei;
    j = ej;
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> subfolders(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class OperatorTables final : public OperatorSource {
 public:
  OperatorTables(OperatorTablesOptions o, fs::path gpu_dir, std::string engine_label,
                 double bytes_per_ms, double launch_ms)
      : m_o(std::move(o)),
        m_gpu_dir(std::move(gpu_dir)),
        m_engine_label(std::move(engine_label)),
        m_bytes_per_ms(bytes_per_ms),
        m_launch_ms(launch_ms) {}

  std::string describe() const override {
    return fmt::format("{} {} tables{}", m_o.gpu, m_engine_label,
                       m_o.nccl ? " (all-reduce: nccl)" : "");
  }

  double gemm_ms(double m, double n, double k, const std::string& dtype) const override {
    // A model asks for a few (n, k) shapes at many m: each shape's brackets and lines are kept
    // from its first query, which goes the whole way (and so throws as it would every time).
    for (const GemmShape& s : m_gemm_shapes)
      if (s.n == n && s.k == k && s.dtype == dtype) return shape_ms(s, m);
    const double ms = gemm_ms_anew(m, n, k, dtype);
    const GemmTable& g = gemm(dtype);
    GemmShape s{n, k, dtype, &g, log_bracket(g.ln_n, std::log(n)), log_bracket(g.ln_k, std::log(k)),
                {}};
    const std::array<size_t, 2> is{s.bn.lo, s.bn.hi}, js{s.bk.lo, s.bk.hi};
    for (size_t a = 0; a < 2; ++a)
      for (size_t b = 0; b < 2; ++b) s.lines[2 * a + b] = &nearest(g, is[a], js[b], dtype);
    m_gemm_shapes.push_back(std::move(s));
    return ms;
  }

 private:
  /// One (n, k, dtype) of gemm_ms: its brackets along n and k and the four lines it reads.
  struct GemmShape {
    double n, k;
    std::string dtype;
    const GemmTable* table;  // in m_gemm (std::map: stays put)
    LogBracket bn, bk;
    std::array<const LogCurve*, 4> lines;  // at (bn.lo, bk.lo), (bn.lo, bk.hi), (bn.hi, ...)
  };

  /// gemm_ms_anew's operations on the kept shape (log(m) taken once for the four lines).
  static double shape_ms(const GemmShape& s, double m) {
    const double ln_m = std::log(std::max(m, 1e-300));
    const auto line = [&](size_t i) { return std::log(s.lines[i]->at_ln(ln_m)); };
    const std::vector<double>& ln_k = s.table->ln_k;
    const double lo = log_blend(s.bk, ln_k, line(0), line(1), 1.0);
    const double hi = log_blend(s.bk, ln_k, line(2), line(3), 1.0);
    return std::exp(log_blend(s.bn, s.table->ln_n, lo, hi, 1.0));
  }

  double gemm_ms_anew(double m, double n, double k, const std::string& dtype) const {
    const GemmTable& g = gemm(dtype);
    const LogBracket bn = log_bracket(g.ln_n, std::log(n));
    const LogBracket bk = log_bracket(g.ln_k, std::log(k));
    const auto line = [&](size_t i, size_t j) { return std::log(nearest(g, i, j, dtype).at(m)); };
    const auto row = [&](size_t i) {
      return log_blend(bk, g.ln_k, line(i, bk.lo), line(i, bk.hi), 1.0);
    };
    return std::exp(log_blend(bn, g.ln_n, row(bn.lo), row(bn.hi), 1.0));
  }

 public:
  double context_attention_ms(double batch, double isl, const AttentionHeads& h,
                              const std::string& attn, const std::string& kv) const override {
    return attention_at(attention(false, h, attn, kv), m_batch_lines[0], batch, isl);
  }
  double generation_attention_ms(double batch, double kv_tokens, const AttentionHeads& h,
                                 const std::string& attn, const std::string& kv) const override {
    return attention_at(attention(true, h, attn, kv), m_batch_lines[1], batch, kv_tokens);
  }

  double moe_ms(double tokens, const MoeShape& s, const std::string& dtype,
                const std::string& distribution) const override {
    const std::string key = fmt::format("{} {} {} {} {} {} {} {}", dtype, key_num(s.hidden_size),
                                        key_num(s.inter_size), key_num(s.experts), key_num(s.top_k),
                                        key_num(s.moe_tp), key_num(s.moe_ep), distribution);
    auto it = m_moe.find(key);
    if (it == m_moe.end()) it = m_moe.emplace(key, read_moe(s, dtype, distribution)).first;
    return it->second.at(tokens);
  }

  double allreduce_ms(double elements, double gpus) const override {
    if (m_allreduce.empty()) read_allreduce();
    const auto it = m_allreduce.find(key_num(gpus));
    if (it == m_allreduce.end()) {
      std::vector<std::string> have;
      for (const auto& [g, c] : m_allreduce) have.push_back(g);
      throw InputError(fmt::format("{}: no all-reduce rows for {} GPUs (GPU counts there: {})",
                                   allreduce_file().string(), key_num(gpus), join_names(have)));
    }
    return it->second.at(elements);
  }

  double elementwise_ms(double bytes) const override {
    return m_launch_ms + bytes / m_bytes_per_ms;
  }

  std::vector<double> breakpoints(OperatorAxis axis) const override {
    const auto& s = m_breakpoints[static_cast<size_t>(axis)];
    return {s.begin(), s.end()};
  }

 private:
  /// The file from the newest `<engine>-*` folder that has it (or the exact folder given).
  fs::path table_file(const std::string& name) const {
    std::vector<std::string> folders, with_file;
    for (const std::string& d : subfolders(m_gpu_dir)) {
      if (d == m_o.engine || d.rfind(m_o.engine + "-", 0) == 0) folders.push_back(d);
    }
    for (const std::string& d : folders)
      if (input_exists(m_gpu_dir / d / name)) with_file.push_back(d);
    if (with_file.empty())
      throw InputError(fmt::format("{}: no {} (nor {}.gz) in {} (folders: {})", m_gpu_dir.string(),
                                   name, name, m_o.engine, join_names(subfolders(m_gpu_dir))));
    // The file as stored: `name` or `name`.gz (core/input_file.h), named so in messages.
    return *find_input(m_gpu_dir /
                       *std::max_element(with_file.begin(), with_file.end(), version_less) / name);
  }

  fs::path allreduce_file() const {
    if (!m_o.nccl) return table_file("custom_allreduce.csv");
    std::vector<std::string> nccl;
    for (const std::string& d : subfolders(m_gpu_dir))
      if (d.rfind("nccl-", 0) == 0) nccl.push_back(d);
    if (nccl.empty())
      throw InputError(fmt::format("{}: no nccl-* folder (folders: {})", m_gpu_dir.string(),
                                   join_names(subfolders(m_gpu_dir))));
    const fs::path file =
        m_gpu_dir / *std::max_element(nccl.begin(), nccl.end(), version_less) / "nccl.csv";
    return find_input(file).value_or(file);  // a missing one is named when it is opened
  }

  void note(OperatorAxis a, double v) const { m_breakpoints[static_cast<size_t>(a)].insert(v); }

  const GemmTable& gemm(const std::string& dtype) const {
    if (auto it = m_gemm.find(dtype); it != m_gemm.end()) return it->second;
    return m_gemm.emplace(dtype, read_gemm_table(table_file("gemm.csv"), dtype, m_breakpoints))
        .first->second;
  }

  /// The measured line nearest (i, j): itself, else along n at the same k, else along k.
  const LogCurve& nearest(const GemmTable& g, size_t i, size_t j, const std::string& dtype) const {
    const size_t nk = g.ln_k.size(), nn = g.ln_n.size();
    const auto at = [&](size_t a, size_t b) { return g.line(a * nk + b); };
    for (size_t d = 0; d < std::max(nn, nk); ++d) {
      if (i >= d && d < nn && at(i - d, j)) return *at(i - d, j);
      if (i + d < nn && at(i + d, j)) return *at(i + d, j);
    }
    for (size_t d = 1; d < nk; ++d) {
      if (j >= d && at(i, j - d)) return *at(i, j - d);
      if (j + d < nk && at(i, j + d)) return *at(i, j + d);
    }
    throw InputError(fmt::format("{}: no {} gemm measured at n = {} or at k = {}", g.file.string(),
                                 dtype, key_num(std::exp(g.ln_n[i])),
                                 key_num(std::exp(g.ln_k[j]))));
  }

  const AttentionTable& attention(bool generation, const AttentionHeads& h, const std::string& attn,
                                  const std::string& kv) const {
    // A model's grid asks for one layout thousands of times in a row: the last table found for
    // each kind answers without spelling the key or the column's name.
    Last& last = m_last[generation ? 1 : 0];
    if (last.table != nullptr && last.heads.heads == h.heads && last.heads.kv_heads == h.kv_heads &&
        last.heads.head_dim == h.head_dim && last.attn == attn && last.kv == kv)
      return *last.table;
    const AttentionTable& t = find_attention(generation, h, attn + "_kv_" + kv);
    last = {&t, h, attn, kv};
    return t;
  }

  const AttentionTable& find_attention(bool generation, const AttentionHeads& h,
                                       const std::string& variant) const {
    auto& cache = generation ? m_generation : m_context;
    const std::string key = fmt::format("{}/{}/{}/{}", key_num(h.head_dim), key_num(h.heads),
                                        key_num(h.kv_heads), variant);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    const fs::path file =
        table_file(generation ? "generation_attention.csv" : "context_attention.csv");
    AttentionTable t;
    try {
      t = read_attention_table(file, generation, h, variant, m_breakpoints);
    } catch (const InputError&) {
      // A layout the tables lack (a multi-head model where only GQA was measured) is read from
      // the one with the same group size, at a proportionally larger batch.
      // A group size it lacks is blended between the measured ones around it.
      const std::optional<AttentionSubstitute> sub = attention_substitute(file, h);
      if (!sub || (sub->batch_scale == 1 && !sub->upper)) throw;
      Breakpoints bp;  // the table's batches, in the step's batches
      t = read_attention_blend(file, generation, *sub, variant, bp);
      t.batch_scale = sub->batch_scale;
      const auto batch_axis = static_cast<size_t>(generation ? OperatorAxis::GenerationBatch
                                                             : OperatorAxis::ContextBatch);
      for (size_t axis = 0; axis < bp.size(); ++axis)
        for (double x : bp[axis])
          m_breakpoints[axis].insert(axis == batch_axis ? std::max(1.0, x / t.batch_scale) : x);
    }
    return cache.emplace(key, std::move(t)).first->second;
  }

  /// One table's lines (lengths) at one batch, log(by_batch[i].at(batch)) each, taken on first
  /// use: a model's grid asks for every length at one batch before the next batch.
  struct BatchLines {
    const AttentionTable* table = nullptr;
    double batch = 0;           // as given (before batch_scale)
    std::vector<double> ln_ms;  // [i]: line i at the batch, where done[i]
    std::vector<uint8_t> done;
  };

  static double attention_at(const AttentionTable& t, BatchLines& memo, double batch,
                             double length) {
    if (memo.table != &t || !(memo.batch == batch)) {
      memo.table = &t;
      memo.batch = batch;
      memo.ln_ms.resize(t.by_batch.size());
      memo.done.assign(t.by_batch.size(), 0);
    }
    const double scaled = batch * t.batch_scale;
    const auto line = [&](size_t i) {
      if (memo.done[i] == 0) {
        memo.ln_ms[i] = std::log(t.by_batch[i].at(scaled));
        memo.done[i] = 1;
      }
      return memo.ln_ms[i];
    };
    const LogBracket b = log_bracket(t.ln_length, std::log(length));
    return std::exp(log_blend(b, t.ln_length, line(b.lo), line(b.hi), 1.0));
  }

  LogCurve read_moe(const MoeShape& s, const std::string& dtype,
                    const std::string& distribution) const {
    return read_moe_table(table_file("moe.csv"), s, dtype, distribution, m_breakpoints);
  }

  void read_allreduce() const {
    m_allreduce = read_allreduce_table(allreduce_file(), m_o.nccl, m_breakpoints);
  }

  OperatorTablesOptions m_o;
  fs::path m_gpu_dir;
  std::string m_engine_label;
  double m_bytes_per_ms;
  double m_launch_ms;
  // Read on first use; the source is queried only while a step model is built.
  mutable std::map<std::string, GemmTable> m_gemm;
  mutable std::vector<GemmShape> m_gemm_shapes;  // gemm_ms's shapes so far
  mutable std::map<std::string, AttentionTable> m_context, m_generation;
  struct Last {
    const AttentionTable* table = nullptr;  // in m_context or m_generation (std::map: stays put)
    AttentionHeads heads;
    std::string attn, kv;  // the dtypes of the column latency_ms_<attn>_kv_<kv>
  };
  mutable std::array<Last, 2> m_last;  // attention()'s last answer: context, generation
  mutable std::array<BatchLines, 2> m_batch_lines;  // attention_at's: context, generation
  mutable std::map<std::string, LogCurve> m_moe;
  mutable std::map<std::string, LogCurve> m_allreduce;
  mutable Breakpoints m_breakpoints;
};

/// Bytes a weight element of a gemm/MoE dtype column takes.
double weight_bytes(const std::string& dtype) {
  if (dtype == "bfloat16") return 2;
  if (dtype == "nvfp4" || dtype == "int4_wo" || dtype == "w4a16_mxfp4") return 0.5;
  return 1;  // fp8, fp8_block, int8_wo, sq
}

class ScaledSource final : public OperatorSource {
 public:
  ScaledSource(std::unique_ptr<OperatorSource> src, Roofs from, Roofs to)
      : m_src(std::move(src)), m_from(from), m_to(to) {}

  std::string describe() const override {
    return fmt::format("{} scaled to {:.0f} GB/s and {:.0f} TFLOP/s", m_src->describe(),
                       m_to.bytes_per_s / 1e9, m_to.flops_per_s / 1e12);
  }
  double gemm_ms(double m, double n, double k, const std::string& dtype) const override {
    const double bytes = 2 * m * k + weight_bytes(dtype) * k * n + 2 * m * n;
    return m_src->gemm_ms(m, n, k, dtype) * ratio(bytes, 2 * m * n * k);
  }
  double context_attention_ms(double batch, double isl, const AttentionHeads& h,
                              const std::string& attn, const std::string& kv) const override {
    const double bytes = 2 * batch * isl * h.head_dim * (2 * h.heads + 2 * h.kv_heads);
    const double flops = 2 * batch * h.heads * h.head_dim * isl * isl;  // causal: half of 4 s^2
    return m_src->context_attention_ms(batch, isl, h, attn, kv) * ratio(bytes, flops);
  }
  double generation_attention_ms(double batch, double kv_tokens, const AttentionHeads& h,
                                 const std::string& attn, const std::string& kv) const override {
    const double bytes = batch * kv_tokens * 2 * h.kv_heads * h.head_dim * 2;
    const double flops = 4 * batch * h.heads * h.head_dim * kv_tokens;
    return m_src->generation_attention_ms(batch, kv_tokens, h, attn, kv) * ratio(bytes, flops);
  }
  double moe_ms(double tokens, const MoeShape& s, const std::string& dtype,
                const std::string& distribution) const override {
    const double per_expert = 3 * s.hidden_size * s.inter_size / s.moe_tp;
    const double active = std::min(s.experts / s.moe_ep, tokens * s.top_k);
    const double bytes = active * per_expert * weight_bytes(dtype) + 4 * tokens * s.hidden_size;
    const double flops = 2 * tokens * s.top_k / s.moe_ep * per_expert;
    return m_src->moe_ms(tokens, s, dtype, distribution) * ratio(bytes, flops);
  }
  double allreduce_ms(double elements, double gpus) const override {
    return m_src->allreduce_ms(elements, gpus);
  }
  double elementwise_ms(double bytes) const override {
    return m_src->elementwise_ms(bytes) * m_from.bytes_per_s / m_to.bytes_per_s;
  }
  std::vector<double> breakpoints(OperatorAxis axis) const override {
    return m_src->breakpoints(axis);
  }

 private:
  double ratio(double bytes, double flops) const {
    return std::max(bytes / m_to.bytes_per_s, flops / m_to.flops_per_s) /
           std::max(bytes / m_from.bytes_per_s, flops / m_from.flops_per_s);
  }
  std::unique_ptr<OperatorSource> m_src;
  Roofs m_from, m_to;
};

}  // namespace

std::unique_ptr<OperatorSource> scale_to_roofs(std::unique_ptr<OperatorSource> src, Roofs from,
                                               Roofs to) {
  return std::make_unique<ScaledSource>(std::move(src), from, to);
}

Roofs read_table_roofs(const std::string& path, const std::string& gpu) {
  const fs::path sys = fs::path(path) / "systems" / (gpu + ".yaml");
  std::error_code ec;
  if (!fs::is_regular_file(sys, ec))
    throw InputError(fmt::format("{}: no datasheet for {}", sys.string(), gpu));
  const Cfg g = Cfg::root(Document::load_file(sys.string())).child("gpu");
  return {plausible_real(g, "mem_bw", units::k_bytes_per_s),
          plausible_real(g, "bfloat16_tc_flops", units::k_flop_per_s)};
}

std::unique_ptr<OperatorSource> open_operator_tables(const OperatorTablesOptions& o) {
  const fs::path root(o.path);
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw InputError(
        fmt::format("{}: no such folder (the measured tables ship in the repository's "
                    "data/timings/aiconfigurator folder, installed under share/servesim/data; give "
                    "operators.path relative to the config file)",
                    fs::absolute(root, ec).lexically_normal().string()));
  const fs::path gpu_dir = root / o.gpu;
  if (o.gpu.empty() || o.gpu.find('/') != std::string::npos || !fs::is_directory(gpu_dir, ec)) {
    std::vector<std::string> gpus;
    for (const std::string& d : subfolders(root))
      if (d != "systems") gpus.push_back(d);
    throw InputError(fmt::format("gpu {}: no such folder in {}{} (GPUs there: {})",
                                 quote_input(o.gpu), root.string(), did_you_mean(o.gpu, gpus),
                                 join_names(gpus)));
  }
  std::vector<std::string> engines, all = subfolders(gpu_dir);
  for (const std::string& d : all)
    if (d == o.engine || d.rfind(o.engine + "-", 0) == 0) engines.push_back(d);
  if (o.engine.empty() || engines.empty())
    throw InputError(
        fmt::format("engine {}: no such folder in {} (folders: {}; give vllm, "
                    "trtllm or one folder's exact name)",
                    quote_input(o.engine), gpu_dir.string(), join_names(all)));
  std::string label = engines.size() == 1
                          ? engines.front()
                          : *std::max_element(engines.begin(), engines.end(), version_less) +
                                " (each table from the newest " + o.engine + "-* folder with it)";
  // The datasheet AIConfigurator ships beside the tables: elementwise passes take its constant
  // latency plus the bytes at its bandwidth times its empirical factor.
  const fs::path sys = root / "systems" / (o.gpu + ".yaml");
  if (!fs::is_regular_file(sys, ec))
    throw InputError(fmt::format("{}: no datasheet for {} (needed for elementwise passes)",
                                 sys.string(), o.gpu));
  // Its three figures come from the table cache when it has this file's content (parsing the
  // YAML cost a run as much as reading the gemm table's entry); a bad file throws each time.
  const TableCache cache(table_cache_dir(), sys, "datasheet");
  std::optional<std::vector<double>> figures = cache.load();
  if (!figures || figures->size() != 3) {
    const Cfg gpu = Cfg::root(Document::load_file(sys.string())).child("gpu");
    figures = {plausible_real(gpu, "mem_bw", units::k_bytes_per_s),
               gpu.get_real("mem_bw_empirical_scaling_factor", 1.0, {0.0, 1.0, true}),
               plausible_real(gpu, "mem_empirical_constant_latency", 0.0, units::k_latency_s)};
    cache.store(*figures);
  }
  const double bw = (*figures)[0], factor = (*figures)[1], latency_s = (*figures)[2];
  return std::make_unique<OperatorTables>(o, gpu_dir, std::move(label), bw * factor / 1e3,
                                          latency_s * 1e3);
}

namespace {

/// `allreduce: link`: the tables' all-reduce replaced by the link model of `hw`'s interconnect
/// (models/link_allreduce.h); its two keys are refused without it.
std::unique_ptr<OperatorSource> maybe_link_allreduce(std::unique_ptr<OperatorSource> src,
                                                     const Cfg& c, const HardwareSpec& hw) {
  const bool link = c.get_choice("allreduce", "custom", {"custom", "nccl", "link"}) == "link";
  if (!link) {
    for (const char* key : {"link_efficiency", "link_latency_us"})
      if (c.has(key)) c.fail(key, "only with allreduce: link");
    return src;
  }
  if (!(hw.interconnect_gb_per_s > 0))
    c.fail("allreduce", fmt::format("link: hardware {} has no interconnect_gb_per_s", hw.name));
  LinkAllreduce l;
  l.interconnect_gb_per_s = hw.interconnect_gb_per_s;
  l.efficiency = c.get_real("link_efficiency", l.efficiency, {0.0, 1.0, true});
  l.latency_us = c.get_real("link_latency_us", l.latency_us, {0.0, 1e6});
  return with_link_allreduce(std::move(src), l);
}

}  // namespace

std::unique_ptr<OperatorSource> make_operator_tables(const Cfg& c, const HardwareSpec& hw) {
  const bool scale = c.get_bool("scale_to_hardware", false);
  std::unique_ptr<OperatorSource> src = maybe_link_allreduce(make_operator_tables(c), c, hw);
  if (!scale) return src;
  const auto flops = hw.peak_flops_per_s(Dtype::Bf16);
  if (!flops)
    c.fail("scale_to_hardware", fmt::format("{} has no bf16 peak to scale the tables to", hw.name));
  fs::path p(c.get_string("path"));
  if (p.is_relative()) p = fs::path(c.doc().base_dir()) / p;
  Roofs from;
  try {
    from = read_table_roofs(p.lexically_normal().string(), c.get_string("gpu"));
  } catch (const InputError& e) {
    c.fail("scale_to_hardware", e.what());
  }
  return scale_to_roofs(std::move(src), from, {hw.bandwidth_bytes_per_s(), *flops});
}

std::unique_ptr<OperatorSource> make_operator_tables(const Cfg& c) {
  OperatorTablesOptions o;
  fs::path p(c.get_string("path"));
  if (p.is_relative()) p = fs::path(c.doc().base_dir()) / p;
  o.path = p.lexically_normal().string();
  o.gpu = c.get_string("gpu");
  o.engine = c.get_string("engine");
  o.nccl = c.get_choice("allreduce", "custom", {"custom", "nccl", "link"}) == "nccl";
  try {
    return open_operator_tables(o);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    c.fail(msg.rfind("gpu ", 0) == 0      ? "gpu"
           : msg.rfind("engine ", 0) == 0 ? "engine"
                                          : "path",
           msg);
  }
}

}  // namespace servesim
