#include "models/table_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>

namespace servesim {
namespace fs = std::filesystem;

namespace {

// The format version, also the readers' version: bump it whenever a reader's checks change, since
// an entry holds what the build that wrote it accepted (02: tables checked for negative and
// non-finite latencies, issue 35; 03: gemm entries hold lines rather than rows, attention
// tables cached too).
constexpr std::array<char, 8> k_magic{'s', 's', 't', 'b', 'l', 'c', '0', '3'};
constexpr uint64_t k_byte_order = 0x0102030405060708;

/// What precedes the values; `what` follows it, then `count` doubles.
struct Header {
  std::array<char, 8> magic = k_magic;
  uint64_t byte_order = k_byte_order;
  uint64_t source_hash = 0;
  uint64_t source_size = 0;
  uint64_t what_size = 0;
  uint64_t count = 0;
  uint64_t values_hash = 0;  ///< content_hash of the values' bytes
};

std::optional<std::string> read_all(const fs::path& p) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(p, ec);
  if (ec || size > (uintmax_t{1} << 32)) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string s(static_cast<size_t>(size), '\0');
  if (!in.read(s.data(), static_cast<std::streamsize>(size))) return std::nullopt;
  return s;
}

uint64_t hash_bytes(const char* p, size_t n) {
  uint64_t h = 0x243F6A8885A308D3 ^ n;
  auto mix = [&h](uint64_t w) {
    h = (h ^ w) * 0x9E3779B97F4A7C15;
    h ^= h >> 29;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  uint64_t tail = 0;
  if (n > i) std::memcpy(&tail, p + i, n - i);
  mix(tail);
  return h * 0xBF58476D1CE4E5B9;
}

}  // namespace

uint64_t content_hash(const std::string& bytes) { return hash_bytes(bytes.data(), bytes.size()); }

std::optional<fs::path> table_cache_dir() {
  if (const char* d = std::getenv("SERVESIM_TABLE_CACHE")) {
    const std::string v = d;
    if (v.empty() || v == "off") return std::nullopt;
    return fs::path(v);
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return fs::path(x) / "servesim" / "tables";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "servesim" / "tables";
  return std::nullopt;
}

TableCache::TableCache(std::optional<fs::path> dir, const fs::path& source, std::string what)
    : m_what(std::move(what)) {
  if (!dir) return;
  const std::optional<std::string> bytes = read_all(source);
  if (!bytes) return;
  m_hash = content_hash(*bytes);
  m_size = bytes->size();
  // The name says which table it came from for a person listing the directory; the key is
  // checked from the header. It ends in the format version, so that builds of two versions
  // sharing a directory keep an entry each rather than replace each other's every run.
  std::string name = source.filename().string() + "-" + m_what;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  m_file = *dir / fmt::format("{}-{:016x}.v{}{}.bin", name, m_hash, k_magic[6], k_magic[7]);
}

std::optional<std::vector<double>> TableCache::load() const {
  if (!m_file) return std::nullopt;
  const std::optional<std::string> bytes = read_all(*m_file);
  if (!bytes || bytes->size() < sizeof(Header)) return std::nullopt;
  Header h;
  std::memcpy(&h, bytes->data(), sizeof h);
  if (h.magic != k_magic || h.byte_order != k_byte_order || h.source_hash != m_hash ||
      h.source_size != m_size || h.what_size != m_what.size())
    return std::nullopt;
  const size_t at = sizeof h + m_what.size();
  if (bytes->compare(sizeof h, m_what.size(), m_what) != 0 || h.count > bytes->size() / 8 ||
      bytes->size() != at + h.count * sizeof(double))
    return std::nullopt;
  if (hash_bytes(bytes->data() + at, h.count * sizeof(double)) != h.values_hash)
    return std::nullopt;
  std::vector<double> values(h.count);
  if (h.count > 0)  // an empty vector's data() may be null, which memcpy must not be given
    std::memcpy(values.data(), bytes->data() + at, h.count * sizeof(double));
  return values;
}

void TableCache::store(const std::vector<double>& values) const {
  if (!m_file) return;
  std::error_code ec;
  fs::create_directories(m_file->parent_path(), ec);
  if (ec) return;
  Header h;
  h.source_hash = m_hash;
  h.source_size = m_size;
  h.what_size = m_what.size();
  h.count = values.size();
  h.values_hash =
      hash_bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  // One temporary file per process, renamed over the entry: concurrent runs each write whole
  // entries, and the last rename wins with the same bytes.
  const fs::path tmp = m_file->string() + fmt::format(".tmp{}", static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(m_what.data(), static_cast<std::streamsize>(m_what.size()));
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(double)));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, *m_file, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace servesim
