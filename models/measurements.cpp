#include "models/measurements.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "core/config.h"
#include "core/csv_columns.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "models/layer_profile.h"

namespace servesim {
namespace fs = std::filesystem;

std::vector<std::string> measurement_formats() {
  return {"csv", "llmservingsim", "splitwise", "vidur"};
}

std::string detect_measurement_format(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))  // Vidur's tables are mlp.csv (and attention.csv)
    return input_exists(fs::path(path) / "mlp.csv") ? "vidur" : "llmservingsim";
  if (!input_exists(path)) throw InputError(fmt::format("{}: cannot open measurements", path));
  const std::unique_ptr<std::istream> in = open_input(path);
  std::string header;
  std::getline(*in, header);
  if (header.find("prompt_time") != std::string::npos &&
      header.find("token_time") != std::string::npos)
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
    throw InputError(
        fmt::format("--max-kv-per-seq {}: no measurement is left", *filter.max_kv_per_seq));
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
  if (f == "vidur") set = read_vidur_tables(path, filter);
  if (!set.samples.empty()) {
    restrict_region(set, filter);
    return set;
  }
  const auto names = measurement_formats();
  throw InputError(fmt::format("--input-format {}: unknown format{} (valid: auto, {})", format,
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
    groups.insert(fmt::format("--source-model {} --source-hardware {} --source-tp {}",
                              printable(model), printable(hw), tp));
    if ((f.model && *f.model != model) || (f.hardware && *f.hardware != hw) ||
        (f.tp && *f.tp != tp))
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
    dec.label =
        fmt::format("line {}: decode batch {}, context {}", csv.line(), batch, prompt + tokens / 2);
    set.samples.push_back(std::move(pre));
    set.samples.push_back(std::move(dec));
  }
  if (set.samples.empty() || (!f.model && !f.hardware && !f.tp && groups.size() > 1)) {
    // One line, at most 10 groups named: the file's own text must not flood the terminal.
    std::vector<std::string> g(groups.begin(), groups.end());
    const size_t more = g.size() > 10 ? g.size() - 10 : 0;
    g.resize(g.size() - more);
    throw InputError(fmt::format(
        "{}: {}; choose one group with: {}{}", printable(path, 1024),
        set.samples.empty() ? "no rows match the selection"
                            : "the file holds several model/hardware/tp groups",
        fmt::join(g, "; "), more ? fmt::format("; ... ({} more)", more) : std::string()));
  }
  set.description = fmt::format("{} steps ({} prefill, {} decode) from {}", set.samples.size(),
                                set.samples.size() / 2, set.samples.size() / 2, path);
  return set;
}

MeasurementSet read_layer_profile(const std::string& dir, const MeasurementFilter& f) {
  if (!f.layers)
    throw InputError(
        fmt::format("{}: layer profiles time one layer; give the model's layer count "
                    "with --layers (Llama-3.1-8B: 32, Qwen3-32B: 64, "
                    "Qwen3-30B-A3B: 48)",
                    dir));
  const LayerProfile profile(dir, *f.layers);
  MeasurementSet set;
  int skipped = 0;
  for (const AttentionRow& r : profile.attention_rows()) {
    if (r.kv_prefill > 0 || r.prefill_chunk + r.n_decode == 0) {  // no StepShape-only form
      ++skipped;                                                  // fits a chunk's prefix
      continue;
    }
    const double tokens = r.prefill_chunk + r.n_decode;
    const double seqs = r.n_decode + (r.prefill_chunk > 0 ? 1 : 0);
    StepSample s;
    s.shape.sequences = static_cast<int32_t>(seqs);
    s.shape.decode_sequences = static_cast<int32_t>(r.n_decode);
    s.shape.decode_context_tokens = static_cast<int64_t>(r.n_decode * r.kv_decode);
    s.shape.prefill_tokens = static_cast<int64_t>(r.prefill_chunk);
    s.shape.prefill_tokens_sq = r.prefill_chunk * r.prefill_chunk;
    s.ms = (*f.layers * r.time_us + profile.non_attention_us(tokens, seqs)) / 1000.0;
    s.label = fmt::format("attention.csv line {}: prefill {}, {} decodes at {} KV", r.line,
                          r.prefill_chunk, r.n_decode, r.kv_decode);
    set.samples.push_back(std::move(s));
  }
  if (set.samples.empty()) throw InputError(fmt::format("{}: no usable attention rows", dir));
  set.description = fmt::format(
      "{} steps composed from the layer profiles in {} x {} layers ({} chunk-continuation rows "
      "skipped)",
      set.samples.size(), dir, *f.layers, skipped);
  if (profile.is_moe()) {  // routed as moe.csv shows, on the profiled GPU alone
    const ExpertRouting& r = profile.default_routing();
    set.description += fmt::format(
        "; mixture of experts: {} of {} experts per token, expert "
        "parallel {}, expected distinct experts per step",
        r.top_k, r.experts, r.expert_parallel);
  }
  return set;
}

}  // namespace servesim
