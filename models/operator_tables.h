#pragma once
// The measured-table operator source: NVIDIA AIConfigurator's operator latencies
// (data/timings/aiconfigurator, its README.md describes the files) for one GPU and one
// engine, answered for any shape by log-log interpolation (models/log_interp.h).
//
// Layout read: <path>/<gpu>/<engine>-<version>/{gemm,context_attention,generation_attention,
// moe,custom_allreduce}.csv (each may be stored as .csv.gz, core/input_file.h),
// <path>/<gpu>/nccl-<version>/nccl.csv and <path>/systems/<gpu>.yaml
// (the datasheet: its memory bandwidth times its empirical factor, plus its constant latency,
// give elementwise_ms, which no table measures). A table is read on its first query, and only
// the rows that query's key selects (head layout, MoE shape, dtype column).
//
// Within a table: gemm_ms interpolates over m along each measured (n, k) line, then over k and
// n; attention over batch along each measured length, then over length; moe over tokens;
// all-reduce over elements. Beyond the largest measured size the last segment's log-log slope
// continues, never below 1 (the work grows at least linearly with every axis there). Empty
// cells are "not measured": a line is built from its measured cells only, so a hole is bridged
// by the nearest measured neighbours along that line's axis; a (n, k) line with no measured
// cell is replaced by the nearest measured line along n (same k), else along k (same n).
#include <memory>
#include <string>

#include "core/config.h"
#include "models/catalog.h"
#include "models/operator_source.h"

namespace servesim {

struct OperatorTablesOptions {
  std::string path;    ///< the folder holding the per-GPU folders and systems/
  std::string gpu;     ///< a folder name under path, e.g. h100_sxm
  std::string engine;  ///< "vllm", "trtllm", or an exact folder name such as "vllm-0.19.0"
  bool nccl = false;   ///< all-reduce from nccl-*/nccl.csv instead of custom_allreduce.csv
};

/// A datasheet's two roofs, for scale_to_datasheet.
struct Roofs {
  double bytes_per_s = 0;  ///< memory bandwidth
  double flops_per_s = 0;  ///< dense bf16 tensor FLOP/s
};

/// The roofs of `<path>/systems/<gpu>.yaml` (mem_bw, bfloat16_tc_flops). Throws InputError.
[[nodiscard]] Roofs read_table_roofs(const std::string& path, const std::string& gpu);

/// `src`'s operators moved from the part it was measured on (`from`) to another (`to`): each
/// operator's time times max(B / to.bw, F / to.flops) / max(B / from.bw, F / from.flops), with
/// B and F the operator's bytes and FLOPs (a GEMM's activations, weights and output; attention's
/// Q, K, V and output, or the KV it reads; the experts' weights a MoE block touches).
/// Elementwise passes scale by the bandwidth ratio; all-reduces are unchanged (the interconnect).
/// For tables of one part used for a sibling with other memory or clocks (an A100 80 GB table
/// for an A100 40 GB).
[[nodiscard]] std::unique_ptr<OperatorSource> scale_to_roofs(std::unique_ptr<OperatorSource> src,
                                                             Roofs from, Roofs to);

/// Checks the folders exist (messages list what does) and reads the datasheet; the tables are
/// read on first use. Throws InputError.
[[nodiscard]] std::unique_ptr<OperatorSource> open_operator_tables(const OperatorTablesOptions& o);

/// `source: tables` from an `operators` section: path (relative to the config file's folder),
/// gpu, engine, allreduce (custom | nccl), scale_to_hardware (false; true wraps the tables in
/// scale_to_roofs from their datasheet to `hw`, whose dense bf16 peak it needs).
[[nodiscard]] std::unique_ptr<OperatorSource> make_operator_tables(const Cfg& operators);
[[nodiscard]] std::unique_ptr<OperatorSource> make_operator_tables(const Cfg& operators,
                                                                   const HardwareSpec& hw);

}  // namespace servesim
