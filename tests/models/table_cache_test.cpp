// The table cache (models/table_cache.h): parsed numbers kept by the source's content.
#include "models/table_cache.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "models/operator_table_readers.h"
#include "tests/support.h"

namespace t_models_table_cache_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

TEST_CASE("table cache: what is stored comes back bit for bit for the same content only",
          "[models]") {
  const fs::path dir = temp_dir();
  const fs::path src = dir / "a.csv";
  write(src, "x\n1\n");
  const std::vector<double> values{0.1, 1e-300, -0.0, 3.0000000000000004};
  {
    const TableCache c(dir / "cache", src, "gemm bfloat16");
    CHECK_FALSE(c.load());
    c.store(values);
    REQUIRE(c.file());
    CHECK(fs::exists(*c.file()));
  }
  const auto back = TableCache(dir / "cache", src, "gemm bfloat16").load();
  REQUIRE(back);
  REQUIRE(back->size() == values.size());
  for (size_t i = 0; i < values.size(); ++i)
    CHECK(std::memcmp(&(*back)[i], &values[i], sizeof(double)) == 0);
  CHECK_FALSE(TableCache(dir / "cache", src, "gemm fp8").load());      // another selection
  CHECK_FALSE(TableCache(std::nullopt, src, "gemm bfloat16").load());  // no directory
  write(src, "x\n2\n");  // edited: the entry no longer answers
  CHECK_FALSE(TableCache(dir / "cache", src, "gemm bfloat16").load());
}

TEST_CASE("table cache: an entry cut short or altered is ignored and written again", "[models]") {
  const fs::path dir = temp_dir();
  const fs::path src = dir / "a.csv";
  write(src, "x\n1\n");
  const TableCache c(dir / "cache", src, "t");
  c.store({1.0, 2.0, 3.0});
  const fs::path f = *c.file();
  const auto size = fs::file_size(f);
  fs::resize_file(f, size - 3);
  CHECK_FALSE(c.load());
  c.store({1.0, 2.0, 3.0});
  REQUIRE(c.load());
  {
    std::fstream io(f, std::ios::binary | std::ios::in | std::ios::out);
    io.seekp(static_cast<std::streamoff>(size - 1));
    io.put('\x7f');  // a value's last byte
  }
  CHECK_FALSE(c.load());
}

TEST_CASE("table cache: an entry of another format version or byte order is ignored", "[models]") {
  // The header starts with the magic, whose last two characters are the format version (also
  // the readers' version: an entry holds what the build that wrote it accepted), then the byte
  // order's 8-byte probe. Each differing alone, the rest of the entry intact, must miss.
  const fs::path dir = temp_dir();
  const fs::path src = dir / "a.csv";
  write(src, "x\n1\n");
  const TableCache c(dir / "cache", src, "t");
  c.store({1.0, 2.0});
  REQUIRE(c.load());
  const fs::path f = *c.file();
  auto poke = [&f](std::streamoff at, char byte) {
    std::fstream io(f, std::ios::binary | std::ios::in | std::ios::out);
    io.seekp(at);
    io.put(byte);
  };
  char version = 0;
  {
    std::ifstream in(f, std::ios::binary);
    in.seekg(7);
    in.get(version);
  }
  CHECK(version == '2');
  poke(7, '1');  // an entry written by format version 01
  CHECK_FALSE(c.load());
  c.store({1.0, 2.0});
  REQUIRE(c.load());
  poke(8, '\x09');  // the byte-order probe's first byte: another machine's order
  CHECK_FALSE(c.load());
}

TEST_CASE("table cache: a gemm table read from its entry equals the one parsed from the file",
          "[models]") {
  const fs::path dir = temp_dir();
  write(dir / "gemm.csv",
        "m,n,k,latency_ms_bfloat16,latency_ms_fp8\n"
        "1,128,128,0.0025,0.00125\n16,128,128,0.0025,\n256,128,128,0.005,0.0025\n"
        "1,128,256,0.005,0.0025\n64,128,256,0.0051,0.0026\n");
  // The suite runs with the cache off (tests/main_test.cpp): on here, put back as it was after.
  const char* was = std::getenv("SERVESIM_TABLE_CACHE");
  const std::string before = was ? was : "";
  setenv("SERVESIM_TABLE_CACHE", (dir / "cache").c_str(), 1);
  Breakpoints parsed_bp, cached_bp;
  const GemmTable parsed = read_gemm_table(dir / "gemm.csv", "bfloat16", parsed_bp);
  REQUIRE(fs::exists(dir / "cache"));
  CHECK(std::distance(fs::directory_iterator(dir / "cache"), fs::directory_iterator()) == 1);
  const GemmTable cached = read_gemm_table(dir / "gemm.csv", "bfloat16", cached_bp);
  if (was)
    setenv("SERVESIM_TABLE_CACHE", before.c_str(), 1);
  else
    unsetenv("SERVESIM_TABLE_CACHE");
  CHECK(parsed_bp == cached_bp);
  CHECK(parsed.ln_n == cached.ln_n);
  CHECK(parsed.ln_k == cached.ln_k);
  REQUIRE(parsed.lines.size() == cached.lines.size());
  for (size_t i = 0; i < parsed.lines.size(); ++i) {
    REQUIRE(parsed.lines[i].has_value() == cached.lines[i].has_value());
    for (double m : {1.0, 7.0, 16.0, 100.0, 256.0, 1000.0})
      if (parsed.lines[i]) CHECK(parsed.lines[i]->at(m) == cached.lines[i]->at(m));
  }
}

}  // namespace t_models_table_cache_test
