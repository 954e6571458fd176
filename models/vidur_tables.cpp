// vidur: Vidur's profiling tables (microsoft/vidur, data/profiling/...) composed into whole
// steps, the way read_layer_profile composes LLMServingSim's.
//
// Vidur times one transformer layer operator by operator; every time is the median of a few
// runs, in milliseconds. mlp.csv holds the operators whose cost depends only on the tokens a
// step computes (one row per model shape, TP degree and num_tokens); attention.csv holds
// attention by kind: attn_prefill for one prompt chunk of prefill_chunk_size tokens after
// kv_cache_size stored ones, attn_decode for batch_size decodes of kv_cache_size stored tokens
// each; all_reduce.csv times all-reduces by message size in bytes. For a step computing
// `tokens` tokens (the chunk, or the number of decodes), with r = tokens rounded up to a
// multiple of 8 as Vidur's predictor rounds them:
//   step = layers x ( attention of the attention.csv row (+ attn_kv_cache_save where present)
//                     + input_layernorm + attn_pre_proj + attn_rope + attn_post_proj
//                     + post_attention_layernorm + mlp_up_proj + mlp_act + mlp_down_proj + add,
//                       at r tokens
//                     + 2 x all_reduce of r x n_embd x 2 bytes, when TP > 1 )
// This is the operator set Vidur's predictor sums for a layer. Like it, the embedding, the
// attention reshapes and the LM head are not counted; unlike it, no unmeasured constants (its
// configured NCCL launch time, its +10% for batched grouped-query attention) are added: the
// result is what the tables measured. Per-token operators are interpolated linearly between
// profiled token counts. All-reduce medians are noisy at small sizes (7 to 65 us for the same
// size on A100), so they are smoothed by a running median over 9 neighbouring sizes first.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "core/csv_columns.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "models/catalog.h"
#include "models/layer_profile.h"
#include "models/measurements.h"

namespace servesim {
namespace fs = std::filesystem;
namespace {

struct Shape {
  int64_t n_embd = 0, n_head = 0, n_kv_head = 0, n_expanded = 0;  // n_expanded: MLP width
  int64_t tp = 0;
  auto operator<=>(const Shape&) const = default;
  [[nodiscard]] std::string text() const {
    return fmt::format("n_embd {}, {} heads, {} KV heads, MLP {}, TP {}", n_embd, n_head, n_kv_head,
                       n_expanded, tp);
  }
};

// mlp.csv's operators of one layer: the first six are required; Vidur counts the last three as
// 0 when a table lacks them, and so does this reader.
constexpr std::array<const char*, 9> k_token_ops{
    "attn_pre_proj", "attn_rope",       "attn_post_proj",           "mlp_up_proj", "mlp_act",
    "mlp_down_proj", "input_layernorm", "post_attention_layernorm", "add"};
constexpr size_t k_required_ops = 6;
constexpr size_t k_all_reduce_window = 9;  // sizes in the running median
constexpr int64_t k_max_dim = int64_t{1} << 30;

std::string median_col(const std::string& op) { return fmt::format("time_stats.{}.median", op); }

std::unique_ptr<std::istream> open_table(const fs::path& p) { return open_input(p); }

/// An optional column's time: 0 when the table lacks the column or leaves the cell empty.
double optional_ms(const CsvColumns& csv, size_t k) {
  if (!csv.has(k) || csv.field(k).empty()) return 0.0;
  return csv.real(k, 0.0, 1e9);
}

bool boolean(const CsvColumns& csv, size_t k, const char* column) {
  const std::string_view v = csv.field(k);
  if (v == "True" || v == "true" || v == "1") return true;
  if (v == "False" || v == "false" || v == "0") return false;
  throw InputError(fmt::format("{}:{}: column {} = {}: must be True or False", csv.path(),
                               csv.line(), column, quote_input(v)));
}

/// Points with repeated x averaged, as a Curve.
class Points {
 public:
  void add(double x, double y) {
    auto& [sum, n] = m_points[x];
    sum += y;
    m_repeats += n++ > 0;
  }
  [[nodiscard]] Curve curve() const {
    Curve c;
    for (const auto& [x, sn] : m_points) c.add(x, sn.first / sn.second);
    c.finish();
    return c;
  }
  [[nodiscard]] std::vector<std::pair<double, double>> means() const {
    std::vector<std::pair<double, double>> out;
    for (const auto& [x, sn] : m_points) out.emplace_back(x, sn.first / sn.second);
    return out;
  }
  [[nodiscard]] size_t repeats() const { return m_repeats; }

