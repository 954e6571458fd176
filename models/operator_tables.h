#pragma once
// The measured-table operator source: NVIDIA AIConfigurator's operator latencies
// (shared/data/timings/aiconfigurator, its README.md describes the files) for one GPU and one
// engine, answered for any shape by log-log interpolation (models/log_interp.h).
//
// Layout read: <path>/<gpu>/<engine>-<version>/{gemm,context_attention,generation_attention,
// moe,custom_allreduce}.csv, <path>/<gpu>/nccl-<version>/nccl.csv and <path>/systems/<gpu>.yaml
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
#include "models/operator_source.h"

namespace servesim {

struct OperatorTablesOptions {
  std::string path;    ///< the folder holding the per-GPU folders and systems/
  std::string gpu;     ///< a folder name under path, e.g. h100_sxm
  std::string engine;  ///< "vllm", "trtllm", or an exact folder name such as "vllm-0.19.0"
  bool nccl = false;   ///< all-reduce from nccl-*/nccl.csv instead of custom_allreduce.csv
};

/// Checks the folders exist (messages list what does) and reads the datasheet; the tables are
/// read on first use. Throws InputError.
[[nodiscard]] std::unique_ptr<OperatorSource> open_operator_tables(const OperatorTablesOptions& o);

/// `source: tables` from an `operators` section: path (relative to the config file's folder),
/// gpu, engine, allreduce (custom | nccl).
[[nodiscard]] std::unique_ptr<OperatorSource> make_operator_tables(const Cfg& operators);

}  // namespace servesim
