#pragma once
// Readers of AIConfigurator's operator CSVs, for the measured-table source
// (models/operator_tables.h, which states the layout and the interpolation). Each reads one
// file, keeps only the rows its key selects, records every size those rows measure along each
// axis into `bp` (the source's breakpoints; the gemm reader records every m of the file), and
// throws InputError naming what is missing and what the file has.
#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "models/log_interp.h"
#include "models/operator_source.h"

namespace servesim {

using Breakpoints = std::array<std::set<double>, 7>;  ///< by OperatorAxis

/// A size as the tables spell it in key columns ("128").
[[nodiscard]] std::string key_num(double v);

/// gemm.csv, one dtype column: for each measured (n, k), a curve over m.
struct GemmTable {
  std::filesystem::path file;
  std::vector<double> ln_n, ln_k;  // sizes with a measured cell
  /// Line i = i_n * (k count) + i_k: (n, k) over m, or nullptr where not measured. A curve is
  /// made on its first use (a model reads a few dozen of the file's hundreds of lines).
  [[nodiscard]] const LogCurve* line(size_t i) const;
  [[nodiscard]] size_t line_count() const { return starts.size(); }

  // The lines' points as the table cache keeps them (read_gemm_table): at starts[i] the count,
  // then the m's, then the latencies. They lie in what `points_owner` keeps (the cache entry's
  // mapping, read in place, or the vector parsed from the file), shared by the table's copies.
  std::span<const double> points;
  std::shared_ptr<const void> points_owner;
  std::vector<size_t> starts;
  mutable std::vector<std::optional<LogCurve>> curves;
};
[[nodiscard]] GemmTable read_gemm_table(const std::filesystem::path& file, const std::string& dtype,
                                        Breakpoints& bp);

/// context_attention.csv or generation_attention.csv, one head layout and dtype column: for
/// each measured length (isl, or step + 1 KV tokens), a curve over batch.
struct AttentionTable {
  std::vector<double> ln_length;
  std::vector<LogCurve> by_batch;
  /// A layout the file lacks answered from one it has (attention_substitute): the batch to
  /// look up is the step's batch times this. 1 for a measured layout.
  double batch_scale = 1;
};
[[nodiscard]] AttentionTable read_attention_table(const std::filesystem::path& file,
                                                  bool generation, const AttentionHeads& h,
                                                  const std::string& variant, Breakpoints& bp);

/// The head layout to read for `h` from an attention file that may not have measured it. The
/// kernels parallelise over (sequence, KV head) and each KV head's group of query heads reads
/// that head's keys and values once, so a layout of kv' KV heads in groups of g = heads /
/// kv_heads, run on batch x kv_heads / kv' sequences, reads the same bytes and does the same
/// work in the same number of blocks as `h`: a multi-head model (g = 1, 32 KV heads) is
/// answered by a measured 8/8 layout at four times the batch, a GQA model by the same group
/// size. Returns `h` itself (scale 1) when the file has it; else the same head_dim and group
/// size with the most KV heads that divide `h`'s; nullopt when there is none (the reader's
/// error then names the layouts there).
///
/// A group size the file measured at no KV-head count dividing `h`'s (Mixtral-8x22B at TP8: 6
/// query heads to 1 KV head, where vLLM's tables hold groups 4 and 8) is answered between the
/// nearest measured group sizes below (`heads`) and above (`upper`) with the same KV heads,
/// linear in the group size (`upper_weight` of the way up), on the cells both measured
/// (scripts/check_attention_layouts.py scores this on layouts the tables did measure).
struct AttentionSubstitute {
  AttentionHeads heads;
  double batch_scale = 1;
  std::optional<AttentionHeads> upper;
  double upper_weight = 0;
};
[[nodiscard]] std::optional<AttentionSubstitute> attention_substitute(
    const std::filesystem::path& file, const AttentionHeads& h);
/// The substitute's table: its layout's, or the blend of its two layouts (on the cells both
/// measured). Its batch_scale is left at 1 for the caller to set.
[[nodiscard]] AttentionTable read_attention_blend(const std::filesystem::path& file,
                                                  bool generation, const AttentionSubstitute& sub,
                                                  const std::string& variant, Breakpoints& bp);

/// moe.csv, one shape, dtype and distribution column: a curve over tokens (the fastest kernel
/// where several measured a shape).
[[nodiscard]] LogCurve read_moe_table(const std::filesystem::path& file, const MoeShape& s,
                                      const std::string& dtype, const std::string& distribution,
                                      Breakpoints& bp);

/// custom_allreduce.csv (bf16; vLLM's CUDA-graph rows) or nccl.csv (all_reduce, half): a curve
/// over elements for each GPU count.
[[nodiscard]] std::map<std::string, LogCurve> read_allreduce_table(
    const std::filesystem::path& file, bool nccl, Breakpoints& bp);

}  // namespace servesim
