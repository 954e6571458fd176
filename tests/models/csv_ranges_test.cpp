// Every integer column a measured-table reader checks, walked as a table (docs/testing.md,
// "Issue 35"): one row of a real excerpt is given a value past the column's range, and the
// refusal must name the file, the column and the exact range ("an integer from MIN to MAX"),
// so a range's ends and the column a reader takes them from are pinned one by one. The value
// at each end is accepted.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "models/layer_profile.h"
#include "models/measurements.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_csv_ranges_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const fs::path k_moe = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/llmservingsim-moe/tp1";

/// A column of a layer-profile file: the row appended (with {} where the value goes), the
/// column's name and its range as the reader prints it.
struct Column {
  const char* file;
  const char* row;
  const char* name;
  int64_t min, max;
};

// dense.csv and per_sequence.csv: layer,size,time_us; attention.csv: prefill_chunk, kv_prefill,
// n_decode, kv_decode, time_us; moe.csv: tokens, activated_experts, time_us.
const Column k_columns[] = {
    {"dense.csv", "embedding,{},3.1", "tokens", 0, int64_t{1} << 30},
    {"per_sequence.csv", "lm_head,{},420", "sequences", 0, int64_t{1} << 30},
    {"attention.csv", "{},0,1,16,7.7", "prefill_chunk", 0, int64_t{1} << 24},
    {"attention.csv", "0,{},1,16,7.7", "kv_prefill", 0, int64_t{1} << 40},
    {"attention.csv", "0,0,{},16,7.7", "n_decode", 0, int64_t{1} << 24},
    {"attention.csv", "0,0,1,{},7.7", "kv_decode", 0, int64_t{1} << 40},
    {"moe.csv", "{},8,50", "tokens", 1, int64_t{1} << 30},
    {"moe.csv", "1,{},50", "activated_experts", 1, int64_t{1} << 20},
};

std::string with_value(const char* row, int64_t v) {
  std::string s(row);
  return s.replace(s.find("{}"), 2, std::to_string(v));
}

