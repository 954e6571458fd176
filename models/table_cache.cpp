#include "models/table_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string_view>
#include <system_error>

namespace servesim {
namespace fs = std::filesystem;

namespace {

// The format version, also the readers' version: bump it whenever a reader's checks change, since
// an entry holds what the build that wrote it accepted (02: tables checked for negative and
// non-finite latencies, issue 35; 03: gemm entries hold lines rather than rows, attention
// tables cached too; 04: `what` padded with zero bytes to a multiple of 8, so that the values
// lie aligned in a mapping of the file and are read in place).
constexpr std::array<char, 8> k_magic{'s', 's', 't', 'b', 'l', 'c', '0', '4'};
constexpr uint64_t k_byte_order = 0x0102030405060708;

/// What precedes the values; `what` follows it, zero bytes up to values_offset(), then `count`
/// doubles.
struct Header {
  std::array<char, 8> magic = k_magic;
  uint64_t byte_order = k_byte_order;
  uint64_t source_hash = 0;
  uint64_t source_size = 0;
  uint64_t what_size = 0;
  uint64_t count = 0;
  uint64_t values_hash = 0;  ///< content_hash of the values' bytes
};

static_assert(sizeof(Header) % alignof(double) == 0);

/// Where an entry's values start: after the header and `what`, rounded up to a double's
/// alignment (a mapping starts on a page).
size_t values_offset(size_t what_size) {
  const size_t end = sizeof(Header) + what_size;
  return (end + alignof(double) - 1) / alignof(double) * alignof(double);
}

/// A file's bytes, mapped read-only (MAP_POPULATE: the page cache's pages are mapped in one
/// call rather than faulted in one at a time, and nothing is copied or zero-filled first), or
/// nothing when it cannot be opened or mapped. Sizes above 4 GiB count as unreadable.
class FileBytes {
 public:
  explicit FileBytes(const fs::path& p) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
        static_cast<uintmax_t>(st.st_size) <= (uintmax_t{1} << 32)) {
      m_size = static_cast<size_t>(st.st_size);
      if (m_size == 0) {
        m_data = "";  // mmap refuses a length of 0
      } else if (void* m = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
                 m != MAP_FAILED) {
        m_map = m;
        m_data = static_cast<const char*>(m);
      }
    }
    ::close(fd);
  }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes() {
    if (m_map) ::munmap(m_map, m_size);
  }
  [[nodiscard]] explicit operator bool() const { return m_data != nullptr; }
  [[nodiscard]] const char* data() const { return m_data; }
  [[nodiscard]] size_t size() const { return m_size; }

 private:
  void* m_map = nullptr;
  const char* m_data = nullptr;
  size_t m_size = 0;
};

uint64_t hash_bytes(const char* p, size_t n) {
  uint64_t h = 0x243F6A8885A308D3 ^ n;
  auto mix = [&h](uint64_t w) {
    h = (h ^ w) * 0x9E3779B97F4A7C15;
    h ^= h >> 29;
  };
  const auto word = [p](size_t at) {
    uint64_t w = 0;
    std::memcpy(&w, p + at, 8);
    return w;
  };
  size_t i = 0;
  // Four words a turn of the loop (the same words mixed in the same order): the loop's own
  // instructions were a third of the hash's, which reads megabytes each run.
  for (; i + 32 <= n; i += 32) {
    mix(word(i));
    mix(word(i + 8));
    mix(word(i + 16));
    mix(word(i + 24));
  }
  for (; i + 8 <= n; i += 8) mix(word(i));
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
  const FileBytes bytes(source);
  if (!bytes) return;
  m_hash = hash_bytes(bytes.data(), bytes.size());
  m_size = bytes.size();
  // The name says which table it came from for a person listing the directory; the key is
  // checked from the header. It ends in the format version, so that builds of two versions
  // sharing a directory keep an entry each rather than replace each other's every run.
  std::string name = source.filename().string() + "-" + m_what;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  m_file = *dir / fmt::format("{}-{:016x}.v{}{}.bin", name, m_hash, k_magic[6], k_magic[7]);
}

std::optional<TableCache::Mapped> TableCache::map() const {
  if (!m_file) return std::nullopt;
  auto bytes = std::make_shared<const FileBytes>(*m_file);
  if (!*bytes || bytes->size() < sizeof(Header)) return std::nullopt;
  Header h;
  std::memcpy(&h, bytes->data(), sizeof h);
  if (h.magic != k_magic || h.byte_order != k_byte_order || h.source_hash != m_hash ||
      h.source_size != m_size || h.what_size != m_what.size())
    return std::nullopt;
  const size_t at = values_offset(m_what.size());
  if (bytes->size() < at || std::string_view(bytes->data() + sizeof h, m_what.size()) != m_what ||
      h.count > bytes->size() / 8 || bytes->size() != at + h.count * sizeof(double))
    return std::nullopt;
  const char* first = bytes->data() + at;
  const size_t n = h.count * sizeof(double);
  if (hash_bytes(first, n) != h.values_hash) return std::nullopt;
  // `first` is 8-byte aligned: the mapping starts on a page and `at` is a multiple of 8.
  const std::span<const double> values(reinterpret_cast<const double*>(first), h.count);
  return Mapped{std::move(bytes), values};
}

std::optional<std::vector<double>> TableCache::load() const {
  std::optional<Mapped> m = map();
  if (!m) return std::nullopt;
  return std::vector<double>(m->values.begin(), m->values.end());
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
    const std::array<char, alignof(double)> zeros{};
    out.write(zeros.data(), static_cast<std::streamsize>(values_offset(m_what.size()) - sizeof h -
                                                         m_what.size()));
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
