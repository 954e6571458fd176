// Measured operator tables (AIConfigurator's CSVs) as an OperatorSource; models/operator_tables.h
// states what is read and how it is interpolated.
#include "models/operator_tables.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "models/log_interp.h"
#include "sim/csv_columns.h"
#include "sim/errors.h"

namespace servesim {
namespace {
namespace fs = std::filesystem;

/// A size as the tables spell it ("128"); a non-integer is never in a table's key columns.
std::string key_num(double v) {
  if (v >= 1 && v < 1e15 && v == std::floor(v)) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

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

/// The header's latency variants: "latency_ms_fp8" -> "fp8".
std::vector<std::string> variants_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", file.string()));
  std::string line;
  if (!read_bounded_line(in, line, CsvColumns::k_max_line_bytes, file.string(), 1, "CSV header"))
    return {};
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= line.size()) {
    size_t comma = line.find(',', start);
    if (comma == std::string::npos) comma = line.size();
    std::string f = line.substr(start, comma - start);
    while (!f.empty() && (f.back() == '\r' || f.back() == ' ')) f.pop_back();
    if (f.rfind("latency_ms_", 0) == 0) out.push_back(f.substr(11));
    start = comma + 1;
  }
  return out;
}

void need_variant(const fs::path& file, const std::string& variant, const char* what) {
  const auto v = variants_of(file);
  if (std::find(v.begin(), v.end(), variant) == v.end())
    throw InputError(fmt::format("{}: no {} column latency_ms_{} (it has: {})", file.string(), what,
                                 variant, join_names(v)));
}

/// Points (size, latency) into a curve: sorted, the fastest of duplicate sizes kept.
std::optional<LogCurve> curve_of(const std::map<double, double>& points) {
  if (points.empty()) return std::nullopt;
  std::vector<double> xs, ys;
  for (const auto& [x, y] : points) {
    xs.push_back(x);
    ys.push_back(y);
  }
  return LogCurve(xs, ys, 1.0);
}

void keep_fastest(std::map<double, double>& points, double x, double y) {
  auto [it, inserted] = points.emplace(x, y);
  if (!inserted) it->second = std::min(it->second, y);
}

struct GemmTable {
  fs::path file;
  std::vector<double> ln_n, ln_k;
  std::vector<std::optional<LogCurve>> lines;  // [i * k count + j]: (n_i, k_j) over m
};

struct AttentionTable {
  std::vector<double> ln_length;  // lengths with a measured cell
  std::vector<LogCurve> by_batch;
};

std::vector<double> logs_of(const std::set<double>& s) {
  std::vector<double> out;
  for (double v : s) out.push_back(std::log(v));
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
    const GemmTable& g = gemm(dtype);
    const LogBracket bn = log_bracket(g.ln_n, std::log(n));
    const LogBracket bk = log_bracket(g.ln_k, std::log(k));
    const auto line = [&](size_t i, size_t j) { return std::log(nearest(g, i, j, dtype).at(m)); };
    const auto row = [&](size_t i) {
      return log_blend(bk, g.ln_k, line(i, bk.lo), line(i, bk.hi), 1.0);
    };
    return std::exp(log_blend(bn, g.ln_n, row(bn.lo), row(bn.hi), 1.0));
  }

  double context_attention_ms(double batch, double isl, const AttentionHeads& h,
                              const std::string& attn, const std::string& kv) const override {
    return attention_at(attention(false, h, attn + "_kv_" + kv), batch, isl);
  }
  double generation_attention_ms(double batch, double kv_tokens, const AttentionHeads& h,
                                 const std::string& attn, const std::string& kv) const override {
    return attention_at(attention(true, h, attn + "_kv_" + kv), batch, kv_tokens);
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
    std::error_code ec;
    for (const std::string& d : folders)
      if (fs::is_regular_file(m_gpu_dir / d / name, ec)) with_file.push_back(d);
    if (with_file.empty())
      throw InputError(fmt::format("{}: no {} in {} (folders: {})", m_gpu_dir.string(), name,
                                   m_o.engine, join_names(subfolders(m_gpu_dir))));
    return m_gpu_dir / *std::max_element(with_file.begin(), with_file.end(), version_less) / name;
  }

