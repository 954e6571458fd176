// Inputs stored plain or gzipped (core/input_file.h): `name.csv` reads `name.csv.gz` when only
// that is there, a missing file is named in full, and a corrupt, cut or mislabelled gzip file is
// an InputError naming it, never a short read passed off as the whole table.
#include "core/input_file.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/csv_columns.h"
#include "core/errors.h"
#include "tests/support.h"

namespace t_core_input_file_test {

using namespace servesim;
namespace fs = std::filesystem;

namespace {

// "a,b\n1,2\n3,4\n" as `gzip -9 -n` would store it (header: no name, time 0).
const unsigned char k_gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff, 0x4b,
                              0xd4, 0x49, 0xe2, 0x32, 0xd4, 0x31, 0xe2, 0x32, 0xd6, 0x31, 0xe1,
                              0x02, 0x00, 0xe5, 0xe9, 0xd6, 0xce, 0x0c, 0x00, 0x00, 0x00};
const std::string k_text = "a,b\n1,2\n3,4\n";

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}
std::string gz_bytes() { return {reinterpret_cast<const char*>(k_gz), sizeof k_gz}; }

std::string error_of(const fs::path& p) {
  try {
    (void)read_input(p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("input file: a plain file is read as it is and a gzipped one decompressed", "[core]") {
  const fs::path dir = test::temp_dir();
  write_bytes(dir / "plain.csv", k_text);
  write_bytes(dir / "packed.csv.gz", gz_bytes());
  CHECK(read_input(dir / "plain.csv") == k_text);
  // Asked for by the plain name or by the stored one.
  CHECK(read_input(dir / "packed.csv") == k_text);
  CHECK(read_input(dir / "packed.csv.gz") == k_text);
  CHECK(input_exists(dir / "packed.csv"));
  CHECK(find_input(dir / "packed.csv") == dir / "packed.csv.gz");
  CHECK(find_input(dir / "plain.csv") == dir / "plain.csv");
  // The plain file wins when both are there.
  write_bytes(dir / "plain.csv.gz", gz_bytes());
  write_bytes(dir / "plain.csv", "x\n");
  CHECK(read_input(dir / "plain.csv") == "x\n");
  // CsvColumns opens the gzipped table by its plain name and names the stored file.
  CsvColumns csv((dir / "packed.csv").string(), {"b"});
  REQUIRE(csv.next_row());
  CHECK(csv.field(0) == "2");
  REQUIRE(csv.next_row());
  CHECK(csv.field(0) == "4");
  CHECK_FALSE(csv.next_row());
  CHECK(csv.path() == (dir / "packed.csv.gz").string());
}

TEST_CASE("input file: neither the file nor its gz is an error naming the full path", "[core]") {
  const fs::path dir = test::temp_dir() / "a-folder-name-long-enough-to-be-cut-by-quote-input";
  fs::create_directories(dir);
  CHECK_FALSE(input_exists(dir / "gemm.csv"));
  CHECK(error_of(dir / "gemm.csv") ==
        (dir / "gemm.csv").string() + ": no such file (nor gemm.csv.gz)");
  CHECK(error_of(dir / "gemm.csv.gz") == (dir / "gemm.csv.gz").string() + ": no such file");
  CHECK(error_of(dir) == dir.string() + ": not a regular file");
}

TEST_CASE("input file: corrupt, cut or mislabelled gzip data is an error naming the file",
          "[core]") {
  const fs::path dir = test::temp_dir();
  std::string bad = gz_bytes();
  bad[12] = static_cast<char>(bad[12] ^ 0x5a);  // inside the deflate stream
  write_bytes(dir / "flipped.csv.gz", bad);
  CHECK_THAT(error_of(dir / "flipped.csv"),
             Catch::StartsWith((dir / "flipped.csv.gz").string() + ": corrupt gzip data"));
  std::string crc = gz_bytes();
  crc[sizeof k_gz - 6] = static_cast<char>(crc[sizeof k_gz - 6] ^ 1);  // the CRC-32
  write_bytes(dir / "crc.csv.gz", crc);
  CHECK_THAT(error_of(dir / "crc.csv"), Catch::Contains("crc.csv.gz: corrupt gzip data"));
  write_bytes(dir / "cut.csv.gz", gz_bytes().substr(0, 20));
  CHECK_THAT(error_of(dir / "cut.csv"), Catch::Contains("cut.csv.gz: corrupt gzip data"));
  write_bytes(dir / "text.csv.gz", k_text);
  CHECK_THAT(error_of(dir / "text.csv"), Catch::Contains("text.csv.gz: is not gzip data"));
  // Through CsvColumns too: the reader's InputError, not a table that ends early.
  CHECK_THROWS_WITH(
      [&] {
        CsvColumns csv((dir / "cut.csv").string(), {"a"});
        while (csv.next_row()) {
        }
      }(),
      Catch::Contains("cut.csv.gz: corrupt gzip data"));
}

}  // namespace t_core_input_file_test