/// A copy of the MoE excerpt's tp1 folder with `row` appended to `file`; the error of reading
/// it as a layer profile, or "(no error)".
std::string error_with_row(const char* file, const std::string& row) {
  const fs::path dir = temp_dir() / "tp1";
  fs::create_directories(dir);
  for (const char* f : {"attention.csv", "dense.csv", "moe.csv", "per_sequence.csv"})
    fs::copy_file(k_moe / f, dir / f);
  std::ofstream(dir / file, std::ios::app) << row << "\n";
  try {
    const LayerProfile p(dir.string(), 2);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("csv ranges: each layer-profile column refuses one past its ends with its range",
          "[models][layer_profile]") {
  for (const Column& c : k_columns) {
    INFO(c.file << " " << c.name);
    const std::string range = "column " + std::string(c.name) + " = \"" +
                              std::to_string(c.min - 1) + "\": must be an integer from " +
                              std::to_string(c.min) + " to " + std::to_string(c.max);
    const std::string low = error_with_row(c.file, with_value(c.row, c.min - 1));
    CHECK_THAT(low, Catch::Contains(std::string(c.file) + ":") && Catch::Contains(range));
    const std::string high = error_with_row(c.file, with_value(c.row, c.max + 1));
    CHECK_THAT(high, Catch::Contains("column " + std::string(c.name) + " = \"" +
                                     std::to_string(c.max + 1) + "\": must be an integer from " +
                                     std::to_string(c.min) + " to " + std::to_string(c.max)));
    CHECK(error_with_row(c.file, with_value(c.row, c.min)) == "(no error)");
    CHECK(error_with_row(c.file, with_value(c.row, c.max)) == "(no error)");
  }
}

namespace {

/// A column of a one-file reader: the file's header, one row (with {} where the value goes),
/// the column, its range and the reader.
struct FileColumn {
  const char* header;
  const char* row;
  const char* name;
  int64_t min, max;
  void (*read)(const std::string& path);
};

void read_generic(const std::string& path) { (void)read_generic_measurements(path); }
void read_split(const std::string& path) { (void)read_splitwise(path, MeasurementFilter{}); }
void read_table(const std::string& path) {
  (void)make_step_time_model(Cfg::root(doc_of("kind: table\npoints_file: " + path + "\n")));
}

const char* k_generic = "batch_size,context_tokens,prefill_tokens,step_ms";
const char* k_split =
    "model,hardware,tensor_parallel,prompt_size,batch_size,token_size,prompt_time,token_time";

const FileColumn k_file_columns[] = {
    {k_generic, "{},16,0,5", "batch_size", 1, int64_t{1} << 24, read_generic},
    {k_generic, "1,{},0,5", "context_tokens", 0, int64_t{1} << 40, read_generic},
    {k_generic, "1,16,{},5", "prefill_tokens", 0, int64_t{1} << 40, read_generic},
    {k_split, "m,h,{},16,1,8,10,5", "tensor_parallel", 1, 1024, read_split},
    {k_split, "m,h,1,{},1,8,10,5", "prompt_size", 1, int64_t{1} << 24, read_split},
    {k_split, "m,h,1,16,{},8,10,5", "batch_size", 1, int64_t{1} << 20, read_split},
    {k_split, "m,h,1,16,1,{},10,5", "token_size", 1, int64_t{1} << 24, read_split},
    {"batch,ms", "{},5", "batch", 1, int64_t{1} << 24, read_table},
};

std::string error_of_file(const FileColumn& c, int64_t v) {
  const std::string path =
      write_temp("m.csv", std::string(c.header) + "\n" + with_value(c.row, v) + "\n");
  try {
    c.read(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("csv ranges: each measurement and points-file column refuses one past its ends",
          "[models]") {
  for (const FileColumn& c : k_file_columns) {
    INFO(c.header << " " << c.name);
    for (const int64_t bad : {c.min - 1, c.max + 1})
      CHECK_THAT(error_of_file(c, bad),
                 Catch::Contains("m.csv:2: column " + std::string(c.name) + " = \"" +
                                 std::to_string(bad) + "\": must be an integer from " +
                                 std::to_string(c.min) + " to " + std::to_string(c.max)));
    CHECK(error_of_file(c, c.min) == "(no error)");
    CHECK(error_of_file(c, c.max) == "(no error)");
  }
}

namespace {

/// Copies the folder `src` and sets `column` of every data row of `file` (relative to it) to
/// `v`; returns the error of `load` on the copy, or "(no error)".
std::string table_error(const fs::path& src, const std::string& file, const std::string& column,
                        int64_t v, const std::function<void(const fs::path&)>& load) {
  const fs::path d = temp_dir() / "copy";
  fs::copy(src, d, fs::copy_options::recursive);
  std::ifstream in(src / file);
  auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
    if (!line.empty() && line.back() == ',') out.emplace_back();
    return out;
  };
  std::string header;
  std::getline(in, header);
  const auto names = split(header);
  const auto at = std::find(names.begin(), names.end(), column);
  REQUIRE(at != names.end());
  std::string text = header + "\n";
  for (std::string row; std::getline(in, row);) {
    auto cells = split(row);
    cells.at(static_cast<size_t>(at - names.begin())) = std::to_string(v);
    for (size_t i = 0; i < cells.size(); ++i) text += (i ? "," : "") + cells[i];
    text += "\n";
  }
  std::ofstream(d / file, std::ios::trunc) << text;
  try {
    load(d);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

struct TableColumn {
  std::string file;
  const char* name;
  int64_t min, max;
};

void check_columns(const fs::path& src, const std::vector<TableColumn>& columns,
                   const std::function<void(const fs::path&)>& load) {
  for (const TableColumn& c : columns) {
    INFO(c.file << " " << c.name);
    for (const int64_t bad : {c.min - 1, c.max + 1}) {
      const std::string file = fs::path(c.file).filename().string();
      CHECK_THAT(table_error(src, c.file, c.name, bad, load),
                 Catch::Contains(file + ":") &&
                     Catch::Contains("column " + std::string(c.name) + " = \"" +
                                     std::to_string(bad) + "\": must be an integer from " +
                                     std::to_string(c.min) + " to " + std::to_string(c.max)));
    }
  }
}

constexpr int64_t k_dim = int64_t{1} << 30;
constexpr int64_t k_big = int64_t{1} << 40;

}  // namespace

TEST_CASE("csv ranges: each Vidur table column refuses one past its ends with its range",
          "[models][vidur]") {
  check_columns(fs::path(SERVESIM_SOURCE_DIR) / "tests/data/vidur-a100",
                {
                    {"mlp.csv", "n_embd", 1, k_dim},
                    {"mlp.csv", "n_head", 1, k_dim},
                    {"mlp.csv", "n_kv_head", 1, k_dim},
                    {"mlp.csv", "n_expanded_embd", 1, k_dim},
                    {"mlp.csv", "num_tensor_parallel_workers", 1, 1024},
                    {"mlp.csv", "num_tokens", 1, k_dim},
                    {"attention.csv", "n_embd", 1, k_dim},
                    {"attention.csv", "n_q_head", 1, k_dim},
                    {"attention.csv", "n_kv_head", 1, k_dim},
                    {"attention.csv", "num_tensor_parallel_workers", 1, 1024},
                    {"attention.csv", "batch_size", 1, int64_t{1} << 24},
                    {"attention.csv", "prefill_chunk_size", 0, k_dim},
                    {"attention.csv", "kv_cache_size", 0, k_dim},
                    {"all_reduce.csv", "num_workers", 1, int64_t{1} << 20},
                    {"all_reduce.csv", "devices_per_node", 1, int64_t{1} << 20},
                    {"all_reduce.csv", "size", 1, int64_t{1} << 50},
                    {"cpu_overheads.csv", "tensor_parallel_degree", 1, 1024},
                    {"cpu_overheads.csv", "batch_size", 1, int64_t{1} << 24},
                },
                [](const fs::path& d) {
                  MeasurementFilter f;
                  f.layers = 2;
                  (void)read_vidur_tables(d.string(), f);
                });
}

TEST_CASE("csv ranges: each operator table column refuses one past its ends with its range",
          "[models][operator]") {
  const fs::path tiny = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/aic-tiny";
  // The model file, the tensor parallelism and the all-reduce source that read each table.
  auto load = [](const char* model, const char* extra) {
    return [model, extra](const fs::path& d) {
      (void)make_step_time_model(
          Cfg::root(doc_of("kind: operator\nmodel: " + (d / model).string() +
                           "\nhardware: h100-sxm\noperators: {source: tables, path: " + d.string() +
                           ", gpu: tiny_gpu, engine: vllm" + extra)));
    };
  };
  const std::string v = "tiny_gpu/vllm-0.1.0/";
  const auto dense = load("tiny-dense.yaml", "}\n");
  check_columns(tiny,
                {{v + "gemm.csv", "m", 1, k_big},
                 {v + "gemm.csv", "n", 1, k_big},
                 {v + "gemm.csv", "k", 1, k_big}},
                dense);
  check_columns(tiny,
                {{v + "context_attention.csv", "batch_size", 1, k_dim},
                 {v + "context_attention.csv", "isl", 1, k_big},
                 {v + "generation_attention.csv", "batch_size", 1, k_dim},
                 {v + "generation_attention.csv", "isl", 1, k_big},
                 {v + "generation_attention.csv", "step", 0, k_big}},
                dense);
  check_columns(tiny, {{v + "moe.csv", "num_tokens", 1, k_big}}, load("tiny-moe.yaml", "}\n"));
  check_columns(tiny, {{v + "custom_allreduce.csv", "message_size", 1, k_big}},
                load("tiny-dense.yaml", "}\ntensor_parallel: 2\n"));
  check_columns(tiny, {{"tiny_gpu/nccl-1.0.0/nccl.csv", "message_size", 1, k_big}},
                load("tiny-dense.yaml", ", allreduce: nccl}\ntensor_parallel: 2\n"));
}

}  // namespace t_models_csv_ranges_test