  fs::path allreduce_file() const {
    if (!m_o.nccl) return table_file("custom_allreduce.csv");
    std::vector<std::string> nccl;
    for (const std::string& d : subfolders(m_gpu_dir))
      if (d.rfind("nccl-", 0) == 0) nccl.push_back(d);
    if (nccl.empty())
      throw InputError(fmt::format("{}: no nccl-* folder (folders: {})", m_gpu_dir.string(),
                                   join_names(subfolders(m_gpu_dir))));
    return m_gpu_dir / *std::max_element(nccl.begin(), nccl.end(), version_less) / "nccl.csv";
  }

  void note(OperatorAxis a, double v) const { m_breakpoints[static_cast<size_t>(a)].insert(v); }

  const GemmTable& gemm(const std::string& dtype) const {
    if (auto it = m_gemm.find(dtype); it != m_gemm.end()) return it->second;
    GemmTable g;
    g.file = table_file("gemm.csv");
    need_variant(g.file, dtype, "gemm dtype");
    std::ifstream in(g.file, std::ios::binary);
    CsvColumns csv(in, g.file.string(), {"m", "n", "k", "latency_ms_" + dtype});
    std::set<double> ns, ks;
    std::map<std::pair<double, double>, std::map<double, double>> points;
    while (csv.next_row()) {
      const auto m = static_cast<double>(csv.integer(0, 1, int64_t{1} << 40));
      const auto n = static_cast<double>(csv.integer(1, 1, int64_t{1} << 40));
      const auto k = static_cast<double>(csv.integer(2, 1, int64_t{1} << 40));
      note(OperatorAxis::GemmTokens, m);
      if (csv.field(3).empty()) continue;
      ns.insert(n);
      ks.insert(k);
      keep_fastest(points[{n, k}], m, csv.positive_real(3));
    }
    if (points.empty())
      throw InputError(
          fmt::format("{}: column latency_ms_{} has no measured cell", g.file.string(), dtype));
    g.ln_n = logs_of(ns);
    g.ln_k = logs_of(ks);
    for (double n : ns)
      for (double k : ks) {
        auto it = points.find({n, k});
        g.lines.push_back(it == points.end() ? std::nullopt : curve_of(it->second));
      }
    return m_gemm.emplace(dtype, std::move(g)).first->second;
  }

