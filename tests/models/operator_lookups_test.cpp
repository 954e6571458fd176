// The operator tables' lookups where the table has holes or several layouts (models/
// operator_tables.cpp), on copies of tests/data/aic-tiny edited by the test:
//   gemm        0.01 x (n k / 65536) x g(m), g = 1 up to m = 16 (tests/models/operator_test.cpp)
//   generation  0.000025 x heads x batch x kv for head dimension 64
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/operator_tables.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_operator_lookups_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const std::string k_tiny = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";

/// A copy of aic-tiny whose vLLM `file` is `edit` applied to its lines.
template <class Edit>
fs::path tables_with(const std::string& file, Edit edit) {
  const fs::path dir = temp_dir() / "aic";
  fs::copy(k_tiny, dir, fs::copy_options::recursive);
  const fs::path path = dir / "tiny_gpu" / "vllm-0.1.0" / file;
  std::ifstream in(path);
  std::ostringstream out;
  for (std::string line; std::getline(in, line);) edit(line, out);
  in.close();
  std::ofstream(path, std::ios::trunc) << out.str();
  return dir;
}

Approx near(double v) { return Approx(v).epsilon(1e-6); }

}  // namespace

TEST_CASE("operator lookups: a GEMM line missing at the smallest n takes the next n up",
          "[models][operator]") {
  // The (n 128, k 512) line is left unmeasured: nothing below it along n, so its nearest is
  // (256, 512), 0.02 ms up to m = 16, before any other k at n = 128 ((128, 256): 0.005).
  const fs::path dir = tables_with("gemm.csv", [](const std::string& line, std::ostream& out) {
    for (const std::string m : {"1,", "16,", "256,"})
      if (line.rfind(m + "128,512,", 0) == 0) {
        out << m << "128,512,,,\n";
        return;
      }
    out << line << "\n";
  });
  const auto src = open_operator_tables({dir.string(), "tiny_gpu", "vllm", false});
  CHECK(src->gemm_ms(16, 128, 512, "bfloat16") == near(0.02));
  CHECK(src->gemm_ms(1, 128, 512, "bfloat16") == near(0.02));
  // The measured neighbours keep their own lines.
  CHECK(src->gemm_ms(16, 128, 256, "bfloat16") == near(0.005));
  CHECK(src->gemm_ms(16, 256, 512, "bfloat16") == near(0.02));
}

TEST_CASE("operator lookups: layouts differing only in head dimension each read their own rows",
          "[models][operator]") {
  // Beside 4 query / 2 KV heads of dimension 64, the same heads of dimension 128 measured at
  // twice the time. Asked in turn, each answers from its own rows, however often it alternates.
  const fs::path dir =
      tables_with("generation_attention.csv", [](const std::string& line, std::ostream& out) {
        out << line << "\n";
        if (line.rfind("64,4,2,", 0) != 0) return;
        std::vector<std::string> f;
        std::stringstream cells(line);
        for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
        out << "128,4,2";
        for (size_t i = 3; i + 2 < f.size(); ++i) out << "," << f[i];
        out << "," << 2 * std::stod(f[f.size() - 2]) << "," << 2 * std::stod(f.back()) << "\n";
      });
  const auto src = open_operator_tables({dir.string(), "tiny_gpu", "vllm", false});
  const AttentionHeads d64{4, 2, 64}, d128{4, 2, 128};
  const double at64 = 0.000025 * 4 * 2 * 64;  // batch 2, 64 tokens each
  for (int round = 0; round < 3; ++round) {
    CHECK(src->generation_attention_ms(2, 64, d64, "bfloat16", "bfloat16") == near(at64));
    CHECK(src->generation_attention_ms(2, 64, d128, "bfloat16", "bfloat16") == near(2 * at64));
  }
  CHECK(src->generation_attention_ms(2, 64, d128, "bfloat16", "fp8") == near(at64));
}

TEST_CASE("operator lookups: the all-reduce reads the bf16 CUDA-graph rows only",
          "[models][operator]") {
  // Beside each bf16 CUDA-graph row (0.01 ms at 256 and 4,096 elements on 2 GPUs), a faster
  // fp8 row of the same kernel and a faster bf16 eager row: both are passed over.
  const fs::path dir =
      tables_with("custom_allreduce.csv", [](const std::string& line, std::ostream& out) {
        out << line << "\n";
        const std::string graph = "vLLM_custom_graph,vllm_graph,bfloat16,2,";
        if (line.rfind(graph, 0) != 0) return;
        const std::string size = line.substr(graph.size(), line.rfind(',') - graph.size());
        out << "vLLM_custom_graph,vllm_graph,fp8,2," << size << ",0.001\n";
        out << "vLLM_custom_eager,vllm_eager,bfloat16,2," << size << ",0.002\n";
      });
  const auto src = open_operator_tables({dir.string(), "tiny_gpu", "vllm", false});
  CHECK(src->allreduce_ms(256, 2) == near(0.01));
  CHECK(src->allreduce_ms(4096, 2) == near(0.01));
}

TEST_CASE("operator lookups: a GEMM shape asked again answers as a fresh source does",
          "[models][operator]") {
  // gemm_ms keeps each (n, k, dtype)'s brackets and lines from its first query: later queries,
  // interleaved with other shapes and dtypes, must give a fresh source's bits, at shapes on the
  // measured points, between them, below and beyond them, with a line missing; a dtype with no
  // measured cell throws every time.
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const fs::path dir = tables_with("gemm.csv", [](const std::string& line, std::ostream& out) {
    for (const std::string m : {"1,", "16,", "256,"})  // the (256, 256) line unmeasured
      if (line.rfind(m + "256,256,", 0) == 0) {
        out << m << "256,256,,,\n";
        return;
      }
    out << line << "\n";
  });
  const OperatorTablesOptions o{dir.string(), "tiny_gpu", "vllm", false};
  const auto shared = open_operator_tables(o);
  const std::vector<std::array<double, 2>> shapes{{128, 128}, {256, 512},   {200, 300},
                                                  {64, 100},  {4096, 8192}, {256, 256}};
  size_t wrong = 0, asked = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (const double m : {1.0, 3.0, 16.0, 100.0, 256.0, 5000.0})
      for (const auto& [n, k] : shapes)
        for (const std::string dtype : {"bfloat16", "fp8"}) {
          const double got = shared->gemm_ms(m, n, k, dtype);
          const double want = open_operator_tables(o)->gemm_ms(m, n, k, dtype);
          wrong += same(got, want) ? 0 : 1;
          ++asked;
        }
  CHECK(asked == 144);
  CHECK(wrong == 0);
  CHECK_THROWS_AS(shared->gemm_ms(16, 128, 128, "fp8_block"), InputError);
  CHECK_THROWS_AS(shared->gemm_ms(16, 128, 128, "fp8_block"), InputError);
}

}  // namespace t_models_operator_lookups_test
