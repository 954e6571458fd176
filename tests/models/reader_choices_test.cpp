// Choices the step models' readers make that no other case pins (issue 35, sixth round): which
// engine folder of a GPU's operator tables is the newest, the mixture-of-experts routing a layer
// profile accepts at its edge, and a table-cache source too large to hash.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "models/operator_tables.h"
#include "models/step_time_model.h"
#include "models/table_cache.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_reader_choices_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const fs::path k_tiny = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/aic-tiny";

/// The newest of `folders` (engine folders of one GPU) as the operator tables name it: a table
/// folder with only the datasheet and these empty engine folders (opening reads no table).
std::string newest(const std::vector<std::string>& folders) {
  const fs::path root = temp_dir();
  fs::create_directories(root / "systems");
  fs::copy_file(k_tiny / "systems/tiny_gpu.yaml", root / "systems/tiny_gpu.yaml");
  for (const std::string& f : folders) fs::create_directories(root / "tiny_gpu" / f);
  const std::string d =
      open_operator_tables({root.string(), "tiny_gpu", "vllm", false})->describe();
  const std::string tail = " (each table from the newest vllm-* folder with it) tables";
  const std::string head = "tiny_gpu ";
  REQUIRE(d.rfind(head, 0) == 0);
  if (folders.size() == 1) return d.substr(head.size(), d.size() - head.size() - 7);
  REQUIRE(d.size() > head.size() + tail.size());
  REQUIRE(d.substr(d.size() - tail.size()) == tail);
  return d.substr(head.size(), d.size() - head.size() - tail.size());
}

const std::string k_moe = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/llmservingsim-moe";

std::unique_ptr<StepTimeModel> moe_model(const std::string& extra) {
  return make_step_time_model(
      Cfg::root(doc_of("kind: layer_profile\npath: " + k_moe + "/tp1\nlayers: 2\n" + extra)));
}

StepShape decode(int32_t sequences) {
  StepShape s;
  s.sequences = s.decode_sequences = sequences;
  s.decode_context_tokens = 64 * sequences;
  return s;
}

}  // namespace

TEST_CASE("operator tables: the newest engine folder compares numbers as numbers, the rest as text",
          "[models][operator]") {
  CHECK(newest({"vllm-0.1.0"}) == "vllm-0.1.0");
  // Numbers as numbers (by name 0.10 lists before 0.9, and rc20 before rc9).
  CHECK(newest({"vllm-0.9.0", "vllm-0.10.0"}) == "vllm-0.10.0");
  CHECK(newest({"vllm-0.10.0", "vllm-0.11.0", "vllm-0.9.1"}) == "vllm-0.11.0");
  CHECK(newest({"vllm-0.2.9", "vllm-0.10.0", "vllm-0.2.10"}) == "vllm-0.10.0");
  CHECK(newest({"vllm-1.3.0rc9", "vllm-1.3.0rc20"}) == "vllm-1.3.0rc20");
  CHECK(newest({"vllm-1.3.0rc20", "vllm-1.3.0rc9", "vllm-1.2.0"}) == "vllm-1.3.0rc20");
  // Text as text where the numbers agree: "post" after "b"; a text run that stops where the
  // other goes on ("." against ".x") first; a digit run against text, as text (digits first).
  CHECK(newest({"vllm-1.0.0b1", "vllm-1.0.0post1"}) == "vllm-1.0.0post1");
  CHECK(newest({"vllm-1.x", "vllm-1.5"}) == "vllm-1.x");
  CHECK(newest({"vllm-1", "vllm-x1"}) == "vllm-x1");
  // Equal numbers written differently (a leading zero) go on to what follows; when one name
  // ends there, the other, which goes on, is the newer; when both end, they are the same
  // version and the first by name is kept.
  CHECK(newest({"vllm-0.01", "vllm-0.1a"}) == "vllm-0.1a");
  CHECK(newest({"vllm-0.1", "vllm-0.01a"}) == "vllm-0.01a");
  CHECK(newest({"vllm-0.1", "vllm-0.01"}) == "vllm-0.01");
  CHECK(newest({"vllm-0.1.0", "vllm-0.1.0.1"}) == "vllm-0.1.0.1");
  // A run of ten digits or more (no version number has one) compares as text: a 10-digit run
  // against a 9-digit one goes by its first digit; nine digits still compare as a number.
  CHECK(newest({"vllm-1000000000", "vllm-999999999"}) == "vllm-999999999");
  CHECK(newest({"vllm-0999999999", "vllm-1", "vllm-999999999"}) == "vllm-999999999");
  CHECK(newest({"vllm-100000000", "vllm-99999999"}) == "vllm-100000000");
}

TEST_CASE("layer_profile: experts_per_token may equal experts, and more of them is not faster",
          "[models]") {
  // 8 experts, all active for every token: accepted, and no faster than 7 or 2 of them (a
  // token's activated experts only grow with the experts each token picks; the profile's rows
  // start at 32 experts, so below them the times are equal).
  const auto all = moe_model("experts: 8\nexperts_per_token: 8\n");
  const auto seven = moe_model("experts: 8\nexperts_per_token: 7\n");
  const auto two = moe_model("experts: 8\nexperts_per_token: 2\n");
  for (int32_t n : {1, 4, 32}) {
    CHECK(all->step_ms(decode(n)) >= seven->step_ms(decode(n)));
    CHECK(seven->step_ms(decode(n)) >= two->step_ms(decode(n)));
  }
  CHECK_THROWS_WITH(
      moe_model("experts: 8\nexperts_per_token: 9\n"),
      Catch::Contains("experts_per_token = \"9\"") && Catch::Contains("must be <= experts (8)"));
}

TEST_CASE("table cache: a source over 4 GiB is not hashed and has no entry", "[models]") {
  const fs::path dir = temp_dir();
  const fs::path big = dir / "big.csv";
  // A sparse file: its size is 4 GiB and a byte, with no data written.
  std::ofstream(big, std::ios::binary) << "x\n";
  std::error_code ec;
  fs::resize_file(big, (uintmax_t{1} << 32) + 1, ec);
  if (ec) {
    WARN("the temporary folder cannot hold a sparse file of 4 GiB: " + ec.message());
    return;
  }
  const TableCache c(dir / "cache", big, "gemm bfloat16");
  CHECK_FALSE(c.file());
  CHECK_FALSE(c.load());
  c.store({1.0});
  CHECK_FALSE(fs::exists(dir / "cache"));
  // The same file cut back to 2 bytes has its entry.
  fs::resize_file(big, 2);
  const TableCache small(dir / "cache", big, "gemm bfloat16");
  CHECK(small.file());
  fs::remove(big);
}

TEST_CASE("table cache: an edit in a source's last bytes, past its last whole 8 bytes, is seen",
          "[models]") {
  // The content hash takes 8 bytes at a time and then the rest: sources of 9 to 23 bytes that
  // differ only in their final byte (in that rest) must not share an entry.
  const fs::path dir = temp_dir();
  for (size_t n : {9, 12, 15, 17, 23}) {
    const fs::path src = dir / ("t" + std::to_string(n) + ".csv");
    std::ofstream(src, std::ios::binary) << std::string(n - 1, 'a') << 'b';
    const TableCache c(dir / "cache", src, "t");
    c.store({static_cast<double>(n)});
    REQUIRE(c.load());
    std::ofstream(src, std::ios::binary | std::ios::trunc) << std::string(n - 1, 'a') << 'c';
    const TableCache edited(dir / "cache", src, "t");
    CHECK_FALSE(edited.load());
    CHECK(edited.file() != c.file());
  }
}

}  // namespace t_models_reader_choices_test