  /// The measured line nearest (i, j): itself, else along n at the same k, else along k.
  const LogCurve& nearest(const GemmTable& g, size_t i, size_t j, const std::string& dtype) const {
    const size_t nk = g.ln_k.size(), nn = g.ln_n.size();
    const auto at = [&](size_t a, size_t b) -> const std::optional<LogCurve>& {
      return g.lines[a * nk + b];
    };
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

  const AttentionTable& attention(bool generation, const AttentionHeads& h,
                                  const std::string& variant) const {
    auto& cache = generation ? m_generation : m_context;
    const std::string hd = key_num(h.head_dim), nh = key_num(h.heads), kvh = key_num(h.kv_heads);
    const std::string key = fmt::format("{}/{}/{}/{}", hd, nh, kvh, variant);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    const fs::path file =
        table_file(generation ? "generation_attention.csv" : "context_attention.csv");
    need_variant(file, variant, "attention dtype");
    std::ifstream in(file, std::ios::binary);
    CsvColumns csv(in, file.string(),
                   {"head_dim", "num_heads", "num_key_value_heads", "batch_size", "isl", "step",
                    "latency_ms_" + variant},
                   {"window_size"});
    const auto batch_axis = generation ? OperatorAxis::GenerationBatch : OperatorAxis::ContextBatch;
    const auto len_axis = generation ? OperatorAxis::GenerationKv : OperatorAxis::ContextLength;
    std::set<std::string> layouts;
    std::array<std::string, 3> last;
    std::map<double, std::map<double, double>> by_length;
    size_t rows = 0;
    while (csv.next_row()) {
      if (csv.has(7) && csv.field(7) != "0") continue;  // sliding-window rows
      const double batch = static_cast<double>(csv.integer(3, 1, int64_t{1} << 30));
      // The attended length: isl new tokens (context), or step stored + 1 new (generation).
      const double length =
          static_cast<double>(csv.integer(4, 1, int64_t{1} << 40) +
                              (generation ? csv.integer(5, 0, int64_t{1} << 40) : 0));
      note(batch_axis, batch);
      note(len_axis, length);
      if (csv.field(0) != hd || csv.field(1) != nh || csv.field(2) != kvh) {
        // Rows come sorted by layout: name each one once.
        if (csv.field(0) != last[0] || csv.field(1) != last[1] || csv.field(2) != last[2]) {
          for (size_t c = 0; c < 3; ++c) last[c] = std::string(csv.field(c));
          layouts.insert(fmt::format("{}/{} heads x {}", last[1], last[2], last[0]));
        }
        continue;
      }
      ++rows;
      if (csv.field(6).empty()) continue;
      keep_fastest(by_length[length], batch, csv.positive_real(6));
    }
    if (rows == 0)
      throw InputError(fmt::format(
          "{}: no rows for {} query / {} KV heads of dimension {} per GPU (query/KV heads x "
          "head_dim there: {})",
          file.string(), nh, kvh, hd, join_names({layouts.begin(), layouts.end()})));
    if (by_length.empty())
      throw InputError(
          fmt::format("{}: column latency_ms_{} has no measured cell for {}/{} "
                      "heads x {}",
                      file.string(), variant, nh, kvh, hd));
    AttentionTable t;
    for (auto& [length, points] : by_length) {
      t.ln_length.push_back(std::log(length));
      t.by_batch.push_back(*curve_of(points));
    }
    return cache.emplace(key, std::move(t)).first->second;
  }

  static double attention_at(const AttentionTable& t, double batch, double length) {
    const LogBracket b = log_bracket(t.ln_length, std::log(length));
    return std::exp(log_blend(b, t.ln_length, std::log(t.by_batch[b.lo].at(batch)),
                              std::log(t.by_batch[b.hi].at(batch)), 1.0));
  }

  LogCurve read_moe(const MoeShape& s, const std::string& dtype,
                    const std::string& distribution) const {
    const fs::path file = table_file("moe.csv");
    need_variant(file, distribution, "MoE distribution");
    std::ifstream in(file, std::ios::binary);
    CsvColumns csv(in, file.string(),
                   {"moe_dtype", "hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size",
                    "moe_ep_size", "num_tokens", "latency_ms_" + distribution});
    const std::array<std::string, 7> want{dtype,
                                          key_num(s.hidden_size),
                                          key_num(s.inter_size),
                                          key_num(s.experts),
                                          key_num(s.top_k),
                                          key_num(s.moe_tp),
                                          key_num(s.moe_ep)};
    std::set<std::string> same_model, models;
    std::vector<std::string> any_other;
    std::map<double, double> points;
    bool any = false;
    while (csv.next_row()) {
      const auto tokens = static_cast<double>(csv.integer(7, 1, int64_t{1} << 40));
      note(OperatorAxis::MoeTokens, tokens);
      bool match = true;
      for (size_t c = 0; c < want.size() && match; ++c) match = csv.field(c) == want[c];
      if (!match) {
        if (!any_other.empty() && csv.field(0) == any_other[0] && csv.field(1) == any_other[1] &&
            csv.field(2) == any_other[2] && csv.field(3) == any_other[3] &&
            csv.field(4) == any_other[4] && csv.field(5) == any_other[5] &&
            csv.field(6) == any_other[6])
          continue;  // the same shape as the row before: named already
        any_other.clear();
        for (size_t c = 0; c < 7; ++c) any_other.emplace_back(csv.field(c));
        const bool model = csv.field(1) == want[1] && csv.field(2) == want[2] &&
                           csv.field(3) == want[3] && csv.field(4) == want[4];
        if (model)
          same_model.insert(
              fmt::format("{} moe_tp {} moe_ep {}", csv.field(0), csv.field(5), csv.field(6)));
        models.insert(
            fmt::format("{}/{}/{}/{}", csv.field(1), csv.field(2), csv.field(3), csv.field(4)));
        continue;
      }
      any = true;
      if (!csv.field(8).empty()) keep_fastest(points, tokens, csv.positive_real(8));
    }
    if (!any)
      throw InputError(fmt::format(
          "{}: no rows for {} experts of hidden {} x inter {}, top-{}, in {} at moe_tp {} moe_ep "
          "{} ({})",
          file.string(), want[3], want[1], want[2], want[4], dtype, want[5], want[6],
          same_model.empty() ? fmt::format("hidden/inter/experts/top-k there: {}",
                                           join_names({models.begin(), models.end()}))
                             : fmt::format("that model is there as: {}",
                                           join_names({same_model.begin(), same_model.end()}))));
    if (points.empty())
      throw InputError(fmt::format("{}: column latency_ms_{} has no measured cell for that shape",
                                   file.string(), distribution));
    return *curve_of(points);
  }

  void read_allreduce() const {
    const fs::path file = allreduce_file();
    std::ifstream in(file, std::ios::binary);
    std::map<std::string, std::map<double, double>> by_gpus;
    if (m_o.nccl) {
      CsvColumns csv(in, file.string(),
                     {"op_name", "nccl_dtype", "num_gpus", "message_size", "latency_ms"});
      while (csv.next_row())
        if (csv.field(0) == "all_reduce" && csv.field(1) == "half")
          keep_fastest(by_gpus[std::string(csv.field(2))],
                       static_cast<double>(csv.integer(3, 1, int64_t{1} << 40)),
                       csv.positive_real(4));
    } else {
      // vLLM's files time the CUDA-graph path (what serving runs) and eager mode; keep the first.
      CsvColumns csv(in, file.string(), {"num_gpus", "message_size", "latency_ms"},
                     {"kernel_source", "allreduce_dtype"});
      while (csv.next_row()) {
        if (csv.has(3) && csv.field(3) != "vLLM_custom_graph") continue;
        if (csv.has(4) && csv.field(4) != "bfloat16") continue;
        keep_fastest(by_gpus[std::string(csv.field(0))],
                     static_cast<double>(csv.integer(1, 1, int64_t{1} << 40)),
                     csv.positive_real(2));
      }
    }
    if (by_gpus.empty())
      throw InputError(fmt::format("{}: no bf16 all-reduce rows", file.string()));
    for (auto& [gpus, points] : by_gpus) {
      for (const auto& [x, y] : points) note(OperatorAxis::AllreduceElements, x);
      m_allreduce.emplace(gpus, *curve_of(points));
    }
  }

  OperatorTablesOptions m_o;
  fs::path m_gpu_dir;
  std::string m_engine_label;
  double m_bytes_per_ms;
  double m_launch_ms;
  // Read on first use; the source is queried only while a step model is built.
  mutable std::map<std::string, GemmTable> m_gemm;
  mutable std::map<std::string, AttentionTable> m_context, m_generation;
  mutable std::map<std::string, LogCurve> m_moe;
  mutable std::map<std::string, LogCurve> m_allreduce;
  mutable std::array<std::set<double>, 7> m_breakpoints;
};

}  // namespace