 private:
  std::map<double, std::pair<double, int>> m_points;
  size_t m_repeats = 0;
};

/// mlp.csv: each shape's per-layer token operators summed, by num_tokens.
std::map<Shape, Points> read_mlp(const fs::path& file) {
  const std::unique_ptr<std::istream> in = open_table(file);
  std::vector<std::string> req{
      "n_embd",    "n_head", "n_kv_head", "n_expanded_embd", "num_tensor_parallel_workers",
      "num_tokens"};
  std::vector<std::string> opt;
  for (size_t i = 0; i < k_token_ops.size(); ++i)
    (i < k_required_ops ? req : opt).push_back(median_col(k_token_ops[i]));
  CsvColumns csv(*in, file.string(), req, opt);
  std::map<Shape, Points> out;
  while (csv.next_row()) {
    const Shape s{csv.integer(0, 1, k_max_dim), csv.integer(1, 1, k_max_dim),
                  csv.integer(2, 1, k_max_dim), csv.integer(3, 1, k_max_dim),
                  csv.integer(4, 1, 1024)};
    const auto tokens = static_cast<double>(csv.integer(5, 1, k_max_dim));
    double ms = 0;
    for (size_t k = 0; k < k_token_ops.size(); ++k)
      ms += k < k_required_ops ? csv.real(6 + k, 0.0, 1e9) : optional_ms(csv, 6 + k);
    out[s].add(tokens, ms);
  }
  if (out.empty()) throw InputError(fmt::format("{}: no rows", file.string()));
  return out;
}

struct Choice {
  Shape shape;
  int layers = 0;
};

/// The one mlp.csv group the options select (all of them when they select nothing).
Choice choose(const std::map<Shape, Points>& groups, const MeasurementFilter& f,
              const fs::path& file) {
  std::optional<ModelSpec> spec;
  if (f.model_shape) spec = load_model(*f.model_shape);
  std::vector<Shape> hits;
  for (const auto& [s, points] : groups) {
    if (spec && (s.n_embd != spec->hidden_size || s.n_head != spec->attention_heads ||
                 s.n_kv_head != spec->kv_heads || s.n_expanded != spec->intermediate_size))
      continue;
    if (f.tp && s.tp != *f.tp) continue;
    hits.push_back(s);
  }
  if (hits.size() != 1) {
    std::vector<std::string> held;
    for (const auto& [s, points] : groups) held.push_back(s.text());
    throw InputError(fmt::format(
        "{}: {}; it holds:\n  {}\nchoose with --model-shape (a catalogue model, or a model YAML "
        "file, of that shape) and --source-tp",
        file.string(),
        hits.empty() ? "no model shape and TP degree match the selection"
                     : "several model shapes or TP degrees match the selection",
        fmt::join(held, "\n  ")));
  }
  Choice c{hits.front(), 0};
  if (f.layers)
    c.layers = *f.layers;
  else if (spec)
    c.layers = static_cast<int>(spec->layers);
  else
    throw InputError(
        fmt::format("{}: Vidur's tables time one layer; give the model's layer count "
                    "with --layers, or --model-shape",
                    file.parent_path().string()));
  return c;
}

/// all_reduce.csv at the chosen TP degree (Vidur's own selection: num_workers and
/// devices_per_node both equal to it), by tokens (bytes / (n_embd x 2)), smoothed.
Curve read_all_reduce(const fs::path& file, const Shape& s) {
  const std::unique_ptr<std::istream> in = open_table(file);
  CsvColumns csv(
      *in, file.string(),
      {"collective", "num_workers", "devices_per_node", "size", median_col("all_reduce")}, {});
  Points by_size;
  std::set<std::pair<int64_t, int64_t>> held;
  while (csv.next_row()) {
    if (csv.field(0) != "all_reduce") continue;
    const int64_t workers = csv.integer(1, 1, 1 << 20), per_node = csv.integer(2, 1, 1 << 20);
    held.emplace(workers, per_node);
    if (workers != s.tp || per_node != s.tp) continue;
    by_size.add(static_cast<double>(csv.integer(3, 1, int64_t{1} << 50)), csv.real(4, 0.0, 1e9));
  }
  const auto points = by_size.means();
  if (points.empty()) {
    std::vector<std::string> h;
    for (const auto& [w, n] : held) h.push_back(fmt::format("{} workers on {} per node", w, n));
    throw InputError(fmt::format(
        "{}: no all_reduce rows for {} workers on {} per node (it holds: {})", file.string(), s.tp,
        s.tp, h.empty() ? "none" : fmt::format("{}", fmt::join(h, "; "))));
  }
  Curve c;
  const size_t half = k_all_reduce_window / 2;
  for (size_t i = 0; i < points.size(); ++i) {
    const size_t lo = i > half ? i - half : 0, hi = std::min(points.size(), i + half + 1);
    std::vector<double> w;
    for (size_t j = lo; j < hi; ++j) w.push_back(points[j].second);
    std::sort(w.begin(), w.end());
    const double med = w.size() % 2 ? w[w.size() / 2] : (w[w.size() / 2 - 1] + w[w.size() / 2]) / 2;
    c.add(points[i].first / (2.0 * static_cast<double>(s.n_embd)), med);
  }
  c.finish();
  return c;
}

struct AttentionKey {
  bool prefill;
  int64_t batch, chunk, kv;
  auto operator<=>(const AttentionKey&) const = default;
};

struct AttentionRows {
  std::map<AttentionKey, std::pair<double, size_t>> ms_and_line;  // first line of each key
  std::map<AttentionKey, int> count;
  size_t skipped_chunks = 0, repeats = 0;
};

/// attention.csv's rows of the chosen shape: prefills without a stored prefix and decodes.
/// A chunk continuing a stored prefix has no StepShape-only form that the fitted forms read,
/// so those rows are counted and skipped.
AttentionRows read_attention(const fs::path& file, const Shape& s) {
  const std::unique_ptr<std::istream> in = open_table(file);
  CsvColumns csv(*in, file.string(),
                 {"n_embd", "n_q_head", "n_kv_head", "num_tensor_parallel_workers", "is_prefill",
                  "batch_size", "prefill_chunk_size", "kv_cache_size", median_col("attn_prefill"),
                  median_col("attn_decode")},
                 {median_col("attn_kv_cache_save")});
  AttentionRows out;
  while (csv.next_row()) {
    if (csv.integer(0, 1, k_max_dim) != s.n_embd || csv.integer(1, 1, k_max_dim) != s.n_head ||
        csv.integer(2, 1, k_max_dim) != s.n_kv_head || csv.integer(3, 1, 1024) != s.tp)
      continue;
    const bool prefill = boolean(csv, 4, "is_prefill");
    const AttentionKey key{prefill, csv.integer(5, 1, 1 << 24), csv.integer(6, 0, k_max_dim),
                           csv.integer(7, 0, k_max_dim)};
    if (prefill && key.kv > 0) {
      ++out.skipped_chunks;
      continue;
    }
    if (prefill ? key.chunk == 0 || key.batch != 1 : key.chunk != 0)
      throw InputError(fmt::format(
          "{}:{}: a {} row with batch_size {} and prefill_chunk_size {}: "
          "Vidur profiles one prompt a prefill and no chunk in a decode",
          csv.path(), csv.line(), prefill ? "prefill" : "decode", key.batch, key.chunk));
    const double ms = csv.real(prefill ? 8 : 9, 0.0, 1e9) + optional_ms(csv, 10);
    auto [it, fresh] = out.ms_and_line.try_emplace(key, 0.0, csv.line());
    it->second.first += ms;
    out.repeats += !fresh;
    ++out.count[key];
  }
  for (auto& [key, ml] : out.ms_and_line) ml.first /= out.count[key];
  return out;
}

StepSample compose(const AttentionKey& k, double attention_ms, size_t line, const Choice& c,
                   const Curve& per_layer, const std::optional<Curve>& all_reduce) {
  const int64_t tokens = k.prefill ? k.chunk : k.batch;
  const auto rounded = static_cast<double>((tokens + 7) / 8 * 8);
  const double layer_ms =
      attention_ms + per_layer.at(rounded) + (all_reduce ? 2.0 * all_reduce->at(rounded) : 0.0);
  StepSample s;
  s.ms = c.layers * layer_ms;
  if (k.prefill) {
    s.shape.sequences = 1;
    s.shape.prefill_tokens = k.chunk;
    s.shape.prefill_tokens_sq = static_cast<double>(k.chunk) * static_cast<double>(k.chunk);
    s.label = fmt::format("attention.csv line {}: prefill {}", line, k.chunk);
  } else {  // each decode reads its stored tokens and the one it computes
    s.shape.sequences = s.shape.decode_sequences = static_cast<int32_t>(k.batch);
    s.shape.decode_context_tokens = k.batch * (k.kv + 1);
    s.label = fmt::format("attention.csv line {}: {} decodes at {} KV", line, k.batch, k.kv);
  }
  return s;
}

void require_complete(const fs::path& dir) {
  std::vector<std::string> missing, present;
  for (const char* f : {"mlp.csv", "attention.csv"})
    if (!input_exists(dir / f)) missing.emplace_back(f);
  if (missing.empty()) return;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".csv") present.push_back(e.path().filename().string());
  std::sort(present.begin(), present.end());
  throw InputError(fmt::format(
      "{}: Vidur's tables here do not make a complete step: {} {} missing. A step needs mlp.csv "
      "(a layer's per-token operators) and attention.csv (attn_prefill and attn_decode by batch, "
      "chunk and KV length), plus all_reduce.csv when tensor parallel > 1; this folder has {}",
      dir.string(), fmt::join(missing, " and "), missing.size() > 1 ? "are" : "is",
      present.empty() ? "no CSV file" : fmt::format("{}", fmt::join(present, ", "))));
}

/// cpu_overheads.csv: the engine's CPU time a step (the medians of schedule, sampler_e2e,
/// prepare_inputs_e2e and process_model_outputs) by batch size, for one model at the TP degree.
void fit_overheads(const fs::path& file, const Shape& s, const MeasurementFilter& f,
                   MeasurementSet& set) {
  const std::unique_ptr<std::istream> in = open_table(file);
  CsvColumns csv(
      *in, file.string(),
      {"model_name", "tensor_parallel_degree", "batch_size", "schedule_median",
       "sampler_e2e_median", "prepare_inputs_e2e_median", "process_model_outputs_median"},
      {});
  std::map<std::string, std::vector<std::pair<double, double>>> by_model;
  while (csv.next_row()) {
    if (csv.integer(1, 1, 1024) != s.tp) continue;
    double ms = 0;
    for (size_t k = 3; k < 7; ++k) ms += csv.real(k, 0.0, 1e9);
    by_model[std::string(csv.field(0))].emplace_back(
        static_cast<double>(csv.integer(2, 1, 1 << 24)), ms);
  }
  std::vector<std::string> names;
  for (const auto& [name, points] : by_model) names.push_back(name);
  const auto it = f.model                ? by_model.find(*f.model)
                  : by_model.size() == 1 ? by_model.begin()
                                         : by_model.end();
  if (f.model && it == by_model.end())
    throw InputError(fmt::format("{}: --source-model {}: no rows at TP {} (models there: {})",
                                 file.string(), *f.model, s.tp,
                                 names.empty() ? "none" : join_names(names)));
  if (it == by_model.end()) {
    set.cpu_overhead_source =
        names.empty()
            ? fmt::format("{}: no rows at TP {}", file.string(), s.tp)
            : fmt::format("{}: several models at TP {} ({}); choose one with --source-model",
                          file.string(), s.tp, join_names(names));
    return;
  }
  if (it->second.size() < 2) {  // a line needs two batch sizes
    set.cpu_overhead_source =
        fmt::format("{}: one batch size only for {} at TP {}", file.string(), it->first, s.tp);
    return;
  }
  set.cpu_overhead = fit_cpu_overhead(it->second);
  set.cpu_overhead_source = fmt::format("{} for {} at TP {}", file.string(), it->first, s.tp);
}

}  // namespace

