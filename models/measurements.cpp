#include "models/measurements.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/config.h"
#include "sim/csv_columns.h"
#include "sim/errors.h"

namespace servesim {
namespace fs = std::filesystem;
namespace {

/// time by size, interpolated linearly; beyond the last point extended along the last segment,
/// below the first held flat.
class Curve {
 public:
  void add(double x, double y) { m_points.emplace_back(x, y); }
  void finish() { std::sort(m_points.begin(), m_points.end()); }
  [[nodiscard]] bool empty() const { return m_points.empty(); }
  [[nodiscard]] double at(double x) const {
    if (x <= m_points.front().first || m_points.size() == 1) return m_points.front().second;
    auto hi = std::lower_bound(m_points.begin(), m_points.end(), std::make_pair(x, -1e300));
    if (hi == m_points.end()) hi = m_points.end() - 1;
    auto lo = hi - 1;
    return lo->second + (x - lo->first) / (hi->first - lo->first) * (hi->second - lo->second);
  }

 private:
  std::vector<std::pair<double, double>> m_points;
};

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

}  // namespace

std::vector<std::string> measurement_formats() { return {"csv", "llmservingsim", "splitwise"}; }

std::string detect_measurement_format(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "llmservingsim";
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open measurements", path));
  std::string header;
  std::getline(in, header);
  if (header.find("prompt_time") != std::string::npos && header.find("token_time") != std::string::npos)
    return "splitwise";
  return "csv";
}

void restrict_region(MeasurementSet& set, const MeasurementFilter& filter) {
  if (!filter.max_kv_per_seq) return;
  const size_t before = set.samples.size();
  std::erase_if(set.samples, [&](const StepSample& s) {
    return s.shape.decode_sequences > 0 &&
           s.shape.decode_context_tokens > *filter.max_kv_per_seq * s.shape.decode_sequences;
  });
  if (set.samples.empty())
    throw InputError(fmt::format("--max-kv-per-seq {}: no measurement is left", *filter.max_kv_per_seq));
  set.description += fmt::format(", {} of {} kept with at most {} KV tokens per decoding sequence",
                                 set.samples.size(), before, *filter.max_kv_per_seq);
}

MeasurementSet read_measurements(const std::string& path, const std::string& format,
                                 const MeasurementFilter& filter) {
  const std::string f = format == "auto" ? detect_measurement_format(path) : format;
  MeasurementSet set;
  if (f == "csv") set = read_generic_measurements(path);
  if (f == "splitwise") set = read_splitwise(path, filter);
  if (f == "llmservingsim") set = read_layer_profile(path, filter);
  if (!set.samples.empty()) {
    restrict_region(set, filter);
    return set;
  }
  const auto names = measurement_formats();
  throw InputError(fmt::format("--format {}: unknown format{} (valid: auto, {})", format,
                               did_you_mean(format, names), join_names(names)));
}

MeasurementSet read_generic_measurements(const std::string& path) {
  MeasurementSet set;
  CsvColumns csv(path, {"batch_size", "context_tokens", "prefill_tokens", "step_ms"});
  while (csv.next_row()) {
    StepSample s;
    const auto batch = static_cast<int32_t>(csv.integer(0, 1, 1 << 24));
    const int64_t prefill = csv.integer(2, 0, int64_t{1} << 40);
    const int32_t prefill_seqs = prefill > 0 ? 1 : 0;
    if (prefill_seqs > batch)
      throw InputError(fmt::format("{}:{}: a step with prefill_tokens > 0 needs batch_size >= 1",
                                   path, csv.line()));
    s.shape.sequences = batch;
    s.shape.decode_sequences = batch - prefill_seqs;
    s.shape.decode_context_tokens = csv.integer(1, 0, int64_t{1} << 40);
    s.shape.prefill_tokens = prefill;
    s.shape.prefill_tokens_sq = static_cast<double>(prefill) * static_cast<double>(prefill);
    s.ms = csv.positive_real(3);
    s.label = fmt::format("line {}: batch {}, context {}, prefill {}", csv.line(), batch,
                          s.shape.decode_context_tokens, prefill);
    set.samples.push_back(std::move(s));
  }
  if (set.samples.empty()) throw InputError(fmt::format("{}: no measurements", path));
  set.description = fmt::format("{} step measurements from {}", set.samples.size(), path);
  return set;
}

MeasurementSet read_splitwise(const std::string& path, const MeasurementFilter& f) {
  CsvColumns csv(path, {"model", "hardware", "tensor_parallel", "prompt_size", "batch_size",
                        "token_size", "prompt_time", "token_time"});
  MeasurementSet set;
  std::set<std::string> groups;
  while (csv.next_row()) {
    const std::string model(csv.field(0)), hw(csv.field(1));
    const auto tp = static_cast<int>(csv.integer(2, 1, 1024));
    groups.insert(fmt::format("--model {} --hardware {} --tp {}", model, hw, tp));
    if ((f.model && *f.model != model) || (f.hardware && *f.hardware != hw) || (f.tp && *f.tp != tp))
      continue;
    const int64_t prompt = csv.integer(3, 1, 1 << 24);
    const auto batch = static_cast<int32_t>(csv.integer(4, 1, 1 << 20));
    const int64_t tokens = csv.integer(5, 1, 1 << 24);
    StepSample pre;  // one step prefilling `batch` prompts
    pre.shape.sequences = batch;
    pre.shape.prefill_tokens = prompt * batch;
    pre.shape.prefill_tokens_sq = static_cast<double>(prompt) * static_cast<double>(prompt) * batch;
    pre.ms = csv.positive_real(6);
    pre.label = fmt::format("line {}: prefill {} x {} tokens", csv.line(), batch, prompt);
    StepSample dec;  // the mean decode step: context is the prompt plus half the reply
    dec.shape.sequences = dec.shape.decode_sequences = batch;
    dec.shape.decode_context_tokens = batch * (prompt + tokens / 2);
    dec.ms = csv.positive_real(7);
    dec.label = fmt::format("line {}: decode batch {}, context {}", csv.line(), batch, prompt + tokens / 2);
    set.samples.push_back(std::move(pre));
    set.samples.push_back(std::move(dec));
  }
  if (set.samples.empty() || (!f.model && !f.hardware && !f.tp && groups.size() > 1)) {
    std::vector<std::string> g(groups.begin(), groups.end());
    throw InputError(fmt::format("{}: {}; choose one group with:\n  {}", path,
                                 set.samples.empty() ? "no rows match the selection"
                                                     : "the file holds several model/hardware/tp groups",
                                 fmt::join(g, "\n  ")));
  }
  set.description = fmt::format("{} steps ({} prefill, {} decode) from {}", set.samples.size(),
                                set.samples.size() / 2, set.samples.size() / 2, path);
  return set;
}

MeasurementSet read_layer_profile(const std::string& dir, const MeasurementFilter& f) {
  if (!f.layers)
    throw InputError(fmt::format("{}: layer profiles time one layer; give the model's layer count "
                                 "with --layers (Llama-3.1-8B: 32, Qwen3-32B: 64)", dir));
  const fs::path p(dir);
  if (fs::exists(p / "moe.csv"))
    throw InputError(fmt::format("{}: mixture-of-experts profiles (moe.csv) are not composed yet; "
                                 "dense models only", dir));
  const std::string dense_file = (p / "dense.csv").string();
  const std::string seq_file = (p / "per_sequence.csv").string();
  const auto dense = read_curves(dense_file, "tokens");
  const auto per_seq = read_curves(seq_file, "sequences");
  // Per layer: two RMSNorms (before attention and before the MLP), the projections, rotary
  // embedding and activation; once per step: the embedding and final norm over all tokens, and
  // the LM head and sampler over one token per sequence.
  struct Op {
    const Curve* curve;
    double per_layer_calls;
  };
  std::vector<Op> token_ops;
  for (const auto& [name, calls] : std::vector<std::pair<std::string, double>>{
           {"layernorm", 2}, {"qkv_proj", 1}, {"rotary_emb", 1}, {"o_proj", 1},
           {"gate_up_proj", 1}, {"act_fn", 1}, {"down_proj", 1}})
    token_ops.push_back({&need(dense, name, dense_file), calls});
  const Curve& embedding = need(dense, "embedding", dense_file);
  const Curve& final_norm = need(dense, "final_layernorm", dense_file);
  const Curve& lm_head = need(per_seq, "lm_head", seq_file);
  const Curve& sampler = need(per_seq, "sampler", seq_file);
  const double layers = *f.layers;

  MeasurementSet set;
  int skipped = 0;
  CsvColumns csv((p / "attention.csv").string(),
                 {"prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "time_us"});
  while (csv.next_row()) {
    const int64_t chunk = csv.integer(0, 0, 1 << 24);
    const int64_t kv_prefill = csv.integer(1, 0, int64_t{1} << 40);
    const int64_t n = csv.integer(2, 0, 1 << 24);
    const int64_t kv = csv.integer(3, 0, int64_t{1} << 40);
    const double attn_us = csv.real(4, 0.0, 1e12);
    if (kv_prefill > 0 || chunk + n == 0) {  // chunk continuations: no StepShape term for them
      ++skipped;
      continue;
    }
    const double tokens = static_cast<double>(chunk + n);
    const double seqs = static_cast<double>(n + (chunk > 0 ? 1 : 0));
    double layer_us = attn_us;
    for (const Op& op : token_ops) layer_us += op.per_layer_calls * op.curve->at(tokens);
    const double us = layers * layer_us + embedding.at(tokens) + final_norm.at(tokens) +
                      lm_head.at(seqs) + sampler.at(seqs);
    StepSample s;
    s.shape.sequences = static_cast<int32_t>(seqs);
    s.shape.decode_sequences = static_cast<int32_t>(n);
    s.shape.decode_context_tokens = n * kv;
    s.shape.prefill_tokens = chunk;
    s.shape.prefill_tokens_sq = static_cast<double>(chunk) * static_cast<double>(chunk);
    s.ms = us / 1000.0;
    s.label = fmt::format("attention.csv line {}: prefill {}, {} decodes at {} KV", csv.line(),
                          chunk, n, kv);
    set.samples.push_back(std::move(s));
  }
  if (set.samples.empty()) throw InputError(fmt::format("{}: no usable attention rows", dir));
  set.description = fmt::format(
      "{} steps composed from the layer profiles in {} x {} layers ({} chunk-continuation rows "
      "skipped)", set.samples.size(), dir, *f.layers, skipped);
  return set;
}

}  // namespace servesim
