// Readers of AIConfigurator's operator CSVs for the measured-table source
// (models/operator_tables.h): each keeps only the rows its key selects.
#include "models/operator_table_readers.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <set>

#include "core/config.h"
#include "core/csv_columns.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "models/table_cache.h"
#include "models/table_checks.h"

namespace servesim {
namespace fs = std::filesystem;

/// A size as the tables spell it ("128"); a non-integer is never in a table's key columns.
std::string key_num(double v) {
  if (v >= 1 && v < 1e15 && v == std::floor(v)) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

namespace {

void note(Breakpoints& bp, OperatorAxis a, double v) { bp[static_cast<size_t>(a)].insert(v); }

/// The header's latency variants: "latency_ms_fp8" -> "fp8".
std::vector<std::string> variants_of(const fs::path& file) {
  const std::unique_ptr<std::istream> in = open_input(file);
  std::string line;
  if (!read_bounded_line(*in, line, CsvColumns::k_max_line_bytes, file.string(), 1, "CSV header"))
    return {};
  std::vector<std::string> out;
  for (const std::string& f : csv_fields(line, file.string(), 1))
    if (f.rfind("latency_ms_", 0) == 0) out.push_back(f.substr(11));
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

}  // namespace

namespace {

/// The rows read_gemm_table keeps, as numbers: every m of the file, then (m, n, k, latency,
/// line) of each row with a cell in the dtype's column.
std::vector<double> parse_gemm_rows(const fs::path& file, const std::string& dtype) {
  need_variant(file, dtype, "gemm dtype");
  const std::unique_ptr<std::istream> in = open_input(file);
  CsvColumns csv(*in, file.string(), {"m", "n", "k", "latency_ms_" + dtype});
  std::vector<double> every_m, rows;
  double last_m = 0;
  while (csv.next_row()) {
    const auto m = static_cast<double>(csv.integer(0, 1, int64_t{1} << 40));
    const auto n = static_cast<double>(csv.integer(1, 1, int64_t{1} << 40));
    const auto k = static_cast<double>(csv.integer(2, 1, int64_t{1} << 40));
    if (m != last_m) every_m.push_back(m);
    last_m = m;
    if (csv.field(3).empty()) continue;
    rows.insert(rows.end(), {m, n, k, csv.positive_real(3), static_cast<double>(csv.line())});
  }
  std::vector<double> out;
  out.reserve(1 + every_m.size() + rows.size());
  out.push_back(static_cast<double>(every_m.size()));
  out.insert(out.end(), every_m.begin(), every_m.end());
  out.insert(out.end(), rows.begin(), rows.end());
  return out;
}

}  // namespace

namespace {

/// What the table cache keeps of gemm.csv for one dtype column, in the order read_gemm_table
/// uses it: the count and values of every m of the file (sorted, unique), of the n and of the k
/// with a measured cell, of the lines LatencyDrops flags; then for each (n, k) of ns x ks in
/// order the count of its points (0: not measured), their m ascending, their latencies (the
/// fastest of equal m). Throws InputError for a file that does not parse or has no cell.
std::vector<double> gemm_entry(const fs::path& file, const std::string& dtype) {
  const std::vector<double> v = parse_gemm_rows(file, dtype);
  const auto m_count = static_cast<size_t>(v.at(0));
  std::vector<double> every_m(v.begin() + 1, v.begin() + 1 + static_cast<std::ptrdiff_t>(m_count));
  std::set<double> ns, ks;
  // (m, latency) of each (n, k) line as read; its rows come together, so the line is looked up
  // once per run of them.
  std::map<std::pair<double, double>, std::vector<CurvePoint>> points;
  std::pair<double, double> line_key{0, 0};
  std::vector<CurvePoint>* line = nullptr;
  for (size_t i = 1 + m_count; i + 5 <= v.size(); i += 5) {
    const double n = v[i + 1], k = v[i + 2];
    if (line == nullptr || line_key != std::pair{n, k}) {
      line_key = {n, k};
      line = &points[line_key];
      ns.insert(n);
      ks.insert(k);
    }
    line->push_back({v[i], v[i + 3], static_cast<size_t>(v[i + 4])});
  }
  std::sort(every_m.begin(), every_m.end());
  every_m.erase(std::unique(every_m.begin(), every_m.end()), every_m.end());
  if (points.empty())
    throw InputError(
        fmt::format("{}: column latency_ms_{} has no measured cell", file.string(), dtype));
  LatencyDrops drops(file.string(), "latency_ms_" + dtype, "m of the same n and k");
  for (const auto& [nk, curve] : points) drops.add(curve);
  std::vector<double> out;
  const auto put = [&out](const auto& values) {
    out.push_back(static_cast<double>(values.size()));
    for (const auto x : values) out.push_back(static_cast<double>(x));
  };
  put(every_m);
  put(ns);
  put(ks);
  put(drops.lines());
  for (double n : ns)
    for (double k : ks) {
      auto it = points.find({n, k});
      if (it == points.end()) {
        out.push_back(0);
        continue;
      }
      std::vector<CurvePoint>& c = it->second;
      std::sort(c.begin(), c.end(), [](const CurvePoint& a, const CurvePoint& b) {
        return a.work != b.work ? a.work < b.work : a.latency < b.latency;  // the fastest first
      });
      std::vector<double> xs, ys;
      for (const CurvePoint& p : c) {
        if (!xs.empty() && xs.back() == p.work) continue;
        xs.push_back(p.work);
        ys.push_back(p.latency);
      }
      out.push_back(static_cast<double>(xs.size()));
      out.insert(out.end(), xs.begin(), xs.end());
      out.insert(out.end(), ys.begin(), ys.end());
    }
  return out;
}

/// A count of an entry at v[at] that leaves room for `each` x count values after it, or nullopt.
std::optional<size_t> entry_count(std::span<const double> v, size_t at, size_t each) {
  if (at >= v.size()) return std::nullopt;
  const double c = v[at];
  if (!(c >= 0) || c != std::floor(c) ||
      c * static_cast<double>(each) > static_cast<double>(v.size() - at - 1))
    return std::nullopt;
  return static_cast<size_t>(c);
}

/// The table from gemm_entry's numbers `v`, which `owner` keeps, or nullopt when they do not add
/// up.
std::optional<GemmTable> gemm_of(const fs::path& file, std::span<const double> v,
                                 std::shared_ptr<const void> owner, std::vector<size_t>& flagged,
                                 std::vector<double>& every_m) {
  GemmTable g;
  g.file = file;
  size_t at = 0;
  std::array<std::vector<double>, 4> heads;  // every m, n, k, flagged lines
  for (auto& h : heads) {
    const std::optional<size_t> c = entry_count(v, at, 1);
    if (!c) return std::nullopt;
    h.assign(v.begin() + static_cast<std::ptrdiff_t>(at + 1),
             v.begin() + static_cast<std::ptrdiff_t>(at + 1 + *c));
    at += 1 + *c;
  }
  const size_t lines = heads[1].size() * heads[2].size();
  if (lines == 0) return std::nullopt;
  g.starts.reserve(lines);
  for (size_t i = 0; i < lines; ++i) {
    const std::optional<size_t> c = entry_count(v, at, 2);
    if (!c) return std::nullopt;
    g.starts.push_back(at);
    at += 1 + 2 * *c;
  }
  if (at != v.size()) return std::nullopt;
  every_m = std::move(heads[0]);
  for (double n : heads[1]) g.ln_n.push_back(std::log(n));
  for (double k : heads[2]) g.ln_k.push_back(std::log(k));
  for (double line : heads[3]) flagged.push_back(static_cast<size_t>(line));
  g.points = v;
  g.points_owner = std::move(owner);
  g.curves.resize(lines);
  return g;
}

}  // namespace

const LogCurve* GemmTable::line(size_t i) const {
  const size_t at = starts.at(i);
  const auto count = static_cast<size_t>(points[at]);
  if (count == 0) return nullptr;
  if (!curves[i]) curves[i].emplace(&points[at + 1], &points[at + 1 + count], count, 1.0);
  return &*curves[i];
}

GemmTable read_gemm_table(const fs::path& file, const std::string& dtype, Breakpoints& bp) {
  // The rows come from the table cache (models/table_cache.h) when it has this file's content,
  // already grouped into lines; a file that does not parse throws before anything is stored.
  const std::optional<fs::path> found = find_input(file);
  const TableCache cache(found ? table_cache_dir() : std::nullopt, found.value_or(file),
                         "gemm " + dtype);
  std::vector<size_t> flagged;
  std::vector<double> every_m;
  std::optional<GemmTable> g;
  // An entry is read in place (577 KB for AIConfigurator's H100 bfloat16 table): neither copied
  // nor faulted into fresh pages.
  if (std::optional<TableCache::Mapped> m = cache.map())
    g = gemm_of(file, m->values, std::move(m->mapping), flagged, every_m);
  if (!g) {
    auto v = std::make_shared<const std::vector<double>>(gemm_entry(file, dtype));
    cache.store(*v);
    flagged.clear();
    every_m.clear();
    g = gemm_of(file, *v, v, flagged, every_m);
    if (!g) throw InputError(fmt::format("{}: unreadable gemm table", file.string()));
  }
  for (double m : every_m) note(bp, OperatorAxis::GemmTokens, m);
  LatencyDrops drops(file.string(), "latency_ms_" + dtype, "m of the same n and k");
  for (size_t line : flagged) drops.flag(line);
  drops.warn();
  return std::move(*g);
}
namespace {

using AttentionPoints = std::map<double, std::map<double, double>>;  // length -> batch -> ms

/// An attention entry of the table cache (attention_rows) read back: nullopt when its counts do
/// not add up (the entry is then parsed anew).
std::optional<AttentionPoints> attention_points_of(std::span<const double> v) {
  size_t at = 0;
  for (int axis = 0; axis < 2; ++axis) {
    const std::optional<size_t> c = entry_count(v, at, 1);
    if (!c) return std::nullopt;
    at += 1 + *c;
  }
  if (at >= v.size() || (v.size() - at) % 3 != 0) return std::nullopt;
  AttentionPoints out;
  for (; at < v.size(); at += 3) {
    if (!(v[at] >= 1 && v[at + 1] >= 1 && v[at + 2] > 0)) return std::nullopt;
    out[v[at]][v[at + 1]] = v[at + 2];
  }
  return out;
}

AttentionPoints read_attention_rows(const fs::path& file, bool generation, const AttentionHeads& h,
                                    const std::string& variant, Breakpoints& bp, bool skim) {
  const std::string hd = key_num(h.head_dim), nh = key_num(h.heads), kvh = key_num(h.kv_heads);
  const std::unique_ptr<std::istream> in = open_input(file);
  CsvColumns csv(*in, file.string(),
                 {"head_dim", "num_heads", "num_key_value_heads", "batch_size", "isl", "step",
                  "latency_ms_" + variant},
                 {"window_size"});
  // Skimming: when the layout columns lead the header (as in AIConfigurator's files), rows of
  // other layouts are skipped by their first bytes, unsplit.
  std::string prefix;
  if (skim && csv.position(0) == 0 && csv.position(1) == 1 && csv.position(2) == 2)
    prefix = hd + "," + nh + "," + kvh + ",";
  const auto batch_axis = generation ? OperatorAxis::GenerationBatch : OperatorAxis::ContextBatch;
  const auto len_axis = generation ? OperatorAxis::GenerationKv : OperatorAxis::ContextLength;
  std::set<std::string> layouts;
  std::array<std::string, 3> last;
  AttentionPoints by_length;
  size_t rows = 0;
  while (csv.next_row_starting(prefix)) {
    if (csv.has(7) && csv.field(7) != "0") continue;  // sliding-window rows
    // Rows of other head layouts are skipped before their numbers are read.
    if (csv.field(0) != hd || csv.field(1) != nh || csv.field(2) != kvh) {
      // Rows come sorted by layout: name each one once.
      if (csv.field(0) != last[0] || csv.field(1) != last[1] || csv.field(2) != last[2]) {
        for (size_t c = 0; c < 3; ++c) last[c] = std::string(csv.field(c));
        layouts.insert(fmt::format("{}/{} heads x {}", last[1], last[2], last[0]));
      }
      continue;
    }
    const double batch = static_cast<double>(csv.integer(3, 1, int64_t{1} << 30));
    // The attended length: isl new tokens (context), or step stored + 1 new (generation).
    const double length =
        static_cast<double>(csv.integer(4, 1, int64_t{1} << 40) +
                            (generation ? csv.integer(5, 0, int64_t{1} << 40) : 0));
    note(bp, batch_axis, batch);
    note(bp, len_axis, length);
    ++rows;
    if (csv.field(6).empty()) continue;
    keep_fastest(by_length[length], batch, csv.positive_real(6));
  }
  if (rows == 0 && !prefix.empty())  // read it all, to name the layouts it has
    return read_attention_rows(file, generation, h, variant, bp, false);
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
  return by_length;
}

/// read_attention_rows (with need_variant first) through the table cache: an entry holds every
/// batch and length the layout's rows measure (the breakpoints, empty cells included), then
/// (length, batch, ms) of each measured cell in the map's order. A file that does not parse, or
/// lacks the layout, throws before anything is stored.
AttentionPoints attention_rows(const fs::path& file, bool generation, const AttentionHeads& h,
                               const std::string& variant, Breakpoints& bp) {
  const std::optional<fs::path> found = find_input(file);
  const TableCache cache(
      found ? table_cache_dir() : std::nullopt, found.value_or(file),
      fmt::format("{} {}/{}/{} {}", generation ? "generation" : "context", key_num(h.head_dim),
                  key_num(h.heads), key_num(h.kv_heads), variant));
  const auto batch_axis = generation ? OperatorAxis::GenerationBatch : OperatorAxis::ContextBatch;
  const auto len_axis = generation ? OperatorAxis::GenerationKv : OperatorAxis::ContextLength;
  if (const std::optional<TableCache::Mapped> m = cache.map()) {
    const std::span<const double> v = m->values;  // read in place, then let go
    if (std::optional<AttentionPoints> got = attention_points_of(v)) {
      const auto batches = static_cast<size_t>(v[0]);
      const auto lengths = static_cast<size_t>(v[1 + batches]);
      for (size_t i = 0; i < batches; ++i) note(bp, batch_axis, v[1 + i]);
      for (size_t i = 0; i < lengths; ++i) note(bp, len_axis, v[2 + batches + i]);
      return std::move(*got);
    }
  }
  need_variant(file, variant, "attention dtype");
  Breakpoints mine;
  AttentionPoints rows = read_attention_rows(file, generation, h, variant, mine, true);
  std::vector<double> out;
  for (const OperatorAxis a : {batch_axis, len_axis}) {
    const std::set<double>& s = mine[static_cast<size_t>(a)];
    out.push_back(static_cast<double>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  for (const auto& [length, points] : rows)
    for (const auto& [batch, ms] : points) out.insert(out.end(), {length, batch, ms});
  cache.store(out);
  for (size_t a = 0; a < bp.size(); ++a) bp[a].insert(mine[a].begin(), mine[a].end());
  return rows;
}

AttentionTable table_of(const AttentionPoints& by_length) {
  AttentionTable t;
  for (const auto& [length, points] : by_length) {
    t.ln_length.push_back(std::log(length));
    t.by_batch.push_back(*curve_of(points));
  }
  return t;
}

}  // namespace

AttentionTable read_attention_table(const fs::path& file, bool generation, const AttentionHeads& h,
                                    const std::string& variant, Breakpoints& bp) {
  return table_of(attention_rows(file, generation, h, variant, bp));
}

AttentionTable read_attention_blend(const fs::path& file, bool generation,
                                    const AttentionSubstitute& sub, const std::string& variant,
                                    Breakpoints& bp) {
  const AttentionPoints lo = attention_rows(file, generation, sub.heads, variant, bp);
  if (!sub.upper) return table_of(lo);
  const AttentionPoints hi = attention_rows(file, generation, *sub.upper, variant, bp);
  // Linear in the group size between the two measured layouts, on the cells both measured.
  const double w = sub.upper_weight;
  AttentionPoints blend;
  for (const auto& [length, points] : lo) {
    const auto it = hi.find(length);
    if (it == hi.end()) continue;
    for (const auto& [batch, ms] : points)
      if (const auto jt = it->second.find(batch); jt != it->second.end())
        blend[length][batch] = (1 - w) * ms + w * jt->second;
  }
  if (blend.empty())
    throw InputError(fmt::format("{}: {}/{} and {}/{} heads x {} share no measured cell",
                                 file.string(), key_num(sub.heads.heads),
                                 key_num(sub.heads.kv_heads), key_num(sub.upper->heads),
                                 key_num(sub.upper->kv_heads), key_num(sub.heads.head_dim)));
  return table_of(blend);
}

std::optional<AttentionSubstitute> attention_substitute(const fs::path& file,
                                                        const AttentionHeads& h) {
  const std::unique_ptr<std::istream> in = open_input(file);
  CsvColumns csv(*in, file.string(), {"head_dim", "num_heads", "num_key_value_heads"},
                 {"window_size"});
  std::set<std::array<double, 3>> layouts;  // head_dim, heads, KV heads
  while (csv.next_row()) {
    if (csv.has(3) && csv.field(3) != "0") continue;  // sliding-window rows
    layouts.insert({csv.positive_real(0), csv.positive_real(1), csv.positive_real(2)});
  }
  if (layouts.contains({h.head_dim, h.heads, h.kv_heads}))
    return AttentionSubstitute{h, 1, std::nullopt, 0};
  const double group = h.heads / h.kv_heads;
  if (h.kv_heads < 1 || group != std::floor(group)) return std::nullopt;
  std::optional<AttentionSubstitute> best;
  for (const auto& [dim, heads, kv] : layouts) {
    if (dim != h.head_dim || heads != kv * group) continue;
    const double scale = h.kv_heads / kv;
    if (scale != std::floor(scale)) continue;  // kv must divide the KV heads
    if (!best || kv > best->heads.kv_heads)
      best = AttentionSubstitute{{heads, kv, dim}, scale, std::nullopt, 0};
  }
  if (best) return best;
  // No layout of this group size: the nearest measured group sizes below and above it, with the
  // same KV heads kv (dividing h's; the most such), blended linearly in the group size. At a
  // fixed KV read the kernel's time grows with the query heads each KV head serves.
  for (const auto& [dim, heads, kv] : layouts) {
    const double scale = h.kv_heads / kv;
    if (dim != h.head_dim || scale != std::floor(scale)) continue;
    if (best && kv <= best->heads.kv_heads) continue;
    double below = 0, above = 0;
    for (const auto& [dim2, heads2, kv2] : layouts) {
      if (dim2 != dim || kv2 != kv) continue;
      const double g = heads2 / kv2;
      if (g < group && g > below) below = g;
      if (g > group && (above == 0 || g < above)) above = g;
    }
    if (below == 0 || above == 0) continue;
    best = AttentionSubstitute{{below * kv, kv, dim},
                               scale,
                               AttentionHeads{above * kv, kv, dim},
                               (group - below) / (above - below)};
  }
  return best;
}

LogCurve read_moe_table(const fs::path& file, const MoeShape& s, const std::string& dtype,
                        const std::string& distribution, Breakpoints& bp) {
  need_variant(file, distribution, "MoE distribution");
  const std::unique_ptr<std::istream> in = open_input(file);
  CsvColumns csv(*in, file.string(),
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
    const auto tokens = static_cast<double>(csv.integer(7, 1, int64_t{1} << 40));
    note(bp, OperatorAxis::MoeTokens, tokens);
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

std::map<std::string, LogCurve> read_allreduce_table(const fs::path& file, bool nccl,
                                                     Breakpoints& bp) {
  std::map<std::string, LogCurve> out;
  const std::unique_ptr<std::istream> in = open_input(file);
  std::map<std::string, std::map<double, double>> by_gpus;
  if (nccl) {
    CsvColumns csv(*in, file.string(),
                   {"op_name", "nccl_dtype", "num_gpus", "message_size", "latency_ms"});
    while (csv.next_row())
      if (csv.field(0) == "all_reduce" && csv.field(1) == "half")
        keep_fastest(by_gpus[std::string(csv.field(2))],
                     static_cast<double>(csv.integer(3, 1, int64_t{1} << 40)),
                     csv.positive_real(4));
  } else {
    // vLLM's files time the CUDA-graph path (what serving runs) and eager mode; keep the first.
    CsvColumns csv(*in, file.string(), {"num_gpus", "message_size", "latency_ms"},
                   {"kernel_source", "allreduce_dtype"});
    while (csv.next_row()) {
      if (csv.has(3) && csv.field(3) != "vLLM_custom_graph") continue;
      if (csv.has(4) && csv.field(4) != "bfloat16") continue;
      keep_fastest(by_gpus[std::string(csv.field(0))],
                   static_cast<double>(csv.integer(1, 1, int64_t{1} << 40)), csv.positive_real(2));
    }
  }
  if (by_gpus.empty()) throw InputError(fmt::format("{}: no bf16 all-reduce rows", file.string()));
  for (auto& [gpus, points] : by_gpus) {
    for (const auto& [x, y] : points) note(bp, OperatorAxis::AllreduceElements, x);
    out.emplace(gpus, *curve_of(points));
  }
  return out;
}

}  // namespace servesim