MeasurementSet read_vidur_tables(const std::string& dir, const MeasurementFilter& f) {
  const fs::path p(dir);
  require_complete(p);
  const auto mlp = read_mlp(p / "mlp.csv");
  const Choice c = choose(mlp, f, p / "mlp.csv");
  const Curve per_layer = mlp.at(c.shape).curve();
  std::optional<Curve> all_reduce;
  if (c.shape.tp > 1) {
    if (!input_exists(p / "all_reduce.csv"))
      throw InputError(fmt::format(
          "{}: Vidur's tables here do not make a complete step at TP {}: all_reduce.csv is missing "
          "(a tensor-parallel layer all-reduces twice; Vidur's newer releases keep it under "
          "network/<node>/all_reduce.csv: copy it beside the tables)",
          dir, c.shape.tp));
    all_reduce = read_all_reduce(p / "all_reduce.csv", c.shape);
  }
  const AttentionRows attn = read_attention(p / "attention.csv", c.shape);
  MeasurementSet set;
  size_t prefills = 0;
  for (const auto& [key, ml] : attn.ms_and_line) {
    set.samples.push_back(compose(key, ml.first, ml.second, c, per_layer, all_reduce));
    prefills += key.prefill;
  }
  if (set.samples.empty())
    throw InputError(fmt::format("{}/attention.csv: no rows for {} (without a stored prefix)", dir,
                                 c.shape.text()));
  set.description = fmt::format(
      "{} steps ({} prefill, {} decode) composed from Vidur's tables in {} for {} x {} layers "
      "({} chunk-continuation rows skipped, {} repeated attention profiles averaged)",
      set.samples.size(), prefills, set.samples.size() - prefills, dir, c.shape.text(), c.layers,
      attn.skipped_chunks, attn.repeats);
  if (input_exists(p / "cpu_overheads.csv"))
    fit_overheads(p / "cpu_overheads.csv", c.shape, f, set);
  return set;
}

}  // namespace servesim
