// The table cache (models/table_cache.h): parsed numbers kept by the source's content.
#include "models/table_cache.h"

#include <fmt/format.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "models/operator_table_readers.h"
#include "models/operator_tables.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "tests/text.h"

namespace t_models_table_cache_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

/// SERVESIM_TABLE_CACHE set to `value` (nullopt: off) while it lives, then put back: the suite
/// runs with the cache off (tests/main_test.cpp).
class CacheDir {
 public:
  explicit CacheDir(const std::optional<fs::path>& value) {
    if (const char* was = std::getenv("SERVESIM_TABLE_CACHE")) m_before = was;
    setenv("SERVESIM_TABLE_CACHE", value ? value->c_str() : "off", 1);
  }
  ~CacheDir() {
    if (m_before)
      setenv("SERVESIM_TABLE_CACHE", m_before->c_str(), 1);
    else
      unsetenv("SERVESIM_TABLE_CACHE");
  }
  CacheDir(const CacheDir&) = delete;
  CacheDir& operator=(const CacheDir&) = delete;

 private:
  std::optional<std::string> m_before;
};

size_t entries(const fs::path& dir) {
  if (!fs::exists(dir)) return 0;
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// Two layouts (4/2 heads x 32 and 8/2 heads x 32), an empty cell, a duplicate batch (the faster
// kept) and a sliding-window row (skipped).
const std::string k_generation =
    "head_dim,num_heads,num_key_value_heads,batch_size,isl,step,window_size,latency_ms_x\n"
    "32,4,2,1,1,15,0,0.01\n32,4,2,2,1,15,0,0.018\n32,4,2,2,1,15,0,0.017\n"
    "32,4,2,8,1,15,0,0.05\n32,4,2,1,1,63,0,0.02\n32,4,2,4,1,63,0,\n"
    "32,4,2,16,1,63,0,0.3\n32,4,2,16,1,63,128,9\n32,8,2,1,1,15,0,0.03\n32,8,2,4,1,15,0,0.07\n";
const std::string k_gemm =
    "m,n,k,latency_ms_bfloat16\n"
    "1,128,128,0.0025\n16,128,128,0.0024\n256,128,128,0.005\n512,128,128,0.001\n"
    "1,256,128,0.004\n8,256,128,0.004\n8,256,128,0.0039\n64,256,128,0.006\n"
    "1,128,256,0.005\n64,128,256,0.0051\n";

/// The attention table's values at sizes on, between and beyond its points.
std::vector<double> samples_of(const AttentionTable& t) {
  std::vector<double> out(t.ln_length.begin(), t.ln_length.end());
  out.push_back(t.batch_scale);
  for (const LogCurve& c : t.by_batch)
    for (double b : {1.0, 1.5, 2.0, 3.0, 8.0, 16.0, 40.0}) out.push_back(c.at(b));
  return out;
}

/// The gemm table's lines at sizes on, between and beyond their points (-1: not measured).
std::vector<double> samples_of(const GemmTable& g) {
  std::vector<double> out(g.ln_n.begin(), g.ln_n.end());
  out.insert(out.end(), g.ln_k.begin(), g.ln_k.end());
  for (size_t i = 0; i < g.line_count(); ++i)
    for (double m : {1.0, 7.0, 8.0, 16.0, 100.0, 256.0, 1000.0})
      out.push_back(g.line(i) ? g.line(i)->at(m) : -1.0);
  return out;
}

/// Bit-for-bit equality of two lists of doubles.
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

/// What spdlog's default logger wrote while `f` ran.
template <class F>
std::string logged(F f) {
  std::ostringstream text;
  const std::shared_ptr<spdlog::logger> before = spdlog::default_logger();
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
  sink->set_pattern("%l: %v");
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  f();
  spdlog::set_default_logger(before);
  return text.str();
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

TEST_CASE("table cache: an entry is keyed by the source's bytes, empty or pages long", "[models]") {
  // The source is read through a read-only mapping: its key (the hash in the entry's name) must
  // be content_hash of exactly its bytes for an empty file, a short one and ones ending just
  // before, on and after a page boundary; and its entry must come back from a mapping of its
  // own (values after a header, `what` and the zero bytes that align them).
  const fs::path dir = temp_dir();
  for (const size_t size : {size_t{0}, size_t{5}, size_t{4095}, size_t{4096}, size_t{8193}}) {
    std::string text(size, 'a');
    for (size_t i = 0; i < size; ++i) text[i] = static_cast<char>('a' + (i * 7) % 26);
    const fs::path src = dir / ("s" + std::to_string(size) + ".csv");
    write(src, text);
    const TableCache c(dir / "cache", src, "gemm x");
    INFO("size " << size);
    REQUIRE(c.file());
    CHECK(c.file()->filename().string().find(fmt::format("{:016x}", content_hash(text))) !=
          std::string::npos);
    const std::vector<double> values{static_cast<double>(size), 0.5, -3e300};
    c.store(values);
    const auto back = TableCache(dir / "cache", src, "gemm x").load();
    REQUIRE(back);
    CHECK(same_bits(*back, values));
  }
  // A source that is a directory, not a file: no key, so no entry.
  CHECK_FALSE(TableCache(dir / "cache", dir, "gemm x").file());
}

TEST_CASE("table cache: the content hash mixes every word in order, at any length", "[models]") {
  // content_hash mixes four words a turn of its loop: the same value as mixing one word at a
  // time (each key, so each entry's name, unchanged), for every length up to 200 bytes, on and
  // around multiples of 32, and pages long.
  const auto one_at_a_time = [](const std::string& b) {
    uint64_t h = 0x243F6A8885A308D3 ^ b.size();
    const auto mix = [&h](uint64_t w) {
      h = (h ^ w) * 0x9E3779B97F4A7C15;
      h ^= h >> 29;
    };
    size_t i = 0;
    for (; i + 8 <= b.size(); i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, b.data() + i, 8);
      mix(w);
    }
    uint64_t tail = 0;
    if (b.size() > i) std::memcpy(&tail, b.data() + i, b.size() - i);
    mix(tail);
    return h * 0xBF58476D1CE4E5B9;
  };
  std::string text;
  for (size_t i = 0; i < 9000; ++i) text.push_back(static_cast<char>((i * 131 + i / 7) % 256));
  size_t wrong = 0;
  for (size_t n = 0; n <= 200; ++n)
    wrong += content_hash(text.substr(0, n)) == one_at_a_time(text.substr(0, n)) ? 0 : 1;
  for (const size_t n : {size_t{4095}, size_t{4096}, size_t{8193}, size_t{9000}})
    wrong += content_hash(text.substr(0, n)) == one_at_a_time(text.substr(0, n)) ? 0 : 1;
  CHECK(wrong == 0);
  // A byte changed anywhere changes the hash.
  for (const size_t at : {size_t{0}, size_t{31}, size_t{32}, size_t{4100}, size_t{8999}}) {
    std::string edited = text;
    edited[at] = static_cast<char>(edited[at] ^ 1);
    CHECK(content_hash(edited) != content_hash(text));
  }
}

TEST_CASE("table cache: an entry's values are read in place, aligned, whatever the selection",
          "[models]") {
  // Format 04 pads `what` with zero bytes to a multiple of 8, so that map() hands out the values
  // where they lie in the file's mapping: aligned for every length of `what`, the same bits, and
  // still readable after the entry's file is replaced (store() renames a new file over it) or
  // removed, for as long as the mapping is kept.
  const fs::path dir = temp_dir();
  const fs::path src = dir / "a.csv";
  write(src, "x\n1\n");
  const std::vector<double> values{0.1, -0.0, 1e-310, 3.0000000000000004, -7e300};
  for (size_t length = 0; length <= 17; ++length) {
    INFO("what of " << length << " bytes");
    const std::string what(length, 'w');
    const TableCache c(dir / "cache", src, what);
    c.store(values);
    REQUIRE(c.file());
    const size_t header = 56;  // magic, byte order and five 64-bit fields
    CHECK(fs::file_size(*c.file()) ==
          (header + length + 7) / 8 * 8 + values.size() * sizeof(double));
    std::optional<TableCache::Mapped> m = c.map();
    REQUIRE(m);
    REQUIRE(m->mapping);
    CHECK(reinterpret_cast<uintptr_t>(m->values.data()) % alignof(double) == 0);
    const std::vector<double> read(m->values.begin(), m->values.end());
    CHECK(same_bits(read, values));
    CHECK(same_bits(*c.load(), values));
    c.store({1.0, 2.0});  // a new file renamed over the entry
    CHECK(same_bits(*c.load(), {1.0, 2.0}));
    fs::remove(*c.file());
    CHECK_FALSE(c.map());
    const std::vector<double> kept(m->values.begin(), m->values.end());
    CHECK(same_bits(kept, values));
  }
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
  CHECK(version == '4');
  poke(7, '3');  // an entry written by format version 03 (values not aligned)
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
  // The cached table reads its points in place from the entry's mapping, which it keeps: they
  // outlive the entry's file.
  REQUIRE(cached.points_owner);
  fs::remove_all(dir / "cache");
  if (was)
    setenv("SERVESIM_TABLE_CACHE", before.c_str(), 1);
  else
    unsetenv("SERVESIM_TABLE_CACHE");
  CHECK(parsed_bp == cached_bp);
  CHECK(parsed.ln_n == cached.ln_n);
  CHECK(parsed.ln_k == cached.ln_k);
  REQUIRE(parsed.line_count() == cached.line_count());
  for (size_t i = 0; i < parsed.line_count(); ++i) {
    REQUIRE((parsed.line(i) != nullptr) == (cached.line(i) != nullptr));
    for (double m : {1.0, 7.0, 16.0, 100.0, 256.0, 1000.0})
      if (parsed.line(i)) CHECK(parsed.line(i)->at(m) == cached.line(i)->at(m));
  }
}

TEST_CASE("table cache: attention tables read cold, warm or off are the same to the bit",
          "[models]") {
  const fs::path dir = temp_dir();
  write(dir / "generation_attention.csv", k_generation);
  const AttentionHeads h{4, 2, 32};
  const auto read = [&](const std::optional<fs::path>& cache, Breakpoints& bp) {
    const CacheDir env(cache);
    return samples_of(read_attention_table(dir / "generation_attention.csv", true, h, "x", bp));
  };
  Breakpoints off_bp, cold_bp, warm_bp;
  const std::vector<double> off = read(std::nullopt, off_bp);
  CHECK(entries(dir / "cache") == 0);
  const std::vector<double> cold = read(dir / "cache", cold_bp);
  CHECK(entries(dir / "cache") == 1);
  const std::vector<double> warm = read(dir / "cache", warm_bp);
  CHECK(same_bits(off, cold));
  CHECK(same_bits(off, warm));
  CHECK(off_bp == cold_bp);
  CHECK(off_bp == warm_bp);
  // The breakpoints are the layout's rows', the empty cell's batch 4 among them (by hand).
  CHECK(warm_bp[static_cast<size_t>(OperatorAxis::GenerationBatch)] ==
        std::set<double>{1, 2, 4, 8, 16});
  CHECK(warm_bp[static_cast<size_t>(OperatorAxis::GenerationKv)] == std::set<double>{16, 64});
  // Lengths 16 and 64; at length 16 batch 2 keeps the faster 0.017 ms.
  REQUIRE(warm.size() == 2 + 1 + 2 * 7);
  CHECK(warm[3 + 2] == Approx(0.017).epsilon(1e-12));
  // Another layout of the same file is its own entry.
  Breakpoints other_bp;
  {
    const CacheDir env(dir / "cache");
    (void)read_attention_table(dir / "generation_attention.csv", true, AttentionHeads{8, 2, 32},
                               "x", other_bp);
  }
  CHECK(entries(dir / "cache") == 2);
  // A layout whose shortest length has no measured cell (length 8 at batch 1 is empty): its
  // breakpoints still hold it, read back from the entry as from the file.
  const fs::path gaps = temp_dir();
  write(gaps / "generation_attention.csv",
        "head_dim,num_heads,num_key_value_heads,batch_size,isl,step,window_size,latency_ms_x\n"
        "32,4,2,1,1,7,0,\n32,4,2,1,1,15,0,0.01\n32,4,2,2,1,15,0,0.02\n");
  const auto kv_axis = [](const Breakpoints& bp) {
    return bp[static_cast<size_t>(OperatorAxis::GenerationKv)];
  };
  Breakpoints gap_cold, gap_warm;
  for (Breakpoints* bp : {&gap_cold, &gap_warm}) {
    const CacheDir env(gaps / "cache");
    (void)read_attention_table(gaps / "generation_attention.csv", true, h, "x", *bp);
  }
  CHECK(entries(gaps / "cache") == 1);
  CHECK(kv_axis(gap_cold) == std::set<double>{8, 16});
  CHECK(kv_axis(gap_warm) == kv_axis(gap_cold));
  // A layout the file lacks throws whatever the cache holds, and stores nothing.
  {
    const CacheDir env(dir / "cache");
    CHECK_THROWS_WITH(read_attention_table(dir / "generation_attention.csv", true,
                                           AttentionHeads{16, 2, 32}, "x", other_bp),
                      Catch::Contains("no rows for 16 query / 2 KV heads"));
  }
  CHECK(entries(dir / "cache") == 2);
}

TEST_CASE("table cache: an entry whose numbers do not add up is read from the file instead",
          "[models]") {
  // Entries with a sound header and hash but contents no reader wrote: a count past the end, a
  // count that is not a whole number, a count short of the values, nothing at all, a latency
  // that is not above 0.
  const fs::path dir = temp_dir();
  write(dir / "gemm.csv", k_gemm);
  write(dir / "generation_attention.csv", k_generation);
  const AttentionHeads h{4, 2, 32};
  Breakpoints bp;
  std::vector<double> gemm_off, attention_off;
  {
    const CacheDir env(std::nullopt);
    gemm_off = samples_of(read_gemm_table(dir / "gemm.csv", "bfloat16", bp));
    attention_off =
        samples_of(read_attention_table(dir / "generation_attention.csv", true, h, "x", bp));
  }
  for (const std::vector<double>& bad :
       std::vector<std::vector<double>>{{},
                                        {5, 1, 2},
                                        {1.5, 16, 1, 128, 1, 128, 0, 1, 1, 0.5},
                                        {0, 0, 0, 0, 7, 1, 2},
                                        {1, 16, 1, 128, 128, 16, 0},
                                        {1, 16, 1, 128, 128, 16, -1, 128, 16, 2}}) {
    const fs::path cache = temp_dir() / "cache";
    TableCache(cache, dir / "gemm.csv", "gemm bfloat16").store(bad);
    TableCache(cache, dir / "generation_attention.csv", "generation 32/4/2 x").store(bad);
    REQUIRE(entries(cache) == 2);
    const CacheDir env(cache);
    Breakpoints bp2;
    CHECK(same_bits(gemm_off, samples_of(read_gemm_table(dir / "gemm.csv", "bfloat16", bp2))));
    CHECK(same_bits(attention_off, samples_of(read_attention_table(dir / "generation_attention.csv",
                                                                   true, h, "x", bp2))));
    // Written again from the file: now the entries answer.
    REQUIRE(TableCache(cache, dir / "gemm.csv", "gemm bfloat16").load());
    CHECK(TableCache(cache, dir / "gemm.csv", "gemm bfloat16").load()->size() > bad.size());
  }
}

TEST_CASE("table cache: a directory that cannot be made changes nothing", "[models]") {
  const fs::path dir = temp_dir();
  write(dir / "gemm.csv", k_gemm);
  write(dir / "generation_attention.csv", k_generation);
  write(dir / "a-file", "x");
  const AttentionHeads h{4, 2, 32};
  std::vector<double> off, blocked;
  Breakpoints off_bp, blocked_bp;
  {
    const CacheDir env(std::nullopt);
    off = samples_of(read_gemm_table(dir / "gemm.csv", "bfloat16", off_bp));
    const auto a =
        samples_of(read_attention_table(dir / "generation_attention.csv", true, h, "x", off_bp));
    off.insert(off.end(), a.begin(), a.end());
  }
  {
    const CacheDir env(dir / "a-file" / "cache");  // below a plain file: never created
    blocked = samples_of(read_gemm_table(dir / "gemm.csv", "bfloat16", blocked_bp));
    const auto a = samples_of(
        read_attention_table(dir / "generation_attention.csv", true, h, "x", blocked_bp));
    blocked.insert(blocked.end(), a.begin(), a.end());
  }
  CHECK(same_bits(off, blocked));
  CHECK(off_bp == blocked_bp);
}

TEST_CASE("table cache: a gemm table warns of the same latency drops cold and warm", "[models]") {
  // Line 5 (m 512 after 0.005 ms at 256: 0.001 ms, a fifth) is a strong drop; line 3's 0.0024
  // after 0.0025 is not. The same content under two names: the second read is a hit, and warns
  // with its own name (the warning is given once per file and column).
  const fs::path dir = temp_dir();
  fs::create_directories(dir / "b");
  write(dir / "gemm.csv", k_gemm);
  write(dir / "b" / "gemm.csv", k_gemm);
  const CacheDir env(dir / "cache");
  Breakpoints bp;
  const std::string cold = logged([&] { (void)read_gemm_table(dir / "gemm.csv", "bfloat16", bp); });
  REQUIRE(entries(dir / "cache") == 1);
  const std::string warm =
      logged([&] { (void)read_gemm_table(dir / "b" / "gemm.csv", "bfloat16", bp); });
  CHECK(entries(dir / "cache") == 1);
  CHECK_THAT(cold, Catch::Contains("on 1 row (line 5)"));
  const std::string a = (dir / "gemm.csv").string(), b = (dir / "b" / "gemm.csv").string();
  REQUIRE(cold.find(a) != std::string::npos);
  REQUIRE(warm.find(b) != std::string::npos);
  CHECK(std::string(cold).replace(cold.find(a), a.size(), b) == warm);
  // Every m of the file is a breakpoint, from the entry as from the file.
  CHECK(bp[static_cast<size_t>(OperatorAxis::GemmTokens)] ==
        std::set<double>{1, 8, 16, 64, 256, 512});
}

TEST_CASE("table cache: the tables' datasheet gives the same figures cold, warm and off",
          "[models]") {
  // tests/data/aic-tiny's datasheet: elementwise passes cost 2 us plus bytes at 1e15 x 0.5 B/s.
  const fs::path dir = temp_dir();
  fs::copy(std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny", dir / "aic",
           fs::copy_options::recursive);
  const auto elementwise = [&](const std::optional<fs::path>& cache) {
    const CacheDir env(cache);
    return open_operator_tables({(dir / "aic").string(), "tiny_gpu", "vllm", false})
        ->elementwise_ms(1e9);
  };
  const double off = elementwise(std::nullopt);
  CHECK(off == Approx(0.002 + 1e9 / 5e11));
  CHECK(entries(dir / "cache") == 0);
  CHECK(same_bits({off}, {elementwise(dir / "cache")}));
  CHECK(entries(dir / "cache") == 1);
  CHECK(same_bits({off}, {elementwise(dir / "cache")}));
  // An edited datasheet is read anew: a bad figure is refused whatever the cache holds.
  const fs::path sheet = dir / "aic" / "systems" / "tiny_gpu.yaml";
  std::string text;
  {
    std::ifstream in(sheet);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  write(sheet, replace_all(text, "mem_bw: 1000000000000000", "mem_bw: -1"));
  for (int i = 0; i < 2; ++i) {
    const CacheDir env(dir / "cache");
    CHECK_THROWS_WITH(open_operator_tables({(dir / "aic").string(), "tiny_gpu", "vllm", false}),
                      Catch::Contains("mem_bw"));
  }
  write(sheet, replace_all(text, "0.000002", "0.000004"));  // 4 us now
  CHECK(elementwise(dir / "cache") == Approx(0.004 + 1e9 / 5e11));
}

}  // namespace t_models_table_cache_test