std::unique_ptr<OperatorSource> open_operator_tables(const OperatorTablesOptions& o) {
  const fs::path root(o.path);
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw InputError(fmt::format("{}: no such folder", root.string()));
  const fs::path gpu_dir = root / o.gpu;
  if (o.gpu.empty() || o.gpu.find('/') != std::string::npos || !fs::is_directory(gpu_dir, ec)) {
    std::vector<std::string> gpus;
    for (const std::string& d : subfolders(root))
      if (d != "systems") gpus.push_back(d);
    throw InputError(fmt::format("gpu \"{}\": no such folder in {}{} (GPUs there: {})", o.gpu,
                                 root.string(), did_you_mean(o.gpu, gpus), join_names(gpus)));
  }
  std::vector<std::string> engines, all = subfolders(gpu_dir);
  for (const std::string& d : all)
    if (d == o.engine || d.rfind(o.engine + "-", 0) == 0) engines.push_back(d);
  if (o.engine.empty() || engines.empty())
    throw InputError(
        fmt::format("engine \"{}\": no such folder in {} (folders: {}; give vllm, "
                    "trtllm or one folder's exact name)",
                    o.engine, gpu_dir.string(), join_names(all)));
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
  const Cfg gpu = Cfg::root(Document::load_file(sys.string())).child("gpu");
  const double bw = gpu.get_real("mem_bw", k_positive);
  const double factor = gpu.get_real("mem_bw_empirical_scaling_factor", 1.0, {0.0, 1.0, true});
  const double latency_s = gpu.get_real("mem_empirical_constant_latency", 0.0, k_non_negative);
  return std::make_unique<OperatorTables>(o, gpu_dir, std::move(label), bw * factor / 1e3,
                                          latency_s * 1e3);
}

std::unique_ptr<OperatorSource> make_operator_tables(const Cfg& c) {
  OperatorTablesOptions o;
  fs::path p(c.get_string("path"));
  if (p.is_relative()) p = fs::path(c.doc().base_dir()) / p;
  o.path = p.lexically_normal().string();
  o.gpu = c.get_string("gpu");
  o.engine = c.get_string("engine");
  o.nccl = c.get_choice("allreduce", "custom", {"custom", "nccl"}) == "nccl";
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
